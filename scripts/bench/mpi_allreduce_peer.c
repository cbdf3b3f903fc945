/* The MPI peer of allreduce-vs-mpi.sh: a bare loop of MPI_Allreduce (or
 * MPI_Sendrecv round a ring) on the buffers dlgauge's comm.so uses (same
 * size, 4 KiB aligned, first-touched, the same pattern), the same warm-up,
 * then ITERS windows of OPS ops back to back, each window timed as comm.so
 * times a step of ops_per_step ops (and nccl-tests its loop of `iters`):
 * the mean per op (a window's time / OPS, over the windows: nccl-tests'
 * time, which busbw is from) and the median, averaged over the ranks.
 * Rank 0 prints one line:
 *   busbw_bytes_per_s algbw_bytes_per_s op_time_us op_median_us
 * usage: mpirun -np N mpi_allreduce_peer allreduce|sendrecv BYTES float32|float64|int64 ITERS WARMUP [OPS]
 *        (WARMUP in windows; OPS 1 by default)
 *        mpi_allreduce_peer --version   (the MPI library's version line) */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void fill(void *buf, size_t count, MPI_Datatype t, int rank, int64_t plus)
{
    for (size_t i = 0; i < count; i++) {
        int64_t v = plus < 0 ? plus : (int64_t)((i + (size_t)rank) % 61);
        if (t == MPI_FLOAT)
            ((float *)buf)[i] = (float)v;
        else if (t == MPI_DOUBLE)
            ((double *)buf)[i] = (double)v;
        else
            ((int64_t *)buf)[i] = v;
    }
}

static void op(int ar, const void *send, void *recv, size_t count, size_t bytes, MPI_Datatype t, int to,
               int from)
{
    if (ar)
        MPI_Allreduce(send, recv, (int)count, t, MPI_SUM, MPI_COMM_WORLD);
    else
        MPI_Sendrecv(send, (int)bytes, MPI_BYTE, to, 0, recv, (int)bytes, MPI_BYTE, from, 0, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc == 2 && !strcmp(argv[1], "--version")) {
        char v[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(v, &len);
        if (rank == 0)
            printf("%s\n", strtok(v, "\n"));
        MPI_Finalize();
        return 0;
    }
    if ((argc != 6 && argc != 7) || atol(argv[4]) < 1 || (argc == 7 && atol(argv[6]) < 1)) {
        if (rank == 0)
            fprintf(stderr, "usage: %s allreduce|sendrecv BYTES float32|float64|int64 ITERS WARMUP [OPS]\n",
                    argv[0]);
        MPI_Finalize();
        return 2;
    }
    int ar = !strcmp(argv[1], "allreduce");
    size_t bytes = strtoull(argv[2], NULL, 10);
    MPI_Datatype t = !strcmp(argv[3], "float32") ? MPI_FLOAT : !strcmp(argv[3], "float64") ? MPI_DOUBLE : MPI_INT64_T;
    size_t elem = t == MPI_FLOAT ? 4 : 8, count = bytes / elem;
    long iters = atol(argv[4]), warmup = atol(argv[5]), ops = argc == 7 ? atol(argv[6]) : 1;
    void *send = NULL, *recv = NULL;
    if (posix_memalign(&send, 4096, bytes) || posix_memalign(&recv, 4096, bytes)) {
        fprintf(stderr, "rank %d: cannot allocate 2 x %zu bytes\n", rank, bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    fill(send, count, t, rank, 0);
    fill(recv, count, t, rank, -1);
    int to = (rank + 1) % n, from = (rank - 1 + n) % n;
    for (long i = 0; i < warmup * ops; i++)
        op(ar, send, recv, count, bytes, t, to, from);
    double *dt = malloc((size_t)iters * sizeof *dt); /* per op, as comm.so times each step's */
    if (!dt)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Barrier(MPI_COMM_WORLD); /* start together, as nccl-tests */
    for (long i = 0; i < iters; i++) {
        double t0 = now_s();
        for (long k = 0; k < ops; k++)
            op(ar, send, recv, count, bytes, t, to, from);
        dt[i] = (now_s() - t0) / (double)ops;
    }
    double v[2] = {0, 0}; /* mean and median per op, then averaged over the ranks */
    for (long i = 0; i < iters; i++)
        v[0] += dt[i] / (double)iters;
    qsort(dt, (size_t)iters, sizeof *dt, cmp_double);
    v[1] = iters % 2 ? dt[iters / 2] : (dt[iters / 2 - 1] + dt[iters / 2]) / 2;
    free(dt);
    MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    v[0] /= n, v[1] /= n;
    double alg = (double)bytes / v[0], factor = ar ? (n > 1 ? 2.0 * (n - 1) / n : 0.0) : 1.0;
    if (rank == 0)
        printf("%.6g %.6g %.4f %.4f\n", alg * factor, alg, v[0] * 1e6, v[1] * 1e6);
    /* the result, as dlgauge checks it: a peer that sums wrong is no peer */
    int64_t bad = 0;
    for (size_t i = 0; i < count; i++) {
        int64_t want = 0;
        if (ar)
            for (int r = 0; r < n; r++)
                want += (int64_t)((i + (size_t)r) % 61);
        else
            want = (int64_t)((i + (size_t)from) % 61);
        double got = t == MPI_FLOAT ? ((float *)recv)[i] : t == MPI_DOUBLE ? ((double *)recv)[i]
                                                                           : (double)((int64_t *)recv)[i];
        bad += got != (double)want;
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (bad && rank == 0)
        fprintf(stderr, "peer: %lld wrong elements\n", (long long)bad);
    free(send);
    free(recv);
    MPI_Finalize();
    return bad ? 1 : 0;
}
