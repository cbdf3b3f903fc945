#!/bin/bash
# (d) Bad input end to end: exactly one line on stderr, starting "dlgauge: ",
# naming file:line where there is one, and exit status 2; no crash.
source "$(dirname "$0")/lib.sh"

# case NAME 'INI TEXT' PATTERN...: runs NAME.ini and checks the one error line
case_ini() {
    local name=$1 text=$2
    shift 2
    printf '%s\n' "$text" >"$name.ini"
    run_cli "$name" run "$name.ini"
    expect_one_error "$name" 2 "$@"
}

case_ini syntax $'[job a\nworkload = sleep' '^dlgauge: syntax\.ini:1: syntax error'
case_ini nokv $'[job a]\nworkload = sleep\njust words here' '^dlgauge: nokv\.ini:3: syntax error'
case_ini section $'[jobs a]\nworkload = sleep' "^dlgauge: section\.ini:1: unknown section \[jobs a\]" "did you mean 'job'"
case_ini dup $'[job a]\nworkload = sleep\nsleep = 1ms\nsleep = 2ms' \
    "^dlgauge: dup\.ini:4: \[job a\] sleep: set twice in this section \(first at line 3\)"
case_ini key $'[job a]\nworkload = sleep\nslep = 1ms' \
    "^dlgauge: key\.ini:3: \[job a\] unknown key 'slep' for workload sleep" "did you mean 'sleep'"
case_ini workload $'[job a]\nworkload = sleeep' \
    "^dlgauge: workload\.ini:2: \[job a\] workload: unknown workload 'sleeep'" "did you mean 'sleep'" \
    "available:.* stream" "available:.* sleep"
case_ini range $'[job a]\nworkload = sleep\ncpus = 99999' \
    "^dlgauge: range\.ini:3: \[job a\] cpus: 99999 is above the maximum 4096"
case_ini unit $'[job a]\nworkload = sleep\n\nduration = 5 parsecs' \
    "^dlgauge: unit\.ini:4: \[job a\] duration: unknown duration unit 'parsecs'"
case_ini notnum $'[job a]\nworkload = sleep\nduration = abc' \
    "^dlgauge: notnum\.ini:3: \[job a\] duration: 'abc' is not a duration \(a number with an optional unit ns us ms s m h d, or units combined like 1h30m \(bare: seconds\)\)"
case_ini listelem $'[job a]\nworkload = stream\nkernel = copy, trid' \
    "^dlgauge: listelem\.ini:3: \[job a\] kernel: 'trid' is not one of" "did you mean 'triad'"
# one value twice in a sweep would measure one cell twice under two names
case_ini listdup $'[job a]\nworkload = stream\narray_size = 64KiB, 1MiB, 1024KiB' \
    "^dlgauge: listdup\.ini:3: \[job a\] array_size: '1MiB' and '1024KiB' are the same value: give each once"
# arrays past physical memory: refused at setup, before overcommit kills us
case_ini physmem $'[job a]\nworkload = stream\narray_size = 1000TiB' \
    "^dlgauge: physmem\.ini:3: \[job a\] stream: array_size = 1000TiB: the 3 arrays need 3000\.0 TiB, the machine has [0-9.]+ [KMGT]iB$"
unset DLG_E2E_UNSET_VAR
case_ini env $'[job a]\nworkload = sleep\nsleep = ${DLG_E2E_UNSET_VAR}' \
    "^dlgauge: env\.ini:3: \[job a\] sleep: environment variable 'DLG_E2E_UNSET_VAR' is not set"
case_ini include $'[global]\ninclude = missing/nope.ini\n[job a]\nworkload = sleep' \
    "^dlgauge: include\.ini:2: cannot open include file '.*missing/nope\.ini'"
case_ini global $'[global]\niterations = 3\nbtach = 4\n[job a]\nworkload = sleep' \
    "^dlgauge: global\.ini:3: \[global\] unknown key 'btach'"
case_ini storage $'[job a]\nworkload = sleep\nstorage = nvme' \
    "^dlgauge: storage\.ini:3: \[job a\] storage: unknown storage 'nvme'" "available:.* posix"
# found only by creating the storage: before any cell, at its section
case_ini profile $'[job a]\nworkload = sleep\nstorage = disk\n[storage disk]\ntype = throttle\nprofile = no/such.ini' \
    "^dlgauge: profile\.ini:6: \[storage disk\] profile: no/such\.ini: No such file or directory"
case_ini sinktype $'[sink out]\ntype = cvs\npath = x.csv\n[job a]\nworkload = sleep' \
    "^dlgauge: sinktype\.ini:2: \[sink out\] type: unknown sink 'cvs'" "did you mean 'csv'"
case_ini sinkpath $'[job a]\nworkload = sleep\n[sink csv]' \
    "^dlgauge: sinkpath\.ini:3: \[sink csv\] sink csv needs 'path'"
case_ini sinklist $'[global]\nsinks = csv\n[job a]\nworkload = sleep' \
    "^dlgauge: sinklist\.ini:2: \[global\] sinks: there is no \[sink csv\] section"
case_ini noworkload $'[job a]\niterations = 3' "^dlgauge: noworkload\.ini:1: \[job a\] has no 'workload' key"
case_ini wlcase $'[job a]\niterations = 3\nWorkload = sleep' \
    "^dlgauge: wlcase\.ini:3: \[job a\] unknown key 'Workload' \(did you mean 'workload'\? keys are case-sensitive\)"
case_ini empty '; nothing here' "^dlgauge: empty\.ini: no \[job NAME\] sections"

run_cli missing run does-not-exist.ini
expect_one_error missing 2 "^dlgauge: does-not-exist\.ini: cannot open"

printf '[job a]\nworkload = sleep\n' >ok.ini
run_cli setsec run ok.ini --set nojob.sleep=1ms
expect_one_error setsec 2 "^dlgauge: --set nojob\.sleep=1ms: no section is called 'nojob'"
run_cli setval run ok.ini --set job.sleep=fast
expect_one_error setval 2 "^dlgauge: --set: \[job a\] sleep: "
# files written by scripts and templates: each mistake is one line naming it
case_ini envbare $'[job a]\nworkload = sleep\nsleep = $DLG_E2E_UNSET_VAR' \
    "^dlgauge: envbare\.ini:3: \[job a\] sleep: '\\\$DLG_E2E_UNSET_VAR' in .* is not expanded: write \\\$\{DLG_E2E_UNSET_VAR\}"
case_ini quote $'[job a]\nworkload = "sleep' "^dlgauge: quote\.ini:2: \[job a\] workload: unbalanced quotes"
case_ini hdrjunk $'[job a] sleep\nworkload = sleep' \
    "^dlgauge: hdrjunk\.ini:1: unexpected text 'sleep' after the section header \[job a\]"
case_ini durorder $'[job a]\nworkload = sleep\nduration = 30m1h' \
    "^dlgauge: durorder\.ini:3: \[job a\] duration: '30m1h': combine duration units from the biggest down"
case_ini hexquota $'[job a]\nworkload = sleep\ncpu_quota = 0x10' \
    "^dlgauge: hexquota\.ini:3: \[job a\] cpu_quota: '0x10' is not a finite number"
mkdir -p incdir
printf '[global]\nrepeat = 2\ninclude = ../cycle.ini\n' >incdir/base.ini
case_ini cycle $'include = incdir/base.ini\n[job a]\nworkload = sleep' \
    "^dlgauge: \./incdir/base\.ini:3: include cycle: cycle\.ini -> \./incdir/base\.ini -> \./incdir/\.\./cycle\.ini"
case_ini incdir $'include = incdir\n[job a]\nworkload = sleep' \
    "^dlgauge: incdir\.ini:1: cannot open include file '\./incdir': it is a directory"
# a byte order mark and CRLF line ends are fine
printf '\xef\xbb\xbf[global]\r\nrepeat = 2 # comment\r\n[job a]\r\nworkload = sleep\r\nduration = 1m30s\r\n' >bom.ini
run_cli bom run bom.ini --dry-run
expect_rc bom 0
grep -q 'repeat=2' bom.out || fail "bom: [global] after a byte order mark was lost: $(cat bom.out)"
grep -q 'duration=1m30s' bom.out || fail "bom: duration 1m30s: $(cat bom.out)"

run_cli onlyjob run ok.ini --job b
expect_one_error onlyjob 2 "^dlgauge: ok\.ini: no \[job b\]"

run_cli onlyjob2 run ok.ini --job a --job b
expect_one_error onlyjob2 2 "^dlgauge: ok\.ini: no \[job b\]"

# isolation = none has no cgroup and no watchdog: limits are an error, not ignored
case_ini isolation $'[job a]\nworkload = sleep\nsleep = 3s\nisolation = none\ntimeout = 1s\nmemory = 1GiB' \
    "^dlgauge: isolation\.ini:4: \[job a\] isolation = none cannot enforce memory, timeout: "
[ ! -s isolation.out ] || fail "isolation: a cell ran: $(cat isolation.out)"
case_ini isoglobal $'[global]\ncpu_quota = 0.5\n[job a]\nworkload = sleep\nisolation = none' \
    "^dlgauge: isoglobal\.ini:5: \[job a\] isolation = none cannot enforce cpu_quota: "
printf '[job a]\nworkload = sleep\nisolation = none\ntimeout = 0\ncpu_quota = 0\n' >isozero.ini
run_cli isozero run isozero.ini --dry-run
expect_rc isozero 0

run_cli help help nosuchthing
expect_one_error help 2 "^dlgauge: no command, workload, storage or sink is called 'nosuchthing'"

# a --plugin-dir that is not there is an error: plugins found elsewhere would
# otherwise run in place of the ones meant, without a word (exit 0 before)
run_cli plugdir --plugin-dir "$WORK/no-such-dir" list
expect_one_error plugdir 2 "^dlgauge: --plugin-dir '.*/no-such-dir': No such file or directory"
[ ! -s plugdir.out ] || fail "plugdir: list printed: $(head -2 plugdir.out)"
run_cli plugfile --plugin-dir "$WORK/ok.ini" run ok.ini --dry-run
expect_one_error plugfile 2 "^dlgauge: --plugin-dir '.*/ok\.ini': not a directory"

# A CSV path that cannot be created (its "directory" is a file): the error
# names the path, and no cell runs.
echo "not a directory" >afile
printf '[sink csv]\npath = %s/afile/out.csv\n[job a]\nworkload = sleep\niterations = 1\n' "$WORK" >unwritable.ini
run_cli unwritable run unwritable.ini
expect_one_error unwritable 2 "afile/out\.csv" "^dlgauge: unwritable\.ini:2: \[sink csv\]: path = "
[ ! -s unwritable.out ] || fail "unwritable: a cell ran although the sink could not open: $(cat unwritable.out)"

# --dry-run finds what opening a sink would refuse, without creating files or
# sending anything (it used to say nothing and exit 0)
case_dry() {
    local name=$1 text=$2
    shift 2
    printf '%s\n' "$text" >"$name.ini"
    run_cli "$name" run "$name.ini" --dry-run
    expect_one_error "$name" 2 "$@"
}
case_dry drypathurl $'[sink influx]\npath = dry/x.lp\nurl = http://127.0.0.1:9/write?db=a\n[job a]\nworkload = sleep' \
    "^dlgauge: drypathurl\.ini:3: \[sink influx\]: url = " "exactly one of path .*more than one is set"
case_dry dryprecision $'[sink influx]\nurl = http://127.0.0.1:9/write?db=a&precision=s\n[job a]\nworkload = sleep' \
    "^dlgauge: dryprecision\.ini:2: \[sink influx\]: url = " "precision=s: dlgauge sends nanosecond timestamps"
case_dry drycsv "$(printf '[sink csv]\npath = %s/afile/out.csv\n[job a]\nworkload = sleep' "$WORK")" \
    "^dlgauge: drycsv\.ini:2: \[sink csv\]: path = " "afile/out\.csv: cannot create its directory: .*afile is not a directory"
mkdir -p dry && echo "not a directory" >dry/afile
case_dry dryjson $'[sink log]\ntype = json\npath = dry/afile/x.jsonl\n[job a]\nworkload = sleep' \
    "^dlgauge: dryjson\.ini:3: \[sink log\]: path = " "dry/afile/x\.jsonl: cannot create its directory"
[ ! -e dry/x.lp ] || fail "--dry-run created the influx file"
# a good configuration: --dry-run passes and still creates nothing
printf '[sink csv]\npath = drynew/a/b.csv\n[sink lp]\ntype = influx\npath = drynew/c.lp\n[job a]\nworkload = sleep\n' >drygood.ini
run_cli drygood run drygood.ini --dry-run
expect_rc drygood 0
[ ! -e drynew ] || fail "--dry-run created drynew/"

# what only this machine can say is checked before any cell, at the key's line
# (a wrong data kind, a data set that is not there, more CPUs than exist
# used to fail each cell later, naming only the [job] line)
case_dry datakind $'[job a]\nworkload = io-pipeline\ndata = recordo:x.rec' \
    "^dlgauge: datakind\.ini:3: \[job a\] data: unknown kind 'recordo' in 'recordo:x\.rec'" "did you mean 'recordio'"
case_ini datamissing $'[job a]\nworkload = io\niterations = 1\ndata = raw:no/such.bin' \
    "^dlgauge: datamissing\.ini:4: \[job a\] data: no/such\.bin: No such file or directory"
[ ! -s datamissing.out ] || fail "datamissing: a cell ran: $(cat datamissing.out)"
# a folder where a file is read failed each cell (exit 1), not the plan
mkdir -p adir
case_ini datadir $'[job a]\nworkload = io-pipeline\niterations = 1\ndata = recordio:adir' \
    "^dlgauge: datadir\.ini:4: \[job a\] data: adir: Is a directory \(a file expected: recordio:FILE\)$"
[ ! -s datadir.out ] || fail "datadir: a cell ran: $(cat datadir.out)"
toomany=$(($(nproc) + 1))
case_ini cpusbig "$(printf '[job a]\nworkload = sleep\niterations = 1\ncpus = %d' $toomany)" \
    "^dlgauge: cpusbig\.ini:4: \[job a\] cpus = $toomany, but only $(nproc) CPUs are available to this process"
[ ! -s cpusbig.out ] || fail "cpusbig: a cell ran: $(cat cpusbig.out)"
# a preprocess job's output may be read by a later job of the same run
mkdir -p imgs/cat
printf '[job conv]\nworkload = preprocess\ninput = imgs\noutput = recordio:conv/t.rec\n[job read]\nworkload = io-pipeline\ndata = recordio:conv/t.rec\n' >convread.ini
run_cli convread run convread.ini --dry-run
expect_rc convread 0
# options each valid but refused together are the workload's to judge (its
# ops check), before any cell, at the key's line, in --dry-run and a run
# alike (they passed --dry-run and then failed every cell at setup)
case_dry drymean $'[job a]\nworkload = alexnet\nmean_file = /etc/os-release\nmean = 1,2,3' \
    "^dlgauge: drymean\.ini:4: \[job a\] alexnet: mean = '1,2,3' and mean_file = /etc/os-release: give one"
case_dry dryfp16 $'[job a]\nworkload = alexnet\ndevice = cpu\nprecision = fp16' \
    "^dlgauge: dryfp16\.ini:4: \[job a\] alexnet: precision 'fp16' needs a CUDA device"
case_dry dryresize $'[job a]\nworkload = preprocess\ninput = imgs\noutput = recordio:rs/t.rec\nresize_width = 64' \
    "^dlgauge: dryresize\.ini:5: \[job a\] preprocess: resize_width = 64, resize_height = 0: give both"
case_dry dryspan $'[job a]\nworkload = io\ndata = raw:/etc/os-release\nspan = 4KiB\nblock = 1MiB' \
    "^dlgauge: dryspan\.ini:5: \[job a\] io: block = 1MiB: larger than span = 4KiB"
# io's depth > 1 needs an asynchronous backend: the job's storage caps tell
# its check so (it passed --dry-run and then failed every cell at setup)
case_dry drydepth $'[job a]\nworkload = io\ndata = raw:/etc/os-release\ndepth = 4' \
    "^dlgauge: drydepth\.ini:4: \[job a\] io: depth = 4: the job's storage backend reads synchronously"
# a sweep over storages warns for the synchronous one; that cell fails at
# setup naming the key's line in its row and on stderr, as the check does
# (the job's section line before), and the asynchronous one runs
head -c 65536 /dev/zero >blob.bin
printf '[sink csv]\npath = depthrun.csv\n[job a]\nworkload = io\ndata = raw:blob.bin\nblock = 4KiB\ndepth = 4\niterations = 1\nwarmup = 0\nstorage = posix, throttle\n' >depthrun.ini
run_cli depthrun run depthrun.ini
expect_rc depthrun 1
depth_msg="depthrun\.ini:7: \[job a\] io: depth = 4: the job's storage backend reads synchronously"
grep -Eq "^dlgauge: depthrun\.ini:7: \[job a\] io: warning: depth = 4: .*the 1 cell with storage = posix will fail" \
    depthrun.err || fail "depthrun: no warning: $(cat depthrun.err)"
grep -Eq "^dlgauge: $depth_msg" depthrun.err || fail "depthrun: stderr: $(cat depthrun.err)"
grep -Eq ",error,posix,io,.*,\"$depth_msg" depthrun.csv || fail "depthrun: posix row: $(cat depthrun.csv)"
grep -q ",ok,throttle,io," depthrun.csv || fail "depthrun: throttle row: $(cat depthrun.csv)"
case_dry drypipe $'[job a]\nworkload = io-pipeline\ndata = synthetic:8\nmean_file = /etc/os-release' \
    "^dlgauge: drypipe\.ini:4: \[job a\] io-pipeline: mean_file = /etc/os-release needs pixel_range = 255"
case_dry drygemm $'[job a]\nworkload = conv\nalgo = gemm\npass = fwd' \
    "^dlgauge: drygemm\.ini:3: \[job a\] conv: algo = gemm runs pass = bwd_filter only"
case_dry dryaux $'[job a]\nworkload = inception-v3\naux = true\ncrop = 200' \
    "^dlgauge: dryaux\.ini:3: \[job a\] inception-v3: aux = true needs crop >= 299"
case_dry drylmbf16 $'[job a]\nworkload = lstm-ptb\ndevice = cuda:0\nprecision = bf16' \
    "^dlgauge: drylmbf16\.ini:4: \[job a\] lstm-ptb: precision = bf16: lstm-ptb runs bf16 on the cpu only"
case_dry drylmdata $'[job a]\nworkload = lstm-ptb\ndata = synthetic:0' \
    "^dlgauge: drylmdata\.ini:3: \[job a\] lstm-ptb: data = synthetic:0: expected synthetic or synthetic:WORDS"
case_ini runmean $'[job a]\nworkload = alexnet\niterations = 1\nmean = 1,2,3\nmean_file = /etc/os-release' \
    "^dlgauge: runmean\.ini:4: \[job a\] alexnet: mean = '1,2,3' and mean_file"
[ ! -s runmean.out ] || fail "runmean: a cell ran: $(cat runmean.out)"
# a sweep where only some cells conflict warns, naming them, and runs the others
printf '[job a]\nworkload = alexnet\ndevice = cpu\nprecision = fp32, fp16\n' >drysweep.ini
run_cli drysweep run drysweep.ini --dry-run
expect_rc drysweep 0
grep -Eq "^dlgauge: drysweep\.ini:4: \[job a\] alexnet: warning: precision 'fp16' needs a CUDA device.*: the 1 cell with precision = fp16 will fail at setup$" drysweep.err ||
    fail "drysweep: $(cat drysweep.err)"

# a section written twice names both headers
case_ini dupsec $'[job a]\nworkload = sleep\n[job a]\nworkload = stream' \
    "^dlgauge: dupsec\.ini:4: \[job a\] appears twice in this file \(lines 1 and 3\), and both set 'workload'"

# a piped configuration reads once for --dry-run, but each cell's process
# reads it again: refused before any cell (it failed every cell as "changed")
run_cli pipedry run /dev/stdin --dry-run < <(cat ok.ini)
expect_rc pipedry 0
run_cli piperun run /dev/stdin < <(cat ok.ini)
expect_one_error piperun 2 "^dlgauge: /dev/stdin: is not a regular file \(a pipe\?\)"
[ ! -s piperun.out ] || fail "piperun: a cell ran: $(cat piperun.out)"

# An unknown command-line option is a usage error.
run_cli badopt run ok.ini --bogus
expect_rc badopt 2
grep -q "unknown option '--bogus'" badopt.err || fail "badopt: $(cat badopt.err)"
finish
