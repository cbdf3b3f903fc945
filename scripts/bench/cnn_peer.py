#!/usr/bin/python3
"""PyTorch peer of the caffe workloads (scripts/bench/cnn-vs-pytorch.sh).

cnn_peer.py MODEL MODE BATCH THREADS STEPS FORMAT [PRECISION]
  MODEL resnet50|vgg16 (torchvision), alexnet or googlenet (BVLC's, as
  dlgauge builds them: LRN and groups; LRN, 5x5 branches, no batch norm, no
  auxiliary heads; torchvision's differ),
  MODE train|infer, FORMAT nchw|cl|frozen|amp|ampn, PRECISION fp32 (default)|bf16.
  frozen (inference only): torch.jit.optimize_for_inference of the scripted
  eval model (freezes it, folds batch norm into convolutions, fuses what
  oneDNN can), PyTorch's own answer to dlgauge's plan-time folding.
  bf16 (inference): the model and input converted to bfloat16 (oneDNN's
  bf16 kernels) in nchw, cl or frozen (frozen bf16 is channels_last, its
  fastest form here); amp: torch.autocast on the fp32 channels_last model
  instead (bf16 convolutions, fp32 elsewhere), ampn the same in nchw.
  bf16 training: amp or ampn only, PyTorch's recipe for it (fp32 master
  weights and SGD, as dlgauge's cpu-bf16 trains; a model converted to
  bf16 would update bf16 weights, another computation).
Synthetic 224x224 input made once; warm-up steps, then STEPS timed steps.
Prints one JSON line: median step seconds, images/s, peak RSS bytes, BLAS.
"""
import json
import resource
import statistics
import sys
import time

import torch

from blas_info import blas_info
from peer_models import peer_model


def main():
    model_name, mode, batch, threads, steps, fmt = sys.argv[1:7]
    precision = sys.argv[7] if len(sys.argv) > 7 else "fp32"
    bf16 = precision == "bf16"
    amp = fmt in ("amp", "ampn")
    if bf16 and mode == "train" and not amp:
        sys.exit("bf16 training is measured with autocast (amp, ampn): fp32 master weights")
    if amp and not bf16:
        sys.exit("amp is a bf16 format")
    batch, threads, steps = int(batch), int(threads), int(steps)
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    model = peer_model(model_name)
    x = torch.randn(batch, 3, 224, 224)
    y = torch.randint(0, 1000, (batch,))
    if bf16 and not amp:
        model, x = model.to(torch.bfloat16), x.to(torch.bfloat16)
    if fmt in ("cl", "amp") or (bf16 and fmt == "frozen"):
        model = model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    train = mode == "train"
    model.train(train)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    loss_fn = torch.nn.CrossEntropyLoss()
    if fmt == "frozen":
        if train:
            sys.exit("frozen is an inference format")
        model = torch.jit.optimize_for_inference(torch.jit.script(model.eval()))

    def step():
        if train and amp:
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
        elif train:
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
        elif amp:
            with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16):
                model(x)
        else:
            with torch.inference_mode():
                model(x)

    for _ in range(2):
        step()
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    med = statistics.median(times)
    out = {"median_s": med, "images_per_s": batch / med,
           "rss_peak_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
           "torch": torch.__version__, "threads": torch.get_num_threads(), "precision": precision}
    out.update(blas_info())
    print(json.dumps(out))


if __name__ == "__main__":
    main()
