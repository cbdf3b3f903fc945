# tools.so through the real CLI: io reads exactly the right bytes through
# every storage backend (CRC sums against an independent computation),
# throttle bandwidth within 5%, bad input; preprocess into RecordIO, then
# io-pipeline over it (AU and data wait).
#   bash tools_cli.sh DLGAUGE PLUGIN_DIR MKJPEG WORK_DIR
set -u
DLG=$(realpath "$1")
PLUGDIR=$(realpath "$2")
MKJPEG=$(realpath "$3")
WORK=$(realpath -m "$4")
if [ -n "${PYTHON3:-}" ]; then PY=$PYTHON3; elif [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=python3; fi
unset DLGAUGE_PLUGIN_PATH
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK" || exit 1
FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }

# run NAME: runs NAME.ini with a json sink into NAME.jsonl; status in RC
run() {
    "$DLG" -q --plugin-dir "$PLUGDIR" run "$1.ini" >"$1.out" 2>"$1.err"
    RC=$?
}
# result FILE (python): the fields of the first dlgauge_result point
RESULT='import json,sys
def result(path):
    for line in open(path):
        j = json.loads(line)
        if j["measurement"] == "dlgauge_result":
            return {**j["fields"], **j["tags"]}
    return {}
'
# field NAME KEY: a result field of NAME.jsonl, or its tag (io's depth: a
# metric named like an option is a tag)
field() { $PY -c "$RESULT"'
print(result(sys.argv[1]).get(sys.argv[2], ""))' "$1.jsonl" "$2"; }
header() { printf '[global]\nsinks = j\n[sink j]\ntype = json\npath = %s.jsonl\n' "$1"; }

# ---- data: a file with a short last block, and one of identical blocks ----
B=65536
$PY - <<'PY'
import random, zlib
rnd = random.Random(5)
data = bytes(rnd.getrandbits(8) for _ in range(2 * 1048576 + 8192 + 100))
open("seq.bin", "wb").write(data)
B = 65536
blocks = [data[i:i + B] for i in range(0, len(data), B)]
open("seq.expect", "w").write("%d %016x\n" % (len(blocks), sum(zlib.crc32(b) for b in blocks) % 2**64))
blk = bytes(rnd.getrandbits(8) for _ in range(B))
open("same.bin", "wb").write(blk * 32)
open("same.crc", "w").write("%d\n" % zlib.crc32(blk))
PY
read -r NBLK SEQSUM <seq.expect
SAMECRC=$(cat same.crc)

storages() {
    printf '[storage d]\ntype = direct\n'
    printf '[storage m]\ntype = mmap\n'
    printf '[storage u]\ntype = uring\ndepth = 32\n'
    printf '[storage ud]\ntype = uring\ndepth = 16\ndirect = true\n'
    printf '[storage t]\ntype = throttle\ninner = posix\nbandwidth = 1GB\n'
}

# ---- sequential: one pass over the file, CRC sum known -----------------------
for st in posix d m u ud t; do
    depth=1
    case $st in u) depth=32 ;; ud) depth=16 ;; t) depth=4 ;; esac
    n=seq-$st
    { header $n; storages; printf '[job %s]\nworkload = io\ndata = raw:seq.bin\nblock = 64KiB\nstorage = %s\ndepth = %s\nchecksum = true\nstep_ios = %s\niterations = 1\nwarmup = 0\n' \
        $n $st $depth $NBLK; } >$n.ini
    run $n
    [ $RC = 0 ] || { fail "$n: exit $RC: $(cat $n.err)"; continue; }
    [ "$(field $n crc_sum)" = "$SEQSUM" ] || fail "$n: checksum $(field $n crc_sum), expected $SEQSUM"
    [ "$(field $n items)" = "$(stat -c %s seq.bin)" ] || fail "$n: items $(field $n items), expected the file size"
    [ "$(field $n storage_read_bytes)" = "$(stat -c %s seq.bin)" ] || fail "$n: storage_read_bytes $(field $n storage_read_bytes)"
    [ "$(field $n ios)" = "$NBLK" ] || fail "$n: ios $(field $n ios), expected $NBLK"
    # io_uring reads land in buffers registered once (fio's --fixedbufs)
    case $st in u | ud) want_reg=1 ;; *) want_reg=0 ;; esac
    [ "$(field $n buffer_registered)" = "$want_reg" ] || fail "$n: buffer_registered $(field $n buffer_registered), expected $want_reg"
done

# ---- random: 60 reads of identical blocks: the sum is 60 x one CRC ----------
for st in posix d u; do
    depth=1
    [ $st = u ] && depth=8
    n=rand-$st
    { header $n; storages; printf '[job %s]\nworkload = io\ndata = raw:same.bin\npattern = rand\nblock = 64KiB\nstorage = %s\ndepth = %s\nchecksum = true\nstep_ios = 3\niterations = 20\nwarmup = 0\n' \
        $n $st $depth; } >$n.ini
    run $n
    [ $RC = 0 ] || { fail "$n: exit $RC: $(cat $n.err)"; continue; }
    want=$($PY -c "print('%016x' % (60 * $SAMECRC))")
    [ "$(field $n crc_sum)" = "$want" ] || fail "$n: checksum $(field $n crc_sum), expected $want"
    [ "$(field $n ios)" = 60 ] || fail "$n: ios $(field $n ios), expected 60"
done

# ---- the storage's queue depth bounds io's: unset, io takes it (also through
# a throttle over it); asked for more, a setup error names both -------------
for st in ud tud; do
    n=depth-$st
    { header $n; storages; printf '[storage tud]\ntype = throttle\ninner = ud\n'
      printf '[job %s]\nworkload = io\ndata = raw:seq.bin\nblock = 64KiB\nstorage = %s\niterations = 2\nwarmup = 0\n' $n $st; } >$n.ini
    run $n
    [ $RC = 0 ] || { fail "$n: exit $RC: $(cat $n.err)"; continue; }
    [ "$(field $n depth)" = 16 ] || fail "$n: depth $(field $n depth), expected the storage's 16"
done
n=depth-over
{ header $n; storages; printf '[job %s]\nworkload = io\ndata = raw:seq.bin\nstorage = ud\ndepth = 64\niterations = 2\n' $n; } >$n.ini
run $n
[ $RC = 1 ] || fail "$n: exit $RC, expected 1 (the cell fails at setup)"
grep -q 'depth = 64: the job.s storage takes at most 16 reads in flight' $n.err || fail "$n: $(cat $n.err)"

# ---- cache = auto: under a memory limit the file is evicted first (pages
# cached before the cell are not charged to it), else left alone ------------
for mem in none 256MiB; do
    n=cache-$mem
    { header $n; printf '[job %s]\nworkload = io\ndata = raw:seq.bin\nblock = 64KiB\niterations = 1\nwarmup = 0\n' $n
      [ $mem = none ] || printf 'memory = %s\n' $mem; } >$n.ini
    run $n
    [ $RC = 0 ] || { fail "$n: exit $RC: $(cat $n.err)"; continue; }
    case $mem in none) want='^none$' ;; *) want='^fadvise' ;; esac
    field $n cache_method | grep -Eq "$want" || fail "$n: cache_method '$(field $n cache_method)', expected /$want/"
done

# ---- cache = warm: pre-read for buffered reads (a throttle over posix
# too), not for O_DIRECT ones, which pass the page cache by: no "read"
# claimed there, and a warning says so -------------------------------------
for st in posix d ud tud; do
    n=warm-$st
    { header $n; storages; printf '[storage tud]\ntype = throttle\ninner = ud\n'
      printf '[job %s]\nworkload = io\ndata = raw:seq.bin\nblock = 64KiB\nstorage = %s\ncache = warm\niterations = 1\nwarmup = 0\n' $n $st; } >$n.ini
    run $n
    [ $RC = 0 ] || { fail "$n: exit $RC: $(cat $n.err)"; continue; }
    case $st in posix) want='^read$' ;; *) want='^none \(O_DIRECT\)$' ;; esac
    field $n cache_method | grep -Eq "$want" || fail "$n: cache_method '$(field $n cache_method)', expected /$want/"
    if [ $st = posix ]; then
        grep -q 'warning' $n.err && fail "$n: a warning: $(cat $n.err)"
    else
        grep -q 'cache = warm: the storage reads .*seq.bin with O_DIRECT, past the page cache: nothing pre-read' $n.err ||
            fail "$n: no O_DIRECT warning: $(cat $n.err)"
    fi
done

# ---- throttle: measured bandwidth within 5% of the limit (a file of whole
# blocks: an even length keeps the emulated and the measured bytes equal) --
n=throttle
{ header $n; printf '[storage slow]\ntype = throttle\ninner = posix\nbandwidth = 40MiB\n'
  printf '[job %s]\nworkload = io\ndata = raw:same.bin\nblock = 256KiB\nstorage = slow\nwarmup = 2\nduration = 1500ms\n' $n; } >$n.ini
run $n
if [ $RC != 0 ]; then fail "$n: exit $RC: $(cat $n.err)"; else
    $PY -c 'import sys; t = float(sys.argv[1]); lim = 40 * 2**20; sys.exit(0 if abs(t / lim - 1) <= 0.05 else 1)' "$(field $n throughput)" ||
        fail "$n: throughput $(field $n throughput) bytes/s, limit 41943040 (40 MiB/s) +-5%"
fi
# the row says what the throttle ran with, so a report can judge it by its limit
case " $(field $n storage_config) " in
*" type=throttle "*" bandwidth=40MiB "*) ;;
*) fail "$n: storage_config '$(field $n storage_config)' lacks type=throttle ... bandwidth=40MiB" ;;
esac
"$DLG" --plugin-dir "$PLUGDIR" report $n.jsonl >$n.report 2>&1 || fail "$n: report failed: $(cat $n.report)"
grep -Eq "= (9[5-9]|10[0-5])% of profile slow's limit" $n.report ||
    fail "$n: report does not judge 'slow' by its 40 MiB/s: $(cat $n.report)"

# ---- two throttles alike but for their inner storages' options: the rows
# tell them apart (storage_config names the inner's keys as inner.KEY),
# and the report still judges each by its own limit -----------------------
n=inner-config
{ header $n; storages
  printf '[storage tu]\ntype = throttle\ninner = u\nbandwidth = 8MiB\n[storage tud]\ntype = throttle\ninner = ud\nbandwidth = 8MiB\n'
  printf '[job %s]\nworkload = io\ndata = raw:seq.bin\nblock = 64KiB\nstorage = tu, tud\niterations = 4\nwarmup = 1\n' $n; } >$n.ini
run $n
if [ $RC != 0 ]; then fail "$n: exit $RC: $(cat $n.err)"; else
    $PY -c "$RESULT"'
want = {"tu": "type=throttle inner=u bandwidth=8MiB inner.type=uring inner.depth=32",
        "tud": "type=throttle inner=ud bandwidth=8MiB inner.type=uring inner.depth=16 inner.direct=true"}
got = {}
for line in open(sys.argv[1]):
    j = json.loads(line)
    if j["measurement"] == "dlgauge_result":
        got[j["tags"].get("storage") or j["fields"].get("storage")] = j["fields"].get("storage_config")
for k, v in want.items():
    # the inner storage'"'"'s defaults are written too: compare the keys given
    have = set((got.get(k) or "").split())
    if not set(v.split()) <= have:
        sys.exit(f"{k}: storage_config {got.get(k)!r} lacks {v!r}")
' $n.jsonl || fail "$n: storage_config does not name the inner storages' options"
    "$DLG" --plugin-dir "$PLUGDIR" report $n.jsonl >$n.report 2>&1 || fail "$n: report failed: $(cat $n.report)"
    grep -q "without the profile's limits\|is refused" $n.report && fail "$n: report refused an inner key: $(cat $n.report)"
    for st in tu tud; do
        grep -q "of profile $st's limit (8.4 MB/s)" $n.report || fail "$n: report does not judge $st by its 8MiB: $(cat $n.report)"
    done
fi

# ---- bad input: one clear error line each ------------------------------------
bad() { # NAME PATTERN KEYS...
    local n=$1 pat=$2
    shift 2
    { header $n; printf '[job %s]\nworkload = io\n' $n; printf '%s\n' "$@"; } >$n.ini
    run $n
    [ $RC != 0 ] || fail "$n: exit 0, expected an error"
    grep -Eq -- "$pat" $n.err || fail "$n: stderr lacks /$pat/: $(cat $n.err)"
}
bad io-depth-sync 'depth = 4: .*synchronously' 'data = raw:seq.bin' 'depth = 4'
bad io-block-big 'block = 4MiB: larger than' 'data = raw:seq.bin' 'block = 4MiB'
bad io-span-big 'span = 1GiB: larger than' 'data = raw:seq.bin' 'span = 1GiB'
bad io-missing 'nothere.bin' 'data = raw:nothere.bin'
bad io-dataset 'io-pipeline' 'data = recordio:x.rec'
bad io-range 'block' 'data = raw:seq.bin' 'block = 2GiB'
bad io-direct-align 'multiple of' 'data = raw:seq.bin' 'block = 1000' 'storage = direct'

# ---- preprocess via the CLI, then io-pipeline over its RecordIO ----------------
"$MKJPEG" imgs 4 10 3 || fail "mkjpeg failed"
n=prep
{ header $n; printf '[job %s]\nworkload = preprocess\ninput = imgs\noutput = recordio:train.rec\nthreads = 2\niterations = 37\nwarmup = 3\n' $n; } >$n.ini
run $n
[ $RC = 0 ] || fail "$n: exit $RC: $(cat $n.err)"
[ "$(field $n passes)" = 1 ] || fail "$n: passes $(field $n passes)"
[ "$(field $n unit)" = images ] || fail "$n: unit $(field $n unit)"
[ -s train.rec ] && [ -s train.idx ] || fail "$n: train.rec / train.idx missing"
[ "$(wc -l <train.idx)" = 40 ] || fail "$n: train.idx has $(wc -l <train.idx) lines, expected 40"

# a .lst as Windows tools and scripts leave it: UTF-8 BOM, CRLF, a trailing
# tab, an absolute path (im2rec's os.path.join keeps it); resized, then read
n=prep-quirks
set -- $(cd imgs && find . -name '*.jpg' | sort | head -3)
printf '\357\273\2770\t0\t%s\t\r\n1\t1\t%s\r\n2\t2\t%s\n' "${1#./}" "$WORK/imgs/${2#./}" "${3#./}" >imgs/quirks.lst
{ header $n; printf '[job %s]\nworkload = preprocess\ninput = imgs/quirks.lst\noutput = recordio:quirks.rec\nresize = 24\niterations = 3\nwarmup = 0\n' $n; } >$n.ini
run $n
[ $RC = 0 ] || fail "$n: exit $RC: $(cat $n.err)"
[ "$(field $n passes)" = 1 ] || fail "$n: passes $(field $n passes)"
n=pipe-quirks
{ header $n; printf '[job %s]\nworkload = io-pipeline\ndata = recordio:quirks.rec\nbatch = 2\ncrop = 16\ncompute = 0\niterations = 3\nwarmup = 0\n' $n; } >$n.ini
run $n
[ $RC = 0 ] || fail "$n: exit $RC: $(cat $n.err)"
[ "$(field $n dataset_items)" = 3 ] || fail "$n: dataset_items $(field $n dataset_items), expected 3"
[ "$(field $n dataset_bytes)" = "$(stat -c %s quirks.rec)" ] ||
    fail "$n: dataset_bytes $(field $n dataset_bytes), expected the .rec's $(stat -c %s quirks.rec)"
# files: the loader does not size the files, so no dataset_bytes (not 0)
n=pipe-files
{ header $n; printf '[job %s]\nworkload = io-pipeline\ndata = files:imgs\nbatch = 4\ncrop = 16\ncompute = 0\niterations = 2\nwarmup = 0\n' $n; } >$n.ini
run $n
[ $RC = 0 ] || fail "$n: exit $RC: $(cat $n.err)"
[ "$(field $n dataset_items)" = 40 ] || fail "$n: dataset_items $(field $n dataset_items), expected 40"
want=$(find imgs -type f -name '*.jpg' -printf '%s\n' | awk '{s += $1} END {print s}')
[ "$(field $n dataset_bytes)" = "$want" ] || fail "$n: dataset_bytes $(field $n dataset_bytes), expected the images' $want"

# one worker, pass-through (no decode), 20 ms per read: its time is reading,
# and the report names storage from those fields
n=prep-slow
{ header $n; printf '[storage slow]\ntype = throttle\ninner = posix\nlatency = 20ms\n'
  printf '[job %s]\nworkload = preprocess\ninput = imgs\noutput = recordio:slow.rec\nstorage = slow\nthreads = 1\niterations = 12\nwarmup = 1\n' $n; } >$n.ini
run $n
if [ $RC != 0 ]; then fail "$n: exit $RC: $(cat $n.err)"; else
    $PY -c "$RESULT"'
f = result(sys.argv[1])
r, d, busy = f["loader_read_s"], f["loader_decode_s"], f["loader_busy"]
print(f"read {r:.3f} s, transform {d:.3f} s, busy {busy:.2f}", file=sys.stderr)
sys.exit(0 if r > 0.2 and r / (r + d) > 0.9 and busy > 0.8 else 1)' $n.jsonl ||
        fail "$n: expected the worker busy (> 0.8) and > 90% of it reading: $(cat $n.jsonl)"
    "$DLG" --plugin-dir "$PLUGDIR" report $n.jsonl --color never >$n.report 2>&1 ||
        fail "$n: report failed: $(cat $n.report)"
    grep -q 'input-bound: storage (loader threads [0-9]*% busy, [0-9]*% of it reading' $n.report ||
        fail "$n: report verdict is not storage from the worker times: $(grep -A2 bottlenecks $n.report)"
fi

n=pipe
{ header $n; printf '[job %s]\nworkload = io-pipeline\ndata = recordio:train.rec\nbatch = 4\ncrop = 32\nthreads = 2\ncompute = 20ms\niterations = 15\nwarmup = 2\n' $n; } >$n.ini
run $n
if [ $RC != 0 ]; then fail "$n: exit $RC: $(cat $n.err)"; else
    $PY -c "$RESULT"'
f = result(sys.argv[1])
exec(sys.stdin.read())' "$n.jsonl" <<'PY' || fail "$n: AU / data wait off: $(cat $n.jsonl)"
au, mean_step = f["au"], f["latency_mean_us"] / 1e6
# compute / step time, with the compute as spent: a loaded box wakes the
# 20 ms sleeps late (23 ms seen), and AU counts what the sleeps took
compute = f["compute_s"] / f["steps"]
expect = compute / mean_step
ok = 0.020 <= compute < mean_step and abs(au / expect - 1) < 0.1 and 0.5 < au <= 1.0
ok = ok and f["data_wait_fraction"] < 0.3
ok = ok and f["unit"] == "images" and f["items"] == 60 and f["dataset_items"] == 40
ok = ok and 0 < f["loader_busy"] < 0.6  # two workers, a batch per 20 ms: mostly idle
# and it is their read + decode time over wall x threads (pipe-starved's
# worker is all reading, so this is where decode must count)
busy = (f["loader_read_s"] + f["loader_decode_s"]) / (f["wall_s"] * f["loader_threads"])
ok = ok and abs(f["loader_busy"] / busy - 1) < 0.2
print(f"au {au:.3f} expected {expect:.3f} wait {f['data_wait_fraction']:.3f} loader busy {f['loader_busy']:.2f}",
      file=sys.stderr)
sys.exit(0 if ok else 1)
PY
fi
# no compute: the step is all waiting.  The worker is starved by a 5 ms
# disk, not by the CPU: a batch then takes 40 ms whatever else runs, while
# CPU-bound 0.5 ms batches on a loaded box lost a scheduler slice (~4 ms)
# at most hand-offs (the worker preempted as it wakes the consumer) and
# read as 30-70% busy
n=pipe-starved
{ header $n; printf '[storage disk5]\ntype = throttle\ninner = posix\nlatency = 5ms\n'
  printf '[job %s]\nworkload = io-pipeline\ndata = recordio:train.rec\nstorage = disk5\nbatch = 8\ncrop = 64\nthreads = 1\ncompute = 0\niterations = 12\nwarmup = 1\nprefetch = 2\n' $n; } >$n.ini
run $n
if [ $RC != 0 ]; then fail "$n: exit $RC: $(cat $n.err)"; else
    $PY -c "$RESULT"'
f = result(sys.argv[1])
print("au %.3f wait %.3f loader busy %.2f" % (f["au"], f["data_wait_fraction"], f["loader_busy"]), file=sys.stderr)
sys.exit(0 if f["au"] < 0.1 and f["data_wait_fraction"] > 0.5 and f["loader_busy"] > 0.8 else 1)' $n.jsonl ||
        fail "$n: expected au < 0.1, data wait > 0.5 and its one worker always busy: $(cat $n.jsonl)"
fi

if [ "$FAILS" -gt 0 ]; then
    echo "$FAILS check(s) failed (outputs kept in $WORK)" >&2
    exit 1
fi
echo "all checks passed"
