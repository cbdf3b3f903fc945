/* cuda_check's fp16 loss-scaling case (cuda_check_scale.c). */
#ifndef DLG_CUDA_CHECK_SCALE_H
#define DLG_CUDA_CHECK_SCALE_H

/* 0 pass, 1 fail; prints one result line (and a line per failed check). */
int check_loss_scale(const char *backend);

#endif
