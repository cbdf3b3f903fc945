/* SIGINT/SIGTERM: the first asks the run to stop after the current step
 * (results so far are written, marked partial); a second one kills. */
#ifndef DLG_SIGNALS_H
#define DLG_SIGNALS_H

void dlg_signals_install(void);
/* In a cell's child: every signal just asks to stop (the parent forwards
 * what it got, and a terminal's Ctrl-C reaches both). */
void dlg_signals_install_child(void);
/* 0, or the number of the signal that asked us to stop. */
int dlg_stop_signal(void);

#endif
