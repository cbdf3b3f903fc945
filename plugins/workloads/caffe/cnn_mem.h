/* Does a plan fit in memory?  Twice: before planning, a floor computed from
 * the built net's shapes rejects a batch that cannot possibly fit (planning
 * it would take minutes or fail inside oneDNN); after planning, the bytes
 * the plan really holds (dlg_net_memory_bytes: activation sharing, padding,
 * workspaces), checked before any step has touched them (the cpu/ref
 * backends map large blocks lazily), so a batch too large fails with one
 * line ("needs X, Y available") instead of an OOM kill mid-run. */
#ifndef DLG_CAFFE_CNN_MEM_H
#define DLG_CAFFE_CNN_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dlgauge/nn.h>
#include <dlgauge/plugin.h>

/* A lower bound of what dlg_net_plan will allocate: the parameters (with
 * their gradients and momentum when training) and the largest blob (with
 * its gradient when training), which no sharing can avoid. */
uint64_t cnn_mem_floor_bytes(const dlg_net *net, bool train);

/* 0 if `need` bytes fit what this process may still take
 * (cnn_mem_available; also when nothing could be read), else -DLG_ENOMEM
 * through h->error: "<what> needs [at least] X GiB (N bytes) but only Y GiB
 * (M bytes) is available (<where>)<hint>".  at_least: need is a floor. */
int cnn_mem_check(const dlg_host *h, uint64_t need, bool at_least, const char *what,
                  const char *hint);

/* Memory this process may still take: the smaller of MemAvailable and the
 * headroom of every enclosing cgroup v2 memory.max.  how: where it came
 * from.  0 if nothing could be read. */
uint64_t cnn_mem_available(char *how, size_t n);

#endif
