"""torch.profiler's view of a PyTorch step for scripts/gpu-bench-torch.py
(case MODEL:MODE:PREC:BATCH:profile), to set beside dlgauge's per-layer
profile (`cuda_check bench ... profile=on`) in gpu-check.sh's step
"profile".  profile_lines() is plain Python, so CI checks it on made-up
events (tests/cuda/test_torch_profile.py) without a GPU or PyTorch."""

TOP = 15


def device_us(e, self_only):
    """An averaged event's device time in us (PyTorch 2.x renamed the
    cuda_* totals device_*)."""
    names = (("self_device_time_total", "self_cuda_time_total") if self_only
             else ("device_time_total", "cuda_time_total"))
    for attr in names:
        if hasattr(e, attr):
            return getattr(e, attr)
    return 0


def profile_lines(events, steps, label, cpu, cuda):
    """Lines per step: the operators (events of device type cpu) by the GPU
    time of the kernels each launched itself, which sum to the step's kernel
    time, then the kernels (device type cuda) by their own time; each the
    TOP heaviest, with its share of that sum."""
    ops, kernels = [], []
    for e in events:
        if e.device_type == cpu and device_us(e, True) > 0:
            ops.append((device_us(e, True), e.count, e.key))
        elif e.device_type == cuda and device_us(e, False) > 0:
            kernels.append((device_us(e, False), e.count, e.key))
    total = sum(t for t, _, _ in ops)
    n = float(max(steps, 1))
    lines = ["torch-profile %s total_ms=%.3f (per step, %d steps, kernel time by operator)"
             % (label, total / 1e3 / n, steps)]
    for tag, rows in (("op", ops), ("kernel", kernels)):
        for t, count, key in sorted(rows, key=lambda r: (-r[0], r[2]))[:TOP]:
            lines.append("torch-profile-%s %5.1f%% %.3f calls=%.1f %s"
                         % (tag, 100.0 * t / total if total else 0.0, t / 1e3 / n,
                            count / n, key[:120]))
    return lines


def profile_steps(step, steps, label):
    """steps more calls of step() under torch.profiler (CPU and CUDA
    activity), printed as profile_lines."""
    import torch
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    for line in profile_lines(prof.key_averages(), steps, label, DeviceType.CPU, DeviceType.CUDA):
        print(line, flush=True)
