/* SIGINT/SIGTERM/SIGHUP: the first asks the run to stop after the current
 * step (results so far are written, marked partial); a second one kills.
 * The run ignores SIGPIPE. */
#ifndef DLG_SIGNALS_H
#define DLG_SIGNALS_H

#include <signal.h>

void dlg_signals_install(void);
/* In a cell's child: every signal just asks to stop (the parent forwards
 * what it got; the child has a process group of its own).  Also releases
 * the signals held since the fork. */
void dlg_signals_install_child(void);
/* Holds SIGINT/SIGTERM/SIGHUP pending (the mask survives fork and exec), so that
 * one sent to a cell before it installed its handlers neither kills it nor
 * is lost; release restores the old mask. */
void dlg_signals_hold(sigset_t *old);
void dlg_signals_release(const sigset_t *old);
/* 0, or the number of the signal that asked us to stop. */
int dlg_stop_signal(void);

#endif
