/* The load guard: a plugin file's dlopen (its constructors) and its entry
 * (the tables it returns) run with the crash guard's signals caught and
 * within a time limit, so that one broken file in a plugin folder ends in
 * one line naming it, not in a bare "Segmentation fault" or a hang of
 * every command.  Why going on after a fault is safe, and where it is
 * not, is said in load_guard.c. */
#ifndef DLG_LOAD_GUARD_H
#define DLG_LOAD_GUARD_H

#include <dlgauge/plugin.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a guarded load is doing, for the line a fault gets: DLG_LOAD_DLOPEN
 * while dlopen runs the file's constructors, DLG_LOAD_ENTRY while the
 * plugin's entry runs, DLG_LOAD_INFO reading the dlg_plugin_info it
 * returned, DLG_LOAD_DESC + i descriptor #i and the tables it points to. */
enum { DLG_LOAD_DLOPEN, DLG_LOAD_ENTRY, DLG_LOAD_INFO, DLG_LOAD_DESC };
/* Says what the load does now (async-signal-safe to read). */
void dlg_load_phase(int phase);

/* dlopen(path) under the guard, which ends the process with one line
 * naming the file if a constructor crashes (it cannot go on from inside
 * dlopen) or does not return within timeout_ns (load_watch.h; 0: no
 * limit).  The handle, or NULL (dlerror says why). */
void *dlg_dlopen_guarded(const char *path, int64_t timeout_ns);

/* Reads the info of the file dl: its entry called, its tables read
 * through; NULL with why when it is no plugin. */
typedef const dlg_plugin_info *(*dlg_info_reader)(void *dl, char *why, size_t whylen);

/* read(dl) under the guard and within timeout_ns: the info, or NULL with
 * why; *crashed: whether it faulted (its code must not run again). */
const dlg_plugin_info *dlg_load_guarded(void *dl, const char *path, dlg_info_reader read, int64_t timeout_ns,
                                        char *why, size_t whylen, bool *crashed);

#endif
