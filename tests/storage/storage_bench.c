/* storage_bench: raw reads through one dlgauge storage backend, loaded the
 * way the mock host loads plugins, for side-by-side runs with fio
 * (scripts/bench/storage-vs-fio.sh).  Until the core has a raw-read
 * workload this is dlgauge's side of that comparison.
 *
 *   storage_bench BACKEND FILE seq|rand BLOCK_BYTES DEPTH SECONDS [key=value...]
 *
 * DEPTH 1 uses read(); DEPTH > 1 keeps DEPTH reads in flight with
 * submit/reap (the backend must have DLG_CAP_ASYNC).  Prints one JSON line. */
#define _GNU_SOURCE
#include <dlgauge/iobuf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mock_host.h"

typedef struct bench {
    mock_host m;
    dlg_file *f;
    uint64_t size, blocks, next, rng;
    size_t bs;
    bool random;
} bench;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t next_off(bench *b)
{
    if (b->random) { /* xorshift64*: cheap, uniform enough over blocks */
        b->rng ^= b->rng >> 12;
        b->rng ^= b->rng << 25;
        b->rng ^= b->rng >> 27;
        return ((b->rng * 0x2545F4914F6CDD1Dull) % b->blocks) * b->bs;
    }
    uint64_t off = b->next * b->bs;
    b->next = (b->next + 1) % b->blocks;
    return off;
}

static int run_sync(bench *b, char *buf, double secs, uint64_t *ios)
{
    const dlg_host *h = &b->m.host;
    double end = now_s() + secs;
    do {
        for (int i = 0; i < 64; i++) {
            int64_t r = h->file_read(h, b->f, buf, b->bs, next_off(b));
            if (r != (int64_t)b->bs)
                return fprintf(stderr, "read failed: %s\n", b->m.last_error), -1;
            (*ios)++;
        }
    } while (now_s() < end);
    return 0;
}

static int run_async(bench *b, char *bufs, size_t depth, double secs, uint64_t *ios)
{
    const dlg_host *h = &b->m.host;
    dlg_io *io = calloc(depth, sizeof *io);
    dlg_io_done *done = calloc(depth, sizeof *done);
    if (!io || !done)
        return -1;
    for (size_t i = 0; i < depth; i++)
        io[i] = (dlg_io){bufs + i * b->bs, b->bs, next_off(b), i};
    int rc = h->file_submit(h, b->f, io, depth) == (int)depth ? 0 : -1;
    double end = now_s() + secs;
    size_t inflight = depth;
    while (rc == 0 && inflight > 0) {
        int k = h->file_reap(h, b->f, done, depth, 1);
        if (k < 0) {
            rc = -1;
            break;
        }
        inflight -= (size_t)k;
        bool more = now_s() < end;
        size_t n = 0;
        for (int i = 0; i < k; i++) {
            if (done[i].result != (int64_t)b->bs)
                rc = -1;
            (*ios)++;
            if (more)
                io[n++] = (dlg_io){bufs + done[i].user * b->bs, b->bs, next_off(b), done[i].user};
        }
        if (n && h->file_submit(h, b->f, io, n) != (int)n)
            rc = -1;
        inflight += n;
    }
    if (rc < 0)
        fprintf(stderr, "async read failed: %s\n", b->m.last_error);
    free(io);
    free(done);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: %s BACKEND FILE seq|rand BLOCK_BYTES DEPTH SECONDS [key=value...]\n", argv[0]);
        return 2;
    }
    static bench b;
    mock_host_init(&b.m);
    b.bs = (size_t)strtoull(argv[4], NULL, 0);
    size_t depth = (size_t)strtoull(argv[5], NULL, 0);
    double secs = strtod(argv[6], NULL);
    b.random = strcmp(argv[3], "rand") == 0;
    b.rng = 0x9E3779B97F4A7C15ull;
    char so[64];
    snprintf(so, sizeof so, "%s.so", argv[1]);
    const dlg_plugin_desc *d = mock_load_plugin(so, DLG_KIND_STORAGE, argv[1]);
    static dlg_value vals[64];
    if (!d || !b.bs || !depth || mock_options(d->options, vals, (const char *const *)argv + 7) != 0)
        return fprintf(stderr, "bad backend, block size, depth or option\n"), 2;
    const dlg_storage_ops *ops = d->ops;
    void *inst = NULL;
    if (ops->create(&b.m.host, vals, &inst) < 0 || mock_add_storage(&b.m, argv[1], ops, inst) != 0)
        return fprintf(stderr, "%s\n", b.m.last_error), 1;
    const dlg_host *h = &b.m.host;
    if (h->file_open(h, argv[1], argv[2], &b.f) < 0 || h->file_size(h, b.f, &b.size) < 0)
        return fprintf(stderr, "%s\n", b.m.last_error), 1;
    b.blocks = b.size / b.bs;
    /* as the io workload's: one iobuf.h buffer (huge pages from 64 KiB) */
    char *bufs = b.blocks ? dlg_iobuf_alloc(depth * b.bs, 4096) : NULL;
    if (!bufs)
        return fprintf(stderr, "file smaller than one block, or no memory\n"), 1;
    memset(bufs, 0, depth * b.bs); /* first touch outside the timed loop */
    /* registered once where the backend can (io_uring fixed buffers), as
     * the io workload and fio's --fixedbufs do */
    bool registered = depth > 1 && h->file_register(h, b.f, bufs, depth * b.bs) == 0;
    uint64_t ios = 0;
    double t0 = now_s();
    int rc = depth > 1 ? run_async(&b, bufs, depth, secs, &ios) : run_sync(&b, bufs, secs, &ios);
    double t = now_s() - t0;
    if (rc == 0)
        printf("{\"backend\": \"%s\", \"ios\": %llu, \"seconds\": %.6f, \"iops\": %.1f, \"bw_bytes\": %.0f, "
               "\"registered\": %s}\n",
               argv[1], (unsigned long long)ios, t, (double)ios / t, (double)ios * (double)b.bs / t,
               registered ? "true" : "false");
    h->file_close(h, b.f);
    ops->destroy(inst);
    dlg_iobuf_free(bufs, depth * b.bs);
    return rc == 0 ? 0 : 1;
}
