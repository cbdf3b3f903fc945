# `dlgauge flush` exit codes, through the real CLI, without an InfluxDB:
#  - a sink whose configuration is wrong exits 2 (a script alerts);
#  - an InfluxDB that is unreachable (a 127.0.0.1 port nothing listens on)
#    exits 1 and keeps the spool as it was (a script retries later);
#  - a spool the sink cannot read when it opens (an I/O failure, not the
#    configuration) exits 1 (it used to exit 2, as every open failure did);
#  - a sink whose open returns -DLG_EIO without saying why (no host->error)
#    exits 1 too (it used to exit 2: only host->error's code counted), and
#    another code it returns so exits 2;
#  - one sink failing does not keep the others from being flushed, and the
#    worst outcome is the exit code (2 over 1);
#  - a file with no [sink] section exits 2 with one line saying so.
#   bash flush_exit.sh DLGAUGE PLUGIN_DIR TEST_PLUGIN_DIR WORK_DIR
. "$(dirname "$0")/../e2e/lib.sh"

flush() { run_cli "$1" flush "$1.ini"; } # status in RC, stderr in NAME.err
expect() { # expect NAME RC TEXT: exit status and a line of stderr
    expect_rc "$1" "$2"
    grep -qF -- "$3" "$1.err" || fail "$1: stderr lacks '$3': $(cat "$1.err")"
}

# a port on 127.0.0.1 that nothing listens on (bound, then closed)
PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL="http://127.0.0.1:$PORT/write?db=dlg"
spool() { # spool FILE: two points a previous run could not send
    mkdir -p "$(dirname "$1")"
    printf 'dlgauge_result,job=a throughput=1 1\ndlgauge_result,job=b throughput=2 2\n' > "$1"
}
sink() { # sink NAME SPOOL_DIR: an influx sink at the unreachable URL
    printf '[sink %s]\ntype = influx\nurl = %s\nspool_dir = %s\nretries = 0\ntimeout = 2s\n' "$1" "$URL" "$2"
}

# 1. configuration errors: exit 2, the key's file:line named (not the
#    [sink] line, as it used to be)
printf '[sink influx]\nurl = ftp://127.0.0.1/x\n' > badurl.ini
flush badurl
expect_one_error badurl 2 '^dlgauge: badurl\.ini:2: \[sink influx\]: url = ftp://127\.0\.0\.1/x: not an http:// or https:// URL$'
: > notadir
printf '[sink csv]\n\npath = notadir/run.csv\n' > badpath.ini
flush badpath
expect_one_error badpath 2 '^dlgauge: badpath\.ini:3: \[sink csv\]: path = notadir/run\.csv: cannot create its directory: notadir is not a directory$'

# 2. unreachable: exit 1, the spool kept byte for byte; one line saying why
#    and what stays where (the open's warning came first, all but the same)
spool down/influx.lp
cp down/influx.lp down.before
sink influx down > down.ini
flush down
expect_one_error down 1 "^dlgauge: down\.ini:1: \[sink influx\]: InfluxDB at http://127\.0\.0\.1:$PORT/write\?db=dlg&precision=ns is unreachable \(" \
    "2 points stay spooled in $WORK/down/influx\.lp until"
cmp -s down/influx.lp down.before || fail "down: the spool changed"
grep -q "flushed" down.err && fail "down: claims to have flushed"

# 3. a spool that cannot be read when the sink opens: exit 1, not 2
mkdir -p unreadable/influx.lp
sink influx unreadable > unreadable.ini
flush unreadable
expect_one_error unreadable 1 'unreadable/influx\.lp: cannot read the spool: Is a directory$'

# 3b. an open that fails with -DLG_EIO and no message: exit 1 (retry), the
#     section named with the code; another code: exit 2
printf '[sink quiet]\nplugin = %s/silent_sink.so\ntype = silent\n' "$TPLUG" > silent.ini
flush silent
expect_one_error silent 1 '^dlgauge: silent\.ini:1: \[sink quiet\]: open failed \(DLG_EIO\) without saying why$'
printf '[sink quiet]\nplugin = %s/silent_sink.so\ntype = silent\ncode = 1\n' "$TPLUG" > silentinval.ini
flush silentinval
expect_one_error silentinval 2 '^dlgauge: silentinval\.ini:1: \[sink quiet\]: open failed \(DLG_EINVAL\) without saying why$'

# 4. one sink's failure leaves the others flushed; 2 wins over 1
spool other/second.lp
cp other/second.lp other.before
mkdir -p unreadable2/first.lp
{ sink first unreadable2; sink second other; } > two.ini
flush two
expect two 1 "unreadable2/first.lp: cannot read the spool"
grep -qF "2 points stay spooled in $WORK/other/second.lp" two.err || fail "two: the second sink was not flushed: $(cat two.err)"
{ printf '[sink bad]\ntype = influx\norg = o\n'; sink second other; } > mixed.ini
flush mixed
expect mixed 2 "set exactly one of path (a file), url (HTTP) or udp (HOST:PORT); none is set"
grep -qF "2 points stay spooled in $WORK/other/second.lp" mixed.err || fail "mixed: the good sink was not flushed: $(cat mixed.err)"
cmp -s other/second.lp other.before || fail "mixed: the spool changed"

# 4b. a file with no [sink] section (the wrong file): one line, exit 2; it
#     said "flushed 0 sinks" and exited 0
printf '[job a]\nworkload = sleep\n' > nosink.ini
run_cli nosink -v flush nosink.ini
expect_one_error nosink 2 '^dlgauge: nosink\.ini has no \[sink\] section: nothing to flush'

# 5. everything delivered (a line protocol file): exit 0
printf '[sink lp]\ntype = influx\npath = out/run.lp\n' > ok.ini
flush ok
expect_rc ok 0
finish
