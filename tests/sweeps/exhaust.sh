#!/usr/bin/env bash
# Running out of real resources (root needed: cgroups and a tmpfs; each part
# that cannot be set up here is skipped with its reason, exit 77 when none
# could run):
#  - a "container" (a memory cgroup around dlgauge) too small for a cell
#    that has no memory limit of its own: the kernel OOM-kills the cell, and
#    its row says oom, not "crashed" by signal 9;
#  - a process limit (pids.max = 1): the cell cannot be forked, and the row
#    and its one line name the job's file and line;
#  - a full disk under the journal mid-record, space back for the next one:
#    --resume still reads the journal and measures the unrecorded cell.
set -uo pipefail
dlgauge=$1 testwl=$2
work=$(mktemp -d)
boxes=() mnt=""
cleanup() {
  [ -n "$mnt" ] && umount "$mnt" 2>/dev/null
  for d in "${boxes[@]}"; do rmdir "$d" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work" || exit 1
fails=0 ran=0 skipped=""
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
skip_part() { echo "skipped: $*"; skipped="$skipped; $*"; }
col() { python3 -c 'import csv,sys; [print(r[sys.argv[2]]) for r in csv.DictReader(open(sys.argv[1]))]' "$@"; }
# box: a fresh cgroup for CONTROLLER next to this shell's, or "" (v1, then v2)
new_cgroup() {
  local c=$1 own d
  own=$(awk -F: -v c="$c" '$2 ~ "(^|,)" c "(,|$)" {print $3}' /proc/self/cgroup)
  if [ -n "$own" ] && [ -d "/sys/fs/cgroup/$c" ]; then d=/sys/fs/cgroup/$c${own%/}/dlg-exhaust-$$-$c
  else own=$(awk -F: '$1 == 0 {print $3}' /proc/self/cgroup); d=/sys/fs/cgroup${own%/}/dlg-exhaust-$$-$c; fi
  box=""
  mkdir "$d" 2>/dev/null || return 0
  boxes+=("$d")
  box=$d
}
inbox() { bash -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' _ "$@"; }

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root for cgroups and a tmpfs"; exit 77; }

# ---- a container's OOM kill is oom
new_cgroup memory
lim=""
[ -n "$box" ] && { [ -e "$box/memory.limit_in_bytes" ] && lim=$box/memory.limit_in_bytes || lim=$box/memory.max; }
if [ -n "$lim" ] && [ -e "$lim" ] && echo $((96 << 20)) > "$lim" 2>/dev/null; then
  ran=$((ran + 1))
  cat > box.ini <<INI
[sink csv]
path = box.csv
[job hog]
plugin     = $testwl
workload   = hog
size       = 16MiB
iterations = 40
warmup     = 0
[job after]
workload   = sleep
sleep      = 1ms
iterations = 2
INI
  rc=0; inbox "$box" "$dlgauge" -q run box.ini > /dev/null 2> box.err || rc=$?
  [ $rc -eq 1 ] || fail "container oom: exit $rc, expected 1: $(cat box.err)"
  got=$(col box.csv status | tr '\n' ' ')
  [ "$got" = "oom ok " ] || fail "container oom: statuses '$got', expected 'oom ok ': $(cat box.err)"
  grep -q "^dlgauge: box.ini:3: \[job hog\] killed (SIGKILL) by the kernel's OOM killer .*ran out of memory; memory = SIZE gives" box.err ||
    fail "container oom: no line naming the OOM killer: $(cat box.err)"
else
  skip_part "no writable memory cgroup for a container"
fi

# ---- pids.max = 1: no process for the cell
new_cgroup pids
if [ -n "$box" ] && [ -e "$box/pids.max" ] && echo 1 > "$box/pids.max" 2>/dev/null; then
  ran=$((ran + 1))
  cat > pids.ini <<INI
[sink csv]
path = pids.csv
[job s]
workload   = sleep
sleep      = 1ms
iterations = 2
INI
  rc=0; inbox "$box" "$dlgauge" -q run pids.ini > /dev/null 2> pids.err || rc=$?
  [ $rc -eq 1 ] || fail "pids: exit $rc, expected 1: $(cat pids.err)"
  grep -q "^dlgauge: pids.ini:3: \[job s\] cannot fork the cell process: Resource temporarily unavailable (a limit on processes: ulimit -u is .*, or the cgroup's pids.max)$" pids.err ||
    fail "pids: the line does not name the job and the limit: $(cat pids.err)"
  [ "$(col pids.csv status)" = error ] || fail "pids: no error row: $(cat pids.csv)"
else
  skip_part "no writable pids cgroup"
fi

# ---- the journal's disk full mid-record, then space again
mnt=$work/small
mkdir "$mnt"
if mount -t tmpfs -o size=64k tmpfs "$mnt" 2>/dev/null; then
  ran=$((ran + 1))
  cat > full.ini <<INI
[global]
journal = $mnt/run.journal
run_id  = r1
[sink csv]
path = full.csv
[job s]
workload   = sleep
sleep      = 300ms
iterations = 1
warmup     = 0
seed       = 1, 2, 3
INI
  # the header, from a run stopped at once (its cell is not recorded)
  "$dlgauge" -q run full.ini > /dev/null 2>&1 & pid=$!
  for _ in $(seq 100); do [ -s "$mnt/run.journal" ] && break; sleep 0.02; done
  kill -INT $pid; wait $pid
  # fill the journal's first page to 8 bytes short of its end (a record of
  # a cell of no job in the plan), and the disk: "done s 0 ok" is cut
  left=$((4096 - 8 - $(stat -c %s "$mnt/run.journal")))
  while [ $left -gt 0 ]; do
    n=$((left > 411 + 20 ? 400 : left - 11))
    printf 'done %s 0 ok\n' "$(head -c $n /dev/zero | tr '\0' x)" >> "$mnt/run.journal"
    left=$((left - n - 11))
  done
  dd if=/dev/zero of="$mnt/fill" bs=4k count=64 2> /dev/null
  "$dlgauge" -q run full.ini --resume > /dev/null 2> full.err & pid=$!
  for _ in $(seq 200); do grep -q 'journal' full.err && break; sleep 0.01; done
  rm -f "$mnt/fill"
  wait $pid; rc=$?
  [ $rc -eq 0 ] || fail "full: exit $rc, expected 0: $(cat full.err)"
  [ "$(grep -c 'cannot write the run journal: No space left on device' full.err)" = 1 ] ||
    fail "full: expected one line for the full disk: $(cat full.err)"
  rc=0; "$dlgauge" -q run full.ini --resume > /dev/null 2> full2.err || rc=$?
  [ $rc -eq 0 ] || fail "full: the second --resume exited $rc: $(cat full2.err)"
  seeds=$(col full.csv seed | sort | uniq | tr '\n' ' ')
  [ "$seeds" = "1 2 3 " ] || fail "full: seeds measured '$seeds', expected each of 1 2 3"
  [ "$(grep -c '^done s [0-9] ok$' "$mnt/run.journal")" = 3 ] || fail "full: journal: $(cut -c1-40 "$mnt/run.journal")"
else
  skip_part "cannot mount a tmpfs"
fi

[ $fails -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
[ $ran -gt 0 ] || { echo "SKIP:${skipped#;}"; exit 77; }
echo "ok: container oom, process limit and full journal disk$skipped"
