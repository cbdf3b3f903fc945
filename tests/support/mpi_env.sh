# Sourced by the tests that run mpirun (e2e/ranks.sh, caffe/ranks_train.sh,
# comm/comm_mpi.sh): Open MPI's settings for this machine in one place.
#   source mpi_env.sh MPIEXEC;  "${MPIRUN[@]}" -np N CMD...
_dlg_mpi_support=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# Open MPI refuses root without these
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI's session folder, $TMPDIR/ompi.HOST.UID, is one for all of a
# user's mpiruns, and each removes it at exit when it looks empty.  Two
# tests' mpiruns at once (ctest -j) raced on it in CI: one removed it
# between the other's making it and making its pid.N inside ("A call to
# mkdir was unable to create the desired directory ... No such file or
# directory", orte_init failed).  Each test has a folder of its own, gone
# at its exit: a test with an EXIT trap of its own sets it after this and
# removes $_dlg_mpi_tmp there too.
_dlg_mpi_tmp=$(mktemp -d "${TMPDIR:-/tmp}/dlg-ompi.XXXXXX") || exit 1
export OMPI_MCA_orte_tmpdir_base=$_dlg_mpi_tmp
trap 'rm -rf "$_dlg_mpi_tmp"' EXIT
# the ASan build: Open MPI's own allocations at exit, nothing of dlgauge's;
# its libraries have no frame pointers, so only the slow unwinder finds them
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$_dlg_mpi_support/mpi.supp"
# (intercept_tls_get_addr=0: without it LeakSanitizer's tracer crashed at
# the exit of a rank that ran oneDNN's threads beside Open MPI's, 2 runs in
# 3; see scripts/test.sh)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0:intercept_tls_get_addr=0"
# every byte on loopback, no daemon elsewhere; more ranks than cores
MPIRUN=("$1" --oversubscribe --mca btl self,vader --mca oob_tcp_if_include lo --mca btl_tcp_if_include lo)
# the ASan build's ctest names libasan and keep_mpi_components.so here
# (tests/CMakeLists.txt): the ranks preload them, mpirun itself does not
if [ -n "${DLG_MPI_RANK_PRELOAD:-}" ]; then
    MPIRUN+=(-x "LD_PRELOAD=$DLG_MPI_RANK_PRELOAD")
fi
# the tuning record (core/nn/tune.h): ctest's (the build's), which ranks of
# one host share; run by hand, none rather than the user's ~/.cache one
export DLGAUGE_TUNE="${DLGAUGE_TUNE:-off}"
