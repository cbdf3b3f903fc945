#define _GNU_SOURCE
#include "cell_exec.h"

#include "affinity.h"
#include "metrics.h"
#include "proc_file.h"
#include "proc_limits.h"
#include "signals.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* After SIGTERM a cell may write its partial result; a hung one gets
 * SIGKILL after a tenth of its timeout, between 1 s and 5 s. */
static uint64_t kill_grace_ns(uint64_t timeout_ns)
{
    uint64_t g = timeout_ns / 10;
    return g < 1000000000ull ? 1000000000ull : g > 5000000000ull ? 5000000000ull : g;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The cell's environment: the parent's, with the thread counts of its
 * vCPUs (cpus = 0: all this process may use, as a taskset or cpuset left
 * them, never an inherited OMP_NUM_THREADS sized for another machine).
 * Built before fork, since setenv allocates and a forked child of a
 * threaded parent must not.  NULL when out of memory (free the array
 * only: its strings are environ's and vars'). */
static char **cell_env(int threads, char vars[3][48])
{
    if (threads <= 0)
        threads = dlg_cpus_available();
    static const char *const names[3] = {"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"};
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = malloc((n + 4) * sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool replaced = false;
        for (int v = 0; v < 3 && threads > 0; v++)
            replaced |= strncmp(environ[i], names[v], strlen(names[v])) == 0 && environ[i][strlen(names[v])] == '=';
        if (!replaced)
            env[k++] = environ[i];
    }
    for (int v = 0; v < 3 && threads > 0; v++) {
        snprintf(vars[v], 48, "%s=%d", names[v], threads);
        env[k++] = vars[v];
    }
    env[k] = NULL;
    return env;
}

/* In the child between fork and exec: only async-signal-safe work. */
static void child_exec(const dlg_cell_spawn *sp, int wfd, pid_t parent, char **env)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* a killed parent takes the cell along */
    if (getppid() != parent)
        _exit(127);
    setpgid(0, 0); /* a group of its own: whatever it leaves behind is killed with it */
    if (wfd != DLG_CELL_FD) {
        if (dup2(wfd, DLG_CELL_FD) < 0)
            _exit(127);
        close(wfd);
    } else {
        fcntl(wfd, F_SETFD, 0);
    }
    /* the run's stdout is its summary lines: whatever a cell prints goes
     * to stderr with the logs */
    dup2(2, 1);
    /* a cell outside its cgroup would run unlimited under a row that
     * claims the limits: it does not run at all */
    if (sp->cg && dlg_cgroup_enter(sp->cg) != 0) {
        static const char msg[] = "dlgauge: the cell cannot join its cgroup (cgroup.procs): its memory and "
                                  "cpu_quota limits would not hold, so it does not run\n";
        ssize_t ignored = write(2, msg, sizeof msg - 1);
        (void)ignored;
        _exit(DLG_CELL_EXIT_CGROUP);
    }
    execve(sp->exe, sp->argv, env);
    static const char msg[] = "dlgauge: cannot start the cell process\n";
    ssize_t ignored = write(2, msg, sizeof msg - 1);
    (void)ignored;
    _exit(127);
}

/* Reads whatever frames are ready; false at end of stream. */
static bool pump(int fd, dlg_progress_cb on_progress, void *ctx, dlg_cell_outcome *out)
{
    dlg_wire_point wp;
    int rc = dlg_wire_recv(fd, &wp);
    if (rc == -ENOMEM) {
        out->frame_lost = true; /* progress, or the result: said if the result is missing */
        return true;
    }
    if (rc <= 0)
        return false; /* EOF, or a frame torn by a dying child */
    if (strcmp(wp.point.measurement, DLG_MEASUREMENT_RESULT) == 0) {
        if (out->have_result)
            dlg_wire_point_free(&out->result);
        dlg_wire_point_move(&out->result, &wp);
        out->have_result = true;
        return true;
    }
    if (on_progress)
        on_progress(ctx, &wp.point);
    dlg_wire_point_free(&wp);
    return true;
}

/* The child has ended (it stays a zombie, so its pid and process group id
 * cannot be reused until it is reaped); a child that cannot be waited for
 * counts as ended rather than watched forever. */
static bool child_ended(pid_t pid)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
        return errno != EINTR;
    return si.si_pid == pid;
}

/* What the ended child wrote is in the pipe already; a process it left
 * behind may hold the pipe open forever, so read only what is ready. */
static void drain(int fd, dlg_progress_cb on_progress, void *ctx, dlg_cell_outcome *out)
{
    struct pollfd p = {fd, POLLIN, 0};
    for (int i = 0; i < 100000 && poll(&p, 1, 0) > 0 && pump(fd, on_progress, ctx, out); i++) {
    }
}

/* Forwards a stop request, enforces the timeout; one pass of the watch loop. */
static void watch(pid_t pid, const dlg_cell_spawn *sp, uint64_t start, bool *forwarded, uint64_t *kill_at,
                  dlg_cell_outcome *out)
{
    uint64_t now = mono_ns();
    if (!*forwarded && dlg_stop_signal()) {
        kill(pid, dlg_stop_signal()); /* the child writes what it measured */
        *forwarded = true;
    }
    if (sp->timeout_ns && !out->timed_out && now - start > sp->timeout_ns) {
        kill(pid, SIGTERM);
        out->timed_out = true;
        *kill_at = now + kill_grace_ns(sp->timeout_ns);
    }
    if (*kill_at && now > *kill_at) {
        kill(pid, SIGKILL);
        *kill_at = 0;
    }
}

static bool vmstat_oom_kills(const char *line, void *v) { return sscanf(line, "oom_kill %lld", (long long *)v) != 1; }

/* OOM kills anywhere on the machine so far (/proc/vmstat, Linux 4.13+), or
 * -1: a cell that dies of SIGKILL meanwhile was most likely one of them.
 * Read without allocating (proc_file.h): memory may be short just then. */
static int64_t oom_kills_total(void)
{
    long long v = -1;
    dlg_file_lines("/proc/vmstat", vmstat_oom_kills, &v);
    return v;
}

/* why the cell could not start, with the limit that most likely stopped it */
static void start_failed(const char *what, int e, char *err, size_t errlen)
{
    char lim[32];
    if (e == EMFILE) {
        dlg_rlimit_text(RLIMIT_NOFILE, lim, sizeof lim);
        snprintf(err, errlen, "%s: %s (the open-file limit, ulimit -n, is %s)", what, strerror(e), lim);
    } else if (e == EAGAIN) {
        dlg_rlimit_text(RLIMIT_NPROC, lim, sizeof lim);
        snprintf(err, errlen, "%s: %s (a limit on processes: ulimit -u is %s, or the cgroup's pids.max)", what,
                 strerror(e), lim);
    } else {
        snprintf(err, errlen, "%s: %s", what, strerror(e));
    }
}

static pid_t spawn(const dlg_cell_spawn *sp, int fds[2], char *err, size_t errlen)
{
    pid_t parent = getpid();
    char vars[3][48];
    char **env = cell_env(sp->threads, vars);
    if (!env) {
        snprintf(err, errlen, "out of memory for the cell's environment");
        return -1;
    }
    sigset_t old;
    dlg_signals_hold(&old); /* released by the child once its handlers are in */
    fflush(NULL); /* nothing buffered is written twice */
    pid_t pid = fork();
    if (pid == 0)
        child_exec(sp, fds[1], parent, env);
    int e = errno;
    dlg_signals_release(&old);
    free(env);
    if (pid < 0)
        start_failed("cannot fork the cell process", e, err, errlen);
    else
        setpgid(pid, pid); /* also here, so that no kill(-pid) can precede it */
    return pid;
}

int dlg_cell_exec(const dlg_cell_spawn *sp, dlg_progress_cb on_progress, void *ctx, dlg_cell_outcome *out,
                  char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->exit_code = -1;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        start_failed("cannot create a pipe for the cell", errno, err, errlen);
        return -1;
    }
    uint64_t start = mono_ns();
    int64_t ooms0 = oom_kills_total();
    pid_t pid = spawn(sp, fds, err, errlen);
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return -1;
    }
    bool open_pipe = true, forwarded = false;
    uint64_t kill_at = 0;
    while (!child_ended(pid)) {
        watch(pid, sp, start, &forwarded, &kill_at, out);
        struct pollfd p = {fds[0], POLLIN, 0};
        if (!open_pipe)
            usleep(20000);
        else if (poll(&p, 1, 100) > 0 && !pump(fds[0], on_progress, ctx, out))
            open_pipe = false;
    }
    kill(-pid, SIGKILL); /* processes the cell left behind in its group */
    if (open_pipe)
        drain(fds[0], on_progress, ctx, out);
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    out->wall_s = (double)(mono_ns() - start) / 1e9;
    int64_t ooms1 = oom_kills_total();
    out->system_oom_kills = ooms0 >= 0 && ooms1 >= ooms0 ? ooms1 - ooms0 : -1;
    if (WIFSIGNALED(status))
        out->term_signal = WTERMSIG(status);
    else if (WIFEXITED(status))
        out->exit_code = WEXITSTATUS(status);
    return 0;
}

void dlg_cell_outcome_free(dlg_cell_outcome *o)
{
    if (o->have_result)
        dlg_wire_point_free(&o->result);
    o->have_result = false;
}
