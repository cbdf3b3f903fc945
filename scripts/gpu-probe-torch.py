#!/usr/bin/env python3
"""PyTorch baseline on synthetic data for the models dlgauge benchmarks.

Run by scripts/gpu-probe.sh on a CUDA machine.  For each case it warms up
WARMUP steps, then times TIMED steps between two torch.cuda.Events and prints
one table line: model, mode, precision, layout, batch, img/s, ms/step.

fp32 cases run with TF32 disabled; bf16 cases use torch.autocast(bfloat16)
over fp32 parameters.  cudnn.benchmark is on.  A wall-clock budget (BUDGET_S,
default 170 s) skips the remaining cases once spent; the cases are ordered so
that vgg16 fp32 is the first to be dropped.
"""
import os
import sys
import time

import torch
import torch.nn as nn
import torchvision

WARMUP = int(os.environ.get("WARMUP", "10"))
TIMED = int(os.environ.get("TIMED", "30"))
BUDGET_S = float(os.environ.get("BUDGET_S", "170"))

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = True
torch.set_float32_matmul_precision("highest")

T0 = time.monotonic()


def build(name):
    m = torchvision.models
    if name == "resnet50":
        return m.resnet50(weights=None)
    if name == "alexnet":
        return m.alexnet(weights=None)
    if name == "vgg16":
        return m.vgg16(weights=None)
    if name == "googlenet":
        return m.googlenet(weights=None, aux_logits=False, init_weights=False)
    if name == "inception_v3":
        return m.inception_v3(weights=None, aux_logits=False, init_weights=False)
    raise ValueError(name)


def run_case(name, mode, prec, layout, batch):
    dev = torch.device("cuda")
    size = 299 if name == "inception_v3" else 224
    mf = torch.channels_last if layout == "NHWC" else torch.contiguous_format
    model = build(name).to(dev).to(memory_format=mf)
    x = torch.randn(batch, 3, size, size, device=dev).contiguous(memory_format=mf)
    y = torch.randint(0, 1000, (batch,), device=dev)
    use_bf16 = prec == "bf16"

    if mode == "train":
        model.train()
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        crit = nn.CrossEntropyLoss()

        def step():
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=use_bf16):
                out = model(x)
                loss = crit(out, y)
            loss.backward()
            opt.step()
    else:
        model.eval()
        opt = None

        def step():
            with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16,
                                                 enabled=use_bf16):
                model(x)

    for _ in range(WARMUP):
        step()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(TIMED):
        step()
    end.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end) / TIMED
    del model, opt, x, y
    torch.cuda.empty_cache()
    return ms


def main():
    if not torch.cuda.is_available():
        print("no CUDA device visible to torch; nothing to measure")
        return 0
    print("torch", torch.__version__, "torchvision", torchvision.__version__,
          "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())
    p = torch.cuda.get_device_properties(0)
    print("device", p.name, "sm", p.multi_processor_count,
          "mem_GiB", round(p.total_memory / 2**30, 1),
          "cc", f"{p.major}.{p.minor}")
    print(f"warmup {WARMUP} steps, timed {TIMED} steps; fp32 = TF32 off; "
          "bf16 = autocast(bfloat16), fp32 params; cudnn.benchmark on")

    cases = []
    # resnet50 first, both layouts for bf16 training
    cases += [("resnet50", "train", "fp32", "NCHW", 64),
              ("resnet50", "train", "bf16", "NCHW", 64),
              ("resnet50", "train", "bf16", "NHWC", 64),
              ("resnet50", "infer", "fp32", "NCHW", 64),
              ("resnet50", "infer", "bf16", "NCHW", 64),
              ("resnet50", "infer", "fp32", "NCHW", 1),
              ("resnet50", "infer", "bf16", "NCHW", 1)]
    for name in ("alexnet", "googlenet", "inception_v3"):
        for prec in ("fp32", "bf16"):
            for mode in ("train", "infer"):
                cases.append((name, mode, prec, "NCHW", 64))
    cases += [("vgg16", "train", "bf16", "NCHW", 64),
              ("vgg16", "infer", "bf16", "NCHW", 64),
              ("vgg16", "infer", "fp32", "NCHW", 64),
              ("vgg16", "train", "fp32", "NCHW", 64)]

    hdr = f"{'model':<13} {'mode':<6} {'prec':<5} {'layout':<6} {'batch':>5} {'img/s':>10} {'ms/step':>9}"
    print(hdr)
    print("-" * len(hdr))
    results = {}
    for c in cases:
        if time.monotonic() - T0 > BUDGET_S:
            print(f"{c[0]:<13} {c[1]:<6} {c[2]:<5} {c[3]:<6} {c[4]:>5} {'skipped':>10} (time budget)")
            continue
        try:
            ms = run_case(*c)
        except Exception as e:  # keep going; report the failure in the table
            print(f"{c[0]:<13} {c[1]:<6} {c[2]:<5} {c[3]:<6} {c[4]:>5} {'FAILED':>10} {type(e).__name__}: {str(e)[:120]}")
            torch.cuda.empty_cache()
            continue
        ips = c[4] * 1000.0 / ms
        results[c] = ips
        print(f"{c[0]:<13} {c[1]:<6} {c[2]:<5} {c[3]:<6} {c[4]:>5} {ips:>10.1f} {ms:>9.3f}")
    a = results.get(("resnet50", "train", "bf16", "NCHW", 64))
    b = results.get(("resnet50", "train", "bf16", "NHWC", 64))
    if a and b:
        best = "NHWC (channels_last)" if b > a else "NCHW"
        print(f"resnet50 bf16 train b64 better layout: {best} "
              f"({max(a, b):.1f} img/s; NCHW {a:.1f}, channels_last {b:.1f})")
    print(f"total wall {time.monotonic() - T0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
