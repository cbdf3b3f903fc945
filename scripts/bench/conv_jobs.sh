# Sourced by the conv-kernel benchmarks (winograd-vs-onednn.sh,
# strided-vs-onednn.sh); they set dlg, work, threads and steps.

# The oneDNN ISA this machine runs (first lines of a verbose conv run).
conv_isa() {
  echo "== machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $threads threads, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  conv_ini isa 1 n=1 >"$work/isa.ini"
  (cd "$work" && ONEDNN_VERBOSE=1 "$dlg" run --set job.isolation=none "$work/isa.ini" 2>&1 |
    grep -m2 -E '^onednn_verbose,(info,cpu,isa|exec)') || true
}

# conv_ini NAME ROUND KEY=VALUE...: a conv job whose CSV lands at
# $work/NAME-ROUND.csv (conv_medians.py reads them back).
conv_ini() {
  local name=$1 round=$2
  shift 2
  printf '[sink csv]\npath = %s/%s-%s.csv\n[job %s]\nworkload = conv\ncpus = %s\nwarmup = 2\niterations = %s\n' \
    "$work" "$name" "$round" "$name" "$threads" "$steps"
  printf '%s\n' "$@" | sed 's/=/ = /'
}

# conv_impl NAME KEY=VALUE...: one untimed step of the job under
# ONEDNN_VERBOSE=1; "IMPL LAYOUT" of the primitive that ran (oneDNN's
# implementation, e.g. jit:avx2 or brgconv:avx512_core, and the layout of
# its first tensor, e.g. aBcd8b = nChw8c, acdb = NHWC) in $work/NAME.impl,
# "- -" when no primitive ran (the engine's own kernels).  Its CSV is
# impl-NAME-1.csv: conv_medians.py's NAME-* never reads it.
conv_impl() {
  local name=$1
  shift
  conv_ini "impl-$name" 1 "$@" | sed 's/^warmup = .*/warmup = 0/; s/^iterations = .*/iterations = 1/' >"$work/impl.ini"
  (cd "$work" && ONEDNN_VERBOSE=1 "$dlg" run --set job.isolation=none "$work/impl.ini" 2>&1) |
    awk -F, '$1 == "onednn_verbose" && $2 == "exec" {
      split($7, t, " "); n = split(t[1], f, ":"); print $5, (n >= 4 ? f[n - 1] : "?"); found = 1; exit }
      END { if (!found) print "- -" }' >"$work/$name.impl"
}

# conv_job NAME ROUND KEY=VALUE...: runs it; a failed run prints its log
# and exits.
conv_job() {
  conv_ini "$@" >"$work/$1.ini"
  (cd "$work" && "$dlg" run --set job.isolation=none "$work/$1.ini" >"$work/run.log" 2>&1) ||
    { cat "$work/run.log"; exit 1; }
}
