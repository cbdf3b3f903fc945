/* The file names of the InfluxDB sink's spool: <spool_dir>/<NAME>.lp and
 * <NAME>.rejected.lp, spool_dir made absolute and NAME encoded so that no
 * two sinks share a file; and what is said of them at open. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "influx.h"

/* A sink name as a file name, readable and one-to-one (two sinks never
 * share a spool): '/', ' ', '%' and control bytes are percent-encoded.
 * legacy: as dlgauge before 2026-12 did, '/' and ' ' becoming '_' (so "a b",
 * "a/b" and "a_b" shared a_b.lp). */
static int add_name(dlg_sbuf *b, const char *name, bool legacy)
{
    int rc = 0;
    for (const unsigned char *c = (const unsigned char *)name; *c && rc == 0; c++) {
        bool odd = *c == '/' || *c == ' ';
        if (legacy)
            rc = sbuf_addc(b, odd ? '_' : (char)*c);
        else if (odd || *c == '%' || *c < 0x20 || *c == 0x7f)
            rc = sbuf_printf(b, "%%%02X", *c);
        else
            rc = sbuf_addc(b, (char)*c);
    }
    return rc;
}

/* <spool_dir>/<name><suffix>, the name encoded by add_name. */
static char *spool_file(const char *dir, const char *name, const char *suffix, bool legacy)
{
    dlg_sbuf b = {0};
    if (sbuf_printf(&b, "%s/", dir) != 0 || add_name(&b, name, legacy) != 0 || sbuf_adds(&b, suffix) != 0) {
        sbuf_free(&b);
        return NULL;
    }
    return b.p;
}

/* spool_dir made absolute (relative to the current directory now): the
 * messages that send the user to `dlgauge flush` name where the spool is,
 * and a workload that changes directory does not move it. */
static char *absolute_dir(const char *dir)
{
    char cwd[4096];
    dlg_sbuf b = {0};
    if (dir[0] != '/' && !getcwd(cwd, sizeof cwd))
        return strdup(dir); /* relative it stays */
    int rc = dir[0] == '/' ? sbuf_adds(&b, dir) : sbuf_printf(&b, "%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "", dir);
    while (rc == 0 && b.len > 1 && b.p[b.len - 1] == '/')
        b.p[--b.len] = '\0';
    if (rc != 0)
        sbuf_free(&b);
    return b.p;
}

/* Says where the spool was looked for when it holds nothing: `dlgauge
 * flush` shows it (a flush run from another directory than the run's
 * looks at another spool: that is the one thing a user must see). */
static void note_empty(const influx_sink *s, const char *dir)
{
    struct stat st;
    if (stat(s->spool_path, &st) == 0 && st.st_size > 0)
        return;
    s->h->log(s->h, DLG_LOG_INFO, "nothing spooled in %s%s%s%s", s->spool_path,
              dir[0] == '/' ? "" : " (spool_dir = ", dir[0] == '/' ? "" : dir,
              dir[0] == '/' ? "" : " is taken from the directory dlgauge runs in)");
}

int influx_spool_paths(influx_sink *s, const char *dir)
{
    char *legacy = NULL;
    if (!(s->spool_dir = absolute_dir(dir)) ||
        !(s->spool_path = spool_file(s->spool_dir, s->name, ".lp", false)) ||
        !(s->rejected_path = spool_file(s->spool_dir, s->name, ".rejected.lp", false)) ||
        !(legacy = spool_file(s->spool_dir, s->name, ".lp", true)))
        return s->h->error(s->h, DLG_ENOMEM, "out of memory");
    note_empty(s, dir);
    influx_spool_legacy_note(s, legacy);
    free(legacy);
    return 0;
}
