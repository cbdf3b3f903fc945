/* The influx spool tests' sink (spool_sink.h). */
#include "spool_sink.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

void spool_sink_open(spool_sink *s, const char *name, const char *spool_dir, bool batch1)
{
    char sd[4200];
    snprintf(sd, sizeof sd, "spool_dir=%s", spool_dir);
    const char *ov[] = {"url=http://127.0.0.1:1/write?db=x", sd, "retries=0", "timeout=1s",
                        batch1 ? "batch=1" : NULL, NULL};
    mock_host_init(&s->m);
    s->st = NULL;
    assert_int_equal(st_open_named(&s->m, "influx.so", "influx", name, ov, &s->ops, &s->st), 0);
}

void spool_write_one(const dlg_sink_ops *ops, void *st, int64_t t)
{
    dlg_field f = {"v", DLG_FIELD_INT, {.i = t}};
    dlg_point p = {"m", NULL, 0, &f, 1, t};
    ops->write(st, &p, 1);
}
