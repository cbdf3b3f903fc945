/* io: a fio-like raw reader of one file through the job's storage backend.
 * Sequential or seeded-random block reads; on DLG_CAP_ASYNC backends it
 * keeps `depth` reads in flight with file_submit/file_reap (across steps,
 * as fio does), otherwise it reads synchronously at depth 1.  Buffers are
 * allocated once, aligned to the backend's O_DIRECT alignment, so direct
 * backends never need a bounce buffer.  Per-I/O latency goes into the
 * runtime's histogram (compiled in), so io_lat_p99_us is a nearest-rank
 * percentile within 0.4%, as the runner's latency_p99_us is.  A stop
 * request (Ctrl-C) ends a step early with the reads it completed.  Under
 * several ranks each reads its own part and the row is the job's
 * (tools_ranks.h). */
#define _GNU_SOURCE
#include "tools.h"

#include <dlgauge/iobuf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "histogram.h"
#include "tools_ranks.h"
#include "loader.h"

enum { OPT_DATA, OPT_PATTERN, OPT_BLOCK, OPT_DEPTH, OPT_SPAN, OPT_STEP_IOS, OPT_CHECKSUM, OPT_CACHE, OPT_COUNT };
enum { PAT_SEQ, PAT_RAND };
#define AUTO_DEPTH_ASYNC 32
#define AUTO_STEP_BYTES (1u << 20)
#define MAX_BLOCK (1ull << 30)
/* How often a step asks host->stopping(), by the clock each read already
 * reads: fast reads pay a compare, and after a read slower than this (a
 * network or throttled disk) the step asks at once, so Ctrl-C does not
 * wait for the rest of a large step_ios. */
#define STOP_POLL_NS (20ull * 1000000ull)

static const dlg_option io_options[] = {
    [OPT_DATA] = {"data", DLG_OPT_STRING, NULL, NULL, NULL, NULL,
                  "file to read: raw:FILE (a dataset? use workload = io-pipeline)",
                  DLG_OPT_REQUIRED | DLG_OPT_NOSWEEP | DLG_OPT_PATH_IN},
    [OPT_PATTERN] = {"pattern", DLG_OPT_ENUM, "seq", NULL, NULL, "seq|rand",
                     "sequential blocks (wrapping at the end of span) or seeded random blocks; under "
                     "several ranks, each rank's pass starts at its share of span and its random "
                     "blocks draw from a seed of its own", 0},
    [OPT_BLOCK] = {"block", DLG_OPT_SIZE, "1MiB", "1", "1GiB", NULL,
                   "bytes per read; random offsets are multiples of it", 0},
    [OPT_DEPTH] = {"depth", DLG_OPT_INT, NULL, "1", "4096", NULL,
                   "reads in flight: async backends default 32 (uring; throttle over any inner "
                   "backend, posix too), at most their own depth; sync backends (posix) only 1",
                   0},
    [OPT_SPAN] = {"span", DLG_OPT_SIZE, NULL, "1", NULL, NULL,
                  "bytes of the file used from its start (default: the whole file)", 0},
    [OPT_STEP_IOS] = {"step_ios", DLG_OPT_INT, "0", "0", "1000000", NULL,
                      "reads per step (0 = enough for 1 MiB, at least 1)", 0},
    [OPT_CHECKSUM] = {"checksum", DLG_OPT_BOOL, "false", NULL, NULL, NULL,
                      "sum the CRC-32 of every read into the crc_sum field (tests; costs CPU, "
                      "and queued reads then drain at each step's end)",
                      0},
    [OPT_CACHE] = {"cache", DLG_OPT_ENUM, "auto", NULL, NULL, "none|cold|warm|auto",
                   "page cache before the cell: leave, evict the file (fadvise; as root, where pages stay "
                   "cached, drop_caches: the machine's whole clean cache), or pre-read it (auto: cold when the "
                   "job sets memory, which pages cached before the cell would escape, else none)",
                   0},
    [OPT_COUNT] = {0},
};

static const dlg_metric io_metrics[] = {
    {"iops", DLG_FIELD_DOUBLE, "ios/s", "reads completed per second over the repetition's timed steps; under several ranks, all ranks' reads over the slowest rank's window"},
    {"ios", DLG_FIELD_INT, "", "reads completed in the timed steps; under several ranks, summed over them"},
    {"io_bytes", DLG_FIELD_INT, "bytes", "bytes read in the timed steps; under several ranks, summed over them"},
    {"io_lat_mean_us", DLG_FIELD_DOUBLE, "us", "mean read latency (submit to completion), timed steps; under several ranks, of every rank's reads (so are the percentiles and the max)"},
    {"io_lat_p50_us", DLG_FIELD_DOUBLE, "us", "median read latency"},
    {"io_lat_p99_us", DLG_FIELD_DOUBLE, "us", "99th percentile read latency"},
    {"io_lat_p999_us", DLG_FIELD_DOUBLE, "us", "99.9th percentile read latency"},
    {"io_lat_max_us", DLG_FIELD_DOUBLE, "us", "largest read latency"},
    {"block_bytes", DLG_FIELD_INT, "bytes", "bytes per read"},
    {"depth", DLG_FIELD_INT, "", "reads kept in flight"},
    {"span_bytes", DLG_FIELD_INT, "bytes", "bytes of the file used"},
    {"buffer_align", DLG_FIELD_INT, "bytes", "alignment the backend asked for (1 = none)"},
    {"buffer_registered", DLG_FIELD_INT, "", "1: the backend registered the read buffers once (io_uring fixed buffers); 0: not"},
    /* not "checksum": a metric named like an option is a tag (plan.c), and
     * a sum that differs per cell would make a series per value */
    {"crc_sum", DLG_FIELD_STRING, "", "checksum = true: sum of CRC-32 of the timed steps' reads, mod 2^64, hex (all ranks' reads under several)"},
    {"cache_method", DLG_FIELD_STRING, "",
     "how cache = cold|warm was applied (none, read, fadvise, fadvise+drop_caches; \"none (O_DIRECT)\" "
     "for warm on a storage that reads past the page cache; \"(N% stayed cached)\" added when cold "
     "left pages in the page cache, or when warm kept less than 99% of the data there (a memory "
     "limit smaller than the data), which a warning then names, \"(unverified)\" when "
     "mincore could not tell: a file the user neither owns nor may write)"},
    {NULL, 0, NULL, NULL}};

typedef struct io_raw {
    const dlg_host *h;
    dlg_file *f;
    char *path;
    bool async, rand, checksum, registered;
    dlg_cache_result cache; /* cache_method: its method */
    uint32_t align;
    size_t block;
    uint64_t span;        /* bytes used */
    uint64_t nblocks;     /* blocks a pass visits (seq: last may be short) */
    uint64_t next;        /* seq: next block index */
    uint64_t rng;
    uint32_t depth, step_ios;
    uint8_t **bufs;       /* depth buffers of block bytes, slices of buf */
    uint8_t *buf;         /* one iobuf.h buffer (huge pages from 64 KiB) */
    /* async */
    dlg_io *ios;          /* depth submission scratch */
    dlg_io_done *done;    /* depth completions */
    uint32_t *free_slots; /* slots not in flight */
    uint32_t nfree;
    uint64_t *t_submit;   /* per slot */
    uint64_t *slot_off;   /* per slot: offset in flight */
    /* measurements since begin_timed (or setup); reads in flight then
     * count when they complete, as after fio's ramp_time */
    dlg_histogram *lat; /* allocated at setup: recording never allocates */
    uint64_t nios, bytes, sum;
    uint64_t t_first, t_last;
    uint64_t next_poll; /* when a step next asks stopping() */
    tools_ranks ranks;  /* under several ranks: each its part, the row the job's */
} io_raw;

static uint64_t next_offset(io_raw *s)
{
    uint64_t b;
    if (s->rand) {
        b = dlg_splitmix_below(&s->rng, s->nblocks);
    } else {
        b = s->next;
        s->next = s->next + 1 == s->nblocks ? 0 : s->next + 1;
    }
    return b * s->block;
}

/* The bytes a read at off gets: a block, less only for a sequential
 * pass's last block where the file ends inside it. */
static uint64_t block_at(const io_raw *s, uint64_t off)
{
    return off < s->span && s->span - off < s->block ? s->span - off : s->block;
}

/* One completed read of r bytes from buf at off.  The host continues a
 * backend's short read to the end of the file, and uring resubmits its
 * own: fewer bytes than the block are a file that shrank or a backend's
 * bug, never a whole read. */
static int account(io_raw *s, const uint8_t *buf, int64_t r, uint64_t off, uint64_t lat)
{
    if (r < 0)
        return (int)r; /* the backend has reported it through the host */
    if ((uint64_t)r > s->block) /* the checksum would read past the block */
        return s->h->error(s->h, DLG_EIO, "%s: read at offset %llu asked for %llu bytes and got %lld (more than "
                           "asked: a broken storage backend)", s->path, (unsigned long long)off,
                           (unsigned long long)s->block, (long long)r);
    uint64_t want = block_at(s, off);
    if (r == 0)
        return s->h->error(s->h, DLG_EIO, "%s: read at offset %llu returned end of file (file shrank?)",
                           s->path, (unsigned long long)off);
    if ((uint64_t)r < want)
        return s->h->error(s->h, DLG_EIO,
                           "%s: read at offset %llu asked for %llu bytes and got %lld (a short read inside "
                           "the file: it shrank during the run, or the storage backend has a bug)",
                           s->path, (unsigned long long)off, (unsigned long long)want, (long long)r);
    dlg_hist_record(s->lat, lat);
    s->nios++;
    s->bytes += (uint64_t)r;
    if (s->checksum)
        s->sum += crc32_z(0, buf, (size_t)r);
    return 0;
}

/* Whether the user asked to stop, asked at most every STOP_POLL_NS. */
static bool stop_asked(io_raw *s, uint64_t now)
{
    if (now < s->next_poll)
        return false;
    s->next_poll = now + STOP_POLL_NS;
    return s->h->stopping(s->h);
}

/* A read the backend gave up on because of a stop request (throttle's
 * waits do) ends the step as a stop does, with the reads done so far. */
static bool read_stopped(const io_raw *s, int rc)
{
    return rc == -DLG_ESTOP && s->h->stopping(s->h);
}

/* On a stop request a step ends early with the reads it completed: a
 * short step whose items and bytes are what it did. */
static int step_sync(io_raw *s, dlg_step *out)
{
    uint64_t bytes0 = s->bytes;
    for (uint32_t i = 0; i < s->step_ios; i++) {
        uint64_t off = next_offset(s);
        uint64_t t0 = tools_now_ns();
        int64_t r = s->h->file_read(s->h, s->f, s->bufs[0], s->block, off);
        uint64_t t1 = tools_now_ns();
        int rc = account(s, s->bufs[0], r, off, t1 - t0);
        if (read_stopped(s, rc))
            break;
        if (rc < 0)
            return rc;
        if (stop_asked(s, t1))
            break;
    }
    out->items = out->bytes_read = s->bytes - bytes0;
    return 0;
}

/* Fills up to `room` free slots with new reads, in one submit call. */
static int refill(io_raw *s, uint32_t room)
{
    uint32_t n = s->nfree < room ? s->nfree : room;
    if (n == 0)
        return 0;
    uint64_t now = tools_now_ns();
    for (uint32_t i = 0; i < n; i++) {
        uint32_t slot = s->free_slots[--s->nfree];
        s->ios[i] = (dlg_io){s->bufs[slot], s->block, next_offset(s), slot};
        s->t_submit[slot] = now;
        s->slot_off[slot] = s->ios[i].off;
    }
    int rc = s->h->file_submit(s->h, s->f, s->ios, n);
    if (rc < 0)
        return rc;
    if ((uint32_t)rc != n)
        return s->h->error(s->h, DLG_EIO, "%s: backend queued %d of %u reads", s->path, rc, n);
    return 0;
}

static int step_async(io_raw *s, dlg_step *out)
{
    uint64_t bytes0 = s->bytes;
    uint32_t got = 0;
    while (got < s->step_ios) {
        /* The queue stays full across steps, as fio keeps it; only checksum
         * mode drains it at each step's end, so that a step reads exactly
         * its own blocks and the sum has a known answer. */
        uint32_t inflight = s->depth - s->nfree, want = s->step_ios - got;
        uint32_t room = s->checksum ? want - inflight : s->depth;
        int rc = refill(s, room);
        if (rc < 0)
            return rc;
        /* a step is step_ios reads at any depth: the completions beyond
         * them wait for the next step */
        int n = s->h->file_reap(s->h, s->f, s->done, want < s->depth ? want : s->depth, 1);
        if (read_stopped(s, n))
            break;
        if (n < 0)
            return n;
        uint64_t now = tools_now_ns();
        for (int i = 0; i < n; i++) {
            uint64_t user = s->done[i].user;
            if (user >= s->depth || s->nfree == s->depth) /* else past bufs[] or free_slots[] */
                return s->h->error(s->h, DLG_EIO, "%s: a completed read names read %llu, never submitted (a "
                                   "broken storage backend)", s->path, (unsigned long long)user);
            uint32_t slot = (uint32_t)user;
            s->free_slots[s->nfree++] = slot;
            rc = account(s, s->bufs[slot], s->done[i].result, s->slot_off[slot], now - s->t_submit[slot]);
            if (rc < 0)
                return rc;
        }
        got += (uint32_t)n;
        if (stop_asked(s, now)) /* reads still in flight: teardown reaps them */
            break;
    }
    out->items = out->bytes_read = s->bytes - bytes0;
    return 0;
}

static int io_step(void *state, dlg_step *out)
{
    io_raw *s = state;
    uint64_t t0 = tools_now_ns();
    if (s->t_first == 0)
        s->t_first = t0;
    int rc = s->async ? step_async(s, out) : step_sync(s, out);
    s->t_last = tools_now_ns();
    return rc;
}

/* A rank's counts in report's gather (tools_ranks.h). */
enum { IO_IOS, IO_BYTES, IO_CRC_SUM, IO_WINDOW_NS, IO_COUNTS };

static int io_report(void *state, const dlg_report_api *api, dlg_fields *f)
{
    io_raw *s = state;
    const uint64_t mine[IO_COUNTS] = {s->nios, s->bytes, s->sum, s->t_last > s->t_first ? s->t_last - s->t_first : 0};
    const uint64_t *all;
    size_t n;
    int rc = tools_ranks_gather(&s->ranks, mine, s->lat, &all, &n); /* alone: mine; lat the job's */
    if (rc < 0)
        return rc;
    /* the job's: reads, bytes and CRCs summed (mod 2^64), over the slowest window */
    uint64_t job[IO_COUNTS] = {0};
    for (size_t k = 0; k < n; k++, all += IO_COUNTS) {
        for (int i = IO_IOS; i < IO_WINDOW_NS; i++)
            job[i] += all[i];
        if (all[IO_WINDOW_NS] > job[IO_WINDOW_NS])
            job[IO_WINDOW_NS] = all[IO_WINDOW_NS];
    }
    if (job[IO_WINDOW_NS] > 0)
        api->add_double(f, "iops", (double)job[IO_IOS] / ((double)job[IO_WINDOW_NS] / 1e9));
    api->add_int(f, "ios", (int64_t)job[IO_IOS]);
    api->add_int(f, "io_bytes", (int64_t)job[IO_BYTES]);
    if (dlg_hist_count(s->lat)) {
        api->add_double(f, "io_lat_mean_us", dlg_hist_mean(s->lat) / 1e3);
        api->add_double(f, "io_lat_p50_us", dlg_hist_percentile(s->lat, 50) / 1e3);
        api->add_double(f, "io_lat_p99_us", dlg_hist_percentile(s->lat, 99) / 1e3);
        api->add_double(f, "io_lat_p999_us", dlg_hist_percentile(s->lat, 99.9) / 1e3);
        api->add_double(f, "io_lat_max_us", (double)dlg_hist_max(s->lat) / 1e3);
    }
    api->add_int(f, "block_bytes", (int64_t)s->block);
    api->add_int(f, "depth", (int64_t)s->depth);
    api->add_int(f, "span_bytes", (int64_t)s->span);
    api->add_int(f, "buffer_align", (int64_t)s->align);
    api->add_int(f, "buffer_registered", s->registered);
    api->add_string(f, "cache_method", s->cache.method);
    if (s->checksum) {
        char hex[20];
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)job[IO_CRC_SUM]);
        api->add_string(f, "crc_sum", hex);
    }
    return 0;
}

static int io_begin_timed(void *state)
{
    io_raw *s = state;
    dlg_hist_reset(s->lat);
    s->nios = s->bytes = s->sum = 0;
    s->t_first = s->t_last = 0;
    return 0;
}

static void io_teardown(void *state)
{
    io_raw *s = state;
    if (!s)
        return;
    if (s->f) {
        /* let reads still in flight land before their buffers go away */
        uint32_t inflight = s->depth - s->nfree;
        while (s->async && inflight > 0) {
            int n = s->h->file_reap(s->h, s->f, s->done, s->depth, inflight);
            if (n <= 0)
                break;
            inflight -= (uint32_t)n;
        }
        s->h->file_close(s->h, s->f);
    }
    dlg_iobuf_free(s->buf, (size_t)s->depth * s->block);
    free(s->bufs);
    free(s->ios);
    free(s->done);
    free(s->free_slots);
    free(s->t_submit);
    free(s->slot_off);
    free(s->path);
    dlg_hist_free(s->lat);
    tools_ranks_free(&s->ranks);
    free(s);
}

/* Checks the geometry against the file; sets span, nblocks. */
static int check_geometry(io_raw *s, const dlg_value *opts, uint64_t size)
{
    const dlg_host *h = s->h;
    if (size == 0)
        return h->error(h, DLG_EINVAL, "data = raw:%s: the file is empty", s->path);
    if (s->align > 1 && s->block % s->align != 0)
        return h->error(h, DLG_EINVAL,
                        "block = %s: the storage backend reads with O_DIRECT and needs a multiple "
                        "of %u bytes",
                        opts[OPT_BLOCK].text, s->align);
    s->span = size;
    if (opts[OPT_SPAN].set) {
        if ((uint64_t)opts[OPT_SPAN].i > size)
            return h->error(h, DLG_EINVAL, "span = %s: larger than %s (%llu bytes)", opts[OPT_SPAN].text,
                            s->path, (unsigned long long)size);
        s->span = (uint64_t)opts[OPT_SPAN].i;
    }
    if (s->block > s->span) /* span itself was judged by io_opts_check */
        return h->error(h, DLG_EINVAL, "block = %s: larger than the %llu bytes of %s",
                        opts[OPT_BLOCK].text, (unsigned long long)s->span, s->path);
    /* Random reads use whole blocks only; a sequential pass over the whole
     * file ends with a short read at end of file, as fio's does. */
    s->nblocks = s->span / s->block;
    if (!s->rand && s->span == size && size % s->block)
        s->nblocks++;
    else
        s->span = s->nblocks * s->block;
    return 0;
}

/* depth against the storage's caps: check passes the job's storage caps,
 * setup the file's (the same flags: those of the backend type). */
static int depth_fits(const dlg_host *h, const dlg_value *opts, uint32_t caps)
{
    if (opts[OPT_DEPTH].set && opts[OPT_DEPTH].i > 1 && !(caps & DLG_CAP_ASYNC))
        return h->error(h, DLG_EINVAL,
                        "depth = %s: the job's storage backend reads synchronously (no "
                        "DLG_CAP_ASYNC); use depth = 1, or storage = uring for queued reads",
                        opts[OPT_DEPTH].text);
    return 0;
}

static int choose_depth(io_raw *s, const dlg_value *opts, uint32_t caps)
{
    const dlg_host *h = s->h;
    int rc = depth_fits(h, opts, caps);
    if (rc < 0)
        return rc;
    s->async = (caps & DLG_CAP_ASYNC) != 0;
    uint32_t most = s->async ? h->file_depth(h, s->f) : 1; /* 0: no limit */
    if (!opts[OPT_DEPTH].set) {
        s->depth = s->async ? AUTO_DEPTH_ASYNC : 1;
        if (most && s->depth > most)
            s->depth = most;
    } else {
        int64_t d = opts[OPT_DEPTH].i; /* in range: io_opts_check */
        if (most && d > most)
            return h->error(h, DLG_EINVAL,
                            "depth = %s: the job's storage takes at most %u reads in flight (its own "
                            "depth); raise that, or leave depth unset to use it",
                            opts[OPT_DEPTH].text, most);
        s->depth = (uint32_t)d;
    }
    /* depth 1 on an async backend still goes through submit/reap, like
     * fio's io_uring engine at iodepth=1 */
    return 0;
}

static int alloc_buffers(io_raw *s)
{
    size_t align = s->align > 4096 ? s->align : 4096;
    s->bufs = calloc(s->depth, sizeof *s->bufs);
    s->ios = calloc(s->depth, sizeof *s->ios);
    s->done = calloc(s->depth, sizeof *s->done);
    s->free_slots = calloc(s->depth, sizeof *s->free_slots);
    s->t_submit = calloc(s->depth, sizeof *s->t_submit);
    s->slot_off = calloc(s->depth, sizeof *s->slot_off);
    if (!s->bufs || !s->ios || !s->done || !s->free_slots || !s->t_submit || !s->slot_off)
        return s->h->error(s->h, DLG_ENOMEM, "out of memory");
    /* block is a multiple of align (checked at setup), so every slice is aligned */
    s->buf = dlg_iobuf_alloc((size_t)s->depth * s->block, align);
    if (!s->buf)
        return s->h->error(s->h, DLG_ENOMEM, "io: no memory for %u buffers of %zu bytes", s->depth,
                           s->block);
    memset(s->buf, 0, (size_t)s->depth * s->block); /* first touch outside the timed steps */
    for (uint32_t i = 0; i < s->depth; i++) {
        s->bufs[i] = s->buf + (size_t)i * s->block;
        s->free_slots[s->nfree++] = s->depth - 1 - i;
    }
    /* registered once, as fio's --fixedbufs: where the backend cannot, it
     * says ENOTSUP and reads go on unregistered */
    s->registered = s->async && s->h->file_register(s->h, s->f, s->buf, (size_t)s->depth * s->block) == 0;
    return 0;
}

/* The options' own rules (data's form, block against span, the ranges),
 * without the file: the workload's check, and the first thing setup does.
 * Returns the path data names. */
static int io_opts_check(const dlg_host *h, const dlg_value *opts, const char **path)
{
    const char *text = opts[OPT_DATA].text;
    *path = tools_after_prefix(text, "raw");
    if (!*path)
        return h->error(h, DLG_EINVAL,
                        "data = %s: io reads one file, written raw:FILE (for a recordio:/lmdb:/files: "
                        "dataset use workload = io-pipeline)",
                        text ? text : "(unset)");
    if (!**path)
        return h->error(h, DLG_EINVAL, "data = raw: names no file");
    if (opts[OPT_BLOCK].i < 1 || (uint64_t)opts[OPT_BLOCK].i > MAX_BLOCK)
        return h->error(h, DLG_EINVAL, "block = %s: out of range [1, 1GiB]", opts[OPT_BLOCK].text);
    if (opts[OPT_SPAN].set && opts[OPT_BLOCK].i > opts[OPT_SPAN].i)
        return h->error(h, DLG_EINVAL, "block = %s: larger than span = %s", opts[OPT_BLOCK].text,
                        opts[OPT_SPAN].text);
    if (opts[OPT_DEPTH].set && (opts[OPT_DEPTH].i < 1 || opts[OPT_DEPTH].i > 4096))
        return h->error(h, DLG_EINVAL, "depth = %s: out of range [1, 4096]", opts[OPT_DEPTH].text);
    if (opts[OPT_STEP_IOS].i < 0 || opts[OPT_STEP_IOS].i > 1000000)
        return h->error(h, DLG_EINVAL, "step_ios = %s: out of range [0, 1000000]", opts[OPT_STEP_IOS].text);
    return 0;
}

static int io_check(const dlg_host *h, const dlg_value *opts, const dlg_job_info *job)
{
    const char *path;
    int rc = io_opts_check(h, opts, &path);
    /* an older host does not say the storage's caps: setup judges depth */
    if (rc == 0 && DLG_JOB_HAS(job, storage_caps))
        rc = depth_fits(h, opts, job->storage_caps);
    return rc;
}

/* The cache option on the open file (after open: pages a backend maps at
 * open, mmap's populate, then show as "stayed cached", not as evicted);
 * warm does nothing for reads with O_DIRECT (dlg_cache_passed_by). */
static int apply_cache(io_raw *s, dlg_cache_mode mode, uint32_t caps)
{
    const dlg_host *h = s->h;
    char warn[512];
    if (dlg_cache_passed_by(mode, caps, s->align, s->path, &s->cache, warn, sizeof warn)) {
        h->log(h, DLG_LOG_WARN, "%s", warn);
        return 0;
    }
    dlg_data_err err = {0};
    dlg_stop_ask ask = {dlg_host_stop_asked, (void *)h};
    int rc = dlg_cache_file(s->path, mode, &ask, &s->cache, &err);
    if (rc == -DLG_ESTOP) /* bare: the runner writes the cell as stopped */
        return rc;
    if (rc < 0)
        return h->error(h, err.code, "%s", err.msg);
    if (dlg_cache_warning(&s->cache, s->path, warn, sizeof warn))
        h->log(h, DLG_LOG_WARN, "%s", warn);
    return 0;
}

static int io_open(io_raw *s, const dlg_value *opts, const dlg_job_info *job)
{
    const dlg_host *h = s->h;
    const char *path;
    int rc = io_opts_check(h, opts, &path);
    if (rc < 0)
        return rc;
    if (!(s->path = strdup(path)))
        return h->error(h, DLG_ENOMEM, "out of memory");
    s->block = (size_t)opts[OPT_BLOCK].i;
    s->rand = opts[OPT_PATTERN].i == PAT_RAND;
    s->checksum = opts[OPT_CHECKSUM].i != 0;
    s->rng = tools_ranks_seed(&s->ranks, DLG_JOB_HAS(job, seed) ? job->seed : 0);
    rc = h->file_open(h, NULL, s->path, &s->f);
    if (rc < 0) {
        s->f = NULL;
        return rc;
    }
    uint64_t size = 0;
    if ((rc = h->file_size(h, s->f, &size)) < 0)
        return rc;
    uint32_t caps = h->file_caps(h, s->f, &s->align);
    if (s->align == 0)
        s->align = 1;
    if ((rc = apply_cache(s, dlg_cache_mode_of(opts[OPT_CACHE].i, job), caps)) < 0)
        return rc;
    if ((rc = check_geometry(s, opts, size)) < 0 || (rc = choose_depth(s, opts, caps)) < 0)
        return rc;
    s->next = tools_ranks_share_start(&s->ranks, s->nblocks);
    int64_t per = opts[OPT_STEP_IOS].i;
    s->step_ios = per ? (uint32_t)per : (uint32_t)(s->block >= AUTO_STEP_BYTES ? 1 : AUTO_STEP_BYTES / s->block);
    return alloc_buffers(s);
}

static int io_setup(const dlg_host *h, const dlg_value *opts, const dlg_job_info *job, void **state)
{
    *state = NULL;
    io_raw *s = calloc(1, sizeof *s);
    if (!s)
        return h->error(h, DLG_ENOMEM, "out of memory");
    s->h = h;
    int rc = (s->lat = dlg_hist_new()) ? tools_ranks_init(&s->ranks, h, "io", IO_COUNTS, true)
                                       : h->error(h, DLG_ENOMEM, "out of memory");
    if (rc == 0)
        rc = io_open(s, opts, job);
    if (rc < 0) {
        s->nfree = s->depth; /* nothing in flight */
        io_teardown(s);
        return rc;
    }
    *state = s;
    return 0;
}

static const dlg_workload_ops io_ops = {
    .version = 3,
    .check = io_check,
    .unit = "bytes",
    .setup = io_setup,
    .step = io_step,
    .report = io_report,
    .teardown = io_teardown,
    .begin_timed = io_begin_timed,
};

const dlg_plugin_desc io_desc = {
    .struct_size = sizeof(dlg_plugin_desc),
    .kind = DLG_KIND_WORKLOAD,
    .name = "io",
    .version = "1.0",
    .summary = "fio-like raw reads (seq/rand, block, depth) of one file through the job's storage",
    .options = io_options,
    .metrics = io_metrics,
    .ops = &io_ops,
};
