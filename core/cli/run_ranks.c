/* `dlgauge run` under several ranks (run_ranks.h). */
#define _GNU_SOURCE
#include "run_ranks.h"

#include "journal.h"
#include "runner_ranks.h"
#include "signals.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

/* ---- a rank's stderr, prefixed ------------------------------------------ */
typedef struct prefixer {
    char prefix[24];
    bool at_start; /* the next byte begins a line */
} prefixer;

static void write_all(const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(2, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

/* The prefix and its line in one write(2): the launcher forwards each
 * rank's stderr as it comes, and two writes could be parted by another
 * rank's line. */
static void write_line(const char *prefix, const char *p, size_t n)
{
    size_t pl = strlen(prefix);
    struct iovec iov[2] = {{(void *)prefix, pl}, {(void *)p, n}};
    ssize_t w;
    do
        w = writev(2, iov, 2);
    while (w < 0 && errno == EINTR);
    if (w < 0)
        return;
    size_t done = (size_t)w; /* a short write: the rest as it goes */
    if (done < pl)
        write_all(prefix + done, pl - done);
    write_all(p + (done > pl ? done - pl : 0), n - (done > pl ? done - pl : 0));
}

static ssize_t prefix_write(void *cookie, const char *buf, size_t n)
{
    prefixer *pf = cookie;
    for (size_t done = 0; done < n;) {
        const char *nl = memchr(buf + done, '\n', n - done);
        size_t k = nl ? (size_t)(nl - (buf + done)) + 1 : n - done;
        write_line(pf->at_start ? pf->prefix : "", buf + done, k);
        pf->at_start = nl != NULL;
        done += k;
    }
    return (ssize_t)n;
}

/* stdio's stderr, which glibc lets a program replace: the lines of the
 * runtime and the plugins alike.  What writes to fd 2 itself (a crash
 * guard's line, MPI's own messages) goes out as it is. */
void dlg_rank_stderr_begin(dlg_rank_stderr *rs, int rank)
{
    rs->saved = NULL;
    if (rank <= 0)
        return;
    prefixer *pf = calloc(1, sizeof *pf);
    FILE *f = pf ? fopencookie(pf, "w", (cookie_io_functions_t){.write = prefix_write}) : NULL;
    if (!f) { /* no memory: its lines go out unprefixed */
        free(pf);
        return;
    }
    snprintf(pf->prefix, sizeof pf->prefix, "rank %d: ", rank);
    pf->at_start = true;
#if defined(__SANITIZE_ADDRESS__)
    /* it lives until the process ends (dlg_rank_stderr_end); LeakSanitizer
     * does not follow glibc's list of FILEs to it */
    __lsan_ignore_object(pf);
#endif
    setvbuf(f, NULL, _IOLBF, 0); /* whole lines, each out as it ends */
    fflush(stderr);
    rs->saved = stderr;
    stderr = f;
}

void dlg_rank_stderr_end(dlg_rank_stderr *rs)
{
    if (!rs->saved)
        return;
    /* not closed (run_ranks.h): glibc's list of open FILEs keeps it and
     * its prefixer reachable, and flushes it at exit */
    fflush(stderr);
    stderr = rs->saved;
    rs->saved = NULL;
}

/* ---- agreements ---------------------------------------------------------- */
/* What sets how many steps and repetitions a cell's ranks take part in. */
static const int steps_keys[] = {DLG_K_ITERATIONS, DLG_K_WARMUP, DLG_K_REPEAT};

/* A collective of the CLI's that failed: nothing sensible is left to do
 * together, so every rank ends. */
static void or_abort(dlg_comm *c, int rc, const char *why)
{
    if (rc == 0)
        return;
    fprintf(stderr, "dlgauge: the agreement between ranks before the cells failed: %s\n", why);
    dlg_comm_abort(c, 2);
}

/* "N cells in J jobs (plan HASH)": what the ranks must agree on, the jobs
 * and each cell's count of steps and repetitions (ranks that differ there
 * would wait for each other in different collectives).  Not the other
 * values: a path may name each rank's own shard (${OMPI_COMM_WORLD_RANK}). */
static void plan_shape(const dlg_plan *p, char *buf, size_t len)
{
    uint64_t h = 0;
    for (size_t j = 0; j < p->njobs; j++) {
        const dlg_job *job = &p->jobs[j];
        dlg_journal_hash(job->name, strlen(job->name) + 1, &h);
        dlg_journal_hash(&job->ncells, sizeof job->ncells, &h);
        for (size_t k = 0; k < job->ncells; k++) {
            dlg_cell cell;
            char err[256];
            if (dlg_plan_cell(p, job, k, &cell, err, sizeof err) == 0) /* else its row says why */
                for (size_t i = 0; i < sizeof steps_keys / sizeof *steps_keys; i++)
                    dlg_journal_hash(&cell.core[steps_keys[i]].i, sizeof cell.core[steps_keys[i]].i, &h);
            dlg_cell_free(&cell);
        }
    }
    snprintf(buf, len, "%zu cell%s in %zu job%s (shape %016llx)", p->total_cells, p->total_cells == 1 ? "" : "s",
             p->njobs, p->njobs == 1 ? "" : "s", (unsigned long long)h);
}

bool dlg_ranks_ready(dlg_comm *c, bool ok, const char *err, const dlg_plan *plan)
{
    if (dlg_comm_size(c) <= 1) {
        if (!ok)
            fprintf(stderr, "dlgauge: %s\n", err);
        return ok;
    }
    int me = dlg_comm_rank(c);
    struct {
        char err[4096];
        char shape[128];
    } lead;
    char why[768], shape[128] = "", mine[4400];
    if (ok && plan)
        plan_shape(plan, shape, sizeof shape);
    snprintf(lead.err, sizeof lead.err, "%s", me == 0 && !ok ? err : "");
    snprintf(lead.shape, sizeof lead.shape, "%s", shape);
    or_abort(c, dlg_comm_bcast(c, DLG_COMM_CTL, &lead, sizeof lead, 0, why, sizeof why), why);
    lead.err[sizeof lead.err - 1] = lead.shape[sizeof lead.shape - 1] = '\0';
    if (ok && me != 0 && lead.shape[0] && strcmp(shape, lead.shape) != 0) {
        snprintf(mine, sizeof mine, "this rank planned %s, rank 0 %s: every rank must run the same file with the "
                 "same --job and --set, and the same iterations, warmup and repeat in each cell", shape, lead.shape);
        err = mine;
        ok = false;
    }
    int64_t bad = ok ? 0 : 1;
    or_abort(c, dlg_comm_allreduce(c, DLG_COMM_CTL, &bad, &bad, 1, DLG_COMM_I64, DLG_COMM_MAX, why, sizeof why), why);
    if (!ok && (me == 0 || strcmp(lead.err, err) != 0))
        fprintf(stderr, "dlgauge: %s\n", err);
    else if (bad && me == 0)
        fprintf(stderr, "dlgauge: another rank could not start the run (its line says why): no cell was measured\n");
    return bad == 0;
}

int dlg_ranks_check_isolation(const dlg_plan *plan, int ranks, char *err, size_t errlen)
{
    if (ranks <= 1)
        return 0;
    for (size_t j = 0; j < plan->njobs; j++) {
        const dlg_job *job = &plan->jobs[j];
        if (strcmp(job->core_text[DLG_K_ISOLATION], "none") == 0)
            continue;
        const dlg_entry *src = job->core_src[DLG_K_ISOLATION];
        char w[512];
        dlg_plan_where(src, job->sec, w, sizeof w);
        if (src)
            snprintf(err, errlen, "%s[job %s] isolation = %s: a cell's own process is not one of the run's %d MPI "
                     "ranks; set isolation = none to run it under mpirun", w, job->name,
                     job->core_text[DLG_K_ISOLATION], ranks);
        else
            snprintf(err, errlen, "%s[job %s] runs under %d MPI ranks, where a cell's own process (isolation = "
                     "process, the default) is not a rank: set isolation = none in the job or in [global]", w,
                     job->name, ranks);
        return -1;
    }
    return 0;
}

int dlg_ranks_cell_action(dlg_comm *c, int action)
{
    if (dlg_comm_size(c) <= 1)
        return action;
    /* the highest: a stop on any rank stops them all, and its signal
     * becomes every rank's (their exit status and lines say it) */
    int64_t v[2] = {action, dlg_stop_signal()};
    char why[768];
    if (dlg_comm_allreduce(c, DLG_COMM_CTL, v, v, 2, DLG_COMM_I64, DLG_COMM_MAX, why, sizeof why) != 0) {
        fprintf(stderr, "dlgauge: the agreement between ranks on the next cell failed: %s\n", why);
        dlg_comm_abort(c, 1);
    }
    dlg_ranks_share_stop((int)v[1]);
    return (int)v[0];
}

int dlg_ranks_exit_status(dlg_comm *c, int status)
{
    if (dlg_comm_size(c) <= 1)
        return status;
    int64_t v = status;
    char why[768];
    if (dlg_comm_bcast(c, DLG_COMM_CTL, &v, sizeof v, 0, why, sizeof why) != 0)
        return status;
    return (int)v;
}
