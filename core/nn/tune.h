/* The host's tuning record ("wisdom", as FFTW calls it): choices that a
 * plan makes by timing (a 3x3 layer's Winograd or direct kernel per pass,
 * cpu_conv_algo.c; a few-channel layer's weight gradient on cpu_wgrad_amx
 * or oneDNN, cpu_wgrad_pick.c) and the measured clock behind % of peak (peak.c), kept
 * in a file so that later cells and runs of the same configuration take
 * the same kernels and the same peak instead of timing again under
 * whatever load they meet.  A text file, one entry a line:
 *     dlgauge-tune 1
 *     host <this CPU: model, vendor family/model, flags hash>
 *     <key> <value>                 neither has spaces
 * It is the CPU's, not the hostname's (a container gets a new hostname
 * every run): the host that last wrote it is an entry, written_by_host,
 * for information only.  Where: $DLGAUGE_TUNE (a file; "off": no record,
 * every plan times), else $XDG_CACHE_HOME/dlgauge/tune-<CPU hash>.txt,
 * else the same under ~/.cache.  Delete the file to time again.  A
 * corrupt file, or one of another CPU, is ignored with one warning line
 * and rewritten by the next entry stored; one that cannot be read or
 * written is not used, with one line for the process, and every plan
 * times as without a record.  Full (DLG_TUNE_MAX_BYTES) it keeps its
 * entries and takes no new ones.  Processes racing on it lock <file>.lock
 * around read-time-store (tune_lock), and each store writes a temporary
 * file of its own, synced and renamed over the record, so a reader never
 * sees half a file, nor does a crash leave one. */
#ifndef DLG_NN_TUNE_H
#define DLG_NN_TUNE_H

#include <stdbool.h>
#include <stddef.h>

#define DLG_TUNE_PATH_MAX 512
#define DLG_TUNE_KEY_MAX 200
#define DLG_TUNE_VAL_MAX 64
/* The most a record grows to: ~80,000 entries of ~100 bytes, every 3x3
 * layer of every model at many batches and thread counts.  Full, it keeps
 * its entries and takes no new ones (one warning line). */
#define DLG_TUNE_MAX_BYTES (8 << 20)
#define DLG_TUNE_MAX_TEXT "8 MiB"

/* The record's path into out; false when turned off ($DLGAUGE_TUNE=off)
 * or there is no home to keep it in. */
bool dlg_tune_path(char *out, size_t n);
/* This host as the record's "host" line names it; false (out empty) when
 * memory ran out reading it: another CPU's name would wipe the record. */
bool dlg_tune_host(char *out, size_t n);

/* An exclusive lock on the record against other processes (flock of
 * <path>.lock): the fd, or -1 where it cannot be taken (work goes on
 * unlocked: the worst is a choice timed twice). */
int dlg_tune_lock(const char *path);
void dlg_tune_unlock(int fd);

/* key's value into val: true when the record holds it.  A missing record
 * is empty; a corrupt, foreign or unreadable one too, with a warning
 * naming the file (and line) on stderr, once. */
bool dlg_tune_get(const char *path, const char *key, char *val, size_t n);
/* Stores key = val (replacing its old value), keeping the record's other
 * entries: 0, or -1 (nothing stored) with a warning on stderr the first
 * time the record cannot be written, or is full. */
int dlg_tune_put(const char *path, const char *key, const char *val);

#endif
