/* Backend registry: which backends this build has. */
#include "backend.h"
#include "ref/ref.h"

#include <string.h>

#ifdef DLG_NN_HAVE_DNNL
#include "cpu/cpu.h"
#endif
#ifdef DLG_NN_HAVE_CUDA
#include "cuda/cuda.h"
#endif

const dlg_backend *dlg_backend_find(const char *name)
{
    if (strcmp(name, "ref") == 0)
        return &dlg_backend_ref;
#ifdef DLG_NN_HAVE_DNNL
    if (strcmp(name, "cpu") == 0)
        return &dlg_backend_cpu;
#endif
#ifdef DLG_NN_HAVE_CUDA
    if (strncmp(name, "cuda", 4) == 0)
        return dlg_cuda_backend_find(name);
#endif
    return NULL;
}
