#define _GNU_SOURCE /* dlinfo, dl_iterate_phdr, REG_RIP */
#include "load_guard.h"
#include "load_watch.h"
#include "signals.h"
#include "thread_sigstack.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

/* What the load is doing (dlg_load_phase), read by the fault handler. */
static volatile sig_atomic_t load_phase;

void dlg_load_phase(int phase) { load_phase = (sig_atomic_t)phase; }

/* The load guard.  A plugin's entry, and the tables it returns, are run
 * and read with the crash guard's signals (signals.h: SIGSEGV, SIGBUS,
 * SIGFPE, SIGILL, SIGABRT) caught: a fault there jumps back to the
 * loader, which names the file ("crashed (signal 11, SIGSEGV) in its
 * dlgauge_plugin_entry; not loaded") and goes on with the other files,
 * as for any file that fails to load.  Every *.so of a
 * plugin folder is loaded, so one broken file, unrelated to the run,
 * would otherwise end every run with a bare SIGSEGV.
 *
 * Going on is safe where the crash guard of a cell (signals.h), which
 * ends the process, could not be: the fault comes after dlopen returned
 * (the dynamic loader's lock is free), on the loading thread, before any
 * cell runs or any thread of ours calls into the file, whose code is
 * never called again (not even its destructors: it stays mapped, not
 * dlclose'd).  What ran when it
 * faulted is either our own reading of its tables, which holds no lock,
 * or its entry's own code, which holds no lock of ours or of libc.  The
 * one case that may leave the process unsound, the entry faulting inside
 * another library (libc's malloc or stdio, whose lock would then stay
 * held), is told apart by the faulting instruction's address: outside the
 * plugin's own code during its entry, the handler writes one line naming
 * the file and exits 2 instead of going on.  So does abort() (a failed
 * assert) in the entry: its pc is libc's, and libc's abort may hold a
 * lock of its own, so a longjmp out of it is never safe.
 *
 * dlopen itself, the file's constructors and those of the libraries it
 * needs, runs under the same handler, which never goes on from there (a
 * longjmp out of dlopen would leave the dynamic loader's lock held): it
 * writes one line naming the file and exits 2, where the process would
 * otherwise die of a bare "Segmentation fault" in every command, list and
 * help included.  A constructor that sets a handler of its own for one
 * of these signals (a language runtime's) keeps it: the guard puts back
 * only a handler that is still its own.
 *
 * A fault on another thread while a load is guarded gets the handler
 * found before (the crash guard, or the default death). */
#define LOAD_NSIG DLG_CRASH_NSIG /* the crash guard's signals (signals.h) */

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER; /* one guarded load at a time */
static struct {
    sigjmp_buf jmp;
    pthread_t thread;              /* the loading thread */
    volatile sig_atomic_t armed;   /* 0 after disarm: a handler a constructor chained to ours calls it late */
    volatile sig_atomic_t sig;     /* the fault caught, or 0 */
    uintptr_t code_lo, code_hi;    /* the plugin's executable segments, or 0, 0 when unknown */
    struct sigaction old[LOAD_NSIG];
    char fatal[PATH_MAX + 32];     /* "dlgauge: PATH: ", of a fault that cannot be gone on from */
    size_t fatal_len;
} lg;
static const char fatal_tail[] = ") in its " DLG_PLUGIN_ENTRY_SYMBOL ", inside another library's code (one it called, "
                                 "which may hold a lock of the process): dlgauge cannot go on safely; move the file "
                                 "out of the plugin folder\n";
static const char abort_entry[] = "called abort() in its " DLG_PLUGIN_ENTRY_SYMBOL " (a failed assert?): dlgauge "
                                  "cannot go on safely; move the file out of the plugin folder\n";
static const char dlopen_tail[] = ") while being loaded (a constructor in it or in a library it needs); move the "
                                  "file out of the plugin folder\n";
static const char abort_dlopen[] = "called abort() while being loaded (a constructor in it or in a library it "
                                   "needs; a failed assert?); move the file out of the plugin folder\n";

/* Writes "dlgauge: PATH: " and the texts a, b and c (NULL: none) to
 * stderr, then ends the process with exit 2: what the load guard does
 * where it cannot go on. */
static void fatal_exit(const char *a, const char *b, const char *c)
{
    ssize_t n = write(STDERR_FILENO, lg.fatal, lg.fatal_len);
    const char *part[] = {a, b, c};
    for (int i = 0; i < 3; i++)
        if (part[i])
            n = write(STDERR_FILENO, part[i], strlen(part[i]));
    (void)n; /* nothing more to do about stderr from here */
    _exit(2);
}

/* The faulting instruction's address in uc, or 0 where unknown. */
static uintptr_t fault_pc(const void *uc)
{
#if defined(__x86_64__)
    return (uintptr_t)((const ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uintptr_t)((const ucontext_t *)uc)->uc_mcontext.pc;
#else
    (void)uc;
    return 0; /* unknown: never taken for the plugin's own code */
#endif
}

static void on_load_fault(int sig, siginfo_t *si, void *uc)
{
    (void)si;
    int i = 0;
    while (i < LOAD_NSIG - 1 && dlg_crash_signal(i) != sig)
        i++;
    if (!lg.armed || !pthread_equal(pthread_self(), lg.thread)) {
        /* not the load's: what was there before takes it (a fault
         * re-runs when the handler returns) */
        sigaction(sig, &lg.old[i], NULL);
        if (si->si_code <= 0) /* sent, not a fault: send it again */
            raise(sig);
        return;
    }
    lg.sig = sig;
    uintptr_t pc = fault_pc(uc);
    if (sig == SIGABRT) /* only dlopen and the entry's code call anything */
        fatal_exit(load_phase == DLG_LOAD_DLOPEN ? abort_dlopen : abort_entry, NULL, NULL);
    if (load_phase == DLG_LOAD_DLOPEN)
        fatal_exit("crashed (", dlg_crash_signal_name(i), dlopen_tail);
    if (load_phase == DLG_LOAD_ENTRY && !(pc && pc >= lg.code_lo && pc < lg.code_hi))
        fatal_exit("crashed (", dlg_crash_signal_name(i), fatal_tail);
    siglongjmp(lg.jmp, 1);
}

/* The executable segments of the object loaded at lm's base. */
static int find_code(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    const struct link_map *lm = arg;
    if (info->dlpi_addr != lm->l_addr || !info->dlpi_name || strcmp(info->dlpi_name, lm->l_name) != 0)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (!lg.code_hi || lo < lg.code_lo)
            lg.code_lo = lo;
        if (hi > lg.code_hi)
            lg.code_hi = hi;
    }
    return 1;
}

/* Arms the load guard for the file at path, whose code (dl; NULL: not
 * loaded yet) is what may fault and be gone on from. */
static void load_guard_arm(void *dl, const char *path)
{
    lg.thread = pthread_self();
    lg.armed = 1;
    lg.sig = 0;
    lg.code_lo = lg.code_hi = 0;
    struct link_map *lm = NULL;
    if (dl && dlinfo(dl, RTLD_DI_LINKMAP, &lm) == 0 && lm)
        dl_iterate_phdr(find_code, lm);
    int n = snprintf(lg.fatal, sizeof lg.fatal, "dlgauge: %s: ", path);
    lg.fatal_len = n < 0 ? 0 : (size_t)n < sizeof lg.fatal ? (size_t)n : sizeof lg.fatal - 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_load_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK; /* the stack: an entry that recurses without end */
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < LOAD_NSIG; i++)
        sigaction(dlg_crash_signal(i), &sa, &lg.old[i]);
}

static void load_guard_disarm(void)
{
    lg.armed = 0;
    for (int i = 0; i < LOAD_NSIG; i++) {
        struct sigaction now;
        /* a constructor's own handler stays; one put back already stays */
        if (sigaction(dlg_crash_signal(i), NULL, &now) == 0 && (now.sa_flags & SA_SIGINFO) &&
            now.sa_sigaction == on_load_fault)
            sigaction(dlg_crash_signal(i), &lg.old[i], NULL);
    }
}

/* Why a guarded load faulted, by what it was reading. */
static void crash_why(int sig, int phase, char *why, size_t whylen)
{
    const char *name = "a fault";
    for (int i = 0; i < LOAD_NSIG; i++)
        if (dlg_crash_signal(i) == sig)
            name = dlg_crash_signal_name(i);
    int n = snprintf(why, whylen, "crashed (signal %d, %s) ", sig, name);
    size_t at = n < 0 ? 0 : (size_t)n < whylen ? (size_t)n : whylen;
    if (phase == DLG_LOAD_ENTRY)
        snprintf(why + at, whylen - at, "in its %s; not loaded", DLG_PLUGIN_ENTRY_SYMBOL);
    else if (phase == DLG_LOAD_INFO)
        snprintf(why + at, whylen - at, "reading the plugin info its %s returned (a bad pointer); not loaded",
                 DLG_PLUGIN_ENTRY_SYMBOL);
    else
        snprintf(why + at, whylen - at, "reading descriptor #%d (a bad pointer in its tables); not loaded",
                 phase - DLG_LOAD_DESC);
}

void *dlg_dlopen_guarded(const char *path, int64_t timeout_ns)
{
    pthread_mutex_lock(&load_lock);
    dlg_load_watch watch;
    dlg_load_watch_start(&watch, path, "its constructors (or those of a library it needs)", timeout_ns);
    void *stack = dlg_sigstack_on();
    load_phase = DLG_LOAD_DLOPEN;
    load_guard_arm(NULL, path);
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    load_guard_disarm();
    dlg_sigstack_off(stack);
    dlg_load_watch_stop(&watch);
    pthread_mutex_unlock(&load_lock);
    return dl;
}

const dlg_plugin_info *dlg_load_guarded(void *dl, const char *path, dlg_info_reader read, int64_t timeout_ns,
                                        char *why, size_t whylen, bool *crashed)
{
    pthread_mutex_lock(&load_lock);
    dlg_load_watch watch;
    dlg_load_watch_start(&watch, path, "its " DLG_PLUGIN_ENTRY_SYMBOL, timeout_ns);
    void *stack = dlg_sigstack_on();
    load_guard_arm(dl, path);
    const dlg_plugin_info *volatile info = NULL;
    volatile bool faulted = false;
    if (sigsetjmp(lg.jmp, 1) == 0) {
        info = read(dl, why, whylen);
    } else {
        faulted = true;
    }
    load_guard_disarm();
    dlg_sigstack_off(stack);
    dlg_load_watch_stop(&watch);
    if (faulted) {
        info = NULL;
        crash_why(lg.sig, load_phase, why, whylen);
    }
    *crashed = faulted;
    pthread_mutex_unlock(&load_lock);
    return info;
}
