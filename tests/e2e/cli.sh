#!/bin/bash
# (f) The other commands: --dry-run, list, help, the generated reference, sysinfo.
source "$(dirname "$0")/lib.sh"

printf '[job a]\nworkload = sleep\nsleep = 1ms, 2ms\ncpus = 0, 1\n[job b]\nworkload = stream\nkernel = copy\n' >dry.ini
run_cli dry run dry.ini --dry-run --set b.iterations=9
expect_rc dry 0
cat >dry.want <<'EOT'
5 cells in 2 jobs
  a #0: workload=sleep storage=posix cpus=0 warmup=3 iterations=0 duration=5s min_steps=5 repeat=1 seed=1 cpu_quota=0 timeout=0 isolation=process sleep=1ms jitter=0
  a #1: workload=sleep storage=posix cpus=0 warmup=3 iterations=0 duration=5s min_steps=5 repeat=1 seed=1 cpu_quota=0 timeout=0 isolation=process sleep=2ms jitter=0
  a #2: workload=sleep storage=posix cpus=1 warmup=3 iterations=0 duration=5s min_steps=5 repeat=1 seed=1 cpu_quota=0 timeout=0 isolation=process sleep=1ms jitter=0
  a #3: workload=sleep storage=posix cpus=1 warmup=3 iterations=0 duration=5s min_steps=5 repeat=1 seed=1 cpu_quota=0 timeout=0 isolation=process sleep=2ms jitter=0
  b #0: workload=stream storage=posix cpus=0 warmup=3 iterations=9 duration=5s min_steps=5 repeat=1 seed=1 cpu_quota=0 timeout=0 isolation=process array_size=64MiB kernel=copy threads=0
EOT
diff dry.want dry.out >dry.diff || fail "dry run printed other cells:$(echo; cat dry.diff)"
[ ! -s dry.err ] || fail "dry run wrote to stderr: $(cat dry.err)"

# --job may be repeated: each named job runs, in file order (it used to run only the last)
printf '[job a]\nworkload = noop\niterations = 10\n[job b]\nworkload = noop\niterations = 10\n[job c]\nworkload = noop\niterations = 10\n' >jobs.ini
run_cli jobs run jobs.ini --job c --job a
expect_rc jobs 0
[ "$(grep -Eo '^\[[0-9]/[0-9]\] +[a-z]+' jobs.out | tr -s ' ' | tr '\n' ';')" = '[1/2] a;[2/2] c;' ] ||
    fail "--job c --job a ran: $(cat jobs.out)"
run_cli jobsdry run jobs.ini --job b --job a --job b --dry-run
expect_rc jobsdry 0
[ "$(grep -Eo '^(  [a-z]+ #[0-9]|[0-9]+ cells? in [0-9]+ jobs?)' jobsdry.out | tr '\n' ';')" = '2 cells in 2 jobs;  a #0;  b #0;' ] ||
    fail "--dry-run --job b --job a --job b planned: $(cat jobsdry.out)"

# the top-level usage lists every option of run, --resume included
run_cli usage --help
expect_rc usage 0
grep -Eq '^  run FILE\.ini \[--job NAME\]\.\.\. .*\[--dry-run\] \[--resume\]' usage.out ||
    fail "--help run line: $(grep 'run FILE' usage.out)"

# a command's usage: `help COMMAND` and `COMMAND --help` print it and exit 0
# (run --help was "unknown option", flush --help opened a file '--help',
# list and sysinfo ignored it, help run found no plugin 'run', help version no plugin 'version')
for c in run flush list sysinfo help version; do
    run_cli "h$c" help $c
    expect_rc "h$c" 0
    grep -Eq "^usage: dlgauge $c( |\$)" "h$c.out" || fail "help $c: $(head -2 "h$c.out" "h$c.err")"
    run_cli "d$c" $c --help
    expect_rc "d$c" 0
    diff "h$c.out" "d$c.out" >/dev/null || fail "$c --help differs from help $c: $(head -2 "d$c.out" "d$c.err")"
done
grep -q 'FILE.ini .*--resume' hrun.out || fail "help run lacks run's options: $(cat hrun.out)"
for o in --job --set --dry-run --resume; do # each option says what it does
    grep -Eq -- "^  $o +[a-zA-Z.= ]*[a-z]{4}" hrun.out || fail "help run does not explain $o: $(cat hrun.out)"
done
# `help` alone is the top-level usage, on stdout
run_cli helpnone help
expect_rc helpnone 0
cmp -s helpnone.out usage.out || fail "help alone: $(head -3 helpnone.out helpnone.err)"
# several names: each one (only the last was printed)
run_cli helptwo help stream sleep
expect_rc helptwo 0
grep -q '^workload stream' helptwo.out && grep -q '^workload sleep' helptwo.out ||
    fail "help stream sleep printed: $(grep '^workload' helptwo.out)"
# a misspelt option is an error, not a plugin name (--md was dropped unsaid)
run_cli helpmd help --md stream
expect_one_error helpmd 2 "^dlgauge: help: unknown option '--md'"
run_cli helpsug help sysinf
expect_one_error helpsug 2 "^dlgauge: no command, workload, storage or sink is called 'sysinf' \(did you mean 'sysinfo'\?\)"
# commands that take no arguments say so (list printed everything for 'list workloads')
for c in list sysinfo; do
    run_cli "x$c" $c workloads
    expect_one_error "x$c" 2 "^dlgauge: $c takes no arguments, not 'workloads'"
    [ ! -s "x$c.out" ] || fail "$c workloads printed: $(head -2 "x$c.out")"
done
# a mistyped command or option: one line (the whole usage used to follow it)
run_cli typo lsit
expect_one_error typo 2 "^dlgauge: unknown command 'lsit' \(did you mean 'list'\?\); dlgauge --help lists the commands"
run_cli badtop -x list
expect_one_error badtop 2 "^dlgauge: unknown option '-x' \(the options before a command are --plugin-dir DIR, -v, -q"

run_cli list list
expect_rc list 0
for re in '^workload +stream ' '^workload +sleep ' '^storage +posix ' '^sink +csv ' '^sink +json ' '^sink +influx '; do
    grep -Eq "$re" list.out || fail "list lacks /$re/"
done
grep -q "$TPLUG" list.out && fail "list shows a test plugin"
# summaries whole (they were cut at 40 characters), after the file
grep -Eq '^workload +stream +1\.0 +/.*diag\.so +STREAM memory bandwidth \(copy, scale, add, triad' list.out ||
    fail "list does not show stream's whole summary after its file: $(grep stream list.out)"
# each plugin once, even when the folder is given as a different spelling
run_cli list2 --plugin-dir "$PLUGDIR/../dlgauge/" list
[ "$(grep -c '^workload  *sleep ' list2.out)" = 1 ] || fail "sleep listed $(grep -c '^workload  *sleep ' list2.out) times with --plugin-dir spelled differently"

# two files with the same names: list marks the copy that is not used (the
# first in search order wins), and "available:" names each plugin once
mkdir -p shadow && cp "$PLUGDIR/diag.so" shadow/
# alone: run_cli's own --plugin-dir would come first, and the first wins
"$DLG" --plugin-dir "$WORK/shadow" list >shadow.out 2>shadow.err
RC=$?
expect_rc shadow 0
grep -Eq "^workload +sleep +1\.0 +$WORK/shadow/diag\.so +sleeps " shadow.out || fail "shadow: the copy used: $(grep sleep shadow.out)"
grep -Eq "^workload +sleep +1\.0 +/.*/diag\.so +\(shadowed by $WORK/shadow/diag\.so, not used\) sleeps " shadow.out ||
    fail "shadow: the shadowed copy is not marked: $(grep sleep shadow.out)"
[ "$(grep -c 'shadowed by' shadow.out)" = "$(grep -Ec "^[a-z]+ +[^ ]+ +[^ ]+ +$WORK/shadow/diag\.so " shadow.out)" ] ||
    fail "shadow: not every shadowed entry is marked: $(cat shadow.out)"
printf '[job a]\nworkload = sleeep\n' >shadow.ini
run_cli shadowrun --plugin-dir "$WORK/shadow" run shadow.ini
expect_one_error shadowrun 2 "unknown workload 'sleeep'" "available: .*sleep"
[ "$(grep -o ' sleep ' shadowrun.err | wc -l)" = 1 ] || fail "shadowrun: available lists sleep more than once: $(cat shadowrun.err)"

run_cli helpstream help stream
expect_rc helpstream 0
for re in '^workload stream' '^  array_size +size +64MiB +>= 1KiB' '^  kernel +enum +triad +copy\|scale\|add\|triad\|all' \
          '^  threads ' 'unit: bytes' 'triad_bytes_per_s'; do
    grep -Eq -- "$re" helpstream.out || fail "help stream lacks /$re/"
done

# mkdata is a command, not a plugin: help names its usage
run_cli helpmk help mkdata
expect_rc helpmk 0
grep -q '^usage: dlgauge mkdata images --out DIR' helpmk.out || fail "help mkdata: $(head -2 helpmk.out helpmk.err)"

# docs/config.md is generated by this very command; keep them equal
run_cli md help --markdown all
expect_rc md 0
if ! diff -u "$SRC/docs/config.md" md.out >md.diff; then
    fail "docs/config.md is out of date; regenerate it with:
    $DLG help --markdown all > docs/config.md
$(head -40 md.diff)"
fi

run_cli sysinfo sysinfo
expect_rc sysinfo 0
grep -Eq '^cpu: +[^ ]' sysinfo.out || fail "sysinfo has no cpu line"
grep -Eq '^cpus: +[0-9]+ online' sysinfo.out || fail "sysinfo has no cpus line"
grep -Eq '^memory: +[0-9]+\.[0-9] GiB total, [0-9]+\.[0-9] GiB available' sysinfo.out || fail "sysinfo has no memory line in GiB"
grep -Eq '^cuda: +[^ ]' sysinfo.out || fail "sysinfo has no cuda line"
# what a vCPU count is on this machine: cores or SMT threads, sockets, NUMA
# nodes, and the caches (stream's 4x-the-LLC rule); sysinfo said none of it
topo=$(grep -E '^topology: ' sysinfo.out)
if [[ $topo =~ ^topology:\ +([0-9]+)\ sockets?,\ ([0-9]+)\ cores?,\ ([0-9]+)\ threads?\ \((SMT\ on|no\ SMT)\),\ [0-9]+\ NUMA\ nodes?$ ]]; then
    [ "${BASH_REMATCH[3]}" = "$(getconf _NPROCESSORS_ONLN)" ] || fail "sysinfo threads: $topo, online: $(getconf _NPROCESSORS_ONLN)"
    [ "${BASH_REMATCH[2]}" -le "${BASH_REMATCH[3]}" ] && [ "${BASH_REMATCH[1]}" -le "${BASH_REMATCH[2]}" ] ||
        fail "sysinfo topology does not add up: $topo"
elif [ -r /sys/devices/system/cpu/cpu0/topology/core_id ] || ! [[ $topo =~ ^topology:\ +unknown ]]; then
    fail "sysinfo topology line: '$topo'"
fi
if [ -r /sys/devices/system/cpu/cpu0/cache/index0/size ]; then
    grep -Eq '^caches: +L1[di]? [0-9]+ (KiB|MiB) per ([0-9]+ )?CPUs?(, L[1-9][di]? [0-9]+ (KiB|MiB) per ([0-9]+ )?CPUs?)*$' sysinfo.out ||
        fail "sysinfo caches line: '$(grep '^caches' sysinfo.out)'"
fi

run_cli version --version
grep -Eq '^dlgauge [0-9]+\.[0-9]+\.[0-9]+' version.out || fail "--version: $(cat version.out)"
# a word after --version is a usage error, as for list (it was ignored: exit 0)
for v in --version version; do
    run_cli "vx$v" $v x
    expect_one_error "vx$v" 2 "^dlgauge: $v takes no arguments, not 'x' \(usage: dlgauge $v\)$"
    [ ! -s "vx$v.out" ] || fail "$v x printed: $(cat "vx$v.out")"
done

# a run with no [sink] keeps nothing: it says so, and still prints each cell
printf '[job a]\nworkload = noop\niterations = 100\n' >nosink.ini
run_cli nosink run nosink.ini
expect_rc nosink 0
grep -q 'nosink.ini has no \[sink\]: results are only printed' nosink.err || fail "no-sink note missing: $(cat nosink.err)"
grep -Eq '^dlgauge: run [0-9TZ-]+[0-9a-f-]*: 1 cell$' nosink.err || fail "run banner for one cell: $(head -2 nosink.err)"
grep -Eq '^\[1/1\] a +ok .* p50 [0-9.]+ (ns|us)' nosink.out || fail "no-sink run printed: $(cat nosink.out)"
# progress lines pad job names by characters: "résumé" (8 bytes) lines its
# status up with "a" (it was padded by bytes, two columns short)
printf '[job a]\nworkload = noop\niterations = 10\n[job r\xc3\xa9sum\xc3\xa9]\nworkload = noop\niterations = 10\n' >utf8job.ini
run_cli utf8job run utf8job.ini
expect_rc utf8job 0
cols=$(grep -E '^\[[0-9]/2\]' utf8job.out | while IFS= read -r l; do
    pre=${l%% ok *}; printf '%s;' "$(printf '%s' "$pre" | LC_ALL=C.UTF-8 wc -m)"; done)
[ "$cols" = '23;23;' ] || fail "status columns by characters: $cols in $(cat utf8job.out)"
# -v given many times: the cell's process gets as many (its argument array
# had room for 16, and 200 corrupted the heap: malloc aborted the run)
vs=$(printf -- '-v %.0s' $(seq 200))
# shellcheck disable=SC2086
run_cli manyv $vs run nosink.ini
expect_rc manyv 0
grep -Eq '^\[1/1\] a +ok ' manyv.out || fail "200 x -v: $(tail -3 manyv.err)"
# dlgauge's own options after the command: say where they go (it said only "unknown option")
for o in -v -q --plugin-dir=x; do
    run_cli "after$o" run dry.ini --dry-run "$o"
    expect_rc "after$o" 2
    grep -q "^dlgauge run: '$o' is an option of dlgauge itself: put it before the command, as in dlgauge ${o%=x}.* run FILE\.ini$" \
        "after$o.err" || fail "$o after run: $(cat "after$o.err")"
    [ ! -s "after$o.out" ] || fail "$o after run printed: $(cat "after$o.out")"
done
run_cli jobnoval run dry.ini --job
expect_rc jobnoval 2
grep -q '^dlgauge run: --job needs a value (--job NAME)$' jobnoval.err || fail "--job without a name: $(cat jobnoval.err)"
# --plugin-dir last, without its folder (it was called an unknown option)
run_cli pdnoval --plugin-dir
expect_one_error pdnoval 2 "^dlgauge: --plugin-dir needs a value \(dlgauge --plugin-dir DIR COMMAND"

# what help, list, sysinfo and version print is their product: a full disk
# under it fails them, in one line (help --markdown all > docs/config.md
# left half a file and exit 0)
if [ -w /dev/full ]; then
    for c in "help --markdown all" list sysinfo --version --help "help run" "flush --help"; do
        n=full${c//[^a-z]/}
        # shellcheck disable=SC2086
        "$DLG" --plugin-dir "$PLUGDIR" $c >/dev/full 2>"$n.err"
        RC=$?
        expect_one_error "$n" 1 "^dlgauge: standard output: No space left on device$"
    done
    # --dry-run's product is its list of cells (it exited 0 with none written)
    "$DLG" --plugin-dir "$PLUGDIR" run dry.ini --dry-run >/dev/full 2>fulldry.err
    RC=$?
    expect_one_error fulldry 1 "^dlgauge: standard output: No space left on device$"
fi

# dlgauge reinstalled while a sweep runs (its file replaced, as install and
# package managers do): the later cells still start, from the run's build
# (each failed to exec, exit 127, and the rest of the sweep was lost)
mkdir -p reinst
cp "$DLG" reinst/dlgauge
printf '[job a]\nworkload = sleep\nsleep = 150ms, 151ms, 152ms\niterations = 2\nwarmup = 0\n' >reinst.ini
reinst/dlgauge --plugin-dir "$PLUGDIR" run reinst.ini >reinst.out 2>reinst.err &
pid=$!
for _ in $(seq 100); do pgrep -P $pid >/dev/null && break; sleep 0.05; done
rm reinst/dlgauge && cp "$DLG" reinst/dlgauge
wait $pid
RC=$?
expect_rc reinst 0
[ "$(grep -Ec '^\[[1-3]/3\] a +sleep=15[0-2]ms +ok ' reinst.out)" = 3 ] || fail "reinstalled mid-run: $(cat reinst.out)"
# one_line NAME RC PATTERN: exit status RC and exactly one stderr line matching
# PATTERN (for messages that start "dlgauge CMD: ")
one_line() {
    expect_rc "$1" "$2"
    [ "$(wc -l <"$1.err")" = 1 ] && grep -Eq -- "$3" "$1.err" || fail "$1: stderr: $(cat "$1.err")"
}

# flush: an option it does not have was opened as a file ("dlgauge: --dry-run:
# cannot open"), and a second file got a bare usage line that named nothing
printf '[sink csv]\npath = flushed.csv\n' >flush.ini
run_cli flopt flush --dry-run flush.ini
one_line flopt 2 "^dlgauge flush: unknown option '--dry-run' \(usage: dlgauge flush FILE\.ini\)$"
run_cli fltwo flush flush.ini extra.ini
one_line fltwo 2 "^dlgauge flush: a second FILE\.ini 'extra\.ini' \(usage: dlgauge flush FILE\.ini\)$"
run_cli flnone flush
one_line flnone 2 "^dlgauge flush: no FILE\.ini given"
run_cli fldash flush -- flush.ini
expect_rc fldash 0

# mkdata whose reader has gone (| head): the data is whole, so exit 0 and no
# word (SIGPIPE at its summary line was "stopped by signal 13 ... removed", 141)
"$PY" - "$DLG" "$PLUGDIR" >pipe.rc 2>pipe.err <<'EOT'
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
p = subprocess.run([sys.argv[1], "--plugin-dir", sys.argv[2], "mkdata", "text", "--out", "piped.txt",
                    "--words", "500"], stdout=w, stderr=subprocess.PIPE)
sys.stderr.write(p.stderr.decode())
print(p.returncode)
EOT
[ "$(cat pipe.rc)" = 0 ] && [ ! -s pipe.err ] && [ -s piped.txt ] ||
    fail "mkdata to a closed pipe: exit $(cat pipe.rc), stderr: $(cat pipe.err), file: $(ls piped.txt* 2>&1)"
# a number with a blank or sign before it (strtoull read ' -1' as 2^64 - 1)
run_cli mkseed mkdata text --out seed.txt --words 100 --seed ' -1'
one_line mkseed 2 "^dlgauge mkdata: --seed ' -1': expected a whole number from 0 to "
[ ! -e seed.txt ] || fail "mkdata --seed ' -1' wrote seed.txt"
# an option with its value left out took the next option as it ("--out
# --classes 2" then called '2' an unexpected argument)
run_cli mknoval mkdata images --out --classes 2 --images 2
one_line mknoval 2 "^dlgauge mkdata: option '--out' needs a value$"
[ ! -e --classes ] || fail "mkdata --out --classes made a folder '--classes'"

# help and a plugin file that fails to load: help NAME said only "no ... is
# called NAME", and help all (docs/config.md) left the plugin out with exit 0
mkdir -p broken && echo junk >broken/mywl.so
run_cli brokenname --plugin-dir "$WORK/broken" help mywl
expect_one_error brokenname 2 "called 'mywl'" "; $WORK/broken/mywl\.so failed to load: not a shared object"
run_cli brokenall --plugin-dir "$WORK/broken" help --markdown all
expect_one_error brokenall 1 "^dlgauge: $WORK/broken/mywl\.so: not a shared object"
grep -q '^### workload `stream`' brokenall.out || fail "help all with a broken plugin: $(head -3 brokenall.out)"
# dlgauge copied away from its plugins: list found none and exited 0 (a
# health check passed it); help NAME did not say why it knows no NAME
mkdir -p reloc/bin && cp "$DLG" reloc/bin/dlgauge
reloc/bin/dlgauge list >noplug.out 2>noplug.err
RC=$?
if grep -q 'no plugins found' noplug.err; then # else an installed dlgauge's plugins were found
    expect_one_error noplug 1 "^dlgauge: no plugins found; searched: "
    reloc/bin/dlgauge help stream >noplughelp.out 2>noplughelp.err
    RC=$?
    expect_one_error noplughelp 2 "called 'stream'" "; no plugins found, searched: "
fi
# --markdown alone printed the plain usage; -h after a name was an unknown option
run_cli mdalone help --markdown
expect_one_error mdalone 2 "^dlgauge: help: --markdown needs a NAME"
# -h or --help after other arguments is the command's usage too (run's was an
# unknown option, flush's a second file, help's an unknown option)
for c in "run dry.ini --help" "flush flush.ini -h" "help stream -h"; do
    n=late${c%% *}
    # shellcheck disable=SC2086
    run_cli "$n" $c
    expect_rc "$n" 0
    cmp -s "$n.out" "h${c%% *}.out" || fail "$c: $(head -2 "$n.out" "$n.err")"
done
grep -q '^usage: dlgauge help \[--markdown\] NAME' hhelp.out || fail "help's usage lacks --markdown: $(head -1 hhelp.out)"
# "--" ends run's options: FILE may then start with '-' ("unknown option '--'")
printf '[job a]\nworkload = noop\niterations = 1\n' >./-dash.ini
run_cli rundash run --dry-run -- -dash.ini
expect_rc rundash 0
grep -q '^1 cell in 1 job$' rundash.out || fail "run --dry-run -- -dash.ini: $(cat rundash.out rundash.err)"
run_cli runtwo run dry.ini -- other.ini
one_line runtwo 2 "^dlgauge run: unexpected argument 'other\.ini' \(one FILE\.ini\)$"
# dlgauge's own options after any command say where they go (list said only
# "takes no arguments", report and mkdata "unknown option")
run_cli listv list -v
one_line listv 2 "^dlgauge list: '-v' is an option of dlgauge itself: put it before the command, as in dlgauge -v list$"
run_cli reportq report r.csv -q
one_line reportq 2 "^dlgauge report: '-q' is an option of dlgauge itself: put it before the command, as in dlgauge -q report RESULTS\.\.\.$"
# compare's "--" only parts base from new, its options go on after it: so
# does the hint (it said "unknown option '-v'"), and -h is its usage
run_cli comparev compare r.csv -- r.csv -v
one_line comparev 2 "^dlgauge compare: '-v' is an option of dlgauge itself: put it before the command, as in dlgauge -v compare BASE\.\.\.$"
run_cli compareh compare r.csv -- r.csv -h
expect_rc compareh 0
grep -q '^usage: dlgauge compare ' compareh.out || fail "compare ... -- ... -h: $(head -2 compareh.out compareh.err)"
# mkdata text makes --out's folder, as mkdata images does (it failed naming
# a .part the user never typed)
run_cli mknewdir mkdata text --out newdir/sub/t.txt --words 100
expect_rc mknewdir 0
[ -s newdir/sub/t.txt ] || fail "mkdata text --out newdir/sub/t.txt: $(cat mknewdir.err)"
: >afile
run_cli mkunder mkdata text --out afile/t.txt --words 100
one_line mkunder 1 "^dlgauge mkdata: afile/t\.txt: cannot create: Not a directory$"
finish
