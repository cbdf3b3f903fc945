/* The services the runtime passes to plugins (dlg_host), one host per
 * plugin instance so that every error carries that instance's context. */
#ifndef DLG_HOST_H
#define DLG_HOST_H

#include "file_set.h"
#include "plan.h"

#include <pthread.h>

/* dlg_services.disk_ios_fx's unit: 1/65536 of an I/O. */
#define DLG_DISK_IOS_ONE 65536.0

/* One error as raised through a host. */
typedef struct dlg_error {
    char text[2048];  /* "CONTEXT: MSG" */
    size_t head;      /* the length of CONTEXT ("" for the core's own) */
    int code;         /* DLG_E* */
    uint64_t gen;     /* its number in dlg_services.errors; 0: none */
    pthread_t thread; /* who raised it */
} dlg_error;

typedef struct dlg_storage_live {
    const dlg_instance_spec *spec;
    struct dlg_host_impl *host;
    void *inst;
    bool creating; /* to catch a shim that wraps itself */
} dlg_storage_live;

struct dlg_error_capture;
struct dlg_thread_error;
struct dlg_comm;

/* Shared by every host of one cell (or of the sink set). */
typedef struct dlg_services {
    dlg_plan *plan;
    const char *default_storage;
    dlg_storage_live *storages;
    size_t nstorages;
    dlg_instance_spec *extra_specs; /* storages resolved at run time only */
    size_t nextra;
    uint64_t bytes_read; /* atomics: loader threads read concurrently */
    uint64_t ios;
    uint64_t bytes_written, write_ios; /* atomics: writes through the host */
    /* atomics: what an emulated disk charged (host->disk_charged); its
     * I/Os in 1/DLG_DISK_IOS_ONE, as readahead pays shares of one */
    uint64_t disk_bytes, disk_ios_fx;
    bool disk_counted;
    dlg_file_set files; /* the distinct files opened to read, the outputs kept: storage_files_bytes */
    int verbosity;      /* 0 quiet .. 3 debug */
    pthread_mutex_t lock;
    /* Creating storages: recursive, as a shim's create() looks up its inner;
     * loader threads may open their first files at the same time. */
    pthread_mutex_t storage_lock;
    dlg_error error;    /* the latest error (under lock) */
    uint64_t errors;    /* how many were ever raised (atomic; written under lock) */
    struct dlg_error_capture *captures; /* threads whose errors are kept out of `error` */
    struct dlg_thread_error *thread_errors; /* each thread's latest error (under lock) */
    char context[512];  /* "file:line: [job x]" of the cell, before storage errors; "" outside a cell */
    struct dlg_comm *comm; /* the run's ranks for host->comm_* (comm.h); NULL: alone */
} dlg_services;

typedef struct dlg_host_impl {
    dlg_host pub;
    dlg_services *svc;
    char context[512];
    char last_log[512];
    dlg_error *failed; /* a storage's: why its create() failed, said again at each later lookup */
    /* the runner is in the workload's setup, where no collective runs:
     * stopping() says a stop request there under several ranks too
     * (atomic: loader threads ask it) */
    bool in_setup;
} dlg_host_impl;

void dlg_services_init(dlg_services *s, dlg_plan *plan, const char *default_storage, int verbosity);
/* The cell the services serve ("file:line: [job x]"): storage backends'
 * errors then name the job whose cell hit them. */
void dlg_services_set_context(dlg_services *s, const char *fmt, ...) DLG_PRINTF(2, 3);
/* Creates storage `name` (and any storage it wraps) as a cell would, so
 * that a bad [storage] section (a missing profile, an inner that does not
 * exist) fails before the first cell: 0, or a negative DLG_E* code with the
 * message in the error slot (dlg_services_error_copy), starting
 * "file:line: " of the key it names ("inner = x: ...") or else of the
 * section. */
int dlg_services_storage_check(dlg_services *s, const char *name);

/* The entry of section sec that a plugin's message starts with naming
 * ("KEY = ...", see dlg_msg_key_len), or NULL: where the message belongs. */
const dlg_entry *dlg_msg_entry(const dlg_section *sec, const char *msg);
/* Destroys the storage instances, newest first (shims before their inner). */
void dlg_services_fini(dlg_services *s);

/* A host for one plugin instance; context like "[job x] workload resnet50". */
dlg_host_impl *dlg_host_new(dlg_services *s, const char *context_fmt, ...) DLG_PRINTF(2, 3);
void dlg_host_free(dlg_host_impl *h);

/* Writing through the storage backend of h's cell (or storage `storage`),
 * counted in the services' bytes_written and write_ios as reads are
 * counted: file_create opens path for writing (created or truncated);
 * file_write writes all n bytes at off, 0 or -code with the error naming
 * the file and offset.  Close with h->file_close. */
int dlg_host_file_create(const dlg_host *h, const char *storage, const char *path, dlg_file **out);
int dlg_host_file_write(const dlg_host *h, dlg_file *f, const void *buf, size_t n, uint64_t off);
/* Closes a file opened with dlg_host_file_create (NULL: nothing): 0, or
 * -code with the error naming the file when the backend's close() fails (a
 * write the file system deferred: NFS's EIO, ENOSPC, EDQUOT), which the
 * ABI's file_close can only warn about. */
int dlg_host_file_close_written(const dlg_host *h, dlg_file *f);

/* Copies the last error raised through any host of s ("" if none) into
 * buf, under the lock: another thread (a loader worker) may be raising
 * one.  Returns its DLG_E* code, 0 when there is none. */
int dlg_services_error_copy(dlg_services *s, char *buf, size_t len);
/* The slot's text itself, read without the lock: only where no other
 * thread can raise (a test, once the cell's threads are joined). */
const char *dlg_services_error(dlg_services *s);
void dlg_services_clear_error(dlg_services *s);

/* Whether a call said why it failed: the slot is shared by every host of
 * s and by every thread (loader workers), so text in it may be older than
 * the call, or another thread's.  Take a mark before the call; after it,
 * dlg_services_said copies into buf the latest error raised through s
 * since that mark (by any thread: a step speaks through its workers too)
 * and returns its DLG_E* code, or 0 with buf "" when nothing was said.
 * An error another thread raised since `since` (an earlier mark) counts
 * too: a prefetching worker's failed read surfaces at a later call (the
 * step that takes its batch), whereas what the calling thread itself said
 * during an earlier call that went well was got over.  since == mark: only
 * the call's. */
uint64_t dlg_services_mark(dlg_services *s);
int dlg_services_said(dlg_services *s, uint64_t since, uint64_t mark, char *buf, size_t len);

/* A code an op returned as the host says it: the DLG_E* name ("DLG_EIO")
 * of code or -code (ops return the negative: -DLG_EIO is -2, which a
 * message must not show as "code -2"), else "-99, no DLG_E* code" in buf. */
const char *dlg_code_name(long long rc, char *buf, size_t len);

/* What a plugin's call that failed with rc and said nothing is said as,
 * after ctx (the place; "" for none): "CTX: WHAT: out of memory" for
 * DLG_ENOMEM, which needs no more words and asks for memory, not a bug
 * report; else "CTX: WHAT failed (DLG_EIO) without saying why". */
void dlg_said_nothing(char *buf, size_t len, const char *ctx, const char *what, long long rc);

/* Records an error raised by the core itself in the same slot. */
int dlg_services_fail(dlg_services *s, int code, const char *fmt, ...) DLG_PRINTF(3, 4);

#endif
