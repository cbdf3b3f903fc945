#!/usr/bin/env bash
# The io workload against fio: the same file, identical parameters, in the
# same session.  Each case runs REPEATS times per tool, alternating which
# tool goes first, with the page cache dropped before every run; prints the
# medians and the ratio dlgauge/fio (1.00 = as fast as fio).
#
#   scripts/bench/io-vs-fio.sh [BUILD_DIR]
#   env: FILE (default BUILD_DIR/bench/io-bench.bin), SIZE_MB (1024),
#        RUNTIME seconds per run (3), REPEATS (5)
#
# Cases: sequential 1 MiB O_DIRECT reads (storage = direct vs psync
# direct=1), random 4 KiB buffered reads at depth 1 (posix vs psync), random
# 4 KiB O_DIRECT reads at depth 32 (uring vs io_uring).  Without root the
# page cache cannot be dropped: the buffered case then runs with O_DIRECT
# for both tools, and the script says so.  A last case reads a small file
# from a warm page cache (fio --invalidate=0, nothing dropped): no disk, so
# it compares the tools' own per-I/O cost, free of the disk's noise.
# fio's io_uring gets its best settings: the file registered (as dlgauge's
# uring, fixed_files) and registered buffers (5-15% more IOPS here).  Each
# tool submits as it does best: dlgauge's uring 4 reads per io_uring_enter
# (submit_batch, its default), fio one (its default iodepth_batch_submit;
# batched submission measured slower for it); the script prints both.  p50 is
# submit to completion on both sides (fio's lat, not its clat, which leaves
# out the submission).  Buffered random reads: dlgauge's posix opens the
# file with advice = random, as fio does (its default fadvise_hint): without
# it the kernel's readahead pulls neighbouring blocks into the cache, a read
# of far more than 4 KiB per miss, and later reads hit the cache.
#
# PROC_SYS_VM (default /proc/sys/vm): where drop_caches and nr_hugepages are
# (the tests point it at a scratch folder).
set -euo pipefail

BUILD=${1:-build-tools}
DLG=$BUILD/bin/dlgauge
PLUG=$BUILD/lib/dlgauge
FILE=${FILE:-$BUILD/bench/io-bench.bin}
SIZE_MB=${SIZE_MB:-1024}
RUNTIME=${RUNTIME:-3}
REPEATS=${REPEATS:-5}
WARM_MB=${WARM_MB:-64}

command -v fio >/dev/null || { echo "fio not found: apt-get install fio" >&2; exit 1; }
[ -x "$DLG" ] && [ -f "$PLUG/tools.so" ] || { echo "build first: ninja -C $BUILD dlgauge_cli tools posix direct uring json" >&2; exit 1; }
FILE=$(realpath -m "$FILE")

mkdir -p "$(dirname "$FILE")"
if [ ! -f "$FILE" ] || [ "$(stat -c %s "$FILE")" -ne $((SIZE_MB << 20)) ]; then
    echo "writing $SIZE_MB MiB of random data to $FILE"
    dd if=/dev/urandom of="$FILE" bs=1M count="$SIZE_MB" status=none
    sync
fi

WARM=$(dirname "$FILE")/io-bench-warm.bin
if [ ! -f "$WARM" ] || [ "$(stat -c %s "$WARM")" -ne $((WARM_MB << 20)) ]; then
    dd if=/dev/urandom of="$WARM" bs=1M count="$WARM_MB" status=none
fi

can_drop=no
vm=${PROC_SYS_VM:-/proc/sys/vm}
if sync && (echo 3 >"$vm/drop_caches") 2>/dev/null; then can_drop=yes; fi
drop() { if [ $can_drop = yes ]; then sync; echo 3 >"$vm/drop_caches"; fi; }
posix_direct=0
posix_storage=posix_random
if [ $can_drop = no ]; then posix_direct=1; posix_storage=direct; fi

echo "file: $FILE ($SIZE_MB MiB on $(stat -f -c %T "$FILE")), $RUNTIME s per run, $REPEATS runs per tool, $(fio --version)"
echo "page cache dropped before each run: $can_drop$([ $can_drop = no ] && echo ' (not root: the buffered case uses O_DIRECT for both tools)')"
# shellcheck source=fio_hugepages.sh
. "$(dirname "$0")/fio_hugepages.sh"
fio_hugepages_reserve 20 # the largest case: 32 x 4 KiB or 1 MiB, with room
echo

# name | dlgauge storage | io keys | fio args  (a "warm" name: small file, cache kept)
CASES=(
  "seq-1MiB-qd1-direct|direct|pattern = seq, block = 1MiB|--rw=read --bs=1M --ioengine=psync --iodepth=1 --direct=1"
  "rand-4KiB-qd1-posix|$posix_storage|pattern = rand, block = 4KiB|--rw=randread --bs=4k --ioengine=psync --iodepth=1 --direct=$posix_direct --norandommap --randrepeat=0"
  "rand-4KiB-qd32-uring|uring32|pattern = rand, block = 4KiB, depth = 32|--rw=randread --bs=4k --ioengine=io_uring --iodepth=32 --direct=1 --norandommap --randrepeat=0 --registerfiles=1 --fixedbufs=1"
  "rand-4KiB-qd1-posix-warm|posix_random|pattern = rand, block = 4KiB|--rw=randread --bs=4k --ioengine=psync --iodepth=1 --direct=0 --invalidate=0 --norandommap --randrepeat=0"
)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; fio_hugepages_restore' EXIT
echo "io_uring submission: dlgauge submit_batch = 4 (uring's default), fio iodepth_batch_submit = 1 (fio's default; each tool's best measured here)"

run_dlg() { # name storage keys run file
    local ini=$tmp/$1.$4.ini
    {
        echo "[global]"
        echo "sinks = j"
        echo "[sink j]"
        echo "type = json"
        echo "path = $tmp/$1.$4.jsonl"
        echo "[storage posix_random]"
        echo "type = posix"
        echo "advice = random"
        echo "[storage uring32]"
        echo "type = uring"
        echo "depth = 32"
        echo "direct = true"
        echo "[job $1]"
        echo "workload = io"
        echo "data = raw:$5"
        echo "storage = $2"
        echo "warmup = 0"
        echo "seed = $((RANDOM + 1))"
        echo "duration = ${RUNTIME}s"
        tr ',' '\n' <<<"$3" | sed 's/^ *//'
    } >"$ini"
    "$DLG" -q --plugin-dir "$PLUG" run "$ini" >/dev/null
    python3 -c 'import json,sys
f = next(j["fields"] for j in map(json.loads, open(sys.argv[1])) if j["measurement"] == "dlgauge_result")
print(f["throughput"], f["iops"], f.get("io_lat_p50_us", 0))' "$tmp/$1.$4.jsonl"
}

for c in "${CASES[@]}"; do
    IFS='|' read -r name storage keys fargs <<<"$c"
    file=$FILE size=$SIZE_MB
    case $name in *warm) file=$WARM size=$WARM_MB; cat "$WARM" >/dev/null ;; esac
    : >"$tmp/$name.dlg"
    : >"$tmp/$name.fio"
    for ((r = 0; r < REPEATS; r++)); do
        # alternate who goes first so drift (thermal, cache) favours neither
        for who in $([ $((r % 2)) = 0 ] && echo "dlg fio" || echo "fio dlg"); do
            case $name in *warm) cat "$file" >/dev/null ;; *) drop ;; esac
            if [ $who = dlg ]; then
                run_dlg "$name" "$storage" "$keys" "$r" "$file" >>"$tmp/$name.dlg"
            else
                # shellcheck disable=SC2086
                fio --name="$name" --filename="$file" --size="${size}M" --time_based \
                    --runtime="$RUNTIME" --output-format=json --lat_percentiles=1 $FIO_MEM $fargs |
                    python3 -c 'import json,sys; r=json.load(sys.stdin)["jobs"][0]["read"]; print(r["bw_bytes"], r["iops"], r["lat_ns"]["percentile"]["50.000000"]/1e3)' >>"$tmp/$name.fio"
            fi
        done
    done
done

python3 - "$tmp" "${CASES[@]}" <<'PY'
import statistics, sys
tmp, cases = sys.argv[1], sys.argv[2:]
def load(path):
    rows = [tuple(map(float, l.split())) for l in open(path) if l.strip()]
    return [statistics.median(r[i] for r in rows) for i in range(3)] + [len(rows)]
print(f"{'case':22} {'dlgauge MB/s':>12} {'IOPS':>9} {'p50 us':>7} {'fio MB/s':>9} {'IOPS':>9} {'p50 us':>7} {'dlgauge/fio':>11}")
for c in cases:
    name = c.split('|')[0]
    dbw, dio, dlat, n = load(f"{tmp}/{name}.dlg")
    fbw, fio, flat, _ = load(f"{tmp}/{name}.fio")
    print(f"{name:22} {dbw/1e6:12.1f} {dio:9.0f} {dlat:7.1f} {fbw/1e6:9.1f} {fio:9.0f} {flat:7.1f} {dbw/fbw:11.3f}")
print(f"(medians of {n} runs per tool; MB = 10^6 bytes; ratio = throughput dlgauge / fio)")
PY
