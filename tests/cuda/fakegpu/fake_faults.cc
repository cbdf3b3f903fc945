// fake_faults.cc — the fake GPU running out: every call of the fake
// libraries that takes a resource (device or pinned memory, a stream, an
// event, a graph, a cuBLAS or cuDNN handle or descriptor) is counted, and
// FAKEGPU_FAIL_AT=n makes the process's n-th one fail once, with the status
// its library returns when it is out of memory.  FAKEGPU_TALLY=FILE gets a
// line "N API" per call as it is made (a cell's process may end without
// running destructors), so a sweep knows how many there are and which is
// which; FAKEGPU_FAIL_TRACE=FILE gets the failed call's name and stack.
// For tests/cuda/fakegpu_oom_sweep.sh.
#include "fakegpu.h"

#include <execinfo.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <mutex>

namespace {

struct fault_plan {
    long fail_at = 0; // 0: none
    const char *tally = nullptr, *trace = nullptr;
};

const fault_plan &plan()
{
    static const fault_plan p = []() {
        fault_plan f;
        const char *at = getenv("FAKEGPU_FAIL_AT");
        f.fail_at = at ? strtol(at, nullptr, 10) : 0;
        f.tally = getenv("FAKEGPU_TALLY");
        f.trace = getenv("FAKEGPU_FAIL_TRACE");
        return f;
    }();
    return p;
}

void write_file(const char *path, int how, const char *text, size_t len, bool with_stack)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | how, 0644);
    if (fd < 0)
        return;
    bool ok = write(fd, text, len) == (ssize_t)len;
    if (ok && with_stack) {
        void *pcs[32];
        backtrace_symbols_fd(pcs, backtrace(pcs, 32), fd);
    }
    close(fd);
}

} // namespace

namespace fakegpu {

bool resource_fails(const char *api)
{
    static std::mutex mu;
    static long calls;
    const fault_plan &p = plan();
    std::lock_guard<std::mutex> lock(mu);
    long n = ++calls;
    char line[128];
    if (p.tally && *p.tally) {
        int len = snprintf(line, sizeof line, "%ld %s\n", n, api);
        write_file(p.tally, O_APPEND, line, (size_t)len, false);
    }
    if (n != p.fail_at)
        return false;
    if (p.trace && *p.trace) {
        int len = snprintf(line, sizeof line, "%s (resource call %ld)\n", api, n);
        write_file(p.trace, O_TRUNC, line, (size_t)len, true);
    }
    return true;
}

} // namespace fakegpu
