/* dlgauge alternate signal stacks — for the threads a plugin starts.
 *
 * A cell run inside dlgauge's process (isolation = none) that dies of
 * SIGSEGV, SIGBUS, SIGFPE or SIGILL gets one line on stderr naming the
 * cell (the crash guard).  After a stack overflow that line's handler
 * can only run on the thread's alternate signal stack: the overflowed one
 * is full.  Such a stack is per thread and a new thread starts without
 * one; dlgauge gives one to the thread that calls your ops and to its own
 * threads, not to those you start.  So a thread of yours (a worker pool)
 * calls dlg_sigstack_on() first and, before it returns,
 * dlg_sigstack_off() with what that gave:
 *
 *     static void *worker(void *arg)
 *     {
 *         void *ss = dlg_sigstack_on();
 *         work(arg);
 *         dlg_sigstack_off(ss);
 *         return NULL;
 *     }
 *
 * It costs DLG_SIGSTACK_BYTES of memory per thread, at its start (not in
 * a timed loop), and is harmless without a guard (isolation = process,
 * where the parent names every crash).  A thread must also leave SIGSEGV,
 * SIGBUS, SIGFPE and SIGILL unblocked: blocked, the kernel kills at the
 * first fault and no handler runs.
 *
 * Header-only, no ABI: C99 and later, and C++.  sigaltstack is POSIX, not
 * ISO C: with a strict -std=c11 (CMake's C_EXTENSIONS OFF) define
 * _GNU_SOURCE or _DEFAULT_SOURCE before the first #include.
 */
#ifndef DLGAUGE_SIGSTACK_H
#define DLGAUGE_SIGSTACK_H

#include <signal.h>
#include <stdlib.h>

/* stack_t, sigaltstack and SS_DISABLE are declared only with a POSIX
 * feature macro (implied by gcc's default -std=gnu11 and by C++). */
#if !defined(SS_DISABLE)
#error "dlgauge/sigstack.h needs sigaltstack: #define _GNU_SOURCE (or _DEFAULT_SOURCE) before the first #include, or build with -std=gnu11"
#else /* the rest would only add errors after that one */

/* Enough for the guard's handler, which only calls write(2). */
#define DLG_SIGSTACK_BYTES (64 * 1024)

/* Gives the calling thread an alternate signal stack; returns it, for
 * dlg_sigstack_off, or NULL when the thread has one already (a
 * sanitizer's: it serves) or none could be had (out of memory: only the
 * line of an overflow is lost). */
static inline void *dlg_sigstack_on(void)
{
    stack_t old, st;
    if (sigaltstack(NULL, &old) != 0 || !(old.ss_flags & SS_DISABLE))
        return NULL;
    st.ss_flags = 0;
    st.ss_size = DLG_SIGSTACK_BYTES;
    st.ss_sp = malloc(DLG_SIGSTACK_BYTES);
    if (st.ss_sp && sigaltstack(&st, NULL) == 0)
        return st.ss_sp;
    free(st.ss_sp);
    return NULL;
}

/* Takes back a stack dlg_sigstack_on gave this thread (NULL: nothing);
 * call it on the same thread, before the thread ends. */
static inline void dlg_sigstack_off(void *ss)
{
    stack_t off;
    if (!ss)
        return;
    off.ss_sp = NULL;
    off.ss_flags = SS_DISABLE;
    off.ss_size = 0;
    sigaltstack(&off, NULL);
    free(ss);
}

#endif /* SS_DISABLE */
#endif
