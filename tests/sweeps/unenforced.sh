#!/usr/bin/env bash
# Limits no cgroup can hold (a tmpfs over /sys/fs/cgroup, in a mount
# namespace of the test's own): every job whose limit is not enforced is
# warned of, not the run's first alone, and each such cell's line says
# which limit did not hold, as its row does (memory_enforced = false).
# Needs root and unshare -m, else skipped (77).
set -uo pipefail
dlgauge=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
unshare -m true 2> /dev/null || { echo "skip: unshare -m is not allowed here"; exit 77; }
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
cat > t.ini <<INI
[sink csv]
path = t.csv
[job s]
workload   = sleep
sleep      = 1ms
iterations = 3
memory     = 128MiB, 256MiB
[job q]
workload   = sleep
sleep      = 1ms
iterations = 3
cpu_quota  = 0.5
INI
unshare -m sh -c 'mount -t tmpfs none /sys/fs/cgroup && exec "$0" run t.ini' "$dlgauge" > out 2> err
rc=$?
cat out err
[ $rc = 0 ] || fail "run exited $rc"
# once per job: s's two cells share one warning, q has its own
[ "$(grep -c 'warning: limits not enforced' err)" = 2 ] || fail "expected 2 warnings, one per job"
grep -q '^dlgauge: t.ini:3: \[job s\] warning: limits not enforced: memory_enforced = false' err ||
  fail "job s's warning"
grep -q '^dlgauge: t.ini:8: \[job q\] warning: limits not enforced: cpu_quota_enforced = false' err ||
  fail "job q's warning"
[ "$(grep -c '^\[[12]/3\] s .* \[memory not enforced\]$' out)" = 2 ] || fail "job s's cell lines"
grep -q '^\[3/3\] q .* \[cpu_quota not enforced\]$' out || fail "job q's cell line"
exit $((fails > 0))
