"""scripts/gpu_torch_profile.py's profile_lines on made-up averaged events
(no GPU, no PyTorch): operators by self device time, their sum the total;
kernels apart; per step; the heaviest first, at most TOP; PyTorch 1.x's
cuda_* and 2.x's device_* names both read."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from gpu_torch_profile import TOP, profile_lines  # noqa: E402 (the path above)

CPU, CUDA = "cpu", "cuda"


class Ev:  # PyTorch 2.x names
    def __init__(self, key, dev, self_us, total_us, count):
        self.key, self.device_type, self.count = key, dev, count
        self.self_device_time_total, self.device_time_total = self_us, total_us


class OldEv:  # PyTorch 1.x names
    def __init__(self, key, dev, self_us, total_us, count):
        self.key, self.device_type, self.count = key, dev, count
        self.self_cuda_time_total, self.cuda_time_total = self_us, total_us


def main():
    steps = 4
    events = [
        Ev("aten::cudnn_convolution", CPU, 6000.0, 6000.0, 212),
        OldEv("aten::native_batch_norm", CPU, 3000.0, 3000.0, 212),
        Ev("aten::add_", CPU, 1000.0, 1000.0, 64),
        Ev("aten::conv2d", CPU, 0.0, 6000.0, 212),  # its time is its child's: not an op row
        Ev("sm90_xmma_fprop_kernel", CUDA, 0.0, 5000.0, 100),
        OldEv("bn_fw_tr_1C11_kernel", CUDA, 0.0, 2500.0, 200),
    ] + [Ev("aten::tiny%02d" % i, CPU, 1.0, 1.0, 4) for i in range(TOP)]
    lines = profile_lines(events, steps, "bf16 resnet50 train NHWC 64", CPU, CUDA)
    total_us = 6000 + 3000 + 1000 + TOP
    head = "torch-profile bf16 resnet50 train NHWC 64 total_ms=%.3f (per step, 4 steps" % (
        total_us / 1e3 / steps)
    assert lines[0].startswith(head), lines[0]
    ops = [l for l in lines if l.startswith("torch-profile-op ")]
    kernels = [l for l in lines if l.startswith("torch-profile-kernel ")]
    assert len(ops) == TOP, ops
    assert ops[0] == "torch-profile-op %5.1f%% 1.500 calls=53.0 aten::cudnn_convolution" % (
        100.0 * 6000 / total_us), ops[0]
    assert ops[1].endswith("0.750 calls=53.0 aten::native_batch_norm"), ops[1]
    assert ops[2].endswith("0.250 calls=16.0 aten::add_"), ops[2]
    assert not any("aten::conv2d" in l for l in lines), lines
    assert kernels == ["torch-profile-kernel  49.9% 1.250 calls=25.0 sm90_xmma_fprop_kernel",
                       "torch-profile-kernel  25.0% 0.625 calls=50.0 bn_fw_tr_1C11_kernel"], kernels
    # nothing on the GPU: one line, no division by zero
    assert profile_lines([], 5, "x", CPU, CUDA) == [
        "torch-profile x total_ms=0.000 (per step, 5 steps, kernel time by operator)"]
    print("ok: %d lines" % len(lines))


if __name__ == "__main__":
    main()
