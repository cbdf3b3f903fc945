/* The sink of the influx spool tests (test_influx_spool.c,
 * test_influx_spool_owner.c): influx.so under a name of the test's, its
 * InfluxDB (127.0.0.1 port 1) refusing every connection, so that what it
 * is sent stays spooled. */
#ifndef DLG_SPOOL_SINK_H
#define DLG_SPOOL_SINK_H

#include <stdbool.h>
#include <stdint.h>

#include "sink_test_util.h"

typedef struct spool_sink {
    mock_host m; /* what the sink said */
    const dlg_sink_ops *ops;
    void *st;
} spool_sink;

/* Opens sink `name` with spool_dir as given (relative: to the current
 * directory), retries=0, timeout=1s and, when batch1, batch=1; fails the
 * test unless it opens.  s must stay in place until s->ops->close. */
void spool_sink_open(spool_sink *s, const char *name, const char *spool_dir, bool batch1);

/* Writes the point "m v=<t>i <t>". */
void spool_write_one(const dlg_sink_ops *ops, void *st, int64_t t);

#endif
