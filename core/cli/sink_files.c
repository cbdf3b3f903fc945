/* Where a run's sinks wrote, said at its end: a relative `path` is taken
 * from the directory dlgauge runs in (as fio and most tools take theirs),
 * which a user who runs a suite from elsewhere may not expect. */
#include "cli.h"

#include "plan.h"
#include "sinkset.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Whether path names a file the run wrote: not a directory (the influx
 * sink's spool_dir, which holds only what could not be sent), nor a file a
 * failing sink never made, nor one left unchanged since the run began
 * (the rows went to another file). */
static bool written_file(const char *path, struct timespec since)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return false;
    return st.st_mtim.tv_sec > since.tv_sec ||
           (st.st_mtim.tv_sec == since.tv_sec && st.st_mtim.tv_nsec >= since.tv_nsec);
}

/* Prints path, made absolute, after "dlgauge: results in " the first
 * time (said = 0); returns how many files have been printed so far. */
static size_t say_file(const char *path, const char *cwd, size_t said, FILE *out)
{
    fputs(said++ ? ", " : "dlgauge: results in ", out);
    if (path[0] == '/') {
        fputs(path, out);
        return said;
    }
    const char *p = strncmp(path, "./", 2) == 0 ? path + 2 : path;
    fprintf(out, "%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "", p);
    return said;
}

#define GONE " (gone: deleted or moved away during the run)"

/* Whether the file an open sink made at path is gone: deleted or moved
 * away after its last write (a write before follows the path, the sinks'
 * sink_follow_path).  Left out silently, its rows would seem to be there. */
static bool gone_file(const char *path, bool open)
{
    struct stat st;
    return open && stat(path, &st) != 0 && errno == ENOENT;
}

/* Each relative file that spec wrote (its options flagged
 * DLG_OPT_PATH_OUT): an absolute one is where the user said; one gone
 * is said, absolute or not. */
static size_t say_options(const dlg_instance_spec *spec, bool open, const char *cwd, struct timespec since,
                          size_t said, FILE *out)
{
    for (size_t k = 0; spec->desc->options && spec->desc->options[k].name; k++) {
        const char *path = dlg_spec_out_path(spec, k);
        if (path && gone_file(path, open)) {
            said = say_file(path, cwd, said, out);
            fputs(GONE, out);
        } else if (path && path[0] != '/' && written_file(path, since)) {
            said = say_file(path, cwd, said, out);
        }
    }
    return said;
}

void dlg_say_sink_files_but(const dlg_plan *plan, const dlg_sinkset *ss, const bool *skip,
                            struct timespec since, FILE *out)
{
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        return; /* nothing better to say than the paths as written */
    size_t said = 0;
    for (size_t i = 0; i < plan->nsinks; i++) {
        if (skip && skip[i])
            continue;
        bool open = ss && i < ss->n && ss->sinks[i].state;
        said = say_options(&plan->sinks[i], open, cwd, since, said, out);
        char *const *named;
        size_t n = ss ? dlg_sinkset_named(ss, i, &named) : 0;
        for (size_t k = 0; k < n; k++) { /* names the user never wrote: absolute ones too */
            if (gone_file(named[k], open)) {
                said = say_file(named[k], cwd, said, out);
                fputs(GONE, out);
            } else if (written_file(named[k], since)) {
                said = say_file(named[k], cwd, said, out);
            }
        }
    }
    if (said)
        fputc('\n', out);
}
