/* dlgauge plugin ABI — the only header a plugin needs.
 *
 * A plugin is a shared object exporting one symbol, dlgauge_plugin_entry,
 * that returns a dlg_plugin_info: the ABI version it was built for and a
 * NULL-terminated list of descriptors (workloads, storage backends, sinks).
 *
 * Compatibility rules (SQLite-VFS style):
 *  - The first three fields of dlg_plugin_info are frozen forever, so a host
 *    of any version can read the major/minor of any plugin and say both.
 *  - Within one major, structs only grow at the end.  Every struct carries
 *    its size or version; the host reads a field or calls an op only if the
 *    plugin's struct is large enough / its version new enough.
 *  - The host accepts plugin minor <= its own minor.
 *
 * Plugins never exit(), abort() or assert() on bad input: they return a
 * negative DLG_E* code after describing the problem with host->error().
 */
#ifndef DLGAUGE_PLUGIN_H
#define DLGAUGE_PLUGIN_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DLG_ABI_MAJOR 1
#define DLG_ABI_MINOR 1

#define DLG_PLUGIN_ENTRY_SYMBOL "dlgauge_plugin_entry"

/* The entry keeps its C name in a C++ plugin too (DLG_PLUGIN expands
 * outside this header's extern "C"). */
#ifdef __cplusplus
#define DLG_EXTERN_C extern "C"
#else
#define DLG_EXTERN_C
#endif

#if defined(__GNUC__)
#define DLG_EXPORT __attribute__((visibility("default")))
#define DLG_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define DLG_EXPORT
#define DLG_PRINTF(f, a)
#endif

/* ---- error codes (returned negated, 0 = success) ---------------------- */
enum dlg_err {
    DLG_OK = 0,
    DLG_EINVAL = 1,   /* bad option value / bad input data */
    DLG_EIO = 2,      /* read/write failed */
    DLG_ENOMEM = 3,   /* allocation failed */
    DLG_ENOTSUP = 4,  /* feature not available here (no device, no O_DIRECT) */
    DLG_ECORRUPT = 5, /* dataset or file content is malformed */
    DLG_EAGAIN = 6,   /* transient: worth retrying (sink unreachable) */
    DLG_ESTOP = 7,    /* interrupted by the user */
    DLG_EINTERNAL = 8 /* a bug: please report */
};

/* ---- options declared as data (fio-style option tables) --------------- */
typedef enum dlg_opt_type {
    DLG_OPT_STRING = 1,
    DLG_OPT_INT = 2,      /* int64 */
    DLG_OPT_SIZE = 3,     /* bytes: 4KiB 30G 1.5MB (K/M/G/T and KiB.. binary, kB/MB.. SI) */
    DLG_OPT_DURATION = 4, /* ns: 500ms 60s 2m; a bare number is seconds */
    DLG_OPT_DOUBLE = 5,
    DLG_OPT_BOOL = 6,     /* true/false yes/no on/off 1/0 */
    DLG_OPT_ENUM = 7      /* one of choices, "a|b|c" */
} dlg_opt_type;

enum dlg_opt_flags {
    DLG_OPT_REQUIRED = 1u << 0, /* no default: the user must give it */
    DLG_OPT_NOSWEEP = 1u << 1,  /* commas are part of the value, never a sweep list */
    /* Added within ABI 1.1 (an older host ignores them).  The value -- or,
     * where the help declares forms like "recordio:PATH | synthetic[:N]",
     * the PATH part -- names a file or directory the job reads (IN: before
     * any cell it must exist, or be an OUT of an earlier job of the run) or
     * writes (OUT). */
    DLG_OPT_PATH_IN = 1u << 2,
    DLG_OPT_PATH_OUT = 1u << 3,
    /* The value names another storage ([storage NAME] or a backend type)
     * this one wraps: a result's storage_config then records that
     * storage's settings too, each key prefixed "OPTION." (inner.depth=8),
     * so cells over differently set inner storages stay apart. */
    DLG_OPT_STORAGE = 1u << 4
};

/* A name the core owns is refused when the plugin loads: a workload option
 * may not be called like a [job]/[global] key (dlgauge help job, global), a
 * storage/sink option not `type` or `plugin`, a metric not like a core
 * result field or tag (dlgauge help metrics). */
typedef struct dlg_option {
    const char *name;
    dlg_opt_type type;
    const char *def;     /* default, written as a user would; NULL = unset */
    const char *min;     /* inclusive bounds in the option's own units; NULL = none */
    const char *max;
    const char *choices; /* DLG_OPT_ENUM: "train|infer" */
    const char *help;    /* one line */
    uint32_t flags;
} /* tables end with an entry whose name is NULL */ dlg_option;

/* A parsed option value.  `text` is always the value as written (or the
 * default).  INT, SIZE (bytes), BOOL (0/1), ENUM (index into choices) and
 * DURATION (ns) use i; DOUBLE uses d; DURATION also sets d to seconds.
 * `set` is false when neither the user nor the table gave a value. */
typedef struct dlg_value {
    const char *text;
    int64_t i;
    double d;
    bool set;
} dlg_value;

/* ---- metrics declared as data: the result fields a plugin adds -------- */
typedef enum dlg_field_type {
    DLG_FIELD_DOUBLE = 1,
    DLG_FIELD_INT = 2,
    DLG_FIELD_UINT = 3,
    DLG_FIELD_STRING = 4,
    DLG_FIELD_BOOL = 5
} dlg_field_type;

typedef struct dlg_metric {
    const char *name; /* snake_case, stable: add, never rename */
    dlg_field_type type;
    const char *unit; /* "images/s", "bytes", "" */
    const char *help;
} /* tables end with an entry whose name is NULL */ dlg_metric;

/* ---- points: what sinks receive ---------------------------------------- */
typedef struct dlg_tag {
    const char *key;
    const char *value; /* never empty */
} dlg_tag;

typedef struct dlg_field {
    const char *key;
    dlg_field_type type;
    union {
        double d;
        int64_t i;
        uint64_t u;
        const char *s;
        bool b;
    } v;
} dlg_field;

typedef struct dlg_point {
    const char *measurement; /* "dlgauge_result", "dlgauge_progress" */
    const dlg_tag *tags;     /* sorted by key (byte order) */
    size_t ntags;
    const dlg_field *fields; /* at least one */
    size_t nfields;
    int64_t time_ns; /* Unix epoch, nanoseconds */
} dlg_point;

/* Every column a sink will see in this run, known before the first point:
 * lets a table sink (CSV) write its header once. */
typedef struct dlg_schema {
    const char *const *tags; /* tag keys, sorted */
    size_t ntags;
    const dlg_metric *fields; /* in column order */
    size_t nfields;
} dlg_schema;

/* ---- host services ------------------------------------------------------ */
typedef enum dlg_log_level {
    DLG_LOG_ERROR = 0,
    DLG_LOG_WARN = 1,
    DLG_LOG_INFO = 2,
    DLG_LOG_DEBUG = 3
} dlg_log_level;

typedef struct dlg_file dlg_file;       /* an open file of a storage backend */
struct dlg_storage_ops;

/* One asynchronous read (DLG_CAP_ASYNC backends). */
typedef struct dlg_io {
    void *buf;
    size_t len;
    uint64_t off;
    uint64_t user; /* returned untouched in dlg_io_done */
} dlg_io;

typedef struct dlg_io_done {
    uint64_t user;
    int64_t result; /* bytes read (< len only at EOF) or -code */
} dlg_io_done;

/* The run's ranks (DESIGN.md "Beyond one machine"): mpirun or srun starts
 * one dlgauge per rank, every rank runs the same cells in the same order,
 * and rank 0 writes the results.  Element types of the collectives: */
typedef enum dlg_comm_type {
    DLG_COMM_F32 = 0,
    DLG_COMM_F64 = 1,
    DLG_COMM_I64 = 2
} dlg_comm_type;

/* Who this process is among the ranks (host->comm_info).  The caller
 * sets struct_size = sizeof(dlg_rank_info) before the call; the host
 * fills no more than that, and sets struct_size to what it filled. */
typedef struct dlg_rank_info {
    uint32_t struct_size;
    int rank;            /* 0 .. size-1 */
    int size;            /* 1 when alone: no launcher, or a build without MPI */
    const char *engine;  /* "mpi", or "self" when alone */
    const char *library; /* the engine's own version line ("Open MPI v4.1.4 ..."; "" for self) */
    /* Added within ABI 1.1 (DLG_RANK_HAS(ri, local_rank)): this process's
     * place among the ranks on its node, and how many run there (0 and 1
     * when alone).  A GPU workload takes GPU local_rank mod its GPUs. */
    int local_rank;
    int local_size;
    /* Added within ABI 1.1 (DLG_RANK_HAS(ri, node_key)): a number that
     * every rank of this run on this node has, and no other run on the
     * node (its first local rank's pid and start time; alone, its pid):
     * names what the node's ranks share, as the throttle's one emulated
     * disk. */
    uint64_t node_key;
} dlg_rank_info;

/* Whether the host filled `field` of a dlg_rank_info (its struct_size
 * after comm_info): an older host fills less. */
#define DLG_RANK_HAS(ri, field) \
    ((ri)->struct_size >= offsetof(dlg_rank_info, field) + sizeof((ri)->field))

typedef struct dlg_host {
    uint32_t struct_size; /* sizeof(dlg_host) as the host compiled it */
    uint32_t abi_minor;
    void *ctx; /* the host's; plugins pass the host pointer back, never ctx */

    /* ERROR and WARN always show; INFO with dlgauge -v, DEBUG with -v -v. */
    void (*log)(const struct dlg_host *h, dlg_log_level lvl, const char *fmt, ...) DLG_PRINTF(3, 4);
    /* Record why the current call fails; the host prefixes the context
     * (file:line, section, plugin).  Returns -code, so plugins can write
     * `return h->error(h, DLG_EINVAL, "batch %d too large", b);` */
    int (*error)(const struct dlg_host *h, int code, const char *fmt, ...) DLG_PRINTF(3, 4);
    uint64_t (*now_ns)(const struct dlg_host *h); /* CLOCK_MONOTONIC */
    /* true once the user asked to stop (SIGINT/SIGTERM): finish quickly.
     * A step or a long setup that notices returns -DLG_ESTOP: the cell is
     * written partial, with the steps timed before.  Under several ranks
     * it says so in setup only (a step cut short would leave its peers in
     * a collective; the ranks stop together between steps). */
    bool (*stopping)(const struct dlg_host *h);

    /* Files through the job's storage backend (or a named [storage] when
     * name != NULL).  read() returns n bytes, fewer only at the end of
     * the file: the host continues a backend's short read and refuses one
     * that claims more than n. */
    int (*file_open)(const struct dlg_host *h, const char *storage_name, const char *path,
                     dlg_file **out);
    int64_t (*file_read)(const struct dlg_host *h, dlg_file *f, void *buf, size_t n, uint64_t off);
    int (*file_size)(const struct dlg_host *h, dlg_file *f, uint64_t *size);
    void (*file_close)(const struct dlg_host *h, dlg_file *f);
    /* The backend's DLG_CAP_* flags for this file, and for DLG_CAP_DIRECT the
     * alignment that buffers, offsets and lengths must have (else 1). */
    uint32_t (*file_caps)(const struct dlg_host *h, dlg_file *f, uint32_t *align);
    /* DLG_CAP_ZERO_COPY: borrow [off, off+n) without copying; *ptr stays
     * valid until file_unfetch.  Backends without it copy into a buffer. */
    int (*file_fetch)(const struct dlg_host *h, dlg_file *f, uint64_t off, size_t n, const void **ptr);
    void (*file_unfetch)(const struct dlg_host *h, dlg_file *f, const void *ptr, size_t n);
    /* DLG_CAP_ASYNC: queue reads (at most the backend's depth in flight),
     * then reap at least min_done completions.  A dlg_file is used by one
     * thread at a time; open one per thread. Returns count or -code. */
    int (*file_submit)(const struct dlg_host *h, dlg_file *f, const dlg_io *ios, size_t n);
    int (*file_reap)(const struct dlg_host *h, dlg_file *f, dlg_io_done *done, size_t max, size_t min_done);

    /* Storage lookup for shims (throttle wraps `inner`): resolves name as a
     * [storage NAME] section, else as a backend type with default options,
     * and returns its ops and a live instance that the host owns and
     * destroys after the plugin's own destroy().  On failure *ops is left
     * NULL when NAME is neither (the caller says so, naming its key), and
     * set when NAME is a storage that could not be made (its create()
     * failed, or it wraps the caller): the host's error line says why;
     * return the -code and keep that line.  -DLG_ENOMEM (either way): out
     * of memory, said by the host too. */
    int (*storage_lookup)(const struct dlg_host *h, const char *name,
                          const struct dlg_storage_ops **ops, void **inst);

    /* ABI 1.1.  DLG_CAP_ASYNC: how many reads the backend takes in flight
     * on this file (its queue depth); 0 when it sets no limit or cannot
     * say.  Size queues by it instead of learning it from a failed submit. */
    uint32_t (*file_depth)(const struct dlg_host *h, dlg_file *f);
    /* ABI 1.1.  DLG_CAP_ASYNC: the buffer that this file's reads land in,
     * allocated until file_close: the backend may register it once
     * (io_uring fixed buffers: no page pinning per read, as fio's
     * --fixedbufs).  0, or -DLG_ENOTSUP where it has no use for it; reads
     * work either way. */
    int (*file_register)(const struct dlg_host *h, dlg_file *f, void *buf, size_t len);
    /* Added within ABI 1.1 (check DLG_HOST_HAS(h, file_write)): writing
     * through the job's storage backend (or a named [storage]), so that an
     * emulated disk shapes the writes by its write limits and the row
     * counts them (storage_write_bytes, storage_write_ios).  file_create
     * opens path for writing, created or truncated; file_write writes all
     * n bytes at off: 0 or -code, the error naming file and offset.  Close
     * with file_close.  -DLG_ENOTSUP from a backend that cannot write. */
    int (*file_create)(const struct dlg_host *h, const char *storage_name, const char *path,
                       dlg_file **out);
    int (*file_write)(const struct dlg_host *h, dlg_file *f, const void *buf, size_t n, uint64_t off);
    /* Added within ABI 1.1 (check DLG_HOST_HAS(h, file_close_written)):
     * closes a file of file_create as file_close does, and returns what
     * the backend's close said: 0, or -code with the error naming the file
     * (a write the file system deferred to close: NFS's EIO, a quota's
     * EDQUOT).  file_close can only warn of it. */
    int (*file_close_written)(const struct dlg_host *h, dlg_file *f);

    /* Added within ABI 1.1 (check DLG_HOST_HAS(h, comm_info) once; the
     * four collectives come with it): the run's ranks.  The runner sums
     * the items of every rank's steps, so a collective counts its bytes
     * on rank 0 only.  Collectives block; every rank calls the same ones
     * in the same order, from the thread that runs begin_timed/step/
     * report, never in setup: a rank whose setup fails first never
     * reaches it and the others would wait forever.  The host agrees after
     * setup whether every rank set up (and reports the failing rank's
     * line), so a workload needs no agreement of its own.  Alone (size 1)
     * they copy send to recv.  Each returns 0 or -code after one error
     * line. */
    void (*comm_info)(const struct dlg_host *h, dlg_rank_info *out);
    /* recv = the element-wise sum over ranks of send (count elements of
     * t); send == recv sums in place. */
    int (*comm_allreduce)(const struct dlg_host *h, const void *send, void *recv, size_t count, dlg_comm_type t);
    /* root's bytes of buf to every rank's buf. */
    int (*comm_bcast)(const struct dlg_host *h, void *buf, size_t bytes, int root);
    /* Sends bytes of sbuf to rank `to` while receiving as many into rbuf
     * from rank `from` (one step of a ring; to == from == rank copies). */
    int (*comm_sendrecv)(const struct dlg_host *h, const void *sbuf, int to, void *rbuf, int from, size_t bytes);
    int (*comm_barrier)(const struct dlg_host *h);

    /* Added within ABI 1.1 (check DLG_HOST_HAS(h, error_said)): the line
     * recorded for this thread's last failed call (a storage backend's own
     * reason why file_open failed: an io_uring the container forbids), as
     * error()'s fmt made it, without the host's context; into buf
     * (truncated to len); false when this thread has none.  For a plugin
     * that reports a failure in words of its own, which would else lose
     * the reason. */
    bool (*error_said)(const struct dlg_host *h, char *buf, size_t len);

    /* Added within ABI 1.1 (check DLG_HOST_HAS(h, disk_charged)): a
     * storage that emulates a disk (throttle) says what reached that disk:
     * the bytes and I/Os of reads it charged, page-cache hits left out
     * (ios may be fractional: a readahead page's share of one large I/O).
     * The row then has emulated_disk_read_bytes/_ios beside
     * storage_read_bytes, and a report sizes the disk by them.  Call it
     * with 0, 0 when a file opens to read: a row of hits alone then says
     * 0 bytes reached the disk, not "not counted".  Any thread. */
    void (*disk_charged)(const struct dlg_host *h, uint64_t bytes, double ios);

    /* Added within ABI 1.1 (check DLG_HOST_HAS(h, file_kept)): path is
     * an output the cell wrote and keeps under that name (after any
     * rename into place), a file or a folder of files: a disk must hold
     * it beside what the cell read, so the row's storage_files_bytes
     * counts it, once by name, at its size when the cell reports.  Any
     * thread.  A sink whose rows go to a file other than its path options
     * say (csv's PATH.2.csv when PATH's header does not fit) names it so
     * from open or begin: the run's last line lists it among the results. */
    void (*file_kept)(const struct dlg_host *h, const char *path);
} dlg_host;

/* Whether the host has `member` (struct_size says how far it filled
 * dlg_host): members added within ABI 1.1 are absent from older hosts. */
#define DLG_HOST_HAS(h, member)                                                                    \
    ((h) && (h)->struct_size >= offsetof(dlg_host, member) + sizeof((h)->member) && (h)->member)

/* This process's place among the ranks on its node (dlg_rank_info's
 * local_rank), or -1 from a host that does not say (no comm_info, or one
 * older than the field): a GPU workload takes GPU local rank mod GPUs. */
static inline int dlg_host_local_rank(const dlg_host *h)
{
    if (!DLG_HOST_HAS(h, comm_info))
        return -1;
    dlg_rank_info ri; /* (no designated initializer: C++ includes this too) */
    ri.struct_size = (uint32_t)sizeof ri;
    h->comm_info(h, &ri); /* fills what struct_size then says */
    return DLG_RANK_HAS(&ri, local_rank) && ri.local_rank >= 0 ? ri.local_rank : -1;
}

/* ---- workloads ------------------------------------------------------------ */

/* What the runner tells a workload about the cell it runs in. */
typedef struct dlg_job_info {
    uint32_t struct_size;
    const char *job;     /* [job NAME] */
    int cpus;            /* vCPUs granted to the cell: size thread pools by it */
    uint64_t seed;       /* per repetition; workloads must be deterministic in it */
    int repetition;      /* 0-based */
    /* added within ABI 1.1, so an older host leaves it out: read it with
     * DLG_JOB_HAS.  The cell's memory limit in bytes, page cache included;
     * 0 = none */
    uint64_t memory_limit;
    /* added within ABI 1.1 (DLG_JOB_HAS(job, storage_caps)): the DLG_CAP_*
     * flags of the storage the cell reads through (its `storage`'s backend
     * type), what host->file_caps() says of the files it opens; known
     * before any storage exists, so check() can judge options against
     * them (io's depth > 1 needs DLG_CAP_ASYNC) */
    uint32_t storage_caps;
    /* added within ABI 1.1 (DLG_JOB_HAS(job, storage)): the cell's
     * `storage` as the job names it (a [storage NAME] or a backend type),
     * NULL where the job leaves it at the default (posix); a check() line
     * starting "storage = " is said at that key's line */
    const char *storage;
} dlg_job_info;

/* Whether the host's dlg_job_info has `field` (struct_size says what it filled). */
#define DLG_JOB_HAS(job, field) \
    ((job) && (job)->struct_size >= offsetof(dlg_job_info, field) + sizeof((job)->field))

/* Filled by step().  items: units of work done (images, tokens, bytes).
 * elapsed_ns: if non-zero, the step timed itself (e.g. CUDA events) and the
 * runner uses this instead of its host clock.  wait_ns: part of the step
 * spent waiting for input.  A timed step whose wait_ns passes both its
 * elapsed_ns and the host clock's time for it, or whose elapsed_ns passes
 * the host clock's by over a second, fails the cell (a bug in the
 * workload).  bytes_read is not read by the runner: bytes
 * read through host->file_* are counted already (storage_read_bytes). */
typedef struct dlg_step {
    uint64_t items;
    uint64_t bytes_read;
    uint64_t elapsed_ns;
    uint64_t wait_ns;
} dlg_step;

/* Adds a workload result field (one declared in the descriptor's metrics),
 * with the call of its declared type: add_int for DLG_FIELD_INT/UINT/BOOL,
 * add_double for DLG_FIELD_DOUBLE, add_string for DLG_FIELD_STRING.  A
 * number is averaged over the cell's repetitions; a string keeps the last.
 * Add each field once per report: a second value in one repetition
 * replaces the first (with a warning), it is not averaged with it. */
typedef struct dlg_fields dlg_fields;
typedef struct dlg_report_api {
    void (*add_double)(dlg_fields *f, const char *key, double v);
    void (*add_int)(dlg_fields *f, const char *key, int64_t v);
    void (*add_string)(dlg_fields *f, const char *key, const char *v);
} dlg_report_api;

/* Every op returning int returns 0 or a negative DLG_E* code. */
typedef struct dlg_workload_ops {
    uint32_t version;  /* 1; 2 adds begin_timed; 3 adds check (the host reads no member past its version's) */
    const char *unit;  /* plural item name for throughput: "images", "bytes" */
    /* Untimed: allocate everything here; step() must not allocate. */
    int (*setup)(const dlg_host *h, const dlg_value *opts, const dlg_job_info *job, void **state);
    int (*step)(void *state, dlg_step *out);
    /* Optional: add workload fields for the repetition just measured. */
    int (*report)(void *state, const dlg_report_api *api, dlg_fields *f);
    void (*teardown)(void *state);
    /* ABI 1.1, version 2, optional: called once per repetition after the
     * warm-up steps, right before the first timed step (also when warmup =
     * 0).  Reset here what report() accumulates, so that its fields cover
     * the timed steps only.  Not timed itself, but keep it quick and free
     * of allocation.  An older host never calls it: report() must still
     * make sense without it. */
    int (*begin_timed)(void *state);
    /* ABI 1.1, version 3, optional: find what setup() would refuse in a
     * cell's option values alone (options that are each valid but not
     * together: mean with mean_file, fp16 on the cpu, a crop below the
     * model's minimum) without allocating big buffers, opening files or
     * datasets, or touching a device: what needs those (a file's size, a
     * GPU, its memory) stays setup's to find.  job is as setup gets it
     * (storage_caps included), except that cpus is the count the cell
     * asks for (0: all it is given) and repetition is 0.  The host
     * calls it for every cell of the plan before any cell runs, in `dlgauge
     * run` and `--dry-run` alike.  0, or -code after one host->error()
     * line; a line starting with an option's name ("mean = ...",
     * "precision '...'", "mean_file: ...") is said at that key's
     * file:line.  Let setup() apply the same function, so that the two
     * never disagree.  An older host never calls it. */
    int (*check)(const dlg_host *h, const dlg_value *opts, const dlg_job_info *job);
} dlg_workload_ops;

/* Whether a workload's ops reach the version-2 member begin_timed. */
static inline bool dlg_workload_has_begin_timed(const dlg_workload_ops *o)
{
    return o && o->version >= 2 && o->begin_timed;
}

/* Whether a workload's ops reach the version-3 member check. */
static inline bool dlg_workload_has_check(const dlg_workload_ops *o)
{
    return o && o->version >= 3 && o->check;
}

/* ---- storage backends (VFS-style) ----------------------------------------- */
enum dlg_storage_caps {
    DLG_CAP_ZERO_COPY = 1u << 0, /* fetch/unfetch */
    DLG_CAP_ASYNC = 1u << 1,     /* submit/reap */
    DLG_CAP_DIRECT = 1u << 2     /* reads must be aligned to `align` */
};

enum dlg_open_flags { DLG_OPEN_READ = 0, DLG_OPEN_WRITE = 1 };

/* The core allocates ops->file_size bytes per open file (zeroed), sets the
 * three members below before open(), and frees the memory after close()
 * (after a failed open() without close()).  One thread at a time uses a
 * dlg_file. */
struct dlg_file {
    const struct dlg_storage_ops *ops; /* set by the core */
    void *inst;                        /* the backend instance */
    uint32_t align;                    /* DLG_CAP_DIRECT: required alignment */
    /* the backend's own state follows (ops->file_size bytes in all) */
};

typedef struct dlg_storage_ops {
    uint32_t version;   /* 1; 2 adds depth and register (the host reads no member past its version's) */
    uint32_t caps;
    size_t file_size;   /* bytes the core allocates for a dlg_file subclass */
    /* The instance is shared by every file of a cell, opened and read by
     * several threads at once: read-only after create(), or locked. */
    int (*create)(const dlg_host *h, const dlg_value *opts, void **inst);
    void (*destroy)(void *inst);
    /* flags: DLG_OPEN_READ or DLG_OPEN_WRITE (create/truncate).  Keep h
     * in the file for the host->error() lines of the ops below, which get
     * no host. */
    int (*open)(void *inst, const dlg_host *h, const char *path, int flags, dlg_file *f);
    int (*close)(dlg_file *f);
    int (*size)(dlg_file *f, uint64_t *out);
    /* Reads n bytes at off; returns bytes read (< n only at EOF) or -code.
     * The host calls size() after a short read and reads on from there
     * when it was not the end; more than n is an error. */
    int64_t (*read)(dlg_file *f, void *buf, size_t n, uint64_t off);
    /* Optional (NULL unless the matching capability is set). */
    int (*fetch)(dlg_file *f, uint64_t off, size_t n, const void **ptr);
    void (*unfetch)(dlg_file *f, const void *ptr, size_t n);
    int (*submit)(dlg_file *f, const dlg_io *ios, size_t n);
    int (*reap)(dlg_file *f, dlg_io_done *done, size_t max, size_t min_done);
    /* Optional: write whole buffer at off (preprocess output); -code on error. */
    int (*write)(dlg_file *f, const void *buf, size_t n, uint64_t off);
    /* Version 2, optional: reads submit() takes in flight on this file
     * (0: no limit).  What the host's file_depth() returns. */
    uint32_t (*depth)(dlg_file *f);
    /* Version 2, optional: what the host's file_register() asks. */
    int (*register_buffer)(dlg_file *f, void *buf, size_t len);
} dlg_storage_ops;

/* Whether an asynchronous backend's ops reach the version-2 members (depth,
 * register_buffer): hosts and shims read no member past a plugin's version. */
static inline bool dlg_storage_async_v2(const dlg_storage_ops *o)
{
    return o && (o->caps & DLG_CAP_ASYNC) && o->version >= 2;
}

/* ---- sinks -------------------------------------------------------------------- */
/* The host calls a sink's ops one at a time. */
typedef struct dlg_sink_ops {
    uint32_t version; /* 1; 2 adds check; 3 spools; 4 write_again (the host reads no member past its version's) */
    /* Open; also replays anything a previous run spooled. */
    int (*open)(const dlg_host *h, const dlg_value *opts, const char *name, void **state);
    /* Optional: the columns of this run, before the first write; the
     * schema and its names stay valid until close(). */
    int (*begin)(void *state, const dlg_schema *schema);
    /* Hand over points; they and their strings are the host's during the
     * call only, so the sink copies what it keeps.  A sink that cannot
     * deliver now spools and returns 0; it fails only if it would lose data.
     * A returned 0 says the points are delivered or on disk (the host
     * journals a result row as sent then, and --resume never sends it
     * again): only dlgauge_progress points may wait in memory for later. */
    int (*write)(void *state, const dlg_point *pts, size_t n);
    /* -DLG_EAGAIN (after host->error() saying how many points wait where):
     * nothing is lost, but some points could not be delivered now and wait
     * for a later flush (a spool).  A run goes on and exits 0 for it;
     * `dlgauge flush` exits 1.  Optional: NULL when writes leave nothing
     * to flush. */
    int (*flush)(void *state, uint64_t timeout_ns);
    void (*close)(void *state);
    /* ABI 1.1, version 2, optional: find what open() would refuse in opts
     * (conflicting keys, a malformed URL, a path that cannot be created)
     * without creating or writing any file and without network traffic;
     * `dlgauge run --dry-run` calls it.  0, or -code after host->error(). */
    int (*check)(const dlg_host *h, const dlg_value *opts, const char *name);
    /* ABI 1.1, version 3, optional: whether open() with these options may
     * find points that an earlier run could not deliver (a spool) and send
     * them.  `dlgauge flush` opens only such sinks: NULL (a file sink, which
     * delivers at write) says never, so flush does not create its file.
     * Decided from opts alone: no files, no network. */
    bool (*spools)(const dlg_value *opts);
    /* ABI 1.1, version 4, optional: write, but skip each point this sink
     * already stores (the same measurement, tags, fields and time_ns).
     * `dlgauge run --resume` sends through it a result row that the
     * interrupted run was delivering when it died: the row may have been
     * stored just before.  NULL: the host calls write, which suits a sink
     * that keeps one point per series and time (InfluxDB overwrites), and
     * leaves any other with the row twice. */
    int (*write_again)(void *state, const dlg_point *pts, size_t n);
} dlg_sink_ops;

/* Whether `dlgauge flush` opens a sink of these options: one whose spools
 * op says so, and any sink of version 1 or 2, which cannot say. */
static inline bool dlg_sink_may_spool(const dlg_sink_ops *o, const dlg_value *opts)
{
    return o && (o->version < 3 || (o->spools && o->spools(opts)));
}

/* ---- descriptors ----------------------------------------------------------- */
typedef enum dlg_kind {
    DLG_KIND_WORKLOAD = 1,
    DLG_KIND_STORAGE = 2,
    DLG_KIND_SINK = 3
} dlg_kind;

typedef struct dlg_plugin_desc {
    uint32_t struct_size; /* sizeof(dlg_plugin_desc) */
    dlg_kind kind;
    const char *name;    /* what configs say: workload = NAME, type = NAME */
    const char *version; /* the plugin's own version */
    const char *summary; /* one line */
    const dlg_option *options;
    const dlg_metric *metrics; /* result fields a workload adds; NULL for others */
    const void *ops;           /* dlg_workload_ops / dlg_storage_ops / dlg_sink_ops */
} dlg_plugin_desc;

typedef struct dlg_plugin_info {
    uint32_t abi_major; /* frozen: DLG_ABI_MAJOR */
    uint32_t abi_minor; /* frozen: DLG_ABI_MINOR */
    uint32_t struct_size; /* frozen: sizeof(dlg_plugin_info) */
    const char *name;     /* the plugin file's name, e.g. "caffe" */
    const dlg_plugin_desc *const *items; /* NULL-terminated */
} dlg_plugin_info;

typedef const dlg_plugin_info *(*dlg_plugin_entry_fn)(void);

/* Define the entry of a plugin:
 *   DLG_PLUGIN("diag", &stream_desc, &sleep_desc)
 * The entry only returns the address of static tables: the host calls it
 * and reads every table and string it points to under a fault guard when
 * the file loads, and a fault there leaves the file unloaded, named
 * ("crashed (signal 11, SIGSEGV) in its dlgauge_plugin_entry").          */
#define DLG_PLUGIN(plugin_name, ...)                                            \
    DLG_EXTERN_C DLG_EXPORT const dlg_plugin_info *dlgauge_plugin_entry(void);  \
    DLG_EXPORT const dlg_plugin_info *dlgauge_plugin_entry(void)                \
    {                                                                           \
        static const dlg_plugin_desc *const items[] = {__VA_ARGS__, NULL};      \
        static const dlg_plugin_info info = {DLG_ABI_MAJOR, DLG_ABI_MINOR,      \
                                             sizeof(dlg_plugin_info),           \
                                             plugin_name, items};               \
        return &info;                                                           \
    }

#ifdef __cplusplus
}
#endif
#endif
