/* The limits on the processes and threads a cell may start (ulimit -u, the
 * pids cgroup's pids.max), said in one phrase, and a check that a cell can
 * start its threads: libgomp ends a process that cannot ("Thread creation
 * failed") with exit code 1, saying why only on stderr. */
#ifndef DLG_PROC_LIMITS_H
#define DLG_PROC_LIMITS_H

#include <stddef.h>

/* The soft limit of an RLIMIT_* resource, as a number or "unlimited"; one
 * in bytes (RLIMIT_AS, _DATA, _STACK, _MEMLOCK, _RSS) in KiB, the unit
 * ulimit -v and the like show and take, then in MiB or GiB:
 * "60000 (58.6 MiB)".  32 bytes hold any. */
void dlg_rlimit_text(int resource, char *buf, size_t len);

/* "ulimit -u is X / pids.max is Y" (Y the smallest of the own pids cgroup
 * and its ancestors', "max" where none is set), with " / ulimit -v is Z"
 * when an address-space limit (thread stacks) is set. */
void dlg_proc_limits_text(char *buf, size_t len);

/* 0 when n threads (the caller's and n - 1 started here, all alive at once)
 * can run; else -1 with why[] = "could not start N threads: REASON; LIMITS".
 * The threads it starts end before it returns. */
int dlg_threads_startable(int n, char *why, size_t len);

#endif
