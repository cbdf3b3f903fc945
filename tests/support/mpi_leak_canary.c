/* mpi_leak_canary.c — one leak of its own under MPI, for the ASan build's
 * mpi_leak_canary test: the suppressions and component preload that
 * quiet Open MPI's own leaks at exit (mpi.supp, keep_mpi_components.c)
 * must still let LeakSanitizer report a rank's. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* out of line, so the leak's stack names it */
__attribute__((noinline)) static void canary_leak(int rank)
{
    char *volatile p = malloc(77);
    if (p)
        snprintf(p, 77, "rank %d", rank);
}

int main(int argc, char **argv)
{
    int rank = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    canary_leak(rank);
    MPI_Finalize();
    return 0;
}
