/* cuda_check's input-path case and asynchronous-input benchmark
 * (cuda_check_input.c). */
#ifndef DLG_CUDA_CHECK_INPUT_H
#define DLG_CUDA_CHECK_INPUT_H

/* Training fed by dlg_net_write_async (pinned, pipelined as the caffe
 * workload does) against dlg_net_write: 0 pass, else the failures. */
int check_input_async(const char *backend);
/* cuda_check bench MODEL train|infer BACKEND BATCH [WARMUP ITERS
 * [graphs=off]] input=async (argv from MODEL on): inputs from two pinned
 * batches written with dlg_net_write_async after each step's launch; the
 * bench line ends "input=async data_wait_ms=W" (the compute stream's mean
 * wait per timed step for its input copy). */
int bench_input_async(int argc, char **argv);

#endif
