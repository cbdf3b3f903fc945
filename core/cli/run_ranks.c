/* `dlgauge run` under several ranks (run_ranks.h). */
#define _GNU_SOURCE
#include "run_ranks.h"

#include "cli.h"
#include "journal.h"
#include "ranks_stop.h"
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
#define READY "the ranks' check that they planned the same cells"

/* A collective of the CLI's that failed: nothing sensible is left to do
 * together, so every rank ends; one that rank 0 gave up on a stop request
 * ends them with the stop's status (ranks_stop.h). */
static void or_abort(dlg_comm *c, int rc, const char *why)
{
    if (rc == 0)
        return;
    if (rc == -DLG_ESTOP)
        dlg_ranks_stop_abort(c, NULL, READY); /* before the first cell: no row yet */
    fprintf(stderr, "dlgauge: the agreement between ranks before the cells failed: %s\n", why);
    dlg_comm_abort(c, 2);
}

/* The agreements before the first cell, each waiting as ranks_stop.h says. */
static int ready_bcast(dlg_comm *c, void *buf, size_t bytes, char *why, size_t len)
{
    dlg_ranks_wait w;
    return dlg_comm_bcast_until(c, DLG_COMM_CTL, buf, bytes, 0, dlg_ranks_wait_init(&w, c), why, len);
}

static int ready_max(dlg_comm *c, int64_t *v, size_t n, char *why, size_t len)
{
    dlg_ranks_wait w;
    return dlg_comm_allreduce_until(c, DLG_COMM_CTL, v, v, n, DLG_COMM_I64, DLG_COMM_MAX, dlg_ranks_wait_init(&w, c),
                                    why, len);
}

/* Whether the ranks must agree on a value of key: every value of every
 * cell (one row says the job's config, so a batch of 4 on rank 0 and 64 on
 * rank 1 would be reported as 4), but placements: cpus (a CPU range per
 * rank keeps a node's ranks apart) and a workload's device (cuda:N per
 * rank, ${OMPI_COMM_WORLD_LOCAL_RANK} in it; a mix of host and GPU is
 * refused where the ranks first sum gradients, naming both), and paths:
 * plugin, and the options read or written (each rank's own shard or
 * scratch file, ${OMPI_COMM_WORLD_RANK} in the name). */
static bool shared_key(const dlg_option *o)
{
    return o != &dlg_core_job_options[DLG_K_CPUS] && o != &dlg_core_job_options[DLG_K_PLUGIN] &&
           strcmp(o->name, "device") != 0 && !(o->flags & (DLG_OPT_PATH_IN | DLG_OPT_PATH_OUT));
}

/* The values the ranks share, one line each, "JOB \x1f CELL \x1f KEY \x1f
 * VALUE\n", to fn; cells whose values do not parse are skipped (their rows
 * say why; alike on every rank).  Jobs and cell counts go to fn as lines
 * of their own.  0, or -DLG_ENOMEM with err when a cell could not be
 * built for want of memory: this rank's values are then not all known. */
typedef void (*value_fn)(void *ctx, const char *line, size_t len);
/* line, of snprintf's n, to fn: cut short as snprintf cut it */
static void emit(value_fn fn, void *ctx, const char *line, int n, size_t cap)
{
    fn(ctx, line, n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1);
}

static int each_value(const dlg_plan *p, value_fn fn, void *ctx, char *err, size_t errlen)
{
    char line[2048];
    for (size_t j = 0; j < p->njobs; j++) {
        const dlg_job *job = &p->jobs[j];
        emit(fn, ctx, line, snprintf(line, sizeof line, "%s\x1f%zu cells\n", job->name, job->ncells), sizeof line);
        for (size_t k = 0; k < job->ncells; k++) {
            dlg_cell cell;
            int rc = dlg_plan_cell(p, job, k, &cell, err, errlen);
            if (rc != 0) {
                dlg_cell_free(&cell);
                if (rc == -DLG_ENOMEM)
                    return rc;
                continue;
            }
            for (size_t i = 0; i < DLG_K_COUNT + job->nwl; i++) {
                const dlg_option *o = i < DLG_K_COUNT ? &dlg_core_job_options[i]
                                                      : &job->workload->options[i - DLG_K_COUNT];
                const dlg_value *v = i < DLG_K_COUNT ? &cell.core[i] : &cell.wl[i - DLG_K_COUNT];
                if (!shared_key(o))
                    continue;
                emit(fn, ctx, line,
                     snprintf(line, sizeof line, "%s\x1f%zu\x1f%s\x1f%s\n", job->name, k, o->name,
                              v->set && v->text ? v->text : "(unset)"),
                     sizeof line);
            }
            dlg_cell_free(&cell);
        }
    }
    return 0;
}

static void hash_line(void *ctx, const char *line, size_t len) { dlg_journal_hash(line, len, ctx); }

/* "N cells in J jobs (shape HASH)": what the ranks must agree on, the jobs
 * and each cell's shared values (shared_key).  0, or -DLG_ENOMEM with err. */
static int plan_shape(const dlg_plan *p, char *buf, size_t len, char *err, size_t errlen)
{
    uint64_t h = 0;
    int rc = each_value(p, hash_line, &h, err, errlen);
    if (rc != 0)
        return rc;
    snprintf(buf, len, "%zu cell%s in %zu job%s (shape %016llx)", p->total_cells, p->total_cells == 1 ? "" : "s",
             p->njobs, p->njobs == 1 ? "" : "s", (unsigned long long)h);
    return 0;
}

/* The lines of each_value in one buffer, at most VALUES_MAX bytes (a sweep
 * of a million cells is not sent whole: its first difference is named
 * where it falls in the first MiB). */
#define VALUES_MAX ((size_t)1 << 20)
typedef struct values_buf {
    char *p;
    size_t n, cap;
} values_buf;

static void keep_line(void *ctx, const char *line, size_t len)
{
    values_buf *b = ctx;
    if (b->n + len + 1 > VALUES_MAX)
        return;
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->n + len + 1)
            cap *= 2;
        char *q = realloc(b->p, cap < VALUES_MAX ? cap : VALUES_MAX);
        if (!q)
            return; /* no memory: the difference goes unnamed */
        b->p = q;
        b->cap = cap < VALUES_MAX ? cap : VALUES_MAX;
    }
    memcpy(b->p + b->n, line, len);
    b->n += len;
    b->p[b->n] = '\0';
}

/* Says in out the first value where mine (this rank's lines) and lead's
 * (rank 0's) differ: "[job J] cell K: key = A here, B on rank 0". */
static void first_difference(const char *mine, const char *lead, char *out, size_t len)
{
    out[0] = '\0';
    while (*mine && *lead) {
        size_t a = strcspn(mine, "\n"), b = strcspn(lead, "\n");
        if (a != b || memcmp(mine, lead, a) != 0) {
            const char *f[4], *g[4];
            int nf = 0, ng = 0;
            for (const char *q = mine; nf < 4 && q < mine + a; q += strcspn(q, "\x1f\n") + 1)
                f[nf++] = q;
            for (const char *q = lead; ng < 4 && q < lead + b; q += strcspn(q, "\x1f\n") + 1)
                g[ng++] = q;
            size_t fl[4], gl[4];
            for (int i = 0; i < nf; i++)
                fl[i] = strcspn(f[i], "\x1f\n");
            for (int i = 0; i < ng; i++)
                gl[i] = strcspn(g[i], "\x1f\n");
            bool same_key = nf == 4 && ng == 4 && fl[0] == gl[0] && fl[1] == gl[1] && fl[2] == gl[2] &&
                            memcmp(f[0], g[0], (size_t)(g[3] - g[0])) == 0;
            if (same_key)
                snprintf(out, len, "[job %.*s] cell %.*s: %.*s = %.*s here, %.*s on rank 0", (int)fl[0], f[0],
                         (int)fl[1], f[1], (int)fl[2], f[2], (int)fl[3], f[3], (int)gl[3], g[3]);
            return;
        }
        mine += a + (mine[a] != '\0');
        lead += b + (lead[b] != '\0');
    }
}

/* Once any rank's plan differs from rank 0's: rank 0 sends its values, in
 * pieces (a rank without memory for them takes part all the same), and a
 * rank whose plan differs names in why[] the first value that does ("" if
 * none can be named).  Every rank takes part. */
static void name_difference(dlg_comm *c, const dlg_plan *plan, bool differs, char *why, size_t len)
{
    values_buf lead = {0}, mine = {0};
    char e[768], piece[16384];
    int me = dlg_comm_rank(c);
    char lost[256]; /* memory short: the values go unsent or unnamed, as keep_line's */
    if (me == 0 && plan)
        (void)each_value(plan, keep_line, &lead, lost, sizeof lost);
    int64_t n = (int64_t)lead.n;
    or_abort(c, ready_bcast(c, &n, sizeof n, e, sizeof e), e);
    for (int64_t at = 0; at < n; at += (int64_t)sizeof piece) {
        size_t k = n - at < (int64_t)sizeof piece ? (size_t)(n - at) : sizeof piece;
        if (me == 0)
            memcpy(piece, lead.p + at, k);
        or_abort(c, ready_bcast(c, piece, k, e, sizeof e), e);
        if (me != 0 && differs)
            keep_line(&lead, piece, k);
    }
    why[0] = '\0';
    if (differs && plan && lead.p) {
        if (each_value(plan, keep_line, &mine, lost, sizeof lost) == 0 && mine.p)
            first_difference(mine.p, lead.p, why, len);
    }
    free(lead.p);
    free(mine.p);
}

int dlg_ranks_ready(dlg_comm *c, int status, const char *err, const dlg_plan *plan)
{
    if (dlg_comm_size(c) <= 1) {
        if (status != 0)
            fprintf(stderr, "dlgauge: %s\n", err);
        return status;
    }
    int me = dlg_comm_rank(c);
    struct {
        char err[4096];
        char shape[128];
    } lead;
    char why[768], shape[128] = "", mine[4400], which[1024], lost[512];
    if (status == 0 && plan && plan_shape(plan, shape, sizeof shape, lost, sizeof lost) != 0) {
        snprintf(mine, sizeof mine, "checking that every rank planned the same cells: %s", lost);
        err = mine;
        status = DLG_EXIT_FAILED;
    }
    snprintf(lead.err, sizeof lead.err, "%s", me == 0 && status != 0 ? err : "");
    snprintf(lead.shape, sizeof lead.shape, "%s", shape);
    or_abort(c, ready_bcast(c, &lead, sizeof lead, why, sizeof why), why);
    lead.err[sizeof lead.err - 1] = lead.shape[sizeof lead.shape - 1] = '\0';
    bool differs = status == 0 && me != 0 && lead.shape[0] && strcmp(shape, lead.shape) != 0;
    /* the ranks' worst exit status: one to fix the file over one worth a
     * retry (out of memory) */
    int64_t bad[2] = {differs ? DLG_EXIT_USAGE : status, differs};
    or_abort(c, ready_max(c, bad, 2, why, sizeof why), why);
    if (bad[1]) /* a plan differs: which value, said by that rank */
        name_difference(c, plan, differs, which, sizeof which);
    if (differs) {
        snprintf(mine, sizeof mine, "this rank planned %s, rank 0 %s%s%s: every rank must run the same file with "
                 "the same --job and --set, and the same values in each cell (cpus, device and paths read or "
                 "written may differ)", shape, lead.shape, which[0] ? ": " : "", which);
        err = mine;
        status = DLG_EXIT_USAGE;
    }
    if (status != 0 && (me == 0 || strcmp(lead.err, err) != 0))
        fprintf(stderr, "dlgauge: %s\n", err);
    else if (bad[0] && me == 0)
        fprintf(stderr, "dlgauge: another rank could not start the run (its line says why): no cell was measured\n");
    return (int)bad[0];
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

int dlg_ranks_cell_action(dlg_run *run, int action)
{
    dlg_comm *c = run->comm;
    if (dlg_comm_size(c) <= 1)
        return action;
    /* the highest: a stop on any rank stops them all, and its signal
     * becomes every rank's (their exit status and lines say it) */
    int64_t v[2] = {action, dlg_stop_signal()};
    char why[768];
    int rc = ready_max(c, v, 2, why, sizeof why);
    if (rc == -DLG_ESTOP) /* a peer still busy with the cell before */
        dlg_ranks_stop_abort(c, run->sinks, "the ranks' agreement on the next cell");
    if (rc != 0) {
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
