# What the tests of runs under mpirun share (ranks.sh, ranks_refuse.sh,
# ranks_cpus.sh): lib.sh, the loopback launcher, a ranked job.  $5 is
# mpiexec, as each of them is given it.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../support/mpi_env.sh" "$5"

# run_mpi NAME MPIEXEC_ARGS...: on loopback, 60 s at most (a hang fails)
run_mpi() {
    local name=$1
    shift
    local t0=$SECONDS
    timeout -k 5 60 "${MPIRUN[@]}" "$@" >"$name.out" 2>"$name.err"
    RC=$?
    echo "$name: exit $RC after $((SECONDS - t0)) s"
    [ "$RC" != 124 ] && [ "$RC" != 137 ] || fail "$name: still running after 60 s (a rank hung)"
}

# run_np NAME ARGS...: dlgauge ARGS on 2 ranks
run_np() {
    local name=$1
    shift
    run_mpi "$name" -np 2 "$DLG" --plugin-dir "$PLUGDIR" "$@"
}

job() { # job NAME KEY=VALUE...: a [job] of ranked
    local name=$1
    shift
    printf '[job %s]\nplugin = %s\nworkload = ranked\nwarmup = 1\n' "$name" "$TPLUG/ranks_wl.so"
    printf '%s\n' "$@"
}
