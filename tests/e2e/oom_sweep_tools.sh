#!/bin/bash
# Out of memory in dlgauge's commands besides run (oom_sweep.sh has run):
# mkdata images and text, report, compare, list, help and sysinfo.  The
# preloaded allocator (oom_at.c) fails the n-th allocation once, for n
# spread over the command's whole count (the first ones all, then evenly).
# Each time:
#  - the exit status is 0, 1 or 2 (no signal, no library's abort), and
#    everything on stderr is a "dlgauge" line;
#  - exit 0: standard output and every file written are exactly those of
#    the command with memory enough (a generator's bytes, a report's text:
#    nothing silently left out or changed);
#  - otherwise a line says out of memory, each file it was told to replace
#    (--markdown, --html) holds what it held before or the whole new text
#    (they are replaced only when complete), and the command again, with
#    memory back, writes exactly the reference.
# OOM_SWEEP_STRIDE=1 tries every allocation (some 7,800 runs, 15 minutes on
# 2 cores); OOM_SWEEP_ONLY=NAME sweeps one command (names below).
source "$(dirname "$0")/lib.sh"
PRELOAD=$5
FX=$SRC/tests/report/fixtures

# compare's two sides: the report fixture, and it with a third of its
# cells 10% slower and the rest 2% faster
"$PY" - "$FX/known.csv" <<'PY' || fail "the compare inputs"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for name, scale in (("base.csv", lambda i: 1.0), ("new.csv", lambda i: 0.9 if i % 3 == 0 else 1.02)):
    with open(name, "w", newline="") as f:
        w = csv.DictWriter(f, list(rows[0]))
        w.writeheader()
        for i, r in enumerate(rows):
            w.writerow(dict(r, throughput=str(float(r["throughput"]) * scale(i)) if r["throughput"] else ""))
PY

SRC="$SRC" DLG="$DLG" PLUGDIR="$PLUGDIR" PRELOAD="$PRELOAD" FX="$FX" "$PY" - <<'PY' || fail "the trials above"
import os, re, shutil, subprocess, sys
sys.path.insert(0, os.path.join(os.environ["SRC"], "tests", "support"))
from oom_trial import report
DLG, PLUGDIR, PRELOAD, FX = (os.environ[k] for k in ("DLG", "PLUGDIR", "PRELOAD", "FX"))
STRIDE = int(os.environ.get("OOM_SWEEP_STRIDE") or 0)
ONLY = os.environ.get("OOM_SWEEP_ONLY") or ""
WORK = os.getcwd()
# name: (the word that picks the process, arguments, files it replaces)
COMMANDS = {
    "images": ("images", ["mkdata", "images", "--out", "img", "--classes", "4", "--images", "16", "--seed", "3"], []),
    "text": ("text", ["mkdata", "text", "--out", "ptb.txt", "--words", "3000", "--vocab", "200"], []),
    "report": ("report", ["report", f"{FX}/known.csv", "--catalog", f"{FX}/catalog.ini",
                          "--markdown", "r.md", "--html", "r.html"], ["r.md", "r.html"]),
    "compare": ("compare", ["compare", f"{WORK}/base.csv", "--", f"{WORK}/new.csv", "--latency", "p99",
                            "--markdown", "c.md"], ["c.md"]),
    "list": ("list", ["list"], []),
    "help": ("help", ["help", "--markdown", "all"], []),
    "sysinfo": ("sysinfo", ["sysinfo"], []),
}
# what differs from one run to the next with the same memory; and the
# reason sysinfo gives for no NVML, which is dlerror()'s: glibc words it
# shorter when it cannot allocate ("cannot open shared object file")
VARYING = [(rb"[0-9.]+ s \([0-9.]+ [a-z]+/s\)", b"TIME"), (rb"[0-9.]+ (MHz|GiB available|GiB free)", rb"N \1"),
           (rb"gpus:       none \(NVML not available: [^\n]*\)", b"gpus: none (NVML not available)")]
SAID = r"out of (\w+ )?memory|Cannot allocate memory|Insufficient memory|Memory allocation failure"

def run(d, word, args, at=None, tally=False):
    env = dict(os.environ)
    if at is not None or tally:
        env.update(LD_PRELOAD=PRELOAD, DLG_OOM_IN=word, DLG_OOM_AT=str(at or 0), DLG_OOM_TRACE="trace")
        if tally:
            env["DLG_OOM_TALLY"] = "tally"
    p = subprocess.run([DLG, "--plugin-dir", PLUGDIR] + args, cwd=d, env=env, capture_output=True, timeout=120)
    out = p.stdout
    for pat, rep in VARYING:
        out = re.sub(pat, rep, out)
    return p.returncode, out, p.stderr.decode(errors="replace").splitlines()

def files(d):
    got = {}
    for root, _, names in os.walk(d):
        for n in names:
            if n not in ("trace", "tally"):
                p = os.path.join(root, n)
                got[os.path.relpath(p, d)] = open(p, "rb").read()
    return got

def differing(a, b):
    return ", ".join(sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k)))[:300]

def fresh(d, replaced):
    os.makedirs(d)
    for f in replaced:
        open(os.path.join(d, f), "w").write("old\n")

def points(n):
    if STRIDE:
        return list(range(1, n + 1, STRIDE))
    return sorted(set(list(range(1, min(5, n) + 1)) + [5 + i * (n - 5) // 30 for i in range(1, 31) if n > 5]))

problems = trials = failed = 0
for name, (word, args, replaced) in COMMANDS.items():
    if ONLY and ONLY != name:
        continue
    ref = f"ref.{name}"
    fresh(ref, replaced)
    rc, ref_out, err = run(ref, word, args, tally=True)
    counts = [int(x) for x in open(os.path.join(ref, "tally")).read().split()] if os.path.exists(os.path.join(ref, "tally")) else []
    if rc != 0 or not counts or max(counts) < 10:
        print(f"{name}: with memory enough, exit {rc}, {counts} allocations counted (is oom_at preloaded?): {err[:3]}")
        problems += 1
        continue
    ref_files = files(ref)
    n = max(counts)  # mkdata's generator is a forked child: its count runs on from its parent's
    print(f"{name}: {n} allocations; failing {len(points(n))} of them in turn")
    for at in points(n):
        trials += 1
        d = f"t.{name}.{at}"
        fresh(d, replaced)
        rc, out, err = run(d, word, args, at)
        said = []
        if rc not in (0, 1, 2):
            said.append(f"exit status {rc} (a signal or a library's abort)")
        stray = [l for l in err if not re.match(r"dlgauge[ :]", l)]
        if stray:
            said.append(f"a line on stderr that is not dlgauge's: {stray[0]!r}")
        got = files(d)
        if rc == 0:
            if out != ref_out:
                said.append("exit 0, but standard output is not the reference's")
            if got != ref_files:
                said.append(f"exit 0, but these files are not the reference's: {differing(got, ref_files)}")
        elif rc in (1, 2):
            failed += 1
            if not any(re.search(SAID, l) for l in err):
                said.append(f"exit {rc} without a line that says out of memory")
            for f in replaced:  # replaced only when complete: as it was, or whole
                if got.get(f) not in (b"old\n", ref_files[f]):
                    said.append(f"{f} was replaced with other than the whole output by a command that failed")
            rc2, out2, err2 = run(d, word, args)
            again = files(d)
            if rc2 != 0:
                said.append(f"again with memory back: exit {rc2}: {err2[:2]}")
            elif out2 != ref_out or again != ref_files:
                said.append(f"again with memory back: not the reference: {differing(again, ref_files) or 'standard output'}")
        if said:
            problems += 1
            report(d, said, err, f"{WORK}/{d}/trace")
        else:
            shutil.rmtree(d)
print(f"{trials} trials: {trials - failed} ended 0 with the reference's output, {failed} failed saying so; {problems} problem(s)")
sys.exit(1 if problems or not trials else 0)
PY
finish
