/* The fixture of the tests of the host's storage path (runtime/test_host_io.c,
 * storage/test_host_fetch.c, runtime/test_host_capture.c): a workload's host
 * over one fake storage backend, both as a cell would have created them, with
 * HFX_PATH open; runtime/test_host_race.c's two threads failing at once.  The
 * backend's file is HFX_FILE_BYTES bytes of 'x'; reads at offset 200 fail. */
#ifndef DLG_HOST_FIXTURE_H
#define DLG_HOST_FIXTURE_H

#include "host.h"

#include <pthread.h>
#include <stdbool.h>

#define HFX_FILE_BYTES 100
#define HFX_PATH "/data/train/shard-0007.bin"

/* The backend of one test: what fails, and the completions reap returns;
 * `meanwhile`: an error another thread raises while a failing call runs
 * (through host `other`), before the call fails; `said_wait` (when set):
 * where a failing call waits, after its own line, before it fails;
 * `close_first` (when set): a file the next open closes (through the host
 * it is given) before it goes on or fails, as a backend that keeps few
 * files open would; `short_reads`: a read returns at most half of what it
 * could (at least 1 byte), a contract breach; `overrun`: a read claims 100
 * bytes more than asked (writing only what it may). */
typedef struct hfx_backend {
    const dlg_host *h; /* the storage's host, for its own lines */
    bool size_fails, close_fails, open_fails, write_fails, says_why, short_reads, overrun;
    int reads; /* read() calls so far */
    int64_t odd_rc; /* what a test's own failing read returns */
    int odd_mode;   /* and what it says (the test's own values) */
    dlg_file *close_first;
    dlg_io_done done[4];
    int ndone;
    const dlg_host *other;
    const char *meanwhile;
    pthread_barrier_t *said_wait;
} hfx_backend;

typedef struct hfx_fixture {
    dlg_services svc;
    dlg_storage_ops ops; /* hfx_ops, with the setup's caps */
    dlg_plugin_desc desc;
    dlg_instance_spec spec;
    dlg_host_impl *wl; /* the workload's host */
    const dlg_host *h;
    hfx_backend inst;
    dlg_file *f;
} hfx_fixture;

/* The backend's table: zero-copy and asynchronous I/O. */
extern const dlg_storage_ops hfx_ops;

/* cmocka setup/teardown: *state becomes an hfx_fixture.  The contexts are
 * "st.ini:8: [job checksum] checksum" (the workload's host) and
 * "st.ini:8: [job checksum] [storage fake] fake" (the backend's). */
int hfx_setup(void **state);
/* The same backend without zero-copy or asynchronous I/O: the host lends
 * copies from its reads. */
int hfx_setup_copying(void **state);
int hfx_teardown(void **state);

#endif
