/* What allreduce and p2p share: ops_per_step ops per step, back to back
 * on buffers set up once (host memory, or a GPU's: comm_dev.c) and timed
 * together, as nccl-tests times its loop; the result checked before and
 * after the timed steps (an out-of-place sum and a sendrecv leave the same
 * recv however often they run), nccl-tests' fields. */
#include "comm.h"

#include <stdlib.h>

struct comm_wl {
    const dlg_host *h;
    const comm_kind *kind;
    comm_bufs b;
    comm_dev *dev; /* NULL: device = cpu, the host's collectives */
    int ops;       /* per step */
    comm_clock clock;
};

int comm_wl_check(const comm_kind *k, const dlg_host *h, const dlg_value *opts)
{
    size_t count;
    dlg_comm_type type;
    return comm_check_options(h, opts, k->name, &count, &type);
}

void comm_wl_teardown(void *state)
{
    comm_wl *s = state;
    if (!s)
        return;
    comm_dev_close(s->dev);
    comm_bufs_free(&s->b);
    free(s);
}

int comm_wl_setup(const comm_kind *k, const dlg_host *h, const dlg_value *opts, void **state)
{
    *state = NULL;
    comm_wl *s = calloc(1, sizeof *s);
    if (!s)
        return h->error(h, DLG_ENOMEM, "out of memory");
    s->h = h;
    s->kind = k;
    s->ops = comm_ops_per_step(opts);
    comm_clock_reset(&s->clock, s->ops);
    int rc = comm_bufs_init(h, opts, k->name, &s->b);
    if (rc == 0 && comm_on_device(opts))
        rc = comm_dev_open(h, opts[COMM_OPT_DEVICE].text, &s->b, k->name, &s->dev);
    if (rc < 0) {
        comm_wl_teardown(s);
        return rc;
    }
    *state = s;
    return 0;
}

/* A step's ops on the device: the communicator joined at the first step
 * (every rank reaches it together), then the ops on the device's clock. */
static int dev_ops(comm_wl *s, uint64_t *ns)
{
    int rc = comm_dev_join(s->dev);
    return rc < 0 ? rc : comm_dev_ops(s->dev, s->kind->expect, s->ops, ns);
}

/* A step's ops through the host's collectives, on its clock. */
static int host_ops(comm_wl *s, uint64_t *ns)
{
    uint64_t t0 = s->h->now_ns(s->h);
    for (int i = 0; i < s->ops; i++) {
        int rc = s->kind->op(s->h, &s->b);
        if (rc < 0)
            return rc;
    }
    *ns = s->h->now_ns(s->h) - t0;
    return 0;
}

int comm_wl_step(void *state, dlg_step *out)
{
    comm_wl *s = state;
    uint64_t ns = 0;
    int rc = s->dev ? dev_ops(s, &ns) : host_ops(s, &ns);
    if (rc < 0)
        return rc;
    comm_clock_add(&s->clock, ns);
    if (s->dev) /* the device's clock: the runner's would add the launch */
        out->elapsed_ns = ns;
    /* the runner sums the ranks' items: rank 0 counts its bytes */
    out->items = s->b.rank == 0 ? (uint64_t)s->ops * s->b.count * s->b.elem : 0;
    return 0;
}

/* One step's ops on a poisoned recv, checked and untimed: a wrong result
 * stops the cell before its timed steps. */
int comm_wl_begin_timed(void *state)
{
    comm_wl *s = state;
    uint64_t ns;
    int rc;
    if (s->dev) {
        if ((rc = comm_dev_join(s->dev)) == 0 && (rc = comm_dev_poison(s->dev, &s->b)) == 0 &&
            (rc = dev_ops(s, &ns)) == 0)
            rc = comm_dev_fetch(s->dev, &s->b);
    } else {
        comm_bufs_poison(&s->b);
        rc = host_ops(s, &ns);
    }
    if (rc == 0)
        rc = comm_bufs_check(s->h, &s->b, s->kind->expect, s->kind->name, "after the warm-up");
    comm_clock_reset(&s->clock, s->ops);
    return rc;
}

/* recv still holds the last timed op's result: checked, then the times.
 * The ranks agree on both, so one rank's wrong result fails them all. */
int comm_wl_report(void *state, const dlg_report_api *api, dlg_fields *f)
{
    comm_wl *s = state;
    int rc = s->dev ? comm_dev_fetch(s->dev, &s->b) : 0;
    if (rc == 0)
        rc = comm_bufs_check(s->h, &s->b, s->kind->expect, s->kind->name, "after the timed steps");
    double mean = 0, median = 0;
    if (rc == 0)
        rc = comm_clock_agree(s->h, &s->clock, s->b.size, &mean, &median);
    comm_clock_reset(&s->clock, s->ops);
    if (rc < 0)
        return rc;
    comm_report_fields(api, f, &s->b, s->kind->busbw_factor(s->b.size), mean, median);
    api->add_string(f, "device", s->dev ? comm_dev_name(s->dev) : "cpu");
    return 0;
}
