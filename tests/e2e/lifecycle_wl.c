/* Workload for lifecycle.sh: `forker` starts a process that outlives its
 * setup (sleeping 30 s with every fd of the cell open, the result pipe
 * too) and writes its pid to the file named by `pidfile`.  `crashy` dies
 * of SIGSEGV after its measuring: in the first repetition's teardown
 * (crash = teardown), or in the second repetition's setup (crash = setup1). */
#include <dlgauge/plugin.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static const dlg_option forker_options[] = {
    {"pidfile", DLG_OPT_STRING, NULL, NULL, NULL, NULL, "where the left-behind process writes its pid",
     DLG_OPT_REQUIRED},
    {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
};

/* The setup returns once the process wrote its pid (a byte on a pipe
 * says so): a cell that ended first, on a loaded machine, killed it
 * before it wrote, and lifecycle.sh could not tell it had been started. */
static int forker_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *j, void **st)
{
    (void)j;
    int ready[2];
    if (pipe(ready) != 0)
        return h->error(h, DLG_EIO, "pipe failed");
    pid_t pid = fork();
    if (pid < 0) {
        close(ready[0]), close(ready[1]);
        return h->error(h, DLG_EIO, "fork failed");
    }
    if (pid == 0) {
        close(ready[0]);
        FILE *f = fopen(o[0].text, "w");
        if (f) {
            fprintf(f, "%d\n", (int)getpid());
            fclose(f);
        }
        (void)!write(ready[1], "", 1);
        close(ready[1]);
        sleep(30);
        _exit(0);
    }
    close(ready[1]);
    char c;
    ssize_t n;
    while ((n = read(ready[0], &c, 1)) < 0 && errno == EINTR)
        ;
    close(ready[0]);
    *st = NULL;
    return n == 1 ? 0 : h->error(h, DLG_EIO, "the process ended before it wrote its pid");
}

static int forker_step(void *st, dlg_step *out)
{
    (void)st;
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
    out->items = 1;
    return 0;
}

static void forker_teardown(void *st) { (void)st; }

static const dlg_workload_ops forker_ops = {.version = 1, .unit = "steps", .setup = forker_setup, .step = forker_step,
                                          .teardown = forker_teardown};
static const dlg_plugin_desc forker_desc = {sizeof(dlg_plugin_desc), DLG_KIND_WORKLOAD, "forker", "1.0",
                                            "leaves a process behind", forker_options, NULL, &forker_ops};
/* chatty: prints to its stdout, with the thread count its cell exported */
static int chatty_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *job, void **st)
{
    (void)h;
    (void)o;
    (void)job;
    const char *omp = getenv("OMP_NUM_THREADS");
    printf("CELL-STDOUT OMP_NUM_THREADS=%s\n", omp ? omp : "unset");
    fflush(stdout);
    *st = NULL;
    return 0;
}

static const dlg_workload_ops chatty_ops = {.version = 1, .unit = "steps", .setup = chatty_setup, .step = forker_step,
                                          .teardown = forker_teardown};
static const dlg_plugin_desc chatty_desc = {sizeof(dlg_plugin_desc), DLG_KIND_WORKLOAD, "chatty", "1.0",
                                            "prints to stdout", NULL, NULL, &chatty_ops};
static const dlg_option crashy_options[] = {
    {"crash", DLG_OPT_STRING, "teardown", NULL, NULL, NULL, "teardown | setup1", 0},
    {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
};

/* a real SIGSEGV with the default action, even where a sanitizer would
 * install its own handler */
static void segv(void)
{
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
}

static int crashy_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *job, void **st)
{
    (void)h;
    if (strcmp(o[0].text, "setup1") == 0 && job->repetition == 1)
        segv();
    *st = strcmp(o[0].text, "teardown") == 0 ? (void *)o : NULL;
    return 0;
}

static void crashy_teardown(void *st)
{
    if (st)
        segv();
}

static const dlg_workload_ops crashy_ops = {.version = 1, .unit = "steps", .setup = crashy_setup, .step = forker_step,
                                          .teardown = crashy_teardown};
static const dlg_plugin_desc crashy_desc = {sizeof(dlg_plugin_desc), DLG_KIND_WORKLOAD, "crashy", "1.0",
                                            "crashes after measuring", crashy_options, NULL, &crashy_ops};
DLG_PLUGIN("lifecycle", &forker_desc, &chatty_desc, &crashy_desc)
