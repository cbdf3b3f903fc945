"""How the out-of-memory sweeps (tests/e2e/oom_sweep.sh, oom_sweep_ranks.sh,
tests/e2e/oom_sweep_tools.sh, tests/influx_cli/flush_oom.sh) print a trial
that broke a rule: its name and what it broke on one line, the first lines
it said on stderr, and the failed allocation's stack (oom_at.c's
DLG_OOM_TRACE), printed here: a CI log is all that is left of a trial, and
flush_oom.sh's folder is removed as it ends."""
import csv
import glob
import os
import re
import sys


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


def after_again(d, jobs, lines, rc, ranks="1"):
    """What is wrong with trial d's results once it ran again with memory
    back (s.csv, rc2): each job must have one row on `ranks` ranks, ok, or
    oom (a memory need, not an error) where the trial failed (exit rc)
    naming the job on one of its stderr lines; the run again exits 1 where
    a job failed, else 0."""
    p = os.path.join(d, "s.csv")
    rows = list(csv.DictReader(open(p))) if os.path.exists(p) else []
    problems, failed = [], False
    for job in jobs:
        got = [(r["status"], r.get("ranks")) for r in rows if r["job"] == job]
        said = rc != 0 and any(f"[job {job}]" in l for l in lines)
        if got == [("oom", ranks)] and said:
            failed = True
        elif got != [("ok", ranks)]:
            problems.append(f"after the run again, job {job}'s rows (status, ranks) are {got}, not one ok (or "
                            f"oom where it failed) on {ranks} rank(s)" +
                            ("" if said else " (and the trial said nothing of the job)"))
    rc2 = int(open(os.path.join(d, "rc2")).read())
    if rc2 != (1 if failed else 0):
        problems.append(f"the run again with memory back: exit status {rc2}, expected {1 if failed else 0}")
    return problems


def said_problems(lines, rc, said, strays_are="not dlgauge's"):
    """What is wrong with a trial's stderr lines (rc its exit status): a
    line that is not dlgauge's ("dlgauge: "), or, where it failed, none
    that matches said (a regex: the words for out of memory)."""
    problems = []
    strays = [l for l in lines if not l.startswith("dlgauge: ")]
    if strays:
        problems.append(f"a line on stderr that is {strays_are}: {strays[0]!r}")
    if rc != 0 and not any(re.search(said, l) for l in lines):
        problems.append(f"exit status {rc} without a line that says out of memory")
    return problems


class Problems:
    """A sweep's broken trials, each printed by trial_report (with the
    first `lines` lines of its stderr) and counted."""

    def __init__(self, lines=6):
        self.count, self.lines = 0, lines

    def __call__(self, d, what):
        self.count += 1
        trial_report(d, what, self.lines)


def trials(pattern="t.*.*"):
    """A sweep's trial folders (t.NAME.N) by NAME, then N, each with its
    exit status (the file rc)."""
    found = sorted(glob.glob(pattern), key=lambda d: (d.split(".")[1], int(d.split(".")[2])))
    return [(d, int(open(os.path.join(d, "rc")).read())) for d in found]


def verdict(n, ok, failed, problems):
    """The sweep's last line, and its exit: 1 with a problem or no trial."""
    print(f"{n} trials: {ok} ended 0, {failed} failed cleanly and measured all on the run again; "
          f"{problems.count} problem(s)")
    sys.exit(1 if problems.count or not n else 0)
