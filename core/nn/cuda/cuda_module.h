/* The CUDA backend as loadable modules.  The engine is linked statically
 * into every model plugin, but the CUDA libraries are not: merely loading
 * libcublasLt costs a process ~150 MB of resident memory (its load-time
 * relocations), which every CPU-only run would pay.  So the CUDA code lives
 * in two modules that the engine dlopens only when asked:
 *   cuda-probe.so  cudart only: device count and properties (device =
 *                  auto, % of peak, sysinfo); cheap enough for every job
 *   cuda.so        the backend (cudart, cuBLAS, cuDNN): for cuda* backends
 * Both export one table, DLG_CUDA_MODULE_SYMBOL, that the engine checks
 * against its own ABI before use (cuda_loader.c).  They are searched in
 * $DLGAUGE_NN_MODULE_DIR if set, else in backends/ beside the object that
 * holds the engine (lib/dlgauge/backends beside caffe.so), in
 * ../lib/dlgauge/backends from it and from the running program (an
 * installed dlgauge), then in the build tree's and the install prefix's
 * lib/dlgauge/backends. */
#ifndef DLG_NN_CUDA_MODULE_H
#define DLG_NN_CUDA_MODULE_H

#include "../backend.h"

#include <stddef.h>
#include <stdint.h>

#define DLG_CUDA_MODULE_SYMBOL "dlg_cuda_module_v1"
/* Bump when the meaning of what crosses the boundary changes; the sizes
 * below catch the layout changes nobody remembered to bump it for. */
#define DLG_CUDA_MODULE_ABI 5u
#define DLG_CUDA_ENGINE_SIG                                                                    \
    ((uint32_t)(sizeof(dlg_backend) * 1000003u + sizeof(dlg_kernels) * 10007u +               \
                sizeof(dlg_layer) * 101u + sizeof(dlg_tensor) * 7u + sizeof(dlg_backend_opts)))

/* What `dlgauge sysinfo` shows of a device beside NVML's view. */
typedef struct dlg_cuda_props {
    char name[256];
    int sm_count;           /* streaming multiprocessors */
    int cc_major, cc_minor; /* compute capability */
    uint64_t mem_bytes;     /* global memory */
} dlg_cuda_props;

typedef struct dlg_cuda_module {
    uint32_t abi;        /* DLG_CUDA_MODULE_ABI */
    uint32_t engine_sig; /* DLG_CUDA_ENGINE_SIG as the module was compiled */
    /* cudaGetDeviceCount: 0 devices and a reason when there is no driver
     * or device; negative only on a bad call */
    int (*device_count)(int *n, char *why, size_t whylen);
    /* the backend for a cuda* name (cuda.h); NULL in cuda-probe.so */
    const dlg_backend *(*backend_find)(const char *name);
    /* cudaGetDeviceProperties' view; -DLG_ENOTSUP if it cannot be queried */
    int (*device_props)(int device, dlg_cuda_props *out);
    /* the libraries' versions as loaded, one line: "CUDA runtime 13.0,
     * driver 12.8" (probe) plus ", cuBLAS 13.0.2, cuDNN 9.19.0" (cuda.so) */
    void (*versions)(char *buf, size_t len);
} dlg_cuda_module;

/* Module side (cuda_device.c, in both modules): the cudart queries behind
 * the table's device_count, device_props and versions. */
int dlg_cudart_device_count(int *n, char *why, size_t whylen);
int dlg_cudart_device_props(int device, dlg_cuda_props *out);
void dlg_cudart_versions(char *buf, size_t len);

/* Engine side (cuda_loader.c): the backend for a cuda* name from cuda.so;
 * NULL with the reason in why (not built with CUDA, module missing or from
 * another build, not a CUDA name).  Device queries: cuda_device.h. */
const dlg_backend *dlg_cuda_backend_load(const char *name, char *why, size_t whylen);
/* Engine side: a device's properties and the CUDA libraries' versions
 * (cuda.so's if it loads, else the probe's), for `dlgauge sysinfo`;
 * -DLG_ENOTSUP with the reason in why when no module answers. */
int dlg_cuda_device_props(int device, dlg_cuda_props *out, char *why, size_t whylen);
int dlg_cuda_versions(char *buf, size_t len, char *why, size_t whylen);
/* The i-th directory searched (i = 0, 1, ...; "" when one cannot be
 * known); false past the last.  Exposed for tests. */
bool dlg_cuda_module_dir(int i, char *dir, size_t len);

#endif
