/* Stand-ins for cuda-probe.so and cuda.so (core/nn/cuda/cuda_module.h), so
 * the engine's module loader is tested without a GPU or the CUDA
 * libraries.  FAKE_ABI_SKEW: the table claims the next ABI; FAKE_NO_TABLE:
 * the module exports no table.  The good one has three "NVIDIA H200"s and
 * one backend, cuda:1. */
#include "cuda/cuda_module.h"

#include <stdio.h>
#include <string.h>

#ifndef FAKE_NO_TABLE
#ifndef FAKE_ABI_SKEW
#define FAKE_ABI_SKEW 0
#endif

static int fake_count(int *n, char *why, size_t whylen)
{
    *n = 3;
    if (why && whylen)
        why[0] = '\0';
    return 0;
}

/* named as the real one: a workload must refuse what it cannot run on it
 * before calling anything (the stand-in has no ops) */
static const dlg_backend fake_backend = {.name = "cuda:1"};

static const dlg_backend *fake_find(const char *name)
{
    return strcmp(name, "cuda:1") == 0 ? &fake_backend : NULL;
}

static int fake_props(int device, dlg_cuda_props *out)
{
    if (device < 0 || device >= 3)
        return -DLG_ENOTSUP;
    *out = (dlg_cuda_props){.sm_count = 132, .cc_major = 9, .cc_minor = 0,
                            .mem_bytes = 150754820096ull};
    snprintf(out->name, sizeof out->name, "NVIDIA H200");
    return 0;
}

static void fake_versions(char *buf, size_t len)
{
    snprintf(buf, len, "CUDA runtime 13.0, driver 13.0 (fake)");
}

const dlg_cuda_module dlg_cuda_module_v1 = {
    .abi = DLG_CUDA_MODULE_ABI + FAKE_ABI_SKEW,
    .engine_sig = DLG_CUDA_ENGINE_SIG,
    .device_count = fake_count,
    .backend_find = fake_find,
    .device_props = fake_props,
    .versions = fake_versions,
};
#else
int dlg_fake_cuda_module_without_table(void);
int dlg_fake_cuda_module_without_table(void)
{
    return 0;
}
#endif
