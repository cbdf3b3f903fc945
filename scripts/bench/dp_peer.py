#!/usr/bin/python3
"""PyTorch peer of dlgauge's data-parallel training (scripts/bench/dp-vs-pytorch.sh).

dp_peer.py MODEL BATCH WORLD STEPS FORMAT
  MODEL alexnet or googlenet (BVLC's, as cnn_peer.py and dlgauge build
  them) or resnet50 (torchvision's); BATCH images per process; WORLD 1 or
  more processes; FORMAT nchw|cl (channels_last).
WORLD > 1: torch.multiprocessing starts WORLD processes that train with
DistributedDataParallel over gloo on 127.0.0.1 (GLOO_SOCKET_IFNAME=lo):
gradients averaged by allreduce during backward, as dlgauge averages them
after it.  WORLD 1 trains the bare model, as dlgauge's single rank does no
allreduce.  Each process: one thread, bound to its own CPU (the i-th of
this process's affinity), as mpirun --bind-to core binds dlgauge's ranks;
its own synthetic 224x224 batch; SGD lr 0.01 momentum 0.9 weight decay
5e-4 (dlgauge's solver).  Two warm-up steps, a barrier, STEPS timed steps;
the rate is WORLD x BATCH x STEPS / the slowest process's wall time, as
dlgauge's row counts it.  Rank 0 prints one JSON line.
"""
import json
import os
import resource
import socket
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from blas_info import blas_info
from peer_models import peer_model


def build(model_name, fmt):
    torch.manual_seed(1)
    model = peer_model(model_name)
    if fmt == "cl":
        model = model.to(memory_format=torch.channels_last)
    return model.train()


def train(rank, world, port, cpu, model_name, batch, steps, fmt):
    """One process's run; returns its wall time over the timed steps and step times."""
    os.sched_setaffinity(0, {cpu})
    torch.set_num_threads(1)
    model = build(model_name, fmt)
    if world > 1:
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}",
                                rank=rank, world_size=world)
        # gradient_as_bucket_view: no copy between the gradients and the
        # allreduce buckets; broadcast_buffers off: dlgauge does not send
        # batch-norm running statistics either (training does not read them)
        model = torch.nn.parallel.DistributedDataParallel(
            model, gradient_as_bucket_view=True, broadcast_buffers=False)
    torch.manual_seed(1 + rank)
    x = torch.randn(batch, 3, 224, 224)
    if fmt == "cl":
        x = x.contiguous(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (batch,))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=world == 1)
        loss_fn(model(x), y).backward()
        opt.step()

    for _ in range(2):
        step()
    if world > 1:
        dist.barrier()
    times = []
    t0 = time.perf_counter()
    for _ in range(steps):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    wall = time.perf_counter() - t0
    if world > 1:
        w = torch.tensor([wall], dtype=torch.float64)
        dist.all_reduce(w, op=dist.ReduceOp.MAX)
        wall = float(w[0])
    return wall, times


def worker(rank, world, port, cpus, args):
    model_name, batch, steps, fmt = args
    wall, times = train(rank, world, port, cpus[rank % len(cpus)], model_name, batch, steps, fmt)
    if rank == 0:
        report(world, batch, steps, fmt, wall, times)
    if world > 1:
        # no teardown: torch 1.13's ProcessGroupGloo destructor joins a gloo
        # thread that waits for the GIL this thread holds (a hang seen here)
        os._exit(0)


def report(world, batch, steps, fmt, wall, times):
    out = {"images_per_s": world * batch * steps / wall, "wall_s": wall,
           "median_s": statistics.median(times), "world": world, "batch": batch,
           "format": fmt, "torch": torch.__version__, "threads": torch.get_num_threads(),
           "rss_peak_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
           "gloo": dist.is_gloo_available()}
    out.update(blas_info())
    print(json.dumps(out), flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    model_name, batch, world, steps, fmt = sys.argv[1:6]
    batch, world, steps = int(batch), int(world), int(steps)
    if fmt not in ("nchw", "cl"):
        sys.exit(f"format {fmt}: nchw or cl")
    cpus = sorted(os.sched_getaffinity(0))
    args = (model_name, batch, steps, fmt)
    if world == 1:
        worker(0, 1, 0, cpus, args)
        return
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    # the port is free when asked; gloo's store binds it a moment later
    mp.spawn(worker, args=(world, free_port(), cpus, args), nprocs=world, join=True)


if __name__ == "__main__":
    main()
