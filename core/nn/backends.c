/* Backend registry: which backends this build has. */
#include "backend.h"
#include "ref/ref.h"

#include <stdio.h>
#include <string.h>

#ifdef DLG_NN_HAVE_DNNL
#include "cpu/cpu.h"
#endif
#include "cuda/cuda_module.h"

static const char dlg_backend_names[] = "ref"
#ifdef DLG_NN_HAVE_DNNL
                                        ", cpu, cpu-bf16"
#endif
#ifdef DLG_NN_HAVE_CUDA
                                        ", cuda[-tf32|-bf16|-fp16][:N]"
#endif
    ;

const dlg_backend *dlg_backend_lookup(const char *name, char *why, size_t whylen)
{
    if (strcmp(name, "ref") == 0)
        return &dlg_backend_ref;
#ifdef DLG_NN_HAVE_DNNL
    if (strcmp(name, "cpu") == 0)
        return &dlg_backend_cpu;
    if (strcmp(name, "cpu-bf16") == 0)
        return &dlg_backend_cpu_bf16;
#endif
    if (strncmp(name, "cuda", 4) == 0) /* loads cuda.so (cuda_module.h) */
        return dlg_cuda_backend_load(name, why, whylen);
    if (why && whylen)
        snprintf(why, whylen, "unknown backend '%s' (known: %s)", name, dlg_backend_names);
    return NULL;
}

const dlg_backend *dlg_backend_find(const char *name)
{
    return dlg_backend_lookup(name, NULL, 0);
}

#ifndef DLG_NN_HAVE_DNNL
int dlg_cpu_bf16_usable(char *err, size_t errlen)
{
    snprintf(err, errlen, "precision = bf16 on the cpu needs the cpu backend (oneDNN), which this build "
             "lacks: use precision = fp32");
    return -DLG_ENOTSUP;
}
#endif
