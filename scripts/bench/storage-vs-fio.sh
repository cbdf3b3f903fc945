#!/usr/bin/env bash
# Side-by-side raw-read benchmark: dlgauge storage backends (through
# storage_bench, built in tests/storage) against fio with identical
# parameters on the same file, in the same run.  Prints the median of
# REPEATS runs per case and the ratio dlgauge/fio (1.00 = as fast as fio).
#
#   scripts/bench/storage-vs-fio.sh [BUILD_DIR]
#   env: FILE (default BUILD_DIR/bench/storage-bench.bin), SIZE_MB (1024),
#        RUNTIME seconds per run (3), REPEATS (3)
#
# Honesty: O_DIRECT cases bypass the page cache for both tools; for the
# buffered (posix) case the page cache is dropped before every run when
# /proc/sys/vm/drop_caches is writable (root); without that the file just
# written sits in the cache, so that case then runs O_DIRECT for both tools
# (as io-vs-fio.sh does), and the script says so.  fio's io_uring gets its
# best settings: the file registered (as dlgauge's uring, fixed_files) and
# registered buffers (as dlgauge's since the tenth session; measured 5-15%
# more IOPS here; batched submission measured slower, so fio keeps its
# default of one).  Buffered random reads: dlgauge's posix opens the file
# with advice = random, as fio does (its default fadvise_hint): without it
# the kernel's readahead pulls neighbouring blocks into the cache, a read
# of far more than 4 KiB per miss, and later reads hit the cache.
#
# PROC_SYS_VM (default /proc/sys/vm): where drop_caches and nr_hugepages are
# (the tests point it at a scratch folder).
set -euo pipefail

BUILD=${1:-build-storage}
BENCH=$BUILD/bin/storage_bench
export DLGAUGE_PLUGIN_PATH=$BUILD/lib/dlgauge
FILE=${FILE:-$BUILD/bench/storage-bench.bin}
SIZE_MB=${SIZE_MB:-1024}
RUNTIME=${RUNTIME:-3}
REPEATS=${REPEATS:-3}

command -v fio >/dev/null || { echo "fio not found: apt-get install fio" >&2; exit 1; }
[ -x "$BENCH" ] || { echo "$BENCH not built: ninja -C $BUILD storage_bench" >&2; exit 1; }

mkdir -p "$(dirname "$FILE")"
if [ ! -f "$FILE" ] || [ "$(stat -c %s "$FILE")" -ne $((SIZE_MB << 20)) ]; then
    echo "writing $SIZE_MB MiB of random data to $FILE"
    dd if=/dev/urandom of="$FILE" bs=1M count="$SIZE_MB" status=none
    sync
fi

can_drop=no
vm=${PROC_SYS_VM:-/proc/sys/vm}
if sync && (echo 3 >"$vm/drop_caches") 2>/dev/null; then can_drop=yes; fi
drop() { if [ $can_drop = yes ]; then sync; echo 3 >"$vm/drop_caches"; fi; }

echo "file: $FILE ($SIZE_MB MiB on $(stat -f -c %T "$FILE")), $RUNTIME s per run, $REPEATS runs, fio $(fio --version)"
posix_direct=0 posix_backend="posix rand 4096 1 advice=random"
if [ $can_drop = no ]; then posix_direct=1 posix_backend="direct rand 4096 1"; fi
echo "page cache dropped before each run: $can_drop$([ $can_drop = no ] && echo ' (not root: the buffered case uses O_DIRECT for both tools)')"
# shellcheck source=fio_hugepages.sh
. "$(dirname "$0")/fio_hugepages.sh"
fio_hugepages_reserve 20 # the largest case: 32 x 4 KiB or 1 MiB, with room
echo

# name | dlgauge backend args | fio args | buffered?
CASES=(
  "seq-1MiB-qd1-direct|direct seq 1048576 1|--rw=read --bs=1M --ioengine=psync --iodepth=1 --direct=1|no"
  "rand-4KiB-qd1-posix|$posix_backend|--rw=randread --bs=4k --ioengine=psync --iodepth=1 --direct=$posix_direct --norandommap|yes"
  "rand-4KiB-qd1-direct|direct rand 4096 1|--rw=randread --bs=4k --ioengine=psync --iodepth=1 --direct=1 --norandommap|no"
  "rand-4KiB-qd32-uring|uring rand 4096 32 direct=true|--rw=randread --bs=4k --ioengine=io_uring --iodepth=32 --direct=1 --norandommap --registerfiles=1 --fixedbufs=1|no"
)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; fio_hugepages_restore' EXIT
echo "io_uring submission: dlgauge submit_batch = 4 (uring's default), fio iodepth_batch_submit = 1 (fio's default; each tool's best measured here)"

for c in "${CASES[@]}"; do
    IFS='|' read -r name dargs fargs buffered <<<"$c"
    set -- $dargs
    backend=$1 mode=$2 bs=$3 depth=$4
    shift 4
    : >"$tmp/$name.dlg"
    : >"$tmp/$name.fio"
    for ((r = 0; r < REPEATS; r++)); do
        # alternate who goes first so drift (thermal, cache) does not favour one
        for who in $([ $((r % 2)) = 0 ] && echo "dlg fio" || echo "fio dlg"); do
            drop
            if [ $who = dlg ]; then
                "$BENCH" "$backend" "$FILE" "$mode" "$bs" "$depth" "$RUNTIME" "$@" |
                    python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["bw_bytes"], j["iops"])' >>"$tmp/$name.dlg"
            else
                # shellcheck disable=SC2086
                fio --name="$name" --filename="$FILE" --size="${SIZE_MB}M" --time_based \
                    --runtime="$RUNTIME" --output-format=json $FIO_MEM $fargs |
                    python3 -c 'import json,sys; r=json.load(sys.stdin)["jobs"][0]["read"]; print(r["bw_bytes"], r["iops"])' >>"$tmp/$name.fio"
            fi
        done
    done
done

python3 - "$tmp" "${CASES[@]}" <<'PY'
import statistics, sys
tmp, cases = sys.argv[1], sys.argv[2:]
def load(path):
    rows = [tuple(map(float, l.split())) for l in open(path) if l.strip()]
    return statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows), len(rows)
print(f"{'case':24} {'dlgauge MB/s':>13} {'IOPS':>10} {'fio MB/s':>10} {'IOPS':>10} {'dlgauge/fio':>12}")
for c in cases:
    name = c.split('|')[0]
    dbw, dio, n = load(f"{tmp}/{name}.dlg")
    fbw, fio, _ = load(f"{tmp}/{name}.fio")
    print(f"{name:24} {dbw/1e6:13.1f} {dio:10.0f} {fbw/1e6:10.1f} {fio:10.0f} {dbw/fbw:12.3f}")
print(f"(medians of {n} runs each; MB = 10^6 bytes)")
PY
