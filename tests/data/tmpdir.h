/* Test helper: a fresh folder under /tmp, and its removal. */
#ifndef DLG_TEST_TMPDIR_H
#define DLG_TEST_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* buf (>= 32 bytes) gets /tmp/dlg_<tag>_XXXXXX, created. */
static inline char *tmpdir_make(char *buf, const char *tag)
{
    snprintf(buf, 32, "/tmp/dlg_%.8s_XXXXXX", tag);
    assert_non_null(mkdtemp(buf));
    return buf;
}

static inline void tmpdir_rmrf(const char *p)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", p);
    assert_int_equal(system(cmd), 0);
}

#endif
