/* cuDNN 9's sub-libraries, loaded from the folder of the libcudnn.so.9
 * this module linked, in AddressSanitizer builds (cuda_cudnn_parts.c). */
#ifndef DLG_CUDA_CUDNN_PARTS_H
#define DLG_CUDA_CUDNN_PARTS_H

#include <stdbool.h>

/* The part cudnnGetVersion needs (graph), or every part (all): before the
 * first call that needs them.  Does nothing outside ASan builds. */
void dlg_cudnn_load_parts(bool all);

#endif
