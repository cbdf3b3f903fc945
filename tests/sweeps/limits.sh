#!/usr/bin/env bash
# Limits on the machine's real cgroups (root and a writable cgroup needed;
# otherwise it skips, exit 77, saying why):
#  - kill -9 of dlgauge mid-cell leaves the cell's cgroup behind; the next
#    run's first cell with a limit removes it;
#  - inside a cgroup (v1) that allows 1.5 CPUs of time and 256 MiB, as a
#    container would: sysinfo says so, cpus = 2 is an error naming the
#    file, cpus = 1 runs, cpus = 0 is granted 1 vCPU (stream runs one
#    thread, not one per CPU), and memory = 1GiB is not claimed as enforced.
set -euo pipefail
dlgauge=$1
skip() { echo "SKIP: $*"; exit 77; }
work=$(mktemp -d)
box_cpu="" box_mem=""
cleanup() {
  for d in "$box_cpu" "$box_mem"; do [ -n "$d" ] && rmdir "$d" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
field() { python3 -c 'import csv,sys; [print(r[sys.argv[2]]) for r in csv.DictReader(open(sys.argv[1]))]' "$@"; }

[ "$(id -u)" = 0 ] || skip "needs root to create cgroups"
# where this shell's (and so dlgauge's) cells go
own_v1=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3}' /proc/self/cgroup)
if [ -n "$own_v1" ] && [ -d /sys/fs/cgroup/memory ]; then cells=/sys/fs/cgroup/memory${own_v1%/}
else cells=/sys/fs/cgroup$(awk -F: '$1 == 0 {print $3}' /proc/self/cgroup); cells=${cells%/}; fi

cat > probe.ini <<INI
[sink csv]
path = probe.csv
[job p]
workload   = noop
memory     = 64MiB
iterations = 1
min_steps  = 1
warmup     = 0
INI
"$dlgauge" -q run probe.ini > /dev/null 2> probe.err || true
[ "$(field probe.csv memory_enforced)" = true ] || skip "no writable memory cgroup here: $(cat probe.err)"

# ---- kill -9 mid-cell: the cgroup is left, the next run removes it
cat > slow.ini <<INI
[job s]
workload = sleep
sleep    = 50ms
memory   = 64MiB
duration = 20s
INI
"$dlgauge" -q run slow.ini > /dev/null 2>&1 & pid=$!
for _ in $(seq 50); do compgen -G "$cells/dlgauge-$pid-*" > /dev/null && break; sleep 0.1; done
kill -9 $pid; wait $pid 2>/dev/null || true
sleep 0.3
left=$(compgen -G "$cells/dlgauge-$pid-*" || true)
[ -n "$left" ] || fail "no cell cgroup under $cells while the cell ran"
rm -f probe.csv
"$dlgauge" -q run probe.ini > /dev/null 2>&1 || fail "probe run after kill -9 exited $?"
[ -z "$(compgen -G "$cells/dlgauge-$pid-*" || true)" ] || fail "the killed run's cgroup was left: $left"

# ---- a "container" of 1.5 CPUs and 256 MiB (cgroup v1)
cpu_own=$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ {print $3}' /proc/self/cgroup)
[ -n "$own_v1" ] && [ -n "$cpu_own" ] && [ -w "/sys/fs/cgroup/cpu${cpu_own%/}" ] ||
  { [ $fails -eq 0 ] || exit 1; skip "the container checks need writable cgroup v1 cpu and memory controllers"; }
box_cpu=/sys/fs/cgroup/cpu${cpu_own%/}/dlg-limits-test-$$
box_mem=$cells/dlg-limits-test-$$
mkdir "$box_cpu" "$box_mem"
echo 100000 > "$box_cpu/cpu.cfs_period_us"
echo 150000 > "$box_cpu/cpu.cfs_quota_us"
echo $((256 << 20)) > "$box_mem/memory.limit_in_bytes"
inbox() { bash -c 'echo $$ > "$1/cgroup.procs"; echo $$ > "$2/cgroup.procs"; shift 2; exec "$@"' _ "$box_cpu" "$box_mem" "$@"; }

inbox "$dlgauge" sysinfo > sysinfo.txt
grep -q "^limits: .*cpu quota 1.50 CPUs ($box_cpu/cpu.cfs_quota_us), memory 0.2 GiB ($box_mem/memory.limit_in_bytes)" sysinfo.txt ||
  fail "sysinfo does not show the container's limits: $(grep -E '^(cpus|memory|limits)' sysinfo.txt)"

cat > box.ini <<INI
[sink csv]
path = box.csv
[job c]
workload   = noop
iterations = 1
min_steps  = 1
warmup     = 0
cpus       = 1, 2
[job z]
workload   = stream
array_size = 1MiB
cpus       = 0
iterations = 2
min_steps  = 1
warmup     = 0
[job m]
workload   = noop
iterations = 1
min_steps  = 1
warmup     = 0
memory     = 1GiB
INI
inbox "$dlgauge" -q run box.ini > /dev/null 2> box.err || true
got=$(python3 -c 'import csv; print(" ".join(r["job"]+r["cpus"]+"="+r["status"] for r in csv.DictReader(open("box.csv"))))')
[ "$got" = "c1=ok c2=error z=ok m=ok" ] || fail "statuses '$got', expected 'c1=ok c2=error z=ok m=ok'"
z=$(python3 -c 'import csv; print(" ".join(r["cpus_used"]+"/"+r["threads"] for r in csv.DictReader(open("box.csv")) if r["job"] == "z"))')
[ "$z" = "1/1" ] || fail "cpus = 0 under a 1.5-CPU quota: cpus_used/threads '$z', expected '1/1'"
grep -q "cpus = 2, but this process's own cgroup allows only 1.50 CPUs of time ($box_cpu/cpu.cfs_quota_us)" box.err ||
  fail "no clear line for cpus = 2 over the quota: $(cat box.err)"
[ "$(field box.csv memory_enforced | tail -1)" = false ] || fail "memory = 1GiB in a 256 MiB cgroup claimed as enforced"
grep -q "memory = 1GiB is more than this process's own cgroup allows (256MiB" box.err ||
  fail "no warning for memory = 1GiB over the environment's 256 MiB: $(cat box.err)"

[ $fails -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "ok: stale cgroups removed, the environment's limits reported and respected"
