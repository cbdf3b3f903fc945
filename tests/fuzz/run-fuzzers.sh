#!/bin/sh
# Builds the core/data and config-value libFuzzer targets with clang and runs each one.
#   run-fuzzers.sh [seconds-per-target] [work-dir] [target...]
# Seeds come from tests/fuzz/corpus/<target>/ and tests/fuzz/crashes/<target>/;
# new inputs go to <work-dir>/corpus-<target>/, crashes to
# <work-dir>/crash-<target>-* (copy them into crashes/<target>/ once fixed).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
secs=${1:-5}
work=${2:-$root/build-fuzz}
shift $(( $# > 2 ? 2 : $# ))
targets=${*:-recordio idx datum listfile units}
cc=${CLANG:-/usr/bin/clang}
data=$root/core/data
rt=$root/core/runtime
# LMDB code is not fuzzed here (its input is a database, not bytes).
srcs="data_error.c data_source.c recordio_writer.c recordio_reader.c recordio_idx.c
      im2rec.c im2rec_lst.c datum.c listfile.c listfile_scan.c"
flags="-g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
mkdir -p "$work/obj"
objs=
for s in $srcs; do   # compile the library sources once for all targets
    o="$work/obj/${s%.c}.o"
    "$cc" $flags -c -I"$data" -I"$root/include" "$data/$s" -o "$o"
    objs="$objs $o"
done
# units: the config value parsers of core/runtime
rt_objs=
for s in units.c options.c config_env.c config_line.c; do
    o="$work/obj/rt_${s%.c}.o"
    "$cc" $flags -c -I"$rt" -I"$root/include" "$rt/$s" -o "$o"
    rt_objs="$rt_objs $o"
done
status=0
for t in $targets; do
    if [ "$t" = units ]; then
        "$cc" $flags -I"$rt" -I"$root/include" "$here/fuzz_$t.c" $rt_objs -lm -o "$work/fuzz_$t"
    else
        "$cc" $flags -I"$data" -I"$root/include" "$here/fuzz_$t.c" $objs -o "$work/fuzz_$t"
    fi
    mkdir -p "$work/corpus-$t"
    echo "== fuzz_$t for ${secs}s"
    if ! "$work/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
            -artifact_prefix="$work/crash-$t-" -print_final_stats=0 \
            "$work/corpus-$t" "$here/corpus/$t" "$here/crashes/$t" 2>"$work/fuzz_$t.log"; then
        tail -n 40 "$work/fuzz_$t.log"
        status=1
    else
        grep -E '^#[0-9]+.*DONE|Done [0-9]+ runs' "$work/fuzz_$t.log" | tail -n 1 || true
    fi
done
exit $status
