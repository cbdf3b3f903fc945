#define _GNU_SOURCE
#include "sink_test_util.h"

#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

char *st_tempdir(void)
{
    const char *base = getenv("TMPDIR");
    char *tmpl = NULL;
    if (asprintf(&tmpl, "%s/dlg-sinktest-XXXXXX", base && *base ? base : "/tmp") < 0)
        return NULL;
    if (!mkdtemp(tmpl)) {
        free(tmpl);
        return NULL;
    }
    return tmpl;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(path);
}

void st_rmtree(const char *dir)
{
    if (dir)
        nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

char *st_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = (cap + 4096) * 2;
            char *p = realloc(buf, cap);
            if (!p) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = p;
        }
        size_t r = fread(buf + n, 1, 4096, f);
        n += r;
        if (r == 0)
            break;
    }
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

size_t st_count_lines(const char *text)
{
    size_t n = 0;
    for (; text && *text; text++)
        n += *text == '\n';
    return n;
}

char *st_join(const char *dir, const char *name)
{
    char *p = NULL;
    return asprintf(&p, "%s/%s", dir, name) < 0 ? NULL : p;
}

void st_fsize_limit(long long bytes)
{
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl;
    getrlimit(RLIMIT_FSIZE, &rl);
    rl.rlim_cur = (rlim_t)bytes;
    setrlimit(RLIMIT_FSIZE, &rl);
}

void st_fsize_unlimit(void)
{
    struct rlimit rl;
    getrlimit(RLIMIT_FSIZE, &rl);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_FSIZE, &rl);
    signal(SIGXFSZ, SIG_DFL);
}

double st_mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int st_open_sink(mock_host *m, const char *so_name, const char *name, const char *const *overrides,
                 const dlg_sink_ops **ops, void **state)
{
    return st_open_named(m, so_name, name, name, overrides, ops, state);
}

int st_open_named(mock_host *m, const char *so_name, const char *type, const char *name,
                  const char *const *overrides, const dlg_sink_ops **ops, void **state)
{
    const dlg_plugin_desc *d = mock_load_plugin(so_name, DLG_KIND_SINK, type);
    if (!d)
        return -1;
    size_t n = 0;
    while (d->options[n].name)
        n++;
    dlg_value vals[64];
    if (n > 64 || mock_options(d->options, vals, overrides) != 0)
        return -1;
    *ops = d->ops;
    return (*ops)->open(&m->host, vals, name, state);
}

int st_fake_start(st_fake *fk, const char *base, const char *name, const char *const *script_steps)
{
    const char *src = getenv("DLG_SOURCE_DIR");
    char *py = NULL;
    fk->pid = -1;
    fk->port = 0;
    fk->dir = st_join(base, name);
    if (!fk->dir || asprintf(&py, "%s/tests/sinks/fake_influx.py", src ? src : ".") < 0)
        return -1;
    mkdir(fk->dir, 0777);
    const char *argv[16] = {"python3", py, fk->dir};
    for (int i = 0; script_steps[i] && i < 12; i++)
        argv[3 + i] = script_steps[i];
    fk->pid = fork();
    if (fk->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM); /* never outlives a failed test */
        execvp("python3", (char *const *)argv);
        _exit(127);
    }
    free(py);
    char *port_file = st_join(fk->dir, "port");
    for (int i = 0; fk->pid > 0 && i < 100 && access(port_file, F_OK) != 0; i++)
        usleep(50000);
    char *text = fk->pid > 0 ? st_slurp(port_file, NULL) : NULL;
    fk->port = text ? atoi(text) : 0;
    free(text);
    free(port_file);
    return fk->port > 0 ? 0 : -1;
}

void st_fake_stop(st_fake *fk)
{
    if (fk->pid > 0) {
        kill(fk->pid, SIGTERM);
        waitpid(fk->pid, NULL, 0);
    }
    free(fk->dir);
    fk->dir = NULL;
}
