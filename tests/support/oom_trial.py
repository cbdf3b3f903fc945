"""How the out-of-memory sweeps (tests/e2e/oom_sweep.sh, oom_sweep_ranks.sh,
tests/e2e/oom_sweep_tools.sh, tests/influx_cli/flush_oom.sh) print a trial
that broke a rule: its name and what it broke on one line, the first lines
it said on stderr, and the failed allocation's stack (oom_at.c's
DLG_OOM_TRACE), printed here: a CI log is all that is left of a trial, and
flush_oom.sh's folder is removed as it ends."""
import os


def stack(trace, frames=10):
    """The trace's frames past the preloaded allocator's own, each as
    'object(function+offset)' without the object's folder."""
    out = []
    for line in open(trace, errors="replace").read().splitlines():
        frame = os.path.basename(line.split("[")[0].strip())
        if frame and not frame.startswith("oom_at.so"):
            out.append(frame)
    return out[:frames]


def report(name, said, err, trace, lines=4, errname="stderr"):
    print(f"{name}: " + "; ".join(said))
    for line in err[:lines]:
        print(f"    {errname}: {line}")
    if os.path.exists(trace):
        print(f"    the failed allocation's stack ({trace}):")
        for frame in stack(trace):
            print(f"      {frame}")


def trial_report(d, what, lines=6):
    """A sweep's broken trial in folder d: what it broke, the first lines
    of its stderr before (err) and after memory came back (err2), and the
    failed allocation's stack (trace)."""
    print(f"{d}: {what}")
    for f in ("err", "err2"):
        p = os.path.join(d, f)
        if os.path.exists(p):
            for line in open(p, errors="replace").read().splitlines()[:lines]:
                print(f"    {f}: {line}")
    trace = os.path.join(d, "trace")
    if os.path.exists(trace):
        print(f"    the failed allocation's stack ({trace}):")
        for frame in stack(trace):
            print(f"      {frame}")
