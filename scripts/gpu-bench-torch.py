#!/usr/bin/env python3
"""PyTorch + torchvision baseline for scripts/gpu-check.sh (GoogLeNet: BVLC's,
as dlgauge runs it, from scripts/bench/bvlc_googlenet.py).

usage: gpu-bench-torch.py BATCH MODEL:MODE:PREC[:BATCH[:profile]] ...
       gpu-bench-torch.py --serve BATCH   (cases on stdin, one a line; each
                                           answer ends with a '# done' line)
Prints one line per case:
    torch PREC MODEL MODE LAYOUT BATCH IMG_PER_S MS_PER_STEP ENERGY_J_PER_IMG
(a case's own BATCH overrides the first argument; MODEL lstm-ptb is the
word language model of gpu_bench_torch_lm.py: tokens/s and J/token, layout
"seq").
A case ending ":profile" is timed the same way, then PROFILE_STEPS more
steps run under torch.profiler: the "torch-profile" lines of
gpu_torch_profile.py (the operators' and kernels' GPU time per step).
fp32 = TF32 off, tf32 = TF32 on (cuDNN and matmul), bf16/fp16 =
torch.autocast over fp32 parameters (fp16 with a GradScaler); bf16/fp16 run
channels_last (faster on tensor cores, see docs/gpu-results.md), fp32/tf32
NCHW.  Synthetic data on the GPU, SGD momentum 0.9, cudnn.benchmark on.
Same warm-up/timed steps as dlgauge (WARMUP, TIMED); BUDGET_S skips the rest.
Energy from NVML's energy counter (pynvml) when present, else '-'.
"""
import os
import sys
import time

import torch
import torch.nn as nn
import torchvision

from gpu_bench_torch_lm import run_lm
from gpu_torch_profile import profile_steps

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench"))
from bvlc_alexnet import bvlc_alexnet  # noqa: E402 (the path above)
from bvlc_googlenet import bvlc_googlenet  # noqa: E402

WARMUP = int(os.environ.get("WARMUP", "5"))
TIMED = int(os.environ.get("TIMED", "20"))
BUDGET_S = float(os.environ.get("BUDGET_S", "170"))
PROFILE_STEPS = int(os.environ.get("PROFILE_STEPS", "5"))
T0 = time.monotonic()
torch.backends.cudnn.benchmark = True

try:
    import pynvml
    pynvml.nvmlInit()
    NV = pynvml.nvmlDeviceGetHandleByIndex(0)
except Exception:  # no NVML: energy is '-'
    NV = None


def energy_mj():
    try:
        return pynvml.nvmlDeviceGetTotalEnergyConsumption(NV) if NV else None
    except Exception:
        return None


# input sizes as dlgauge's models take them (core/nn/models/models.c): the
# same work on both sides (BVLC AlexNet's 227 crop; 224 would spare
# PyTorch 4% of conv1's multiply-adds)
CROP = {"alexnet": 227, "inception_v3": 299, "inception-v3": 299}


def build(name):
    m = torchvision.models
    name = name.replace("-", "_")  # dlgauge says inception-v3
    if name == "googlenet":  # dlgauge's network, not torchvision's (see bvlc_googlenet.py)
        return bvlc_googlenet()
    if name == "alexnet":  # likewise Caffe's (LRN, groups; see bvlc_alexnet.py)
        return bvlc_alexnet()
    if name == "inception_v3":
        return m.inception_v3(weights=None, aux_logits=False, init_weights=False)
    return getattr(m, name)(weights=None)


def run_case(name, mode, prec, batch, prof=False):
    tf32 = prec == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    amp = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(prec)
    layout = "NHWC" if amp else "NCHW"
    mf = torch.channels_last if amp else torch.contiguous_format
    dev = torch.device("cuda")
    size = CROP.get(name, 224)
    model = build(name).to(dev).to(memory_format=mf)
    x = torch.randn(batch, 3, size, size, device=dev).contiguous(memory_format=mf)
    y = torch.randint(0, 1000, (batch,), device=dev)
    scaler = torch.amp.GradScaler("cuda", enabled=prec == "fp16")
    if mode == "train":
        model.train()
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
        crit = nn.CrossEntropyLoss()

        def step():
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=amp or torch.float32, enabled=amp is not None):
                loss = crit(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
    else:
        model.eval()

        def step():
            with torch.no_grad(), torch.autocast("cuda", dtype=amp or torch.float32,
                                                 enabled=amp is not None):
                model(x)
    for _ in range(WARMUP):
        step()
    torch.cuda.synchronize()
    e0 = energy_mj()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(TIMED):
        step()
    b.record()
    torch.cuda.synchronize()
    e1 = energy_mj()
    ms = a.elapsed_time(b) / TIMED
    ej = "-" if e0 is None or e1 is None else "%.4f" % ((e1 - e0) / 1e3 / (batch * TIMED))
    print("torch %s %s %s %s %d %.1f %.3f %s" % (prec, name, mode, layout, batch,
                                                 batch * 1e3 / ms, ms, ej), flush=True)
    if prof:
        try:
            profile_steps(step, PROFILE_STEPS, "%s %s %s %s %d" % (prec, name, mode, layout, batch))
        except Exception as e:  # e.g. no CUPTI in this PyTorch: the row stands
            print("# torch-profile failed: %s" % e, flush=True)
    del model, x, y
    torch.cuda.empty_cache()


def run_one(case, batch):
    """One MODEL:MODE:PREC[:BATCH[:profile]] case; a failure prints a '#' line."""
    parts = case.split(":")
    name, mode, prec = parts[:3]
    nb = int(parts[3]) if len(parts) > 3 and parts[3] else batch
    prof = parts[4:5] == ["profile"]
    try:
        if name == "lstm-ptb":
            run_lm(mode, prec, nb, WARMUP, TIMED, energy_mj)
        else:
            run_case(name, mode, prec, nb, prof)
    except Exception as e:  # one failing case must not lose the others
        print("# %s failed: %s" % (case, e), flush=True)


def serve(batch):
    """--serve: one case per stdin line, each answered by its lines and
    '# done' (gpu-check.sh runs each case right after dlgauge's, so a
    budget cut never leaves a dlgauge row without its PyTorch figure)."""
    print("# done", flush=True)
    for line in sys.stdin:
        if line.strip():
            run_one(line.strip(), batch)
        print("# done", flush=True)


def main():
    args = sys.argv[1:]
    serving = args[:1] == ["--serve"]
    args = args[1:] if serving else args
    batch = int(args[0])
    print("# torch %s torchvision %s cuda %s cudnn %s" % (
        torch.__version__, torchvision.__version__, torch.version.cuda,
        torch.backends.cudnn.version()), flush=True)
    if serving:
        serve(batch)
        return
    for case in args[1:]:
        if time.monotonic() - T0 > BUDGET_S:
            print("# budget: skipped %s" % case, flush=True)
            continue
        run_one(case, batch)


if __name__ == "__main__":
    main()
