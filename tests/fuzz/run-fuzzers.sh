#!/bin/sh
# Builds the libFuzzer targets (core/data formats, LMDB datasets, JPEG and
# mean files, config values and the INI loader, the run journal, disk
# profiles, results files, instance catalogs, the LM corpus, the InfluxDB
# spool, the CUDA algorithm cache file, the tuning record) with clang and
# runs each one.
#   run-fuzzers.sh [seconds-per-target] [work-dir] [target...]
# Seeds come from tests/fuzz/corpus/<target>/ and tests/fuzz/crashes/<target>/;
# new inputs go to <work-dir>/corpus-<target>/, crashes to
# <work-dir>/crash-<target>-* (copy them into crashes/<target>/ once fixed).
# FUZZ_SEED=N fixes libFuzzer's random seed; FUZZ_RUNS=N runs each target
# N times in all (its seeds first, each of them whatever N is) in place of
# the seconds.  ctest's short run sets both, so that CI mutates the same
# inputs every time, however fast the machine, and a failure there repeats;
# unset, each run draws its own seed and prints it.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
secs=${1:-5}
work=${2:-$root/build-fuzz}
shift $(( $# > 2 ? 2 : $# ))
targets=${*:-recordio idx datum listfile units jpeg throttle_profile config report binaryproto journal
             catalog disks lm_corpus influx_spool algo_cache tune lmdb}
cc=${CLANG:-/usr/bin/clang}
data=$root/core/data rt=$root/core/runtime rep=$root/core/report thr=$root/plugins/storage/throttle
mx=$root/plugins/workloads/mxnet cu=$root/core/nn/cuda nn=$root/core/nn ifx=$root/sinks/influx
sc=$root/sinks/common
# -gline-tables-only: a crash's stack names file and line, for less compile
# time than -g (the replay tests rebuild the crash inputs' targets with -g)
flags="-gline-tables-only -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
inih_def=  # as core/runtime/CMakeLists.txt: Debian's inih has run-time line limits
grep -q ini_initial_alloc /usr/include/ini.h 2>/dev/null && inih_def=-DDLG_HAVE_INIH_RUNTIME_LIMITS
# Every source is compiled once per run, whichever targets share it (no two
# of these folders have a header of the same name)
incs="-I$data -I$rt -I$rep -I$thr -I$mx -I$cu -I$nn -I$ifx -I$sc -I$root/include"
rm -rf "$work/obj" && mkdir -p "$work/obj"
objs() { # DIR SOURCE...: prints their objects, compiling those not yet built
    local dir=$1 s o
    shift
    for s in "$@"; do
        o=$work/obj/$(echo "${dir#"$root"/}/${s%.c}" | tr / _).o
        [ -e "$o" ] || "$cc" $flags $inih_def $incs -c "$dir/$s" -o "$o" || return 1
        printf '%s ' "$o"
    done
}
data_objs=$(objs "$data" data_error.c data_source.c recordio_writer.c recordio_reader.c recordio_idx.c \
    im2rec.c im2rec_lst.c datum.c pbwire.c binaryproto.c listfile.c listfile_scan.c jpeg.c jpeg_scan.c \
    synth_text.c synth_out.c)
# units, config: the config value parsers and the INI loader of core/runtime;
# config*.c, journal*.c: every part of the INI loader and the journal, however
# they are split into files (a kept row is a point_wire frame)
rt_objs=$(objs "$rt" units.c options.c $(cd "$rt" && echo config*.c journal*.c) point_wire.c fd_write.c)
# the results readers of dlgauge report, and the throttle's disk profiles
report_objs="$(objs "$rep" rows.c read_csv.c read_jsonl.c) $(objs "$rt" config_line.c)"
throttle_objs="$(objs "$thr" throttle_profile.c throttle_units.c throttle_opts.c) $(objs "$rt" units.c)"
# Every seed ran before fuzzing began, however short the run: libFuzzer's
# INITED line counts the inputs it executed (the seeds and one empty input).
seeds_replayed() { # LOG
    awk '/seed corpus: files: / { for (i = 1; i < NF; i++) if ($i == "files:") n = $(i + 1) }
         /^#[0-9]+[ \t]+INITED/ { m = substr($1, 2) + 0 }
         END { exit !(n != "" && m != "" && m >= n) }' "$1"
}
limit=-max_total_time=$secs say=${secs}s
[ -z "${FUZZ_RUNS:-}" ] || limit=-runs=$FUZZ_RUNS say="$FUZZ_RUNS runs"
status=0
for t in $targets; do
    case $t in
    units|config|journal)
        set -- $rt_objs -linih -lm ;;
    throttle_profile) # the plugin's parser, compiled in
        set -- $throttle_objs -linih -lm ;;
    report) # the results readers of dlgauge report
        set -- $report_objs -lcsv -ljson-c ;;
    catalog|disks) # the report's instance catalogs and disk profiles (read by the throttle's rules)
        set -- $(objs "$rep" catalog.c disks.c shipped_conf.c ini_lines.c) $(objs "$rt" exe_dir.c) \
            $report_objs $throttle_objs -linih -lcsv -ljson-c -lm ;;
    lm_corpus) # the mxnet workload's corpus reader, compiled in
        set -- $(objs "$mx" lm_corpus.c lm_vocab.c) $data_objs -lturbojpeg -ljpeg -lm ;;
    algo_cache) # the CUDA backend's algorithm cache file (host code)
        set -- $(objs "$cu" cuda_algo_cache.c) ;;
    tune) # the host's tuning record
        set -- $(objs "$nn" tune.c peak.c) -lm -lpthread ;;
    lmdb) # the LMDB dataset reader: its page check, then liblmdb on what it passed
        set -- $(objs "$data" lmdb_dataset.c lmdb_check.c) $data_objs -llmdb -lturbojpeg -ljpeg ;;
    influx_spool) # the spool replay with a stand-in for HTTP and a 64-byte window
        set -- -DSPOOL_WINDOW=64 "$ifx/influx_spool.c" "$ifx/influx_deliver.c" "$ifx/influx_hold.c" \
            $(objs "$sc" sbuf.c sinkfs.c) ;;
    *)
        set -- $data_objs -lturbojpeg -ljpeg ;;
    esac
    "$cc" $flags $incs "$here/fuzz_$t.c" "$@" -o "$work/fuzz_$t" || { status=1; continue; }
    mkdir -p "$work/corpus-$t"
    # git keeps no empty crashes/<t>: an empty folder of the work dir then
    crashes=$here/crashes/$t
    [ -d "$crashes" ] || { crashes=$work/no-crashes-$t; mkdir -p "$crashes"; }
    echo "== fuzz_$t for $say"
    if ! "$work/fuzz_$t" "$limit" -timeout=10 -rss_limit_mb=2048 ${FUZZ_SEED:+-seed="$FUZZ_SEED"} \
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
