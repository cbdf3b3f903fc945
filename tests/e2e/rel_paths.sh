#!/bin/bash
# Relative sink paths are taken from the directory dlgauge runs in (as fio
# takes its files): a run says where they went, made absolute, and a flush
# run from another directory says which spool it found empty instead of
# exiting 0 in silence.  A flush opens only the sinks that spool: the csv
# and json sinks made their files where it ran, and counted as flushed.
source "$(dirname "$0")/lib.sh"

# a port nothing listens on: InfluxDB unreachable, the points spooled
port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p here elsewhere abs
here=$WORK/here elsewhere=$WORK/elsewhere
cat >here/conf.ini <<INI
[sink influx]
url      = http://127.0.0.1:$port/write?db=x
retries  = 0
timeout  = 1s
progress = false
[sink csv]
path = results/r.csv
[sink json]
path = ./out/r.jsonl
[sink abs]
type = csv
path = $WORK/abs/r.csv
[job j]
workload   = noop
iterations = 3
INI

cd "$here" || exit 1
run_cli run run conf.ini
expect_rc run 1 # every row measured and written, but InfluxDB did not get its points
grep -q "stay spooled in $here/results/spool/influx\.lp" run.err || fail "run did not say where the points wait: $(cat run.err)"
# the relative outputs, absolute (not the absolute one: the file says it)
grep -qx "dlgauge: results in $here/results/r.csv, $here/out/r.jsonl" run.err ||
    fail "run did not say where its relative outputs went: $(cat run.err)"
[ "$(wc -l <results/r.csv)" -eq 2 ] && [ -s out/r.jsonl ] && [ -s "$WORK/abs/r.csv" ] ||
    fail "run wrote: $(ls -R)"
spooled=$(wc -l <results/spool/influx.lp)
[ "$spooled" -ge 1 ] || fail "nothing was spooled: $(cat run.err)"
run_cli quiet -q run conf.ini
expect_rc quiet 1
if grep -q 'results in' quiet.err; then fail "-q run said where results went: $(cat quiet.err)"; fi
spooled=$(wc -l <results/spool/influx.lp)

# a csv file whose header lacks this run's columns: the rows go to
# results/r.2.csv (the sink says so) and results/r.csv, unchanged, is not
# named as where the results are
mkdir -p "$WORK/rot" && cd "$WORK/rot" || exit 1
printf '[sink csv]\npath = results/r.csv\n[job j]\nworkload = noop\niterations = 3\n' >a.ini
printf '[sink csv]\npath = results/r.csv\n[job j]\nworkload = sleep\nduration = 0.2s\nwarmup = 0\n' >b.ini
run_cli rota run a.ini
expect_rc rota 0
run_cli rotb run b.ini
expect_rc rotb 0
[ -s results/r.2.csv ] || fail "rotb: no results/r.2.csv: $(ls -R)"
if grep 'results in' rotb.err | grep -q 'results/r\.csv'; then
    fail "rotb: names results/r.csv, which got no row: $(grep 'results in' rotb.err)"
fi
grep -qx "dlgauge: results in $WORK/rot/results/r.2.csv" rotb.err ||
    fail "rotb: the last line does not name results/r.2.csv, where its rows went: $(cat rotb.err)"
cd "$here" || exit 1

# from another directory: another spool, named, with what makes it another
cd "$elsewhere" || exit 1
run_cli away flush ../here/conf.ini
expect_rc away 0
grep -qx "dlgauge: \.\./here/conf\.ini:1: \[sink influx\] info: nothing spooled in $elsewhere/results/spool/influx\.lp (spool_dir = results/spool is taken from the directory dlgauge runs in)" away.err ||
    fail "flush from elsewhere did not name the spool it found empty: $(cat away.err)"
[ "$(wc -l <"$here/results/spool/influx.lp")" -eq "$spooled" ] || fail "flush from elsewhere changed the run's spool"
grep -qx 'dlgauge: flushed 1 sink' away.err || fail "flush did not count the influx sink alone: $(cat away.err)"
run_cli awayq -q flush ../here/conf.ini
expect_rc awayq 0
[ ! -s awayq.err ] || fail "-q flush wrote: $(cat awayq.err)"
[ "$(ls -A | sort | tr '\n' ' ')" = "away.err away.out awayq.err awayq.out " ] ||
    fail "flush created files where it ran: $(ls -AR)"

# no sink that spools (an influx sink writing a file does not): said, exit 0, nothing created
mkdir "$WORK/none" && cd "$WORK/none" || exit 1
printf '[sink csv]\npath = r.csv\n[sink lp]\ntype = influx\npath = r.lp\n[sink json]\npath = r.jsonl\n' >"$WORK/none.ini"
run_cli none flush ../none.ini
expect_rc none 0
[ "$(cat none.err)" = "dlgauge: ../none.ini: nothing to flush: its sinks (csv, lp, json) deliver as they write and spool nothing" ] ||
    fail "flush of sinks that spool nothing: $(cat none.err)"
[ "$(ls -A | sort | tr '\n' ' ')" = "none.err none.out " ] || fail "flush created files where it ran: $(ls -AR)"

# from the run's directory: the run's spool, still undeliverable
cd "$here" || exit 1
run_cli back flush conf.ini
expect_rc back 1
grep -q "$spooled points stay spooled in $here/results/spool/influx\.lp" back.err ||
    fail "flush from the run's directory: $(cat back.err)"
if grep -q 'nothing spooled' back.err; then fail "flush of a full spool said nothing was spooled: $(cat back.err)"; fi

# an absolute spool_dir: named as it is, no word about the directory
cat >"$elsewhere/abs.ini" <<INI
[sink influx]
url       = http://127.0.0.1:$port/write?db=x
spool_dir = $WORK/abs/spool
INI
cd "$elsewhere" || exit 1
run_cli absflush flush abs.ini
expect_rc absflush 0
grep -q "info: nothing spooled in $WORK/abs/spool/influx\.lp$" absflush.err ||
    fail "flush with an absolute spool_dir: $(cat absflush.err)"
finish
