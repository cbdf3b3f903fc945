/* cuda_check's CUDA-graph case (cuda_check_graphs.c). */
#ifndef DLG_CUDA_CHECK_GRAPHS_H
#define DLG_CUDA_CHECK_GRAPHS_H

/* 0 pass, else the number of failures (printed). */
int check_graphs(const char *backend);

#endif
