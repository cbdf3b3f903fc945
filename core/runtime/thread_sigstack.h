/* An alternate signal stack for the calling thread, so that a stack
 * overflow in it still lets the crash guard's handler write its line
 * (signals.h: the stack is per thread, and a handler cannot run on the
 * overflowed one).  Header-only: the data loader (dlgauge_data, linked
 * into plugins without libdlgauge) and the ticker (also built alone into
 * tests/cuda) use it as the runtime does. */
#ifndef DLG_THREAD_SIGSTACK_H
#define DLG_THREAD_SIGSTACK_H

#include <signal.h>
#include <stdlib.h>

#define DLG_SIGSTACK_BYTES (64 * 1024)

/* Gives the calling thread a stack of ours: it, for dlg_sigstack_off, or
 * NULL when one is set already (a sanitizer's: it serves) or none could
 * be had (without memory only the line of an overflow is lost). */
static inline void *dlg_sigstack_on(void)
{
    stack_t old, st = {.ss_size = DLG_SIGSTACK_BYTES};
    if (sigaltstack(NULL, &old) != 0 || !(old.ss_flags & SS_DISABLE))
        return NULL;
    if ((st.ss_sp = malloc(DLG_SIGSTACK_BYTES)) && sigaltstack(&st, NULL) == 0)
        return st.ss_sp;
    free(st.ss_sp);
    return NULL;
}

/* Takes back a stack dlg_sigstack_on gave this thread (NULL: nothing). */
static inline void dlg_sigstack_off(void *sp)
{
    if (!sp)
        return;
    stack_t off = {.ss_flags = SS_DISABLE};
    sigaltstack(&off, NULL);
    free(sp);
}

#endif
