// fake_nccl_comm.cc — the fake NCCL's communicators (see fake_nccl.cc):
// ids, the shared-memory segment each one lives in, joining, leaving, the
// error texts and the version.
#include "fake_nccl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <new>

namespace fake_nccl {

void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fake nccl: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

timespec deadline(int seconds)
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += seconds;
    return t;
}

size_t header_bytes() { return (sizeof(segment) + 4095) & ~(size_t)4095; }

} // namespace fake_nccl

using namespace fake_nccl;

namespace {

size_t segment_bytes(int nranks) { return header_bytes() + (size_t)nranks * kSlot; }

int timeout_seconds()
{
    const char *s = getenv("FAKE_NCCL_TIMEOUT_S");
    int v = s ? atoi(s) : 0;
    return v > 0 ? v : 60;
}

// Opens (creating it on first arrival) and maps the id's segment.
ncclResult_t map_segment(ncclComm_t c, const char *name, int nranks)
{
    size_t bytes = segment_bytes(nranks);
    bool creator = true;
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 && errno == EEXIST) {
        creator = false;
        fd = shm_open(name, O_RDWR, 0600);
    }
    if (fd < 0) {
        say("shm_open %s: %s", name, strerror(errno));
        return ncclSystemError;
    }
    timespec until = deadline(c->timeout_s);
    struct stat st;
    if (creator && ftruncate(fd, (off_t)bytes) != 0) {
        say("ftruncate %s: %s", name, strerror(errno));
        close(fd);
        return ncclSystemError;
    }
    // a joiner waits for the creator's ftruncate
    while (!creator && fstat(fd, &st) == 0 && (size_t)st.st_size < header_bytes()) {
        timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > until.tv_sec) {
            say("%s: never initialised", name);
            close(fd);
            return ncclSystemError;
        }
        usleep(1000);
    }
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        say("mmap %s: %s", name, strerror(errno));
        return ncclSystemError;
    }
    c->h = (segment *)p;
    c->slots = (unsigned char *)p + header_bytes();
    c->map_bytes = bytes;
    segment *h = c->h;
    if (creator) {
        pthread_mutexattr_t ma;
        pthread_condattr_t ca;
        pthread_mutexattr_init(&ma);
        pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
        pthread_mutex_init(&h->mu, &ma);
        pthread_mutexattr_destroy(&ma);
        pthread_condattr_init(&ca);
        pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&h->cv, &ca);
        pthread_condattr_destroy(&ca);
        h->nranks = nranks;
        snprintf(h->name, sizeof h->name, "%s", name);
        __atomic_store_n(&h->ready, kMagic, __ATOMIC_RELEASE);
        return ncclSuccess;
    }
    while (__atomic_load_n(&h->ready, __ATOMIC_ACQUIRE) != kMagic) {
        timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > until.tv_sec) {
            say("%s: never initialised", name);
            return ncclSystemError;
        }
        usleep(1000);
    }
    return ncclSuccess;
}

void unmap(ncclComm_t c)
{
    if (c->h)
        munmap(c->h, c->map_bytes);
    c->h = nullptr;
}

// Joins the segment as c->rank and waits for the others.
ncclResult_t join(ncclComm_t c)
{
    segment *h = c->h;
    pthread_mutex_lock(&h->mu);
    ncclResult_t r = ncclSuccess;
    if (h->nranks != c->nranks || h->present[c->rank]) {
        say("ncclCommInitRank: rank %d of %d joins a communicator of %d ranks%s", c->rank,
            c->nranks, h->nranks, h->present[c->rank] ? " where that rank already is" : "");
        r = ncclInvalidUsage;
    } else {
        h->present[c->rank] = 1;
        if (++h->joined == c->nranks) {
            shm_unlink(h->name); // everyone has it mapped: the name is not needed
            h->unlinked = 1;
            pthread_cond_broadcast(&h->cv);
        }
        timespec until = deadline(c->timeout_s);
        while (r == ncclSuccess && h->joined < c->nranks)
            if (pthread_cond_timedwait(&h->cv, &h->mu, &until) == ETIMEDOUT) {
                say("ncclCommInitRank: rank %d of %d: only %d ranks joined in %d s", c->rank,
                    c->nranks, h->joined, c->timeout_s);
                h->present[c->rank] = 0;
                h->joined--;
                r = ncclSystemError;
            }
    }
    if (r != ncclSuccess && h->joined == 0 && !h->unlinked) {
        shm_unlink(h->name);
        h->unlinked = 1;
    }
    pthread_mutex_unlock(&h->mu);
    return r;
}

// FAKE_NCCL_COUNTS names a file that gets one line per communicator left,
// "rank nranks allreduces sends" (one O_APPEND write: ranks' lines do not
// mix), so a test counts the collectives a workload ran.
void count_ops(const ncclComm *c)
{
    const char *path = getenv("FAKE_NCCL_COUNTS");
    if (!path || !*path)
        return;
    char line[96];
    int n = snprintf(line, sizeof line, "%d %d %llu %llu\n", c->rank, c->nranks,
                     (unsigned long long)c->seq, (unsigned long long)c->send_id);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, line, (size_t)n) != n)
        say("FAKE_NCCL_COUNTS=%s: cannot append to it", path);
    if (fd >= 0)
        close(fd);
}

ncclResult_t leave(ncclComm_t comm)
{
    if (!comm)
        return ncclInvalidArgument;
    count_ops(comm);
    segment *h = comm->h;
    pthread_mutex_lock(&h->mu);
    if (++h->left == comm->nranks && !h->unlinked) {
        shm_unlink(h->name);
        h->unlinked = 1;
    }
    pthread_mutex_unlock(&h->mu);
    unmap(comm);
    delete comm;
    return ncclSuccess;
}

} // namespace

extern "C" {

ncclResult_t ncclGetVersion(int *version)
{
    if (!version)
        return ncclInvalidArgument;
    *version = NCCL_VERSION_CODE;
    return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t r)
{
    switch (r) { // NCCL's own texts
    case ncclSuccess:
        return "no error";
    case ncclUnhandledCudaError:
        return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError:
        return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError:
        return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument:
        return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage:
        return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError:
        return "remote process exited or there was a network error";
    case ncclInProgress:
        return "NCCL operation in progress";
    default:
        return "unknown result code";
    }
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    if (!id)
        return ncclInvalidArgument;
    unsigned char rnd[8];
    FILE *f = fopen("/dev/urandom", "rb");
    size_t got = f ? fread(rnd, 1, sizeof rnd, f) : 0;
    if (f)
        fclose(f);
    if (got != sizeof rnd)
        return ncclSystemError;
    memset(id, 0, sizeof *id);
    uint64_t v;
    memcpy(&v, rnd, sizeof v);
    snprintf(id->internal, sizeof id->internal, "/dlg-fake-nccl-%d-%016llx", (int)getpid(),
             (unsigned long long)v);
    return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
    if (!comm || nranks < 1 || nranks > kMaxRanks || rank < 0 || rank >= nranks ||
        strncmp(id.internal, "/dlg-fake-nccl-", 15) != 0 ||
        !memchr(id.internal, 0, sizeof id.internal))
        return ncclInvalidArgument;
    ncclComm_t c = new (std::nothrow) ncclComm;
    if (!c)
        return ncclSystemError;
    c->h = nullptr;
    c->nranks = nranks;
    c->rank = rank;
    c->timeout_s = timeout_seconds();
    ncclResult_t r = map_segment(c, id.internal, nranks);
    if (r == ncclSuccess)
        r = join(c);
    if (r != ncclSuccess) {
        unmap(c);
        delete c;
        return r;
    }
    *comm = c;
    return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError)
{
    if (!comm || !asyncError)
        return ncclInvalidArgument;
    *asyncError = (ncclResult_t)comm->async.load();
    return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) { return leave(comm); }
ncclResult_t ncclCommAbort(ncclComm_t comm) { return leave(comm); }

} // extern "C"
