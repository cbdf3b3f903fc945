/* The input path (core/nn/input.c, input.h): the staging bookkeeping of
 * one blob (dlg_in_ring); dlg_net_host_alloc, dlg_net_write_async,
 * dlg_net_write_wait and dlg_net_input_stall on plain ref (synchronous);
 * and the asynchronous engine path without a GPU: a net planned on ref
 * gets a copy of ref's vtable with host stand-ins for the in_* hooks (as
 * test_clip_hooks does for clipping) whose copy "stream" runs late -- a
 * copy happens only when a step needs it or the host waits -- so a
 * training loop fed like the caffe workload (write batch k+1 after
 * launching step k, reuse a host buffer only after dlg_net_write_wait)
 * must give bitwise the losses of synchronous writes, and every copy
 * into a staging buffer that a step has read must wait for that read. */
#include "input.h"
#include "net.h"

#include <dlgauge/nn.h>
#include <dlgauge/plugin.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* ---- dlg_in_ring ---- */
static void test_ring(void **st)
{
    dlg_in_ring r;
    bool after;
    dlg_in_ring_init(&r);
    assert_int_equal(dlg_in_ring_take(&r), -1); /* nothing written */
    assert_int_equal(dlg_in_ring_write(&r, &after), 0);
    assert_false(after);
    assert_int_equal(dlg_in_ring_take(&r), 0);
    assert_int_equal(dlg_in_ring_take(&r), -1); /* taken once */
    /* the next write goes to the other buffer: step 0 may still read 0 */
    assert_int_equal(dlg_in_ring_write(&r, &after), 1);
    assert_false(after);
    assert_int_equal(dlg_in_ring_take(&r), 1);
    /* buffer 0 was read by a step: its next copy waits for that read */
    assert_int_equal(dlg_in_ring_write(&r, &after), 0);
    assert_true(after);
    /* a second write before a step replaces the first (newest wins) and
     * goes to the buffer a step read last, so it waits for that read */
    assert_int_equal(dlg_in_ring_write(&r, &after), 1);
    assert_true(after);
    assert_int_equal(r.replaced, 1);
    /* and the third to the replaced one, which no step read: no wait */
    assert_int_equal(dlg_in_ring_write(&r, &after), 0);
    assert_false(after);
    assert_int_equal(dlg_in_ring_take(&r), 0);
    /* dropped by a synchronous write: the step takes nothing */
    assert_int_equal(dlg_in_ring_write(&r, &after), 1);
    assert_false(after); /* 1's last write was replaced, never read */
    assert_true(dlg_in_ring_drop(&r));
    assert_false(dlg_in_ring_drop(&r));
    assert_int_equal(dlg_in_ring_take(&r), -1);
    assert_int_equal(r.writes, 6);
    assert_int_equal(r.taken, 3);
    assert_int_equal(r.replaced, 3);
}

/* ---- a small training net ---- */
enum { B = 4, C = 3, S = 6, K = 5, STEPS = 7 };
#define NIN ((size_t)B * C * S * S)

static dlg_net *make_net(int *x, int *y)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "input"), 0);
    *x = dlg_input(net, "data", B, C, S, S);
    *y = dlg_labels(net, "label", B);
    int h = dlg_conv(net, "conv", *x, 4, 3, 1, 1, 1);
    h = dlg_relu(net, "relu", h);
    h = dlg_fc(net, "fc", h, K);
    dlg_softmax_loss(net, "loss", h, *y);
    assert_int_equal(dlg_net_status(net), 0);
    dlg_plan_opts po = {.backend = "ref", .train = true, .seed = 7};
    assert_int_equal(dlg_net_plan(net, &po), 0);
    return net;
}

/* Batch k: images and labels as a pure function of k. */
static void fill_batch(int k, float *img, float *lab)
{
    uint64_t s = 0x9e3779b97f4a7c15ull * (uint64_t)(k + 1);
    for (size_t i = 0; i < NIN; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        img[i] = (float)((double)(s >> 40) / (double)(1u << 24) * 2.0 - 1.0);
    }
    for (int i = 0; i < B; i++)
        lab[i] = (float)((k + i) % K);
}

static const dlg_sgd sgd = {0.1f, 0.9f, 0.0005f};

/* Reference: synchronous writes before each step. */
static void losses_sync(float *loss)
{
    int x, y;
    dlg_net *net = make_net(&x, &y);
    float img[NIN], lab[B], out[3];
    for (int k = 0; k < STEPS; k++) {
        fill_batch(k, img, lab);
        assert_int_equal(dlg_net_write(net, x, DLG_DATA, img, NIN), 0);
        assert_int_equal(dlg_net_write(net, y, DLG_DATA, lab, B), 0);
        assert_int_equal(dlg_net_train_step(net, &sgd), 0);
        assert_int_equal(dlg_net_read(net, dlg_net_blob(net, "loss"), DLG_DATA, out, 3), 0);
        loss[k] = out[0];
    }
    dlg_net_destroy(net);
}

/* The caffe workload's order: batch 0 before step 0; after launching step
 * k, wait for the copies, then refill the host buffers with batch k+1 and
 * write it.  Two host buffer sets, used alternately, from host_alloc. */
static void losses_pipelined(dlg_net *net, int x, int y, float *loss)
{
    float *img[2], *lab[2], out[3];
    for (int i = 0; i < 2; i++) {
        img[i] = dlg_net_host_alloc(net, NIN * sizeof(float));
        lab[i] = dlg_net_host_alloc(net, B * sizeof(float));
        assert_non_null(img[i]);
        assert_non_null(lab[i]);
        assert_int_equal((uintptr_t)img[i] % 64, 0);
    }
    fill_batch(0, img[0], lab[0]);
    assert_int_equal(dlg_net_write_async(net, x, img[0], NIN), 0);
    assert_int_equal(dlg_net_write_async(net, y, lab[0], B), 0);
    for (int k = 0; k < STEPS; k++) {
        assert_int_equal(dlg_net_train_step(net, &sgd), 0);
        assert_int_equal(dlg_net_write_wait(net), 0);
        int n = (k + 1) & 1;
        fill_batch(k + 1, img[n], lab[n]);
        assert_int_equal(dlg_net_write_async(net, x, img[n], NIN), 0);
        assert_int_equal(dlg_net_write_async(net, y, lab[n], B), 0);
        assert_int_equal(dlg_net_read(net, dlg_net_blob(net, "loss"), DLG_DATA, out, 3), 0);
        loss[k] = out[0];
    }
    assert_int_equal(dlg_net_write_wait(net), 0);
    for (int i = 0; i < 2; i++) {
        dlg_net_host_free(net, img[i]);
        dlg_net_host_free(net, lab[i]);
    }
}

/* On ref the API is synchronous: the same losses, no device wait figure,
 * and the misuse errors are not sticky. */
static void test_ref_sync(void **st)
{
    float want[STEPS], got[STEPS];
    losses_sync(want);
    int x, y;
    dlg_net *net = make_net(&x, &y);
    losses_pipelined(net, x, y, got);
    assert_memory_equal(want, got, sizeof want);
    uint64_t ns = 1;
    assert_int_equal(dlg_net_input_stall(net, &ns), -DLG_ENOTSUP);
    assert_int_equal(ns, 0);
    float v[NIN] = {0};
    int fc_w = dlg_net_param(net, "fc", 0);
    assert_int_equal(dlg_net_write_async(net, fc_w, v, (size_t)K * 4 * S * S), -DLG_EINVAL);
    assert_int_equal(dlg_net_write_async(net, x, v, NIN - 1), -DLG_EINVAL);
    assert_int_equal(dlg_net_status(net), 0);
    assert_null(net->input); /* ref: no staging was made */
    dlg_net_destroy(net);
}

/* ---- the asynchronous path on stand-in hooks ---- */
typedef struct fslot {
    bool taken; /* a step read it since its last copy */
} fslot;

typedef struct fcopy {
    void *dst;
    const void *src;
    size_t bytes;
    fslot *slot;
} fcopy;

typedef struct fdev {
    fcopy q[16]; /* the copy stream: queued, run late */
    int nq;
    int slots, copies, after_reads, takes, marks, host_allocs;
    bool fail_take;
} fdev;

static void run_copies(fdev *d, int upto) /* runs q[0..upto) */
{
    for (int i = 0; i < upto; i++)
        memcpy(d->q[i].dst, d->q[i].src, d->q[i].bytes);
    memmove(d->q, d->q + upto, (size_t)(d->nq - upto) * sizeof d->q[0]);
    d->nq -= upto;
}

static void *f_host_alloc(void *ctx, size_t bytes)
{
    void *p = NULL;
    ((fdev *)ctx)->host_allocs++;
    return posix_memalign(&p, 64, bytes) ? NULL : p;
}

static void f_host_free(void *ctx, void *p) { free(p); }

static int f_slot_open(void *ctx, void **slot)
{
    ((fdev *)ctx)->slots++;
    *slot = calloc(1, sizeof(fslot));
    return *slot ? 0 : -DLG_ENOMEM;
}

static void f_slot_close(void *ctx, void *slot)
{
    ((fdev *)ctx)->slots--;
    free(slot);
}

static int f_copy(void *ctx, void *slot, void *stage, const void *src, size_t bytes,
                  bool after_read)
{
    fdev *d = ctx;
    fslot *s = slot;
    /* a staging buffer a step has read is copied into only after that read */
    assert_int_equal(after_read, s->taken);
    d->after_reads += after_read;
    s->taken = false;
    assert_true(d->nq < 16);
    d->q[d->nq++] = (fcopy){stage, src, bytes, s};
    d->copies++;
    return 0;
}

static int f_take(void *ctx, void *const *slot, void *const *dst, void *const *stage,
                  const size_t *bytes, int n)
{
    fdev *d = ctx;
    if (d->fail_take)
        return -DLG_EINTERNAL;
    /* wait for each slot's last copy: the copy stream runs in order */
    int upto = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < d->nq; j++)
            if (d->q[j].slot == slot[i] && j + 1 > upto)
                upto = j + 1;
    run_copies(d, upto);
    for (int i = 0; i < n; i++) {
        memcpy(dst[i], stage[i], bytes[i]);
        ((fslot *)slot[i])->taken = true;
    }
    d->takes++;
    return 0;
}

static int f_mark(void *ctx)
{
    ((fdev *)ctx)->marks++;
    return 0;
}

static int f_wait(void *ctx)
{
    fdev *d = ctx;
    run_copies(d, d->nq);
    return 0;
}

static int f_stall(void *ctx, uint64_t *ns)
{
    *ns = 1234;
    return 0;
}

static dlg_backend fake_bk;

static dlg_net *make_fake_net(int *x, int *y, fdev *d)
{
    dlg_net *net = make_net(x, y);
    fake_bk = *net->bk;
    fake_bk.host_alloc = f_host_alloc;
    fake_bk.host_free = f_host_free;
    fake_bk.in_slot_open = f_slot_open;
    fake_bk.in_slot_close = f_slot_close;
    fake_bk.in_copy = f_copy;
    fake_bk.in_take = f_take;
    fake_bk.in_mark = f_mark;
    fake_bk.in_wait = f_wait;
    fake_bk.in_stall = f_stall;
    net->bk = &fake_bk;
    net->ctx = d; /* ref's context is NULL and unused by its hooks */
    return net;
}

static void unfake(dlg_net *net)
{
    dlg_input_free(net); /* with the stand-ins still installed */
    net->ctx = NULL;
    net->bk = dlg_backend_find("ref");
}

static void test_async_pipeline(void **st)
{
    float want[STEPS], got[STEPS];
    losses_sync(want);
    fdev d = {0};
    int x, y;
    dlg_net *net = make_fake_net(&x, &y, &d);
    uint64_t ns;
    assert_int_equal(dlg_net_input_stall(net, &ns), -DLG_ENOTSUP); /* no step yet */
    losses_pipelined(net, x, y, got);
    assert_memory_equal(want, got, sizeof want);
    assert_int_equal(d.host_allocs, 4);
    assert_int_equal(d.slots, 4); /* two staging buffers per blob */
    assert_int_equal(d.copies, 2 * (STEPS + 1));
    assert_int_equal(d.takes, STEPS);
    assert_int_equal(d.marks, STEPS);
    /* from batch 2 on, each copy goes where step k-1 read: it waits */
    assert_int_equal(d.after_reads, 2 * (STEPS - 1));
    assert_int_equal(d.nq, 0); /* write_wait ran them all */
    assert_int_equal(dlg_net_input_stall(net, &ns), 0);
    assert_int_equal(ns, 1234);
    unfake(net);
    assert_int_equal(d.slots, 0);
    dlg_net_destroy(net);
}

/* Without dlg_net_write_wait the host buffer is reused while its copy is
 * still queued: the step then trains on the overwritten batch -- the
 * stand-in's late copies make that visible, which is why the contract
 * (and the caffe workload) waits before reusing it. */
static void test_reuse_needs_wait(void **st)
{
    fdev d = {0};
    int x, y;
    dlg_net *net = make_fake_net(&x, &y, &d);
    float *img = dlg_net_host_alloc(net, NIN * sizeof(float)), lab[B], got[NIN], b0[NIN];
    fill_batch(0, b0, lab);
    memcpy(img, b0, sizeof b0);
    assert_int_equal(dlg_net_write_async(net, x, img, NIN), 0);
    fill_batch(1, img, lab); /* too early: the copy has not run */
    assert_int_equal(dlg_net_forward(net), 0);
    assert_int_equal(dlg_net_read(net, x, DLG_DATA, got, NIN), 0);
    assert_memory_not_equal(got, b0, sizeof b0);
    /* with the wait in between the blob gets what was written */
    memcpy(img, b0, sizeof b0);
    assert_int_equal(dlg_net_write_async(net, x, img, NIN), 0);
    assert_int_equal(dlg_net_write_wait(net), 0);
    fill_batch(1, img, lab);
    assert_int_equal(dlg_net_forward(net), 0);
    assert_int_equal(dlg_net_read(net, x, DLG_DATA, got, NIN), 0);
    assert_memory_equal(got, b0, sizeof b0);
    dlg_net_host_free(net, img);
    unfake(net);
    dlg_net_destroy(net);
}

/* The last write wins: a second asynchronous write, or a synchronous one,
 * after an asynchronous write and before the step. */
static void test_last_write_wins(void **st)
{
    fdev d = {0};
    int x, y;
    dlg_net *net = make_fake_net(&x, &y, &d);
    float a[NIN], b[NIN], lab[B], got[NIN];
    fill_batch(3, a, lab);
    fill_batch(4, b, lab);
    assert_int_equal(dlg_net_write_async(net, x, a, NIN), 0);
    assert_int_equal(dlg_net_write_async(net, x, b, NIN), 0);
    assert_int_equal(dlg_net_forward(net), 0);
    assert_int_equal(dlg_net_read(net, x, DLG_DATA, got, NIN), 0);
    assert_memory_equal(got, b, sizeof b);
    assert_int_equal(dlg_net_write_async(net, x, a, NIN), 0);
    assert_int_equal(dlg_net_write(net, x, DLG_DATA, b, NIN), 0);
    assert_int_equal(dlg_net_forward(net), 0);
    assert_int_equal(dlg_net_read(net, x, DLG_DATA, got, NIN), 0);
    assert_memory_equal(got, b, sizeof b);
    /* a failing take is a step error naming the backend, and sticky */
    assert_int_equal(dlg_net_write_async(net, x, a, NIN), 0);
    d.fail_take = true;
    assert_int_equal(dlg_net_train_step(net, &sgd), -DLG_EINTERNAL);
    assert_non_null(strstr(dlg_net_error(net), "asynchronous inputs"));
    assert_int_equal(dlg_net_status(net), -DLG_EINTERNAL);
    unfake(net);
    dlg_net_destroy(net);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring),
        cmocka_unit_test(test_ref_sync),
        cmocka_unit_test(test_async_pipeline),
        cmocka_unit_test(test_reuse_needs_wait),
        cmocka_unit_test(test_last_write_wins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
