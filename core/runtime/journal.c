#define _GNU_SOURCE
#include "journal.h"

#include "config.h"
#include "fd_write.h"
#include "journal_pending.h"
#include "journal_row.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dlgauge/fnv1a.h>

void dlg_journal_hash(const void *data, size_t len, uint64_t *h)
{
    *h = dlg_fnv1a(*h ? *h : DLG_FNV1A_INIT, data, len);
}

void dlg_journal_hash_config(const dlg_config *cfg, uint64_t *h)
{
    for (size_t i = 0; i < cfg->n; i++) {
        const dlg_section *s = &cfg->sections[i];
        dlg_journal_hash(s->name, strlen(s->name) + 1, h);
        dlg_journal_hash(&s->kind, sizeof s->kind, h);
        for (size_t e = 0; e < s->n; e++) {
            dlg_journal_hash(s->entries[e].key, strlen(s->entries[e].key) + 1, h);
            dlg_journal_hash(s->entries[e].value, strlen(s->entries[e].value) + 1, h);
        }
    }
}

void dlg_journal_config_id(const dlg_config *cfg, char *out, size_t len)
{
    uint64_t h = 0;
    dlg_journal_hash_config(cfg, &h);
    snprintf(out, len, "%016llx", (unsigned long long)h);
}

int dlg_journal_config_recheck(const char *file, const char *const *sets, size_t nsets, const char *id,
                               char *why, size_t len)
{
    dlg_config cfg;
    char err[1024], now[20] = "";
    int rc = dlg_config_load(&cfg, file, err, sizeof err) == 0 ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < nsets; i++)
        rc = dlg_config_set(&cfg, sets[i], err, sizeof err) == 0 ? 0 : -1;
    if (rc == 0)
        dlg_journal_config_id(&cfg, now, sizeof now);
    dlg_config_free(&cfg);
    if (rc < 0) {
        snprintf(why, len, "cannot read %s again to check that it is unchanged since this run started (%s)", file,
                 err);
        return -1;
    }
    if (strcmp(now, id) == 0)
        return 0;
    snprintf(why, len, "%s changed since this run started (its settings differ)", file);
    return 1;
}

static int mkdirs(const char *path)
{
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return 0;
}

/* A line is appended whole or not at all: a fragment left by a full disk
 * would glue the next record to it, and --resume could not read it.  One
 * that could not be cut at once is cut before the next line goes in.
 * Not synced (sync false), it survives dlgauge's own death, not a power
 * cut: the next synced line takes it to the disk. */
static int append_sync(dlg_journal *j, const char *line, bool sync, char *err, size_t errlen)
{
    size_t n = strlen(line);
    int e = j->torn && ftruncate(j->fd, (off_t)j->end) != 0 ? errno : 0;
    if (e == 0) {
        j->torn = false;
        e = dlg_write_all(j->fd, line, n);
    }
    if (e == 0 && sync && fsync(j->fd) != 0)
        e = errno;
    if (e == 0) {
        j->end += n;
        return 0;
    }
    j->torn = j->torn || ftruncate(j->fd, (off_t)j->end) != 0;
    snprintf(err, errlen, "%s: cannot write the run journal: %s", j->path, strerror(e));
    return -1;
}

static int append_line(dlg_journal *j, const char *line, char *err, size_t errlen)
{
    return append_sync(j, line, true, err, errlen);
}

/* One run per journal: a second run of the same file (a cron job that
 * overlapped, a second terminal) would truncate the first's journal and
 * interleave records of both, after which --resume skips cells that the
 * other run measured; both runs would also measure each other's load.
 * The lock goes with the descriptor, so a killed run leaves none. */
static int lock_journal(dlg_journal *j, const char *what, char *err, size_t errlen)
{
    if (flock(j->fd, LOCK_EX | LOCK_NB) == 0)
        return 0;
    /* a file system without locks (Lustre mounted without -o flock, some
     * FUSE and 9p mounts): the run goes on unguarded, as before the lock */
    if (errno == ENOSYS || errno == ENOLCK || errno == EOPNOTSUPP) {
        j->unlocked = errno; /* said once, by dlg_journal_print_notes */
        return 0;
    }
    if (errno == EWOULDBLOCK)
        snprintf(err, errlen, "%s: %s: another dlgauge run is using this journal (the same configuration is "
                 "running): wait for it to end, or give this run its own journal = PATH in [global]",
                 j->path, what);
    else
        snprintf(err, errlen, "%s: %s: cannot lock the journal: %s", j->path, what, strerror(errno));
    close(j->fd);
    j->fd = -1;
    return -1;
}

int dlg_journal_create(dlg_journal *j, const char *path, const char *run_id, const char *hash, char *err,
                       size_t errlen)
{
    memset(j, 0, sizeof *j);
    snprintf(j->path, sizeof j->path, "%s", path);
    snprintf(j->run_id, sizeof j->run_id, "%s", run_id);
    snprintf(j->hash, sizeof j->hash, "%s", hash);
    /* truncated only once locked: a running run's journal stays as it is */
    if (mkdirs(path) != 0 || (j->fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0) {
        snprintf(err, errlen, "%s: cannot create the run journal: %s", path, strerror(errno));
        j->fd = -1;
        return -1;
    }
    if (lock_journal(j, "cannot start a new run", err, errlen) != 0)
        return -1;
    if (ftruncate(j->fd, 0) != 0) {
        snprintf(err, errlen, "%s: cannot create the run journal: %s", path, strerror(errno));
        return -1;
    }
    char line[256];
    snprintf(line, sizeof line, "dlgauge-journal 1 %s %s\n", run_id, hash);
    return append_line(j, line, err, errlen);
}

static int add_done(dlg_journal *j, const char *job, size_t cell)
{
    dlg_journal_entry *d = realloc(j->done, (j->ndone + 1) * sizeof *d);
    if (!d)
        return -1;
    j->done = d;
    if (!(d[j->ndone].job = strdup(job)))
        return -1;
    d[j->ndone++].cell = cell;
    return 0;
}

/* The next space-separated field of *p, NUL-terminated in place; NULL
 * when there is none. */
static char *next_field(char **p)
{
    char *f = *p + strspn(*p, " ");
    if (!*f)
        return NULL;
    char *e = f + strcspn(f, " ");
    *p = *e ? e + 1 : e;
    *e = '\0';
    return f;
}

/* A record's CELL field into *k: digits that fit a size_t. */
static bool cell_number(const char *cell, size_t *k)
{
    bool digits = cell && cell[0] && cell[strspn(cell, "0123456789")] == '\0';
    errno = 0;
    unsigned long long v = digits ? strtoull(cell, NULL, 10) : 0;
    if (!digits || errno || v > SIZE_MAX)
        return false;
    *k = (size_t)v;
    return true;
}

/* "done JOB CELL STATUS [fields of a newer version]"; -1 malformed. */
static int read_done(dlg_journal *j, char *rest, int lineno, char *err, size_t errlen)
{
    char *job = next_field(&rest), *cell = next_field(&rest), *status = next_field(&rest);
    size_t k = 0;
    if (!status || !cell_number(cell, &k)) {
        snprintf(err, errlen, "%s:%d: malformed journal line (done JOB CELL STATUS)", j->path, lineno);
        return -1;
    }
    if (add_done(j, job, k) != 0) {
        snprintf(err, errlen, "%s:%d: out of memory", j->path, lineno);
        return -1;
    }
    dlg_journal_drop_pending(j, job, k);
    if (strcmp(status, "ok") != 0)
        j->nfailed++;
    return 0;
}

/* "sent JOB CELL SINK [fields of a newer version]"; -1 malformed. */
static int read_sent(dlg_journal *j, char *rest, int lineno, char *err, size_t errlen)
{
    char *job = next_field(&rest), *cell = next_field(&rest), *sink = next_field(&rest);
    size_t k = 0;
    if (!sink || strchr(sink, ',') || !cell_number(cell, &k)) {
        snprintf(err, errlen, "%s:%d: malformed journal line (sent JOB CELL SINK)", j->path, lineno);
        return -1;
    }
    if (dlg_journal_add_sent(j, job, k, sink) != 0) {
        snprintf(err, errlen, "%s:%d: out of memory", j->path, lineno);
        return -1;
    }
    return 0;
}

/* "kept JOB CELL STATUS ROW [fields of a newer version]"; -1 malformed. */
static int read_kept(dlg_journal *j, char *rest, int lineno, char *err, size_t errlen)
{
    char *job = next_field(&rest), *cell = next_field(&rest), *status = next_field(&rest),
         *row = next_field(&rest);
    size_t k = 0;
    if (!row || !dlg_journal_row_is_hex(row) || !cell_number(cell, &k)) {
        snprintf(err, errlen, "%s:%d: malformed journal line (kept JOB CELL STATUS ROW)", j->path, lineno);
        return -1;
    }
    if (dlg_journal_add_kept(j, job, k, status, row) != 0) {
        snprintf(err, errlen, "%s:%d: out of memory", j->path, lineno);
        return -1;
    }
    return 0;
}

/* "inventory ID [fields of a newer version]"; -1 malformed. */
static int read_inventory(dlg_journal *j, char *rest, int lineno, char *err, size_t errlen)
{
    char *id = next_field(&rest);
    if (!id || strlen(id) >= sizeof j->inventory) {
        snprintf(err, errlen, "%s:%d: malformed journal line (inventory ID)", j->path, lineno);
        return -1;
    }
    snprintf(j->inventory, sizeof j->inventory, "%s", id);
    return 0;
}

/* Adds sink to the sinks that took inventory id (a list of another id is
 * dropped: that machine's point is not this one's).  0, or -1 out of
 * memory. */
static int add_inventory_sink(dlg_journal *j, const char *id, const char *sink)
{
    if (strcmp(j->inventory_sent_id, id) != 0) {
        free(j->inventory_sinks);
        j->inventory_sinks = NULL;
        snprintf(j->inventory_sent_id, sizeof j->inventory_sent_id, "%s", id);
    }
    char *list;
    if (asprintf(&list, "%s%s,", j->inventory_sinks ? j->inventory_sinks : ",", sink) < 0)
        return -1;
    free(j->inventory_sinks);
    j->inventory_sinks = list;
    return 0;
}

/* "inventory_sent ID SINK [fields of a newer version]"; -1 malformed. */
static int read_inventory_sent(dlg_journal *j, char *rest, int lineno, char *err, size_t errlen)
{
    char *id = next_field(&rest), *sink = next_field(&rest);
    if (!id || !sink || strlen(id) >= sizeof j->inventory_sent_id) {
        snprintf(err, errlen, "%s:%d: malformed journal line (inventory_sent ID SINK)", j->path, lineno);
        return -1;
    }
    if (add_inventory_sink(j, id, sink) != 0) {
        snprintf(err, errlen, "%s:%d: out of memory", j->path, lineno);
        return -1;
    }
    return 0;
}

/* "inventory_time ID TIME_NS [fields of a newer version]"; -1 malformed. */
static int read_inventory_time(dlg_journal *j, char *rest, int lineno, char *err, size_t errlen)
{
    char *id = next_field(&rest), *t = next_field(&rest), *end = NULL;
    long long ns = t ? strtoll(t, &end, 10) : 0;
    if (!id || strlen(id) >= sizeof j->inventory_time_id || !t || *t == '-' || end == t || *end) {
        snprintf(err, errlen, "%s:%d: malformed journal line (inventory_time ID TIME_NS)", j->path, lineno);
        return -1;
    }
    snprintf(j->inventory_time_id, sizeof j->inventory_time_id, "%s", id);
    j->inventory_time_ns = ns;
    return 0;
}

/* "ranks RANKS NODES [fields of a newer version]"; -1 malformed. */
static int read_ranks(dlg_journal *j, char *rest, int lineno, char *err, size_t errlen)
{
    char *r = next_field(&rest), *n = next_field(&rest);
    size_t ranks = 0, nodes = 0;
    if (!cell_number(r, &ranks) || !cell_number(n, &nodes) || ranks < 1 || nodes < 1 || nodes > ranks ||
        ranks > 1u << 24) {
        snprintf(err, errlen, "%s:%d: malformed journal line (ranks RANKS NODES)", j->path, lineno);
        return -1;
    }
    j->ranks = (int)ranks;
    j->nodes = (int)nodes;
    return 0;
}

/* A record of a kind this version does not know: skipped (journal.h).  A
 * kind too long for the note is shortened there, with "...". */
static void skip_unknown(dlg_journal *j, const char *kind, int lineno)
{
    if (j->nunknown++ == 0) {
        j->unknown_line = lineno;
        if (strlen(kind) < sizeof j->unknown_kind)
            snprintf(j->unknown_kind, sizeof j->unknown_kind, "%s", kind);
        else
            snprintf(j->unknown_kind, sizeof j->unknown_kind, "%.*s...", (int)sizeof j->unknown_kind - 4, kind);
    }
}

/* One record (its line, without the newline) into j; -1 with err[] naming
 * the line.  Its kind is its first word, a lowercase name. */
static int read_record(dlg_journal *j, char *line, int lineno, char *err, size_t errlen)
{
    size_t n = line[0] >= 'a' && line[0] <= 'z' ? strspn(line, "abcdefghijklmnopqrstuvwxyz0123456789_") : 0;
    if (n == 0 || (line[n] != ' ' && line[n] != '\0')) {
        snprintf(err, errlen, "%s:%d: malformed journal line (not a record)", j->path, lineno);
        return -1;
    }
    char *rest = line[n] ? line + n + 1 : line + n;
    line[n] = '\0';
    if (strcmp(line, "done") == 0)
        return read_done(j, rest, lineno, err, errlen);
    if (strcmp(line, "inventory") == 0)
        return read_inventory(j, rest, lineno, err, errlen);
    if (strcmp(line, "sent") == 0)
        return read_sent(j, rest, lineno, err, errlen);
    if (strcmp(line, "kept") == 0)
        return read_kept(j, rest, lineno, err, errlen);
    if (strcmp(line, "ranks") == 0)
        return read_ranks(j, rest, lineno, err, errlen);
    if (strcmp(line, "inventory_sent") == 0)
        return read_inventory_sent(j, rest, lineno, err, errlen);
    if (strcmp(line, "inventory_time") == 0)
        return read_inventory_time(j, rest, lineno, err, errlen);
    skip_unknown(j, line, lineno);
    return 0;
}

/* "dlgauge-journal FORMAT RUN_ID HASH": a newer format is refused by name.
 * The hash is the last word: a run_id of [global] may hold spaces.  FORMAT
 * has at most 4 digits: %d of a number past INT_MAX is undefined (glibc
 * read 4294967297 as format 1). */
static int read_header(dlg_journal *j, const char *line, char *jhash, char *err, size_t errlen)
{
    int format, end = 0, at = 0;
    const char *hash = strrchr(line, ' ');
    if (sscanf(line, "dlgauge-journal %4d%n %n", &format, &end, &at) != 1 || line[end] != ' ' || at == 0 ||
        !hash || hash < line + at ||
        format < 1 || strlen(hash + 1) >= 32 || !hash[1]) {
        snprintf(err, errlen, "%s:1: not a dlgauge run journal", j->path);
        return -1;
    }
    snprintf(j->run_id, sizeof j->run_id, "%.*s", (int)(hash - (line + at)), line + at);
    snprintf(jhash, 32, "%s", hash + 1);
    if (format > 1) {
        snprintf(err, errlen, "%s:1: journal format %d, written by a newer dlgauge (this one reads format 1): "
                 "resume with that dlgauge, or run without --resume to start over", j->path, format);
        return -1;
    }
    return 0;
}

int dlg_journal_resume(dlg_journal *j, const char *path, const char *hash, char *err, size_t errlen)
{
    memset(j, 0, sizeof *j);
    j->fd = -1;
    snprintf(j->path, sizeof j->path, "%s", path);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: no journal to resume from (%s); run without --resume", path, strerror(errno));
        return -1;
    }
    /* locked before it is read: records appended meanwhile are not missed */
    if ((j->fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)) < 0) {
        snprintf(err, errlen, "%s: cannot append to the journal: %s", path, strerror(errno));
        fclose(f);
        return -1;
    }
    if (lock_journal(j, "cannot resume", err, errlen) != 0) {
        fclose(f);
        return -1;
    }
    char *line = NULL, jhash[64] = "";
    size_t cap = 0;
    ssize_t n;
    int lineno = 0, rc = 0;
    long whole = 0; /* end of the last whole line */
    bool torn = false;
    /* lines of any length: only the last one can be torn */
    while (rc == 0 && (errno = 0, n = getline(&line, &cap, f)) > 0) {
        lineno++;
        if (line[n - 1] != '\n') {
            torn = true; /* a torn last line: that cell was not recorded */
            break;
        }
        whole = ftell(f);
        line[n - 1] = '\0';
        rc = lineno > 1 ? read_record(j, line, lineno, err, errlen) : read_header(j, line, jhash, err, errlen);
    }
    if (rc == 0 && !torn && errno) { /* not the end: a read error, or no memory for a line */
        snprintf(err, errlen, "%s:%d: cannot read the journal: %s", path, lineno + 1, strerror(errno));
        rc = -1;
    }
    free(line);
    fclose(f);
    if (rc == 0 && whole == 0) { /* a torn header too: that run never started */
        snprintf(err, errlen, "%s: empty journal; run without --resume", path);
        rc = -1;
    }
    if (rc == 0 && strcmp(jhash, hash) != 0) {
        snprintf(err, errlen, "%s: the configuration changed since the interrupted run (journal %s, now %s); "
                 "run without --resume to start over", path, jhash, hash);
        rc = -1;
    }
    snprintf(j->hash, sizeof j->hash, "%s", hash);
    /* cut the torn fragment off, or the next record would be glued to it */
    if (rc == 0 && torn && ftruncate(j->fd, whole) != 0) {
        snprintf(err, errlen, "%s: cannot cut its torn last line: %s", path, strerror(errno));
        rc = -1;
    }
    if (rc != 0) { /* the lock is not kept for a run that does not go on */
        close(j->fd);
        j->fd = -1;
    }
    j->end = (uint64_t)whole;
    return rc;
}

int dlg_journal_record_ranks(dlg_journal *j, int ranks, int nodes, char *err, size_t errlen)
{
    char line[64];
    snprintf(line, sizeof line, "ranks %d %d\n", ranks, nodes);
    if (append_line(j, line, err, errlen) != 0)
        return -1;
    j->ranks = ranks;
    j->nodes = nodes;
    return 0;
}

static void say_ranks(char *buf, size_t len, int ranks, int nodes)
{
    snprintf(buf, len, "%d rank%s on %d node%s", ranks, ranks == 1 ? "" : "s", nodes, nodes == 1 ? "" : "s");
}

int dlg_journal_check_ranks(const dlg_journal *j, int ranks, int nodes, char *err, size_t errlen)
{
    if (j->ranks == 0 || (j->ranks == ranks && j->nodes == nodes))
        return 0;
    char was[64], now[64];
    say_ranks(was, sizeof was, j->ranks, j->nodes);
    say_ranks(now, sizeof now, ranks, nodes);
    snprintf(err, errlen, "%s: run %s ran on %s, this one on %s: resume it with %s (mpirun -np %d), or run "
             "without --resume to start a new run", j->path, j->run_id, was, now, was, j->ranks);
    return -1;
}

bool dlg_journal_is_done(const dlg_journal *j, const char *job, size_t cell)
{
    for (size_t i = 0; i < j->ndone; i++)
        if (j->done[i].cell == cell && strcmp(j->done[i].job, job) == 0)
            return true;
    return false;
}

int dlg_journal_record(dlg_journal *j, const char *job, size_t cell, const char *status, char *err,
                       size_t errlen)
{
    char *line; /* a job name of any length: a cut record would read as torn */
    if (asprintf(&line, "done %s %zu %s\n", job, cell, status) < 0) {
        snprintf(err, errlen, "%s: cannot write the run journal: out of memory", j->path);
        return -1;
    }
    int rc = append_line(j, line, err, errlen);
    free(line);
    if (rc == 0)
        dlg_journal_drop_pending(j, job, cell);
    return rc;
}

int dlg_journal_record_sent(dlg_journal *j, const char *job, size_t cell, const char *sink, char *err,
                            size_t errlen)
{
    char *line;
    if (asprintf(&line, "sent %s %zu %s\n", job, cell, sink) < 0) {
        snprintf(err, errlen, "%s: cannot write the run journal: out of memory", j->path);
        return -1;
    }
    int rc = append_sync(j, line, false, err, errlen);
    free(line);
    if (rc == 0)
        (void)dlg_journal_add_sent(j, job, cell, sink); /* the file has it, which is what counts */
    return rc;
}

int dlg_journal_record_kept(dlg_journal *j, const char *job, size_t cell, const char *status, const char *row,
                            char *err, size_t errlen)
{
    char *line;
    if (asprintf(&line, "kept %s %zu %s %s\n", job, cell, status, row) < 0) {
        snprintf(err, errlen, "%s: cannot write the run journal: out of memory", j->path);
        return -1;
    }
    int rc = append_line(j, line, err, errlen);
    free(line);
    if (rc == 0)
        (void)dlg_journal_add_kept(j, job, cell, status, row);
    return rc;
}

int dlg_journal_record_inventory(dlg_journal *j, const char *id, char *err, size_t errlen)
{
    char line[64];
    snprintf(line, sizeof line, "inventory %.23s\n", id);
    if (append_line(j, line, err, errlen) != 0)
        return -1;
    snprintf(j->inventory, sizeof j->inventory, "%s", id);
    return 0;
}

bool dlg_journal_has_inventory(const dlg_journal *j, const char *id)
{
    return j->inventory[0] && strcmp(j->inventory, id) == 0;
}

int dlg_journal_record_inventory_sent(dlg_journal *j, const char *id, const char *sink, char *err,
                                      size_t errlen)
{
    char *line;
    if (asprintf(&line, "inventory_sent %.23s %s\n", id, sink) < 0) {
        snprintf(err, errlen, "%s: cannot write the run journal: out of memory", j->path);
        return -1;
    }
    int rc = append_line(j, line, err, errlen);
    free(line);
    if (rc == 0)
        (void)add_inventory_sink(j, id, sink); /* the file has it, which is what counts */
    return rc;
}

int dlg_journal_record_inventory_time(dlg_journal *j, const char *id, int64_t time_ns, char *err, size_t errlen)
{
    char line[96];
    snprintf(line, sizeof line, "inventory_time %.23s %lld\n", id, (long long)time_ns);
    if (append_line(j, line, err, errlen) != 0)
        return -1;
    snprintf(j->inventory_time_id, sizeof j->inventory_time_id, "%s", id);
    j->inventory_time_ns = time_ns;
    return 0;
}

bool dlg_journal_inventory_time(const dlg_journal *j, const char *id, int64_t *time_ns)
{
    if (!j->inventory_time_id[0] || strcmp(j->inventory_time_id, id) != 0)
        return false;
    *time_ns = j->inventory_time_ns;
    return true;
}

bool dlg_journal_inventory_sent_to(const dlg_journal *j, const char *id, const char *sink)
{
    if (dlg_journal_has_inventory(j, id))
        return true;
    if (!j->inventory_sinks || strcmp(j->inventory_sent_id, id) != 0)
        return false;
    size_t n = strlen(sink);
    for (const char *p = strstr(j->inventory_sinks, sink); p; p = strstr(p + 1, sink))
        if (p > j->inventory_sinks && p[-1] == ',' && p[n] == ',')
            return true;
    return false;
}

void dlg_journal_print_notes(const dlg_journal *j, FILE *out)
{
    if (j->unlocked)
        fprintf(out, "dlgauge: note: %s: used unlocked, as its file system has no locks (flock: %s): a second "
                "run of this journal at the same time would not be refused\n", j->path, strerror(j->unlocked));
    if (j->nunknown)
        fprintf(out, "dlgauge: note: %s:%d: skipped %zu journal line%s of a kind this dlgauge does not know "
                "(the first: %s): a newer dlgauge's, or damaged; resuming from the records it knows\n",
                j->path, j->unknown_line, j->nunknown, j->nunknown == 1 ? "" : "s", j->unknown_kind);
}

void dlg_journal_close(dlg_journal *j)
{
    if (j->fd >= 0)
        close(j->fd);
    for (size_t i = 0; i < j->ndone; i++)
        free(j->done[i].job);
    free(j->done);
    dlg_journal_pending_free_all(j);
    free(j->inventory_sinks);
    memset(j, 0, sizeof *j);
    j->fd = -1;
}
