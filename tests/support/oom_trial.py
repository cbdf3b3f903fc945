"""How the out-of-memory sweeps (tests/e2e/oom_sweep_tools.sh,
tests/influx_cli/flush_oom.sh) print a trial that broke a rule: its name
and what it broke on one line, the first lines it said on stderr, and
where the failed allocation's stack is (oom_at.c's DLG_OOM_TRACE)."""
import os


def report(name, said, err, trace, lines=4):
    print(f"{name}: " + "; ".join(said))
    for line in err[:lines]:
        print(f"    stderr: {line}")
    if os.path.exists(trace):
        print(f"    the failed allocation's stack: {trace}")
