/* The engine's side of the CUDA modules (cuda_module.h): find one, load
 * it, check its ABI, and answer device and backend queries through it.
 * Nothing is cached here: dlopen of an already loaded module only bumps
 * its reference count, and the modules stay loaded for the process's life
 * (a backend handed out must outlive every net that uses it). */
#define _GNU_SOURCE /* dladdr */
#include "cuda_device.h"
#include "cuda_module.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef DLG_NN_HAVE_CUDA

/* The directory of the object this code is linked into (program false)
 * or of the running program, absolute; "" if unknown.  dladdr names a
 * plugin by the path it was opened with (possibly relative to the working
 * directory) and the main program by its argv[0] (a bare name when found
 * on PATH: then /proc/self/exe). */
static void self_dir(bool program, char *dir, size_t len)
{
    Dl_info info;
    char path[PATH_MAX];
    dir[0] = '\0';
    if (!program && (!dladdr((void *)self_dir, &info) || !info.dli_fname || !info.dli_fname[0]))
        return;
    if (program || !strchr(info.dli_fname, '/')) {
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        if (n <= 0)
            return;
        path[n] = '\0';
    } else if (!realpath(info.dli_fname, path))
        return;
    char *slash = strrchr(path, '/');
    if (slash)
        snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

bool dlg_cuda_module_dir(int i, char *dir, size_t len)
{
    const char *env = getenv("DLGAUGE_NN_MODULE_DIR");
    if (env && *env) { /* explicit: only there */
        snprintf(dir, len, "%s", env);
        return i == 0;
    }
    /* beside the plugin holding this engine (lib/dlgauge/backends); where
     * an install puts them relative to a program holding it (bin/../lib/
     * ...); the same from the running program, so a plugin from anywhere
     * run by an installed dlgauge finds that install's modules */
    static const char *const beside[] = {"backends", "../" DLG_NN_MODULE_REL_DIR,
                                         "../" DLG_NN_MODULE_REL_DIR};
    if (i < 3) {
        self_dir(i == 2, dir, len);
        if (dir[0])
            snprintf(dir + strlen(dir), len - strlen(dir), "/%s", beside[i]);
        return true;
    }
    static const char *const built_in[] = {DLG_NN_MODULE_BUILD_DIR, DLG_NN_MODULE_INSTALL_DIR};
    if (i > 4)
        return false;
    snprintf(dir, len, "%s", built_in[i - 3]);
    return true;
}

/* The module file's table, or NULL with the reason in why. */
static const dlg_cuda_module *load_module(const char *file, char *why, size_t whylen)
{
    char dir[1024], path[1200], tried[600] = "";
    for (int i = 0; dlg_cuda_module_dir(i, dir, sizeof dir); i++) {
        if (!dir[0])
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, file);
        if (access(path, F_OK) != 0) {
            size_t used = strlen(tried);
            snprintf(tried + used, sizeof tried - used, "%s%s", used ? ", " : "", dir);
            continue;
        }
        void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!dl) {
            snprintf(why, whylen, "cannot load %s: %s", path, dlerror());
            return NULL;
        }
        const dlg_cuda_module *m = dlsym(dl, DLG_CUDA_MODULE_SYMBOL);
        if (!m) {
            snprintf(why, whylen, "%s has no %s table", path, DLG_CUDA_MODULE_SYMBOL);
            return NULL;
        }
        if (m->abi != DLG_CUDA_MODULE_ABI || m->engine_sig != DLG_CUDA_ENGINE_SIG) {
            snprintf(why, whylen,
                     "%s was built for another engine (module ABI %u/%08x, this engine %u/%08x): "
                     "install the plugin and its backends from one build",
                     path, m->abi, m->engine_sig, DLG_CUDA_MODULE_ABI, DLG_CUDA_ENGINE_SIG);
            return NULL;
        }
        return m;
    }
    snprintf(why, whylen, "the CUDA module %s is in none of: %s (set DLGAUGE_NN_MODULE_DIR)",
             file, tried);
    return NULL;
}

int dlg_cuda_device_count(int *n, char *why, size_t whylen)
{
    char tmp[1];
    *n = 0;
    if (!why || !whylen)
        why = tmp, whylen = sizeof tmp;
    why[0] = '\0';
    const dlg_cuda_module *m = load_module("cuda-probe.so", why, whylen);
    return m ? m->device_count(n, why, whylen) : 0;
}

int dlg_cuda_device_props(int device, dlg_cuda_props *out, char *why, size_t whylen)
{
    const dlg_cuda_module *m = load_module("cuda-probe.so", why, whylen);
    if (!m)
        return -DLG_ENOTSUP;
    int rc = m->device_props(device, out);
    if (rc < 0)
        snprintf(why, whylen, "cudaGetDeviceProperties(%d) failed", device);
    return rc;
}

int dlg_cuda_device_name(int device, char *name, size_t len)
{
    dlg_cuda_props p;
    char why[8];
    if (dlg_cuda_device_props(device, &p, why, sizeof why) < 0)
        return -DLG_ENOTSUP;
    snprintf(name, len, "%s", p.name);
    return 0;
}

int dlg_cuda_versions(char *buf, size_t len, char *why, size_t whylen)
{
    const dlg_cuda_module *m = load_module("cuda.so", why, whylen);
    if (!m)
        m = load_module("cuda-probe.so", why, whylen);
    if (!m)
        return -DLG_ENOTSUP;
    m->versions(buf, len);
    return 0;
}

const dlg_backend *dlg_cuda_backend_load(const char *name, char *why, size_t whylen)
{
    char tmp[1];
    if (!why || !whylen)
        why = tmp, whylen = sizeof tmp;
    int device, math;
    if (dlg_cuda_parse_backend(name, &device, &math) < 0) {
        snprintf(why, whylen, "'%s' is not a CUDA backend name", name);
        return NULL;
    }
    const dlg_cuda_module *m = load_module("cuda.so", why, whylen);
    if (!m)
        return NULL;
    if (!m->backend_find) {
        snprintf(why, whylen, "cuda.so has no backends");
        return NULL;
    }
    const dlg_backend *bk = m->backend_find(name);
    if (!bk)
        snprintf(why, whylen, "cuda.so has no backend '%s'", name);
    return bk;
}

#else /* a build without the CUDA backend has no devices to offer */

bool dlg_cuda_module_dir(int i, char *dir, size_t len)
{
    (void)i, (void)dir, (void)len;
    return false;
}

static const char no_cuda[] = "dlgauge was built without CUDA";

int dlg_cuda_device_count(int *n, char *why, size_t whylen)
{
    *n = 0;
    if (why && whylen)
        snprintf(why, whylen, "%s", no_cuda);
    return 0;
}

int dlg_cuda_device_name(int device, char *name, size_t len)
{
    (void)device, (void)name, (void)len;
    return -DLG_ENOTSUP;
}

int dlg_cuda_device_props(int device, dlg_cuda_props *out, char *why, size_t whylen)
{
    (void)device, (void)out;
    snprintf(why, whylen, "%s", no_cuda);
    return -DLG_ENOTSUP;
}

int dlg_cuda_versions(char *buf, size_t len, char *why, size_t whylen)
{
    (void)buf, (void)len;
    snprintf(why, whylen, "%s", no_cuda);
    return -DLG_ENOTSUP;
}

const dlg_backend *dlg_cuda_backend_load(const char *name, char *why, size_t whylen)
{
    (void)name;
    if (why && whylen)
        snprintf(why, whylen, "%s", no_cuda);
    return NULL;
}

#endif
