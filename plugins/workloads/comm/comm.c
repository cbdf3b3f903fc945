/* The comm plugin: the run's collectives as workloads (allreduce, p2p). */
#include "comm.h"

DLG_PLUGIN("comm", &allreduce_desc, &p2p_desc)
