# CPU package energy (RAPL) end to end: `dlgauge run` on a fake powercap
# tree (DLG_POWERCAP_ROOT) whose counters a background writer advances
# writes cpu_energy_j > 0 (and dram_energy_j) for every cell; without a
# tree, no field and one note for the whole run; sysinfo lists the zones.
source "$(dirname "$0")/lib.sh"

PC=$WORK/powercap
zone() { # DIR NAME RANGE
    mkdir -p "$PC/$1"
    echo "$2" >"$PC/$1/name"
    echo "$3" >"$PC/$1/max_energy_range_uj"
    echo 0 >"$PC/$1/energy_uj"
}
zone intel-rapl:0 package-0 262143328850
zone intel-rapl:0:0 dram 65712999613
zone intel-rapl:1 package-1 262143328850
# 1 J per package and 0.25 J of DRAM every 10 ms (100 W, 25 W), each file
# replaced at once as sysfs would be read
advance() {
    local uj=0
    while :; do
        uj=$((uj + 1000000))
        for z in intel-rapl:0 intel-rapl:1; do echo $uj >"$PC/$z/e.tmp" && mv "$PC/$z/e.tmp" "$PC/$z/energy_uj"; done
        echo $((uj / 4)) >"$PC/intel-rapl:0:0/e.tmp" && mv "$PC/intel-rapl:0:0/e.tmp" "$PC/intel-rapl:0:0/energy_uj"
        sleep 0.01
    done
}
advance &
WRITER=$!

# 40 steps: a timed window of 200-400 ms, so the writer (a shell loop,
# slow on a loaded CI machine: 100 ms windows once saw no advance) moves
# the counters within it
ini e.ini <<'INI'
[job a]
workload = sleep
sleep = 5ms, 10ms
iterations = 40
warmup = 0
[sink csv]
path = out.csv
INI
DLG_POWERCAP_ROOT=$PC run_cli withtree run e.ini
expect_rc withtree 0
grep -q 'cpu energy' withtree.err && fail "withtree: a note although the counters read: $(cat withtree.err)"
"$PY" - <<'PY' || fail "withtree: fields missing or not positive (see above)"
import csv, sys
rows = list(csv.DictReader(open("out.csv")))
ok = len(rows) == 2
for r in rows:
    for k in ("cpu_energy_j", "cpu_power_avg_w", "cpu_energy_per_item_j", "dram_energy_j"):
        if not r.get(k) or float(r[k]) <= 0:
            print(f"row {r.get('sleep')}: {k} = {r.get(k)!r}", file=sys.stderr)
            ok = False
sys.exit(0 if ok else 1)
PY

DLG_POWERCAP_ROOT=$PC run_cli sysinfo sysinfo
grep -Eq '^  intel-rapl:0:0 +dram +range 65713\.0 J$' sysinfo.out || fail "sysinfo: no dram zone: $(grep -A4 'cpu energy' sysinfo.out)"
kill "$WRITER"
wait "$WRITER" 2>/dev/null

# no tree (a VM): the cells are measured, no field, one note for the run
rm -f out.csv
DLG_POWERCAP_ROOT=$WORK/none run_cli notree run e.ini
expect_rc notree 0
[ "$(grep -c 'note: cpu energy: .*/none: No such file or directory.*: no cpu_energy_j' notree.err)" = 1 ] ||
    fail "notree: expected one note: $(cat notree.err)"
"$PY" -c '
import csv, sys
rows = list(csv.DictReader(open("out.csv")))
sys.exit(0 if len(rows) == 2 and all(not r.get("cpu_energy_j") for r in rows) else 1)' ||
    fail "notree: rows with cpu_energy_j: $(head -3 out.csv)"
# a resumed run says it too (its first cells may all be in the journal)
DLG_POWERCAP_ROOT=$WORK/none run_cli noresume run e.ini --resume
expect_rc noresume 0
[ "$(grep -c 'note: cpu energy: .*: no cpu_energy_j' noresume.err)" = 1 ] ||
    fail "resume: expected one note: $(cat noresume.err)"
DLG_POWERCAP_ROOT=$WORK/none run_cli sysnone sysinfo
grep -q '^cpu energy: none (.*/none: No such file or directory' sysnone.out || fail "sysinfo none: $(grep 'cpu energy' sysnone.out)"

finish
