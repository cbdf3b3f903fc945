#!/bin/sh
# Builds the libFuzzer targets (core/data formats, JPEG and mean files,
# config values and the INI loader, the run journal, disk profiles, results
# files, instance catalogs, the LM corpus, the InfluxDB spool, the CUDA
# algorithm cache file, the tuning record) with clang and runs each one.
#   run-fuzzers.sh [seconds-per-target] [work-dir] [target...]
# Seeds come from tests/fuzz/corpus/<target>/ and tests/fuzz/crashes/<target>/;
# new inputs go to <work-dir>/corpus-<target>/, crashes to
# <work-dir>/crash-<target>-* (copy them into crashes/<target>/ once fixed).
# FUZZ_SEED=N fixes libFuzzer's random seed (ctest's short run sets it, so
# that CI mutates the same inputs every time and a failure there repeats;
# unset, each run draws its own and prints it).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
secs=${1:-5}
work=${2:-$root/build-fuzz}
shift $(( $# > 2 ? 2 : $# ))
targets=${*:-recordio idx datum listfile units jpeg throttle_profile config report binaryproto journal
             catalog disks lm_corpus influx_spool algo_cache tune}
cc=${CLANG:-/usr/bin/clang}
data=$root/core/data
rt=$root/core/runtime
# LMDB code is not fuzzed here (its input is a database, not bytes).
srcs="data_error.c data_source.c recordio_writer.c recordio_reader.c recordio_idx.c
      im2rec.c im2rec_lst.c datum.c pbwire.c binaryproto.c listfile.c listfile_scan.c jpeg.c jpeg_scan.c
      synth_text.c synth_out.c"
flags="-g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
mkdir -p "$work/obj"
objs=
for s in $srcs; do   # compile the library sources once for all targets
    o="$work/obj/${s%.c}.o"
    "$cc" $flags -c -I"$data" -I"$root/include" "$data/$s" -o "$o"
    objs="$objs $o"
done
# units, config: the config value parsers and the INI loader of core/runtime
rt_objs=
inih_def=  # as core/runtime/CMakeLists.txt: Debian's inih has run-time line limits
grep -q ini_initial_alloc /usr/include/ini.h 2>/dev/null && inih_def=-DDLG_HAVE_INIH_RUNTIME_LIMITS
# config*.c, journal*.c: every part of the INI loader and the journal, however
# they are split into files (a kept row is a point_wire frame)
for s in units.c options.c $(cd "$rt" && echo config*.c journal*.c) point_wire.c fd_write.c; do
    o="$work/obj/rt_${s%.c}.o"
    "$cc" $flags $inih_def -c -I"$rt" -I"$root/include" "$rt/$s" -o "$o"
    rt_objs="$rt_objs $o"
done
# Every seed ran before fuzzing began, however short the run: libFuzzer's
# INITED line counts the inputs it executed (the seeds and one empty input).
seeds_replayed() { # LOG
    awk '/seed corpus: files: / { for (i = 1; i < NF; i++) if ($i == "files:") n = $(i + 1) }
         /^#[0-9]+[ \t]+INITED/ { m = substr($1, 2) + 0 }
         END { exit !(n != "" && m != "" && m >= n) }' "$1"
}
status=0
for t in $targets; do
    case $t in
    units|config|journal)
        "$cc" $flags -I"$rt" -I"$root/include" "$here/fuzz_$t.c" $rt_objs -linih -lm -o "$work/fuzz_$t" ;;
    throttle_profile) # the plugin's parser, compiled in
        thr=$root/plugins/storage/throttle
        "$cc" $flags -I"$thr" -I"$rt" -I"$root/include" "$here/fuzz_$t.c" "$thr/throttle_profile.c" \
            "$thr/throttle_units.c" "$thr/throttle_opts.c" "$rt/units.c" -linih -lm -o "$work/fuzz_$t" ;;
    report) # the results readers of dlgauge report
        rep=$root/core/report
        "$cc" $flags -I"$rep" -I"$rt" -I"$root/include" "$here/fuzz_$t.c" "$rep/rows.c" "$rep/read_csv.c" \
            "$rep/read_jsonl.c" "$rt/config_line.c" -lcsv -ljson-c -o "$work/fuzz_$t" ;;
    catalog|disks) # the report's instance catalogs and disk profiles (read by the throttle's rules)
        rep=$root/core/report
        thr=$root/plugins/storage/throttle
        "$cc" $flags -I"$rep" -I"$rt" -I"$thr" -I"$root/include" "$here/fuzz_$t.c" "$rep/catalog.c" \
            "$rep/disks.c" "$rep/shipped_conf.c" "$rt/exe_dir.c" "$rep/ini_lines.c" "$rep/rows.c" \
            "$rep/read_csv.c" "$rep/read_jsonl.c" \
            "$rt/units.c" "$rt/config_line.c" "$thr/throttle_profile.c" "$thr/throttle_units.c" \
            "$thr/throttle_opts.c" -linih -lcsv -ljson-c -lm -o "$work/fuzz_$t" ;;
    lm_corpus) # the mxnet workload's corpus reader, compiled in
        mx=$root/plugins/workloads/mxnet
        "$cc" $flags -I"$mx" -I"$data" -I"$root/include" "$here/fuzz_$t.c" "$mx/lm_corpus.c" "$mx/lm_vocab.c" \
            $objs -lturbojpeg -ljpeg -lm -o "$work/fuzz_$t" ;;
    algo_cache) # the CUDA backend's algorithm cache file (host code)
        cu=$root/core/nn/cuda
        "$cc" $flags -I"$cu" -I"$root/include" "$here/fuzz_$t.c" "$cu/cuda_algo_cache.c" -o "$work/fuzz_$t" ;;
    tune) # the host's tuning record
        nn=$root/core/nn
        "$cc" $flags -I"$nn" -I"$root/include" "$here/fuzz_$t.c" "$nn/tune.c" "$nn/peak.c" -lm -lpthread \
            -o "$work/fuzz_$t" ;;
    influx_spool) # the spool replay with a stand-in for HTTP and a 64-byte window
        ifx=$root/sinks/influx
        "$cc" $flags -DSPOOL_WINDOW=64 -I"$ifx" -I"$root/sinks/common" -I"$root/include" "$here/fuzz_$t.c" \
            "$ifx/influx_spool.c" "$ifx/influx_deliver.c" "$ifx/influx_hold.c" "$root/sinks/common/sbuf.c" \
            "$root/sinks/common/sinkfs.c" -o "$work/fuzz_$t" ;;
    *)
        "$cc" $flags -I"$data" -I"$root/include" "$here/fuzz_$t.c" $objs -lturbojpeg -ljpeg -o "$work/fuzz_$t" ;;
    esac
    mkdir -p "$work/corpus-$t"
    # git keeps no empty crashes/<t>: an empty folder of the work dir then
    crashes=$here/crashes/$t
    [ -d "$crashes" ] || { crashes=$work/no-crashes-$t; mkdir -p "$crashes"; }
    echo "== fuzz_$t for ${secs}s"
    if ! "$work/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 ${FUZZ_SEED:+-seed="$FUZZ_SEED"} \
            -artifact_prefix="$work/crash-$t-" -print_final_stats=0 \
            "$work/corpus-$t" "$here/corpus/$t" "$crashes" 2>"$work/fuzz_$t.log"; then
        tail -n 40 "$work/fuzz_$t.log"
        status=1
    elif ! seeds_replayed "$work/fuzz_$t.log"; then
        echo "fuzz_$t: the seed corpus was not replayed in full:"
        grep -E 'seed corpus|INITED' "$work/fuzz_$t.log" || tail -n 20 "$work/fuzz_$t.log"
        status=1
    else
        grep -E '^#[0-9]+.*DONE|Done [0-9]+ runs' "$work/fuzz_$t.log" | tail -n 1 || true
    fi
done
exit $status
