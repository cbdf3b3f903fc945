/* The time of one op, as nccl-tests takes it (a loop of ops timed
 * together and divided: the mean over the timed steps of a step's time /
 * its ops, averaged over the ranks), its median beside it, and the
 * fields. */
#include "comm.h"

#include <stdlib.h>

void comm_clock_reset(comm_clock *c, int per_step)
{
    c->sum_ns = 0;
    c->steps = 0;
    c->per_step = per_step > 0 ? per_step : 1;
}

void comm_clock_add(comm_clock *c, uint64_t ns)
{
    c->samples[c->steps % COMM_SAMPLES] = ns;
    c->sum_ns += ns;
    c->steps++;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The median of the kept step times (they are sorted in place: report()
 * resets the clock after). */
static double median_ns(comm_clock *c)
{
    size_t n = c->steps < COMM_SAMPLES ? (size_t)c->steps : COMM_SAMPLES;
    if (n == 0)
        return 0;
    qsort(c->samples, n, sizeof c->samples[0], cmp_u64);
    return n % 2 ? (double)c->samples[n / 2] : ((double)c->samples[n / 2 - 1] + (double)c->samples[n / 2]) / 2;
}

int comm_clock_agree(const dlg_host *h, comm_clock *c, int size, double *mean_s, double *median_s)
{
    double ops = (double)c->steps * c->per_step;
    double v[2] = {ops > 0 ? (double)c->sum_ns / ops / 1e9 : 0, median_ns(c) / c->per_step / 1e9};
    int rc = h->comm_allreduce(h, v, v, 2, DLG_COMM_F64);
    if (rc < 0)
        return rc;
    *mean_s = v[0] / size;
    *median_s = v[1] / size;
    return 0;
}

void comm_report_fields(const dlg_report_api *api, dlg_fields *f, const comm_bufs *b, double factor,
                        double mean_s, double median_s)
{
    double bytes = (double)(b->count * b->elem);
    if (mean_s > 0) { /* none without a timed op */
        double algbw = bytes / mean_s;
        api->add_double(f, "algbw_bytes_per_s", algbw);
        api->add_double(f, "busbw_bytes_per_s", algbw * factor);
        api->add_double(f, "op_time_us", mean_s * 1e6);
        api->add_double(f, "op_median_us", median_s * 1e6);
    }
    api->add_double(f, "busbw_factor", factor);
    api->add_int(f, "message_bytes", (int64_t)bytes);
}
