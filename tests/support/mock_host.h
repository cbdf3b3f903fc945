/* A mock dlg_host for unit-testing plugins without the dlgauge runtime:
 * records the last error and log lines, serves files with plain POSIX I/O. */
#ifndef DLG_TEST_MOCK_HOST_H
#define DLG_TEST_MOCK_HOST_H

#include <dlgauge/plugin.h>

#include <pthread.h>

#define MOCK_MAX_STORAGES 8

/* A storage backend instance files can be routed through (see
 * mock_add_storage); `owned` ones were created by storage_lookup. */
typedef struct mock_storage {
    char name[64];
    const dlg_storage_ops *ops;
    void *inst;
    dlg_value *vals; /* options of an owned instance */
    bool owned;
} mock_storage;

typedef struct mock_host {
    dlg_host host;          /* pass &m.host to plugins */
    char last_error[1024];  /* text of the last host->error(), of any thread */
    char own_error[1024];   /* of the thread that called mock_host_init: the error a call made there said, which
                             * a worker thread's later one (a loader reading ahead) does not replace */
    pthread_t owner;
    int last_code;
    int errors;             /* how many error() calls */
    int warnings;           /* how many log(WARN) calls */
    char last_log[1024];
    char last_warning[1024]; /* the last log(WARN): a later INFO line (a plan's timing note) leaves it */
    bool stop;              /* what stopping() answers */
    /* Storage routing: with none registered, file_open serves plain POSIX
     * files as before; otherwise it opens through the named backend (or the
     * first registered one when the name is NULL). */
    mock_storage storages[MOCK_MAX_STORAGES];
    int nstorages;
    uint64_t bytes_written, write_ios; /* through file_write, as the host counts */
    /* what an emulated disk said it charged (disk_charged; atomics) */
    uint64_t disk_bytes, disk_calls;
    double disk_ios; /* (updated under a CAS loop: threads share a disk) */
} mock_host;

void mock_host_init(mock_host *m);

/* Loads plugin file `so_name` (e.g. "csv.so") from $DLGAUGE_PLUGIN_PATH and
 * returns the descriptor called `name` of `kind`, or NULL (and prints why). */
const dlg_plugin_desc *mock_load_plugin(const char *so_name, dlg_kind kind, const char *name);

/* Fills vals[] from the option table's defaults, then applies "key=value"
 * overrides (NULL-terminated); parses ints/sizes/durations/bools/enums
 * with a simplified parser adequate for tests.  Returns 0 or -1. */
int mock_options(const dlg_option *opts, dlg_value *vals, const char *const *overrides);

/* Registers a live storage instance under `name` (a [storage NAME] in the
 * real host) for file_open and storage_lookup.  The caller keeps ownership.
 * Returns 0, or -1 when the table is full. */
int mock_add_storage(mock_host *m, const char *name, const dlg_storage_ops *ops, void *inst);

/* Destroys the instances storage_lookup created from a backend type
 * ("posix" loads posix.so with default options).  Call after destroying the
 * plugins that looked them up, as the real host does. */
void mock_host_fini(mock_host *m);

#endif
