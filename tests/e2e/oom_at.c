/* LD_PRELOAD for oom_sweep.sh: the n-th allocation after main() starts
 * fails once with ENOMEM (tests/support/rt_oom.c's allocator), as a brief
 * shortage would, in the processes named by their subcommand
 * (DLG_OOM_IN=run: the run; =__cell: each cell).
 *   DLG_OOM_AT=n      the allocation that fails (0 or unset: none)
 *   DLG_OOM_IN=word   only in a process with this word among its arguments
 *   DLG_OOM_RANK=r    and (set) only in MPI rank r: Open MPI's launcher
 *                     gives each rank OMPI_COMM_WORLD_RANK before exec,
 *                     and mpirun's own arguments hold the ranks' words
 *   DLG_OOM_FROM=fn   count (and fail) only allocations with fn, a
 *                     function of a shared library (dladdr names those
 *                     alone), on their stack: DLG_OOM_AT=1 fails the
 *                     first made inside fn, whatever came before
 *   DLG_OOM_TALLY=f   at exit, such a process appends its count of
 *                     allocations to f (the sweep's range)
 *   DLG_OOM_TRACE=f   the failed allocation's call stack is appended to f
 *                     (addresses: addr2line -f -e OBJECT 0xOFFSET)
 * Counting starts at main(): what the dynamic loader and the libraries'
 * constructors allocate before it is not dlgauge's to handle, nor what a
 * dlopen() allocates (the loader, and the constructors of the libraries
 * it loads: GnuTLS's, under libcurl, prints an error of its own).  Nor is
 * what a library allocates that ends the process by design when it cannot
 * (so no caller can answer): the dynamic loader (a thread's TLS), C++'s
 * operator new (std::bad_alloc), glibc's registration of a C++ thread_local
 * destructor, libgomp and OpenBLAS; nor oneDNN, which
 * dereferences its own failed allocation (dnnl_memory_create,
 * dnnl_primitive_desc_create: SIGSEGV inside libdnnl.so.2, seen with
 * Debian 12's 2.7); nor, in a rank, Open MPI (open_mpi_frame).  Those
 * allocations are neither failed nor counted. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt_oom.h"

typedef int (*main_fn)(int, char **, char **);
typedef int (*start_fn)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *);

static __thread int loading; /* this thread is inside dlopen() */
static main_fn real_main;

static bool ends_process_when_out(const char *file)
{
    static const char *const libs[] = {"/ld-linux", "/libstdc++.so", "/libgomp.so", "/libopenblas", "/libdnnl.so"};
    for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++)
        if (strstr(file, libs[i]))
            return true;
    return false;
}

/* Whether a frame of this allocation's stack is one match takes. */
static bool stack_has(bool (*match)(const Dl_info *))
{
    void *pcs[64];
    int n = backtrace(pcs, 64);
    for (int i = 0; i < n; i++) {
        Dl_info where;
        if (dladdr(pcs[i], &where) && match(&where))
            return true;
    }
    return false;
}

/* Open MPI and the libraries under it.  Their allocations are theirs to
 * answer, and they do not: failed in a sweep's run under mpirun, MPI_Init
 * segfaulted in PMIx (pmix_init_registered_attrs) or ended the rank with
 * its own "An error occurred in MPI_Init_thread", and a nonblocking
 * collective printed its own line before returning MPI_ERR_INTERN (which
 * dlgauge reports: tests/e2e/ranks.sh).  With DLG_OOM_RANK, an allocation
 * with one of them anywhere on its stack is neither failed nor counted. */
static bool open_mpi_frame(const Dl_info *where)
{
    static const char *const libs[] = {"/libmpi",   "/libopen-",   "/libpmix", "/libevent", "/libhwloc",
                                       "/openmpi/", "/libfabric", "/libuc",   "/libibverbs"};
    for (size_t j = 0; where->dli_fname && j < sizeof libs / sizeof libs[0]; j++)
        if (strstr(where->dli_fname, libs[j]))
            return true;
    return false;
}

static bool ranked;      /* DLG_OOM_RANK was set: Open MPI runs in this process */
static const char *from; /* DLG_OOM_FROM, or NULL */

static bool from_frame(const Dl_info *where) { return where->dli_sname && strcmp(where->dli_sname, from) == 0; }

static bool not_ours(void *caller)
{
    Dl_info where;
    if (loading || !dladdr(caller, &where))
        return loading;
    if (ranked && stack_has(open_mpi_frame))
        return true;
    if (from && !stack_has(from_frame))
        return true;
    /* glibc's registration of a C++ thread_local's destructor (cuDNN's
     * cudnnGetVersion has one) aborts the process when it cannot allocate:
     * "Fatal glibc error: failed to register TLS destructor" */
    if (where.dli_sname && strcmp(where.dli_sname, "__cxa_thread_atexit_impl") == 0)
        return true;
    return where.dli_fname && ends_process_when_out(where.dli_fname);
}

/* a place for a debugger's breakpoint too: gdb -ex 'break oom_at_failed' */
__attribute__((noinline)) void oom_at_failed(void);
__attribute__((noinline)) void oom_at_failed(void)
{
    const char *path = getenv("DLG_OOM_TRACE");
    int fd = path && *path ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
    if (fd < 0)
        return;
    void *pcs[32];
    backtrace_symbols_fd(pcs, backtrace(pcs, 32), fd); /* neither allocates once backtrace was called */
    close(fd);
}

static void write_tally(void)
{
    const char *path = getenv("DLG_OOM_TALLY");
    if (!path || !*path)
        return;
    char line[32];
    int len = snprintf(line, sizeof line, "%ld\n", rt_oom_disarm());
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    ssize_t ignored = write(fd, line, (size_t)len);
    (void)ignored;
    close(fd);
}

static bool named(int argc, char **argv)
{
    const char *in = getenv("DLG_OOM_IN"), *rank = getenv("DLG_OOM_RANK");
    if (rank && *rank) {
        const char *mine = getenv("OMPI_COMM_WORLD_RANK");
        if (!mine || strcmp(mine, rank) != 0)
            return false;
        ranked = true;
    }
    for (int i = 1; in && i < argc; i++)
        if (strcmp(argv[i], in) == 0)
            return true;
    return false;
}

static int counted_main(int argc, char **argv, char **envp)
{
    if (named(argc, argv)) {
        const char *at = getenv("DLG_OOM_AT");
        from = getenv("DLG_OOM_FROM");
        from = from && *from ? from : NULL;
        atexit(write_tally);
        void *pc;
        backtrace(&pc, 1); /* its first call loads libgcc_s, which allocates */
        rt_oom_filter(not_ours, oom_at_failed);
        rt_oom_arm(at ? atol(at) : 0);
    }
    return real_main(argc, argv, envp);
}

typedef void *(*dlopen_fn)(const char *, int);

void *dlopen(const char *file, int mode)
{
    dlopen_fn real = (dlopen_fn)dlsym(RTLD_NEXT, "dlopen");
    loading++;
    void *dl = real(file, mode);
    loading--;
    return dl;
}

int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
                      void (*rtld_fini)(void), void *stack_end);
int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void), void (*fini)(void),
                      void (*rtld_fini)(void), void *stack_end)
{
    start_fn real = (start_fn)dlsym(RTLD_NEXT, "__libc_start_main");
    real_main = main;
    return real(counted_main, argc, argv, init, fini, rtld_fini, stack_end);
}
