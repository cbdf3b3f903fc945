/* keep_mpi_components.c — preloaded (after libasan) into the ranks of the
 * ASan build's mpirun tests by tests/support/mpi_env.sh: Open MPI's and
 * PMIx's components (mca_*.so) stay loaded when they are closed.
 *
 * Why: at exit LeakSanitizer matches what Open MPI leaves allocated against
 * tests/support/mpi.supp by the modules on each allocation's stack.  A
 * component unloaded at MPI_Finalize leaves frames in no module; for each
 * such frame the sanitizer reads /proc/self/maps again, and with full
 * unwinding (Open MPI has no frame pointers) that cost about 2 s a rank
 * and exit: most of an mpirun test's time under ASan.  Kept loaded, the
 * frames name their component and the suppression matches at once.
 * dlgauge's own plugins are closed as always. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <string.h>

int dlclose(void *handle)
{
    int (*next)(void *) = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
    struct link_map *map = NULL;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name) {
        const char *base = strrchr(map->l_name, '/');
        if (strncmp(base ? base + 1 : map->l_name, "mca_", 4) == 0)
            return 0;
    }
    return next ? next(handle) : -1;
}
