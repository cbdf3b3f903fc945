/* The buffers of the comm workloads: allocated and first-touched in setup,
 * filled with a pattern whose sums over any number of ranks are small
 * integers (exact in float32 too), and checked element by element. */
#define _GNU_SOURCE
#include "comm.h"
#include "phys_fit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Element i of rank r's send buffer is (i + r) % PERIOD: it depends on
 * both, so a block from the wrong rank or the wrong offset shows. */
#define PERIOD COMM_PERIOD
#define POISON (-1) /* in recv before a checked op: no op leaves it */
#define MAX_BYTES (1LL << 30)

static const char *const type_names[] = {"float32", "float64", "int64"};
static const dlg_comm_type types[] = {DLG_COMM_F32, DLG_COMM_F64, DLG_COMM_I64};

static const char *txt(const dlg_value *v) { return v->text ? v->text : "(unset)"; }

int comm_check_options(const dlg_host *h, const dlg_value *opts, const char *who, size_t *count,
                       dlg_comm_type *type)
{
    if (!DLG_HOST_HAS(h, comm_info))
        return h->error(h, DLG_ENOTSUP, "%s: this dlgauge has no collectives (dlg_host.comm_info): it is older "
                        "than the plugin", who);
    char err[160];
    int dev;
    int rc = comm_device_parse(opts[COMM_OPT_DEVICE].text, &dev, err, sizeof err);
    if (rc < 0)
        return h->error(h, -rc, "%s", err);
    int64_t t = opts[COMM_OPT_TYPE].i;
    if (t < 0 || t > 2)
        return h->error(h, DLG_EINVAL, "type = %s: must be one of float32|float64|int64", txt(&opts[COMM_OPT_TYPE]));
    size_t elem = t == 0 ? 4 : 8;
    int64_t bytes = opts[COMM_OPT_BYTES].i;
    if (bytes < (int64_t)elem)
        return h->error(h, DLG_EINVAL, "bytes = %s: must be at least one element (%zu bytes of %s)",
                        txt(&opts[COMM_OPT_BYTES]), elem, type_names[t]);
    if (bytes % (int64_t)elem)
        return h->error(h, DLG_EINVAL, "bytes = %s: not a whole number of %s elements (%zu bytes each)",
                        txt(&opts[COMM_OPT_BYTES]), type_names[t], elem);
    if (bytes > MAX_BYTES)
        return h->error(h, DLG_EINVAL, "bytes = %s: at most 1GiB", txt(&opts[COMM_OPT_BYTES]));
    int64_t ops = opts[COMM_OPT_OPS].i; /* the host checks the table's bounds; a bare driver may not */
    if (ops < 1 || ops > COMM_MAX_OPS)
        return h->error(h, DLG_EINVAL, "ops_per_step = %s: must be 1 to %d", txt(&opts[COMM_OPT_OPS]),
                        COMM_MAX_OPS);
    dlg_rank_info ri = {.struct_size = sizeof ri};
    h->comm_info(h, &ri);
    if (t == 0 && (double)ri.size * (PERIOD - 1) >= (double)(1 << 24)) /* sums would round: no check */
        return h->error(h, DLG_EINVAL, "type = float32: the sums of %d ranks are not exact in float32; use float64",
                        ri.size);
    char a[DLG_BYTES_TXT], b[DLG_BYTES_TXT];
    if (!dlg_phys_fits(2.0 * (double)bytes, a, b))
        return h->error(h, DLG_EINVAL, "bytes = %s: the send and receive buffers need %s, the machine has %s",
                        txt(&opts[COMM_OPT_BYTES]), a, b);
    *count = (size_t)bytes / elem;
    *type = types[t];
    return 0;
}

int comm_ops_per_step(const dlg_value *opts) { return (int)opts[COMM_OPT_OPS].i; }

/* What every rank's element i sums to: full periods of ranks add every
 * residue once (0 + 1 + .. + 60 = 1830), the rest what sums[i % 61] says. */
static int64_t sum_at(const int64_t *sums, int size, size_t i)
{
    return (int64_t)(size / PERIOD) * 1830 + sums[i % PERIOD];
}

static void set_elem(const comm_bufs *b, void *buf, size_t i, int64_t v)
{
    if (b->type == DLG_COMM_F32)
        ((float *)buf)[i] = (float)v;
    else if (b->type == DLG_COMM_F64)
        ((double *)buf)[i] = (double)v;
    else
        ((int64_t *)buf)[i] = v;
}

void comm_bufs_poison(comm_bufs *b)
{
    for (size_t i = 0; i < b->count; i++)
        set_elem(b, b->recv, i, POISON);
}

static void fill_send(comm_bufs *b)
{
    for (size_t i = 0; i < b->count; i++)
        set_elem(b, b->send, i, (int64_t)((i + (size_t)b->rank) % PERIOD));
}

void comm_bufs_free(comm_bufs *b)
{
    free(b->send);
    free(b->recv);
    free(b->agree);
    b->send = b->recv = NULL;
    b->agree = NULL;
}

int comm_bufs_init(const dlg_host *h, const dlg_value *opts, const char *who, comm_bufs *b)
{
    memset(b, 0, sizeof *b);
    int rc = comm_check_options(h, opts, who, &b->count, &b->type);
    if (rc < 0)
        return rc;
    dlg_rank_info ri = {.struct_size = sizeof ri};
    h->comm_info(h, &ri);
    b->rank = ri.rank;
    b->size = ri.size > 0 ? ri.size : 1;
    b->elem = b->type == DLG_COMM_F32 ? 4 : 8;
    b->type_name = type_names[opts[COMM_OPT_TYPE].i];
    size_t bytes = b->count * b->elem;
    if (posix_memalign(&b->send, 4096, bytes) != 0)
        b->send = NULL;
    if (posix_memalign(&b->recv, 4096, bytes) != 0)
        b->recv = NULL;
    b->agree = calloc(4 * (size_t)b->size, sizeof *b->agree);
    if (!b->send || !b->recv || !b->agree) {
        char need[32];
        dlg_bytes_txt(need, sizeof need, 2.0 * (double)bytes);
        comm_bufs_free(b);
        return h->error(h, DLG_ENOMEM, "%s: cannot allocate the send and receive buffers (%s)", who, need);
    }
    /* first touch here, by the thread that runs the steps */
    fill_send(b);
    comm_bufs_poison(b);
    for (int k = 0; k < PERIOD; k++)
        for (int j = 0; j < b->size % PERIOD; j++)
            b->sums[k] += (k + j) % PERIOD;
    return 0;
}

static int64_t want_at(const comm_bufs *b, comm_expect e, size_t i)
{
    if (e == COMM_SUM)
        return sum_at(b->sums, b->size, i);
    int from = (b->rank - 1 + b->size) % b->size;
    return (int64_t)((i + (size_t)from) % PERIOD);
}

/* The first element of recv that is not what e says, or count. */
static size_t first_bad(const comm_bufs *b, comm_expect e, int64_t *got_bits)
{
    for (size_t i = 0; i < b->count; i++) {
        int64_t want = want_at(b, e, i);
        if (b->type == DLG_COMM_I64) {
            int64_t g = ((const int64_t *)b->recv)[i];
            if (g != want) {
                *got_bits = g;
                return i;
            }
            continue;
        }
        double g = b->type == DLG_COMM_F32 ? (double)((const float *)b->recv)[i] : ((const double *)b->recv)[i];
        if (!(g == (double)want)) {
            memcpy(got_bits, &g, sizeof g);
            return i;
        }
    }
    return b->count;
}

static void fmt_value(const comm_bufs *b, int64_t bits, char *buf, size_t len)
{
    if (b->type == DLG_COMM_I64) {
        snprintf(buf, len, "%lld", (long long)bits);
        return;
    }
    double d;
    memcpy(&d, &bits, sizeof d);
    snprintf(buf, len, "%.9g", d);
}

int comm_bufs_check(const dlg_host *h, comm_bufs *b, comm_expect e, const char *who, const char *when)
{
    memset(b->agree, 0, 4 * (size_t)b->size * sizeof *b->agree);
    int64_t got = 0;
    size_t i = first_bad(b, e, &got);
    if (i < b->count) { /* this rank's slot: the others stay 0, so the sum is it */
        int64_t *s = &b->agree[4 * b->rank];
        s[0] = 1;
        s[1] = (int64_t)i;
        s[2] = got;
        s[3] = want_at(b, e, i);
    }
    int rc = h->comm_allreduce(h, b->agree, b->agree, 4 * (size_t)b->size, DLG_COMM_I64);
    if (rc < 0)
        return rc;
    for (int r = 0; r < b->size; r++) {
        const int64_t *s = &b->agree[4 * r];
        if (!s[0])
            continue;
        char g[32];
        fmt_value(b, s[2], g, sizeof g);
        return h->error(h, DLG_EINTERNAL, "%s: wrong result %s on rank %d, element %lld: got %s, want %lld (%s, %d rank%s)",
                        who, when, r, (long long)s[1], g, (long long)s[3], b->type_name, b->size,
                        b->size == 1 ? "" : "s");
    }
    return 0;
}
