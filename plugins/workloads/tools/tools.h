/* The tools plugin: storage and preprocessing workloads.
 *   io           fio-like raw reads of one file through the job's storage
 *   io-pipeline  DLIO-style: the input pipeline plus emulated compute
 *   preprocess   image folder/list -> RecordIO or LMDB (im2rec, convert_imageset) */
#ifndef DLG_TOOLS_H
#define DLG_TOOLS_H

#include <dlgauge/plugin.h>
#include <dlgauge/splitmix.h> /* the random numbers of io, compute */
#include <stddef.h>
#include <stdint.h>

extern const dlg_plugin_desc io_desc;
extern const dlg_plugin_desc iopipe_desc;
extern const dlg_plugin_desc preprocess_desc;

/* CLOCK_MONOTONIC in ns (vDSO: cheap enough to call per I/O). */
uint64_t tools_now_ns(void);

/* If text starts with "prefix:", returns what follows (may be ""), else NULL. */
const char *tools_after_prefix(const char *text, const char *prefix);

/* a followed by b, malloc'd; NULL when out of memory. */
char *tools_concat(const char *a, const char *b);

/* This process's rank among the run's ranks, their count in *size: 0 and
 * 1 alone, or from a host without the ranks ABI. */
int tools_rank(const dlg_host *h, int *size);

#endif
