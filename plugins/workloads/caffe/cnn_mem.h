/* Does a plan fit in memory?  Estimated from the built net's shapes before
 * anything is allocated, so that a batch too large fails with one line
 * ("needs X, Y available") instead of an OOM kill halfway through planning. */
#ifndef DLG_CAFFE_CNN_MEM_H
#define DLG_CAFFE_CNN_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dlgauge/nn.h>

/* Bytes dlg_net_plan will allocate: every blob's data; when training also
 * its gradient, and momentum for parameters; plus 10% for oneDNN
 * workspaces and blocked-layout padding. */
uint64_t cnn_mem_plan_bytes(const dlg_net *net, bool train);

/* Memory this process may still take: the smaller of MemAvailable and the
 * headroom of every enclosing cgroup v2 memory.max.  how: where it came
 * from.  0 if nothing could be read. */
uint64_t cnn_mem_available(char *how, size_t n);

#endif
