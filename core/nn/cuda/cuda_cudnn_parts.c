/* cuDNN 9's libcudnn.so.9 is a shim that dlopens its sub-libraries
 * (libcudnn_graph.so.9, _ops, _cnn, ...) by name at their first use,
 * relying on its RUNPATH ($ORIGIN).  Under AddressSanitizer dlopen is
 * intercepted and glibc takes libasan for the caller, so that RUNPATH is
 * not searched: unless the loader's cache knows cuDNN's folder (an
 * ld.so.conf entry, as NVIDIA's packages add; a fresh Debian with the
 * toolkit unpacked has none), cuDNN prints "Invalid handle. Cannot load
 * symbol cudnnGetVersion" and aborts, in `dlgauge sysinfo` too.  Loaded
 * first by full path from the shim's own folder, the parts are found by
 * their names when the shim asks. */
#define _GNU_SOURCE /* dladdr */
#include "cuda_cudnn_parts.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <cudnn.h>

/* Compiled in every build (so that it keeps compiling), run in ASan's. */
#if defined(__SANITIZE_ADDRESS__)
enum { UNDER_ASAN = 1 };
#else
enum { UNDER_ASAN = 0 };
#endif

void dlg_cudnn_load_parts(bool all)
{
    if (!UNDER_ASAN)
        return;
    /* graph first: the others need it */
    static const char *const parts[] = {"graph",     "ops",   "cnn", "adv", "heuristic", "engines_precompiled",
                                        "engines_runtime_compiled"};
    Dl_info info;
    if (!dladdr((void *)cudnnGetVersion, &info) || !info.dli_fname)
        return;
    const char *slash = strrchr(info.dli_fname, '/');
    if (!slash)
        return;
    size_t n = all ? sizeof parts / sizeof *parts : 1;
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%.*s/libcudnn_%s.so.%d", (int)(slash - info.dli_fname), info.dli_fname,
                 parts[i], CUDNN_MAJOR);
        /* kept loaded (cuDNN holds them for the process's life); one that
         * is not there (a stand-in cuDNN) is cuDNN's to report */
        dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    }
}
