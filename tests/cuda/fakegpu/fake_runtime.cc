// fake_runtime.cc — the CUDA runtime on the host: one fake H200 whose
// "device" memory is host memory, streams whose work runs later than it is
// issued and in a shuffled order between streams, and stream capture into
// graphs that replay the recorded work.
//
// Issued work waits in its stream's queue.  It runs when the host must see
// its effect (a stream or event synchronisation, a synchronous copy, a free
// of memory, a copy to pageable memory), the awaited stream's first; with
// FAKEGPU_ORDER=shuffle also, every other time, as other work is issued.
// Otherwise the next piece is picked at random among the streams whose
// first piece may run: in stream order, after the events it waits on were
// reached, and across the legacy default stream's implicit barrier.  A
// missing event wait between two streams, or a buffer reused before the
// copy reading it ran, then gives wrong data, as it may on a GPU.
// FAKEGPU_SEED picks the order (default 1).
//
// FAKEGPU_DEVICES=N (1..16, default 1) makes it N such GPUs: a current
// device per thread (cudaSetDevice), each device's allocations counted
// apart (cudaMemGetInfo, the 16 GiB limit), but all of it the one host
// memory (peer access is free, and a stream serves any device).  FAKEGPU_TRACE_DEVICE=FILE
// appends "RANK PID WHAT DEVICE" the first time the process sets (set),
// allocates on (malloc) or makes a stream on (stream) a device, RANK from
// the launcher's environment ("-" without one), so a test sees which GPU
// each rank of a job used.
//
// It is stricter than it needs to be for the maths, on purpose: device
// memory starts as 0xFF bytes (NaN in float and half), copies and memsets
// check their operands against the live allocations, and the calls the
// real runtime refuses during a capture are refused here too (and break the
// capture), so the backend's capture fallback runs in CI.  Every failing
// call sets the last error, as the real runtime does.
#include "fakegpu.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

// tests/cuda/emu/cuda_emu.cc: the emulated kernels' launch error, if any
cudaError_t dlg_emu_get_last_error();

namespace {

// What a recorded operation is: a graph update must see the same sequence.
enum op_kind { OP_WORK, OP_COPY, OP_SET, OP_EVENT };

struct op {
    op_kind kind;
    std::function<void()> run;
    bool blocking; // fakegpu_submit_blocking's: waits for other threads' work
};
using op_list = std::vector<op>;

struct capture {
    cudaStream_t origin; // the stream that began it (only it may end it)
    cudaStreamCaptureMode mode;
    std::thread::id thread;
    bool invalid; // an unsupported call broke it: EndCapture fails
    op_list ops;
};

struct block {
    size_t size;
    bool device; // cudaMalloc; else cudaHostAlloc (pinned, device-accessible)
    int dev;     // the current device when it was made
};

using clock_type = std::chrono::steady_clock;

} // namespace

struct CUevent_st;

namespace {
// What a piece of queued work waits for: its stream's piece n (or an
// event's record n) to have run.
struct after {
    const CUstream_st *stream;
    const CUevent_st *event;
    uint64_t n;
};
struct pending {
    std::function<void()> run; // empty: only a wait
    std::vector<after> deps;
    // a piece that blocks until other threads' pieces ran (another rank's
    // collective) runs on the thread that issued it only, as a GPU runs each
    // rank's on its own: on another thread it could wait for work that thread
    // has yet to issue.  Default: any thread.
    std::thread::id owner;
};
} // namespace

struct CUstream_st {
    unsigned flags;
    uint64_t capture; // the capture sequence the stream is part of; 0: none
    std::deque<pending> queue; // issued, not yet run
    uint64_t issued = 0, ran = 0;
    bool busy = false; // its first piece is running (on some thread)
};

struct CUevent_st {
    unsigned flags;
    uint64_t serial; // tells a recycled address from the event a graph recorded
    bool recorded;
    clock_type::time_point at;
    uint64_t capture; // the capture it was last recorded into; 0: a plain record
    uint64_t records = 0, reached = 0; // plain records issued, and run
};

struct CUgraph_st {
    op_list ops;
};

struct CUgraphExec_st {
    op_list ops;
};

namespace {

constexpr size_t kTotalMem = (size_t)16 << 30; // per device
constexpr int kMaxDevices = 16;
constexpr size_t kAlign = 256;

// g_mu guards all the state below; it is never held while work runs.
std::mutex g_mu;
CUstream_st g_legacy{0, 0, {}, 0, 0};     // stream 0 and cudaStreamLegacy
CUstream_st g_per_thread{0, 0, {}, 0, 0}; // cudaStreamPerThread (one for all threads)
// one piece of work runs at a time (the emulated kernels share globals),
// but a piece that blocks on another thread's work (fake_nccl.cc: a rank's
// collective waits for the other ranks' on their streams) lets go of it
std::mutex g_exec;
thread_local std::unique_lock<std::mutex> *t_exec; // held by this thread's run_one
uint64_t g_rng; // the order queued work runs in (FAKEGPU_SEED)
int g_shuffle = -1; // FAKEGPU_ORDER=shuffle: some work runs as other work is issued
std::set<CUstream_st *> g_streams;
std::set<CUevent_st *> g_events;
int g_event_fail_in; // fakegpu_fail_event_create: creations until one fails (0: none)
uint64_t g_host_waits; // fakegpu_host_waits: calls that wait for the device
std::set<CUgraph_st *> g_graphs;
std::set<CUgraphExec_st *> g_execs;
std::map<uint64_t, capture> g_captures; // open capture sequences
uint64_t g_next_id = 1;                 // capture ids and event serials
std::map<uintptr_t, block> g_blocks;    // live allocations by address
size_t g_device_bytes[kMaxDevices];     // live cudaMalloc bytes, by device
std::set<std::pair<std::string, int>> g_traced; // (what, device) lines written (FAKEGPU_TRACE_DEVICE)

// At exit, device and pinned memory nobody freed: a leak in the backend
// (every net it planned was destroyed by then).  With FAKEGPU_LEAKS=fail
// the process exits 70 after saying so, so a test can require none.
// Declared after g_blocks, so it runs before g_blocks is destroyed.
struct leak_report {
    ~leak_report()
    {
        if (g_blocks.empty())
            return;
        size_t bytes = 0;
        for (const auto &b : g_blocks)
            bytes += b.second.size;
        fprintf(stderr, "fakegpu: %zu allocations (%zu bytes) never freed\n", g_blocks.size(),
                bytes);
        const char *mode = getenv("FAKEGPU_LEAKS");
        if (mode && strcmp(mode, "fail") == 0)
            _exit(70);
    }
} g_leak_report;

// per thread, like the real runtime's
thread_local cudaError_t t_error = cudaSuccess;
thread_local int t_device = 0; // cudaSetDevice's; 0 until a thread sets one, as in cudart

cudaError_t fail(cudaError_t e)
{
    t_error = e;
    return e;
}

// A misuse the real runtime might not report (or would report as a crash).
__attribute__((format(printf, 1, 2))) void complain(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fakegpu: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

// FAKEGPU_DEVICES, read once: the GPUs there are.
int device_count()
{
    static const int n = []() {
        const char *v = getenv("FAKEGPU_DEVICES");
        if (!v)
            return 1;
        char *end;
        long d = strtol(v, &end, 10);
        if (end == v || *end || d < 1 || d > kMaxDevices) {
            complain("FAKEGPU_DEVICES=%s: expected 1..%d; one device", v, kMaxDevices);
            return 1;
        }
        return (int)d;
    }();
    return n;
}

// The first time this process does what on device, one line in
// FAKEGPU_TRACE_DEVICE's file (one write of O_APPEND: ranks' lines do not
// mix).  Called with g_mu held.
void trace_device(const char *what, int device)
{
    const char *path = getenv("FAKEGPU_TRACE_DEVICE");
    if (!path || !*path || !g_traced.insert({what, device}).second)
        return;
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    if (!rank)
        rank = getenv("PMI_RANK");
    if (!rank)
        rank = getenv("SLURM_PROCID");
    char line[96];
    int n = snprintf(line, sizeof line, "%s %ld %s %d\n", rank ? rank : "-", (long)getpid(), what,
                     device);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, line, (size_t)n) != n)
        complain("FAKEGPU_TRACE_DEVICE=%s: cannot append to it", path);
    if (fd >= 0)
        close(fd);
}

bool is_legacy(cudaStream_t s) { return s == nullptr || s == cudaStreamLegacy; }

CUstream_st *stream_of(cudaStream_t s)
{
    if (is_legacy(s))
        return &g_legacy;
    if (s == cudaStreamPerThread)
        return &g_per_thread;
    return g_streams.count(s) ? s : nullptr;
}

capture *capture_of(const CUstream_st *st)
{
    auto it = g_captures.find(st->capture);
    return it == g_captures.end() ? nullptr : &it->second;
}

bool capture_open(uint64_t id) { return id && g_captures.count(id); }

bool capturing_any()
{
    std::lock_guard<std::mutex> lock(g_mu);
    return !g_captures.empty();
}

template <class F> void each_stream(F f)
{
    f(&g_legacy);
    f(&g_per_thread);
    for (CUstream_st *st : g_streams)
        f(st);
}

// A "potentially unsafe" call (one that may synchronize or allocate) is
// refused while this thread captures in a mode other than relaxed, or while
// any thread captures in global mode; the refusal invalidates those
// captures.  True when the call must fail with StreamCaptureUnsupported.
bool unsafe_during_capture()
{
    bool hit = false;
    for (auto &kv : g_captures) {
        capture &c = kv.second;
        if (c.mode == cudaStreamCaptureModeGlobal ||
            (c.mode == cudaStreamCaptureModeThreadLocal &&
             c.thread == std::this_thread::get_id())) {
            c.invalid = true;
            hit = true;
        }
    }
    return hit;
}

// Work on the legacy stream waits for every blocking stream, a dependency a
// capture cannot hold: it fails (StreamCaptureImplicit) and invalidates the
// captures of blocking streams.
bool legacy_breaks_capture(cudaStream_t s)
{
    if (!is_legacy(s))
        return false;
    bool hit = false;
    each_stream([&](CUstream_st *st) {
        capture *c = capture_of(st);
        if (c && !(st->flags & cudaStreamNonBlocking)) {
            c->invalid = true;
            hit = true;
        }
    });
    return hit;
}

uint64_t next_rand()
{
    if (!g_rng) {
        const char *seed = getenv("FAKEGPU_SEED");
        g_rng = (seed ? strtoull(seed, nullptr, 10) : 1) * 0x9e3779b97f4a7c15ull | 1;
    }
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}

// Queues fn (or, if null, a wait for event e's latest record) on st, after
// what the legacy stream's implicit synchronisation orders it after: the
// legacy stream's work waits for every blocking stream's earlier work, and
// a blocking stream's work for the legacy stream's.  g_mu held.
void queue_work(CUstream_st *st, std::function<void()> fn, const CUevent_st *e,
                std::thread::id owner = {})
{
    pending p{std::move(fn), {}, owner};
    if (e && e->records)
        p.deps.push_back({nullptr, e, e->records});
    if (st == &g_legacy) {
        each_stream([&](CUstream_st *o) {
            if (o != &g_legacy && !(o->flags & cudaStreamNonBlocking) && o->issued)
                p.deps.push_back({o, nullptr, o->issued});
        });
    } else if (!(st->flags & cudaStreamNonBlocking) && g_legacy.issued) {
        p.deps.push_back({&g_legacy, nullptr, g_legacy.issued});
    }
    st->queue.push_back(std::move(p));
    st->issued++;
}

// Whether p may run; a wait on a stream or event destroyed since (with a
// capture open, so nothing drained first) is over.  g_mu held.
bool ready(const pending &p)
{
    for (const after &a : p.deps) {
        if (a.stream && (a.stream == &g_legacy || a.stream == &g_per_thread ||
                         g_streams.count(const_cast<CUstream_st *>(a.stream))) &&
            a.stream->ran < a.n)
            return false;
        if (a.event && g_events.count(const_cast<CUevent_st *>(a.event)) && a.event->reached < a.n)
            return false;
    }
    return true;
}

bool mine(const pending &p)
{
    return p.owner == std::thread::id() || p.owner == std::this_thread::get_id();
}

// Runs one piece of queued work: the first piece of `want` if it may run,
// else one picked at random among the streams whose first piece may run;
// false when none may.  g_mu not held.
bool run_one(const CUstream_st *want = nullptr)
{
    std::unique_lock<std::mutex> exec(g_exec);
    CUstream_st *st = nullptr;
    std::function<void()> fn;
    {
        std::lock_guard<std::mutex> lock(g_mu);
        std::vector<CUstream_st *> can;
        each_stream([&](CUstream_st *o) {
            if (!o->busy && !o->queue.empty() && ready(o->queue.front()) &&
                mine(o->queue.front()))
                can.push_back(o);
        });
        if (can.empty())
            return false;
        st = can[next_rand() % can.size()];
        for (CUstream_st *o : can)
            if (o == want) // what the host waits for first: the rest stays late
                st = o;
        fn = std::move(st->queue.front().run);
        st->busy = true;
    }
    std::unique_lock<std::mutex> *outer = t_exec;
    t_exec = &exec;
    if (fn)
        fn();
    t_exec = outer;
    std::lock_guard<std::mutex> lock(g_mu);
    st->busy = false;
    st->queue.pop_front();
    st->ran++;
    return true;
}

// Whether another thread runs a piece, or must run one (g_mu held): then a
// wait ends when it has, not never.
bool others_run()
{
    bool busy = false;
    each_stream([&](CUstream_st *o) {
        busy = busy || o->busy || (!o->queue.empty() && !mine(o->queue.front()));
    });
    return busy;
}

// Runs queued work until done() (evaluated with g_mu held) holds, the
// first pieces of `want` before any other stream's.
template <class F> void drain_until(F done, const CUstream_st *want = nullptr)
{
    for (;;) {
        {
            std::lock_guard<std::mutex> lock(g_mu);
            if (done())
                return;
        }
        if (!run_one(want)) {
            bool wait;
            {
                std::lock_guard<std::mutex> lock(g_mu);
                wait = !done() && others_run(); // (done: a piece ran meanwhile)
                if (done())
                    return;
            }
            if (wait) { // another thread's piece: it ends, or times out
                std::this_thread::sleep_for(std::chrono::microseconds(200));
                continue;
            }
            complain("queued work waits on something that never runs");
            return;
        }
    }
}

// Everything issued so far has run (the device is idle), but a stream held
// up by another thread's blocking piece: that is another rank's GPU, which
// this thread's cudaFree or cudaDeviceSynchronize would not wait for.
void drain_all()
{
    drain_until([]() {
        bool idle = true;
        each_stream([&](CUstream_st *o) {
            idle = idle && (o->queue.empty() || !mine(o->queue.front()));
        });
        return idle;
    });
}

// st's work issued so far has run.  g_mu not held.
void drain_stream(CUstream_st *st)
{
    uint64_t n;
    {
        std::lock_guard<std::mutex> lock(g_mu);
        n = st->issued;
    }
    drain_until([st, n]() { return st->ran >= n; }, st);
}

// Runs fn later on s (see queue_work), or records it into the capture of s.
cudaError_t enqueue(cudaStream_t s, op_kind kind, std::function<void()> fn, const char *api,
                    bool blocking = false)
{
    bool go;
    {
        std::lock_guard<std::mutex> lock(g_mu);
        CUstream_st *st = stream_of(s);
        if (!st) {
            complain("%s: unknown or destroyed stream %p", api, (void *)s);
            return fail(cudaErrorInvalidResourceHandle);
        }
        if (capture *c = capture_of(st)) {
            if (c->invalid)
                return fail(cudaErrorStreamCaptureInvalidated);
            c->ops.push_back(op{kind, std::move(fn), blocking});
            return cudaSuccess;
        }
        if (legacy_breaks_capture(s))
            return fail(cudaErrorStreamCaptureImplicit);
        queue_work(st, std::move(fn), nullptr,
                   blocking ? std::this_thread::get_id() : std::thread::id());
        if (g_shuffle < 0) {
            const char *order = getenv("FAKEGPU_ORDER");
            g_shuffle = order && strcmp(order, "shuffle") == 0;
        }
        go = g_shuffle && next_rand() % 2 == 0;
    }
    if (go) // now and then, so streams interleave while the host works
        run_one();
    return cudaSuccess;
}

// The live allocation holding p, or null.
const block *block_of(const void *p, uintptr_t *base)
{
    auto it = g_blocks.upper_bound((uintptr_t)p);
    if (it == g_blocks.begin())
        return nullptr;
    --it;
    if ((uintptr_t)p - it->first >= it->second.size)
        return nullptr;
    *base = it->first;
    return &it->second;
}

// How an operand of a copy or memset may be placed.
enum side {
    SIDE_DEVICE, // in one live cudaMalloc or cudaHostAlloc block
    SIDE_HOST,   // anywhere but in cudaMalloc memory
    SIDE_ANY     // cudaMemcpyDefault: either
};

// Whether the bytes an operand spans are placed as `where` says, and inside
// one block wherever they fall in one.  Complains when not.
bool operand_ok(const char *api, const char *what, const void *p, size_t bytes, side where)
{
    if (!bytes)
        return true;
    if (!p) {
        complain("%s: %s is NULL", api, what);
        return false;
    }
    uintptr_t base = 0;
    const block *b = block_of(p, &base);
    if (!b) {
        if (where != SIDE_DEVICE)
            return true; // pageable host memory: nothing to check
        complain("%s: %s %p is not in device memory (no live cudaMalloc/cudaHostAlloc block)",
                 api, what, p);
        return false;
    }
    if (where == SIDE_HOST && b->device) {
        complain("%s: %s %p is device memory but the copy's kind says host", api, what, p);
        return false;
    }
    size_t off = (uintptr_t)p - base;
    if (bytes > b->size - off) {
        complain("%s: %s spans %zu bytes from offset %zu of a %zu-byte block", api, what, bytes,
                 off, b->size);
        return false;
    }
    return true;
}

// The placement rule of each side of a copy; false for an unknown kind.
bool copy_sides(cudaMemcpyKind kind, side *dst, side *src)
{
    switch (kind) {
    case cudaMemcpyHostToHost:
        *dst = *src = SIDE_HOST;
        return true;
    case cudaMemcpyHostToDevice:
        *dst = SIDE_DEVICE;
        *src = SIDE_HOST;
        return true;
    case cudaMemcpyDeviceToHost:
        *dst = SIDE_HOST;
        *src = SIDE_DEVICE;
        return true;
    case cudaMemcpyDeviceToDevice:
        *dst = *src = SIDE_DEVICE;
        return true;
    case cudaMemcpyDefault:
        *dst = *src = SIDE_ANY;
        return true;
    }
    return false;
}

// The bytes a pitched region of height rows of width bytes spans.
size_t extent(size_t width, size_t height, size_t pitch)
{
    return height ? (height - 1) * pitch + width : 0;
}

// Checks a copy's operands (dst_bytes, src_bytes: the spans they cover).
cudaError_t check_copy(const char *api, void *dst, size_t dst_bytes, const void *src,
                       size_t src_bytes, cudaMemcpyKind kind)
{
    side ds, ss;
    if (!copy_sides(kind, &ds, &ss)) {
        complain("%s: unknown copy kind %d", api, (int)kind);
        return fail(cudaErrorInvalidMemcpyDirection);
    }
    std::lock_guard<std::mutex> lock(g_mu);
    if (!operand_ok(api, "dst", dst, dst_bytes, ds) || !operand_ok(api, "src", src, src_bytes, ss))
        return fail(cudaErrorInvalidValue);
    return cudaSuccess;
}

// Overlapping source and destination are undefined on the device.
bool overlap(const void *dst, const void *src, size_t count)
{
    uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;
    return d != s && d < s + count && s < d + count;
}

CUstream_st *stream_of_locked(cudaStream_t s)
{
    std::lock_guard<std::mutex> lock(g_mu);
    return stream_of(s);
}

cudaError_t copy(const char *api, void *dst, const void *src, size_t count, cudaMemcpyKind kind,
                 cudaStream_t stream)
{
    if (cudaError_t e = check_copy(api, dst, count, src, count, kind))
        return e;
    if (overlap(dst, src, count)) {
        complain("%s: %p and %p overlap (%zu bytes)", api, dst, src, count);
        return fail(cudaErrorInvalidValue);
    }
    if (!count)
        return cudaSuccess;
    bool from_pageable, to_pageable;
    {
        std::lock_guard<std::mutex> lock(g_mu);
        uintptr_t base;
        from_pageable = !block_of(src, &base);
        to_pageable = !block_of(dst, &base);
    }
    cudaError_t e;
    if (from_pageable && !fakegpu::capturing(stream)) {
        // from pageable memory the runtime stages the bytes before returning
        auto bytes = std::make_shared<std::vector<char>>((const char *)src,
                                                         (const char *)src + count);
        e = enqueue(stream, OP_COPY, [dst, bytes]() { memcpy(dst, bytes->data(), bytes->size()); },
                    api);
    } else {
        e = enqueue(stream, OP_COPY, [dst, src, count]() { memmove(dst, src, count); }, api);
    }
    if (!e && to_pageable && !fakegpu::capturing(stream))
        drain_stream(stream_of_locked(stream)); // to pageable memory: returns when done
    return e;
}

cudaError_t event_ok(cudaEvent_t e)
{
    if (!e || !g_events.count(e)) {
        if (e)
            complain("unknown or destroyed event %p", (void *)e);
        return fail(cudaErrorInvalidResourceHandle);
    }
    return cudaSuccess;
}

// The record itself (record n of the event; 0 in a graph's replay), when
// the work before it has run; a no-op if the event has been destroyed since.
void mark(CUevent_st *e, uint64_t serial, uint64_t n)
{
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_events.count(e) && e->serial == serial) {
        e->recorded = true;
        e->at = clock_type::now();
        if (n > e->reached)
            e->reached = n;
    }
}

// cudaEventQuery (block = false) and cudaEventSynchronize: whether the
// work before the latest record has run (running it, or a piece of queued
// work for a query); asking during a capture is as illegal as on the device.
cudaError_t event_wait(cudaEvent_t e, bool block)
{
    uint64_t n;
    {
        std::lock_guard<std::mutex> lock(g_mu);
        g_host_waits += block;
        if (cudaError_t r = event_ok(e))
            return r;
        if (unsafe_during_capture())
            return fail(cudaErrorStreamCaptureUnsupported);
        if (capture_open(e->capture))
            return fail(cudaErrorCapturedEvent);
        n = e->records;
        if (e->reached >= n)
            return cudaSuccess;
    }
    if (block)
        drain_until([e, n]() { return !g_events.count(e) || e->reached >= n; });
    else
        run_one();
    std::lock_guard<std::mutex> lock(g_mu);
    return !g_events.count(e) || e->reached >= n ? cudaSuccess : fail(cudaErrorNotReady);
}

cudaError_t alloc(void **p, size_t size, bool device)
{
    if (!p)
        return fail(cudaErrorInvalidValue);
    *p = nullptr;
    std::lock_guard<std::mutex> lock(g_mu);
    if (unsafe_during_capture())
        return fail(cudaErrorStreamCaptureUnsupported);
    if (!size)
        return cudaSuccess; // as cudart: success, and a null pointer
    if (fakegpu::resource_fails(device ? "cudaMalloc" : "cudaHostAlloc"))
        return fail(cudaErrorMemoryAllocation);
    if (device && size > kTotalMem - g_device_bytes[t_device])
        return fail(cudaErrorMemoryAllocation);
    // exactly size bytes (not rounded up), so ASan sees an overrun
    void *q = nullptr;
    if (posix_memalign(&q, kAlign, size))
        return fail(cudaErrorMemoryAllocation);
    // real device memory is uninitialised: NaN in float and half catches reads
    memset(q, 0xFF, size);
    g_blocks[(uintptr_t)q] = block{size, device, t_device};
    if (device) {
        g_device_bytes[t_device] += size;
        trace_device("malloc", t_device);
    }
    *p = q;
    return cudaSuccess;
}

cudaError_t release(void *p, bool device, const char *api)
{
    if (!p)
        return cudaSuccess;
    if (!capturing_any())
        drain_all(); // as cudaFree: the device is idle first
    std::lock_guard<std::mutex> lock(g_mu);
    if (unsafe_during_capture())
        return fail(cudaErrorStreamCaptureUnsupported);
    auto it = g_blocks.find((uintptr_t)p);
    if (it == g_blocks.end() || it->second.device != device) {
        complain("%s(%p): not the start of a live %s allocation", api, p,
                 device ? "cudaMalloc" : "cudaHostAlloc");
        return fail(cudaErrorInvalidValue);
    }
    memset(p, 0xFF, it->second.size); // stale reads through a graph see NaN
    if (device)
        g_device_bytes[it->second.dev] -= it->second.size;
    g_blocks.erase(it);
    free(p);
    return cudaSuccess;
}

// Deletes p if it is one of live (a graph or an executable graph).
template <class T> cudaError_t destroy_live(std::set<T *> &live, T *p)
{
    std::lock_guard<std::mutex> lock(g_mu);
    if (!live.erase(p))
        return fail(cudaErrorInvalidValue);
    delete p;
    return cudaSuccess;
}

// The node sequence a graph update must keep.
cudaGraphExecUpdateResult same_topology(const op_list &a, const op_list &b)
{
    if (a.size() != b.size())
        return cudaGraphExecUpdateErrorTopologyChanged;
    for (size_t i = 0; i < a.size(); i++)
        if (a[i].kind != b[i].kind)
            return cudaGraphExecUpdateErrorNodeTypeChanged;
    return cudaGraphExecUpdateSuccess;
}

} // namespace

namespace fakegpu {

void submit(cudaStream_t s, std::function<void()> op)
{
    // a refusal leaves its error for the caller's next cudaGetLastError
    enqueue(s, OP_WORK, std::move(op), "fakegpu::submit");
}

bool capturing(cudaStream_t s)
{
    std::lock_guard<std::mutex> lock(g_mu);
    CUstream_st *st = stream_of(s);
    return st && st->capture;
}

// Whether [p, p + bytes) lies in one live cudaMalloc/cudaHostAlloc block, for
// the fake libraries' operands; complains (naming what) when not.
bool device_range_ok(const void *p, size_t bytes, const char *what)
{
    std::lock_guard<std::mutex> lock(g_mu);
    return operand_ok(what, "operand", p, bytes, SIDE_DEVICE);
}

} // namespace fakegpu

/* For fake_nccl.cc (a library of its own that finds these with dlsym): run
 * op on s in stream order like fakegpu::submit, where op may block until
 * other threads' pieces ran (another rank's collective): while it runs, the
 * other streams' work may run on other threads.  cudaErrorInvalidResourceHandle,
 * silently, when s is not a stream of this runtime (a second copy of it,
 * e.g. in cuda-probe.so, is asked next). */
extern "C" __attribute__((visibility("default"))) cudaError_t
fakegpu_submit_blocking(cudaStream_t s, std::function<void()> *op)
{
    {
        std::lock_guard<std::mutex> lock(g_mu);
        if (!stream_of(s))
            return cudaErrorInvalidResourceHandle;
    }
    return enqueue(s, OP_WORK, [fn = std::move(*op)]() {
        std::unique_lock<std::mutex> *exec = t_exec;
        if (exec)
            exec->unlock();
        fn();
        if (exec)
            exec->lock();
    }, "fakegpu_submit_blocking", true);
}

extern "C" {

/* ---- device and versions ------------------------------------------------- */
cudaError_t cudaDriverGetVersion(int *driverVersion)
{
    if (!driverVersion)
        return fail(cudaErrorInvalidValue);
    *driverVersion = 13000;
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
    if (!runtimeVersion)
        return fail(cudaErrorInvalidValue);
    *runtimeVersion = 13000;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int *count)
{
    if (!count)
        return fail(cudaErrorInvalidValue);
    *count = device_count();
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
    if (device < 0 || device >= device_count())
        return fail(cudaErrorInvalidDevice);
    t_device = device;
    std::lock_guard<std::mutex> lock(g_mu);
    trace_device("set", device);
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device)
{
    if (!device)
        return fail(cudaErrorInvalidValue);
    *device = t_device;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    if (!prop)
        return fail(cudaErrorInvalidValue);
    if (device < 0 || device >= device_count())
        return fail(cudaErrorInvalidDevice);
    // CUDA 13's struct has no clock-rate fields any more
    memset(prop, 0, sizeof *prop);
    snprintf(prop->name, sizeof prop->name, "NVIDIA H200 (fakegpu)");
    prop->pciBusID = 0x18 + device; // same-model GPUs differ in where they sit
    prop->totalGlobalMem = kTotalMem;
    prop->sharedMemPerBlock = 48 << 10;
    prop->sharedMemPerBlockOptin = 227 << 10;
    prop->sharedMemPerMultiprocessor = 228 << 10;
    prop->reservedSharedMemPerBlock = 1 << 10;
    prop->regsPerBlock = 65536;
    prop->regsPerMultiprocessor = 65536;
    prop->warpSize = 32;
    prop->memPitch = (size_t)INT32_MAX;
    prop->maxThreadsPerBlock = 1024;
    prop->maxThreadsDim[0] = prop->maxThreadsDim[1] = 1024;
    prop->maxThreadsDim[2] = 64;
    prop->maxGridSize[0] = INT32_MAX;
    prop->maxGridSize[1] = prop->maxGridSize[2] = 65535;
    prop->totalConstMem = 64 << 10;
    prop->major = 9;
    prop->minor = 0;
    prop->textureAlignment = 512;
    prop->texturePitchAlignment = 32;
    prop->multiProcessorCount = 132;
    prop->maxThreadsPerMultiProcessor = 2048;
    prop->maxBlocksPerMultiProcessor = 32;
    prop->l2CacheSize = 50 << 20;
    prop->memoryBusWidth = 6144;
    prop->asyncEngineCount = 2;
    prop->canMapHostMemory = 1;
    prop->concurrentKernels = 1;
    prop->unifiedAddressing = 1;
    prop->managedMemory = 1;
    prop->cooperativeLaunch = 1;
    prop->streamPrioritiesSupported = 1;
    prop->globalL1CacheSupported = 1;
    prop->localL1CacheSupported = 1;
    prop->computePreemptionSupported = 1;
    prop->memoryPoolsSupported = 1;
    prop->clusterLaunch = 1;
    return cudaSuccess;
}

cudaError_t cudaGetLastError(void)
{
    // the emulator keeps the kernels' launch errors; one read clears both
    cudaError_t emu = dlg_emu_get_last_error();
    cudaError_t e = t_error;
    t_error = cudaSuccess;
    return e != cudaSuccess ? e : emu;
}

const char *cudaGetErrorString(cudaError_t error)
{
#define E(name) {name, #name}
    static const struct {
        cudaError_t code;
        const char *name;
    } names[] = {
        E(cudaSuccess),
        E(cudaErrorInvalidValue),
        E(cudaErrorMemoryAllocation),
        E(cudaErrorInitializationError),
        E(cudaErrorInvalidConfiguration),
        E(cudaErrorInvalidPitchValue),
        E(cudaErrorInvalidMemcpyDirection),
        E(cudaErrorInsufficientDriver),
        E(cudaErrorInvalidDevice),
        E(cudaErrorNoDevice),
        E(cudaErrorInvalidDeviceFunction),
        E(cudaErrorNoKernelImageForDevice),
        E(cudaErrorInvalidResourceHandle),
        E(cudaErrorIllegalState),
        E(cudaErrorNotReady),
        E(cudaErrorIllegalAddress),
        E(cudaErrorLaunchOutOfResources),
        E(cudaErrorLaunchTimeout),
        E(cudaErrorLaunchFailure),
        E(cudaErrorMisalignedAddress),
        E(cudaErrorNotSupported),
        E(cudaErrorStreamCaptureUnsupported),
        E(cudaErrorStreamCaptureInvalidated),
        E(cudaErrorStreamCaptureMerge),
        E(cudaErrorStreamCaptureUnmatched),
        E(cudaErrorStreamCaptureUnjoined),
        E(cudaErrorStreamCaptureIsolation),
        E(cudaErrorStreamCaptureImplicit),
        E(cudaErrorCapturedEvent),
        E(cudaErrorStreamCaptureWrongThread),
        E(cudaErrorGraphExecUpdateFailure),
        E(cudaErrorUnknown),
    };
#undef E
    for (const auto &n : names)
        if (n.code == error)
            return n.name;
    return "unrecognized error code";
}

/* ---- memory -------------------------------------------------------------- */
cudaError_t cudaMalloc(void **devPtr, size_t size) { return alloc(devPtr, size, true); }

cudaError_t cudaFree(void *devPtr) { return release(devPtr, true, "cudaFree"); }

cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    if (flags & ~(unsigned)(cudaHostAllocPortable | cudaHostAllocMapped |
                            cudaHostAllocWriteCombined))
        return fail(cudaErrorInvalidValue);
    return alloc(pHost, size, false);
}

cudaError_t cudaFreeHost(void *ptr) { return release(ptr, false, "cudaFreeHost"); }

cudaError_t cudaMemGetInfo(size_t *free, size_t *total)
{
    if (!free || !total)
        return fail(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(g_mu);
    *total = kTotalMem;
    *free = kTotalMem - g_device_bytes[t_device];
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream)
{
    return copy("cudaMemcpyAsync", dst, src, count, kind, stream);
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    {
        // synchronous: waits for the device, which a capture forbids
        std::lock_guard<std::mutex> lock(g_mu);
        g_host_waits++;
        if (unsafe_during_capture())
            return fail(cudaErrorStreamCaptureUnsupported);
    }
    // on the legacy stream, after all earlier work, and waited for
    cudaError_t e = copy("cudaMemcpy", dst, src, count, kind, cudaStreamLegacy);
    if (!e)
        drain_stream(&g_legacy);
    return e;
}

cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                              size_t width, size_t height, enum cudaMemcpyKind kind,
                              cudaStream_t stream)
{
    if (width > dpitch || width > spitch)
        return fail(cudaErrorInvalidPitchValue);
    if (cudaError_t e = check_copy("cudaMemcpy2DAsync", dst, extent(width, height, dpitch), src,
                                   extent(width, height, spitch), kind))
        return e;
    if (!width || !height)
        return cudaSuccess;
    return enqueue(
        stream, OP_COPY,
        [=]() {
            for (size_t r = 0; r < height; r++)
                memmove((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
        },
        "cudaMemcpy2DAsync");
}

cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    {
        std::lock_guard<std::mutex> lock(g_mu);
        if (!operand_ok("cudaMemsetAsync", "devPtr", devPtr, count, SIDE_DEVICE))
            return fail(cudaErrorInvalidValue);
    }
    if (!count)
        return cudaSuccess;
    return enqueue(stream, OP_SET, [devPtr, value, count]() { memset(devPtr, value, count); },
                   "cudaMemsetAsync");
}

/* ---- streams and capture ------------------------------------------------- */
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    if (!pStream || (flags & ~(unsigned)cudaStreamNonBlocking))
        return fail(cudaErrorInvalidValue);
    if (fakegpu::resource_fails("cudaStreamCreateWithFlags"))
        return fail(cudaErrorMemoryAllocation);
    CUstream_st *st = new CUstream_st{flags, 0, {}, 0, 0};
    std::lock_guard<std::mutex> lock(g_mu);
    trace_device("stream", t_device);
    g_streams.insert(st);
    *pStream = st;
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    if (!capturing_any())
        drain_all(); // its work completes first (the device would finish it)
    std::lock_guard<std::mutex> lock(g_mu);
    if (!stream || !g_streams.count(stream)) {
        complain("cudaStreamDestroy: unknown or destroyed stream %p", (void *)stream);
        return fail(cudaErrorInvalidResourceHandle);
    }
    // a capture it began is abandoned (its other streams leave it too)
    capture *c = capture_of(stream);
    if (c && c->origin == stream) {
        uint64_t id = stream->capture;
        each_stream([id](CUstream_st *st) {
            if (st->capture == id)
                st->capture = 0;
        });
        g_captures.erase(id);
    }
    g_streams.erase(stream);
    delete stream;
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    CUstream_st *st;
    {
        std::lock_guard<std::mutex> lock(g_mu);
        g_host_waits++;
        st = stream_of(stream);
        if (!st) {
            complain("cudaStreamSynchronize: unknown or destroyed stream %p", (void *)stream);
            return fail(cudaErrorInvalidResourceHandle);
        }
        if (capture *c = capture_of(st)) {
            c->invalid = true;
            return fail(cudaErrorStreamCaptureUnsupported);
        }
        if (legacy_breaks_capture(stream))
            return fail(cudaErrorStreamCaptureImplicit);
    }
    drain_stream(st);
    return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    std::lock_guard<std::mutex> lock(g_mu);
    CUstream_st *st = stream_of(stream);
    if (!st) {
        complain("cudaStreamWaitEvent: unknown or destroyed stream %p", (void *)stream);
        return fail(cudaErrorInvalidResourceHandle);
    }
    if (cudaError_t e = event_ok(event))
        return e;
    if (flags & ~(unsigned)cudaEventWaitExternal)
        return fail(cudaErrorInvalidValue);
    // Waiting on an event recorded in a capture joins that capture (a
    // fork), as on the device; outside a capture the stream's later work
    // waits in its queue until the event's latest record has run.
    if (capture_open(event->capture)) {
        if (st->capture && st->capture != event->capture)
            return fail(cudaErrorStreamCaptureIsolation);
        if (!st->capture && is_legacy(stream))
            return fail(cudaErrorStreamCaptureImplicit);
        st->capture = event->capture;
    } else if (!st->capture) {
        queue_work(st, nullptr, event);
    }
    return cudaSuccess;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
    std::lock_guard<std::mutex> lock(g_mu);
    CUstream_st *st = stream_of(stream);
    if (!st)
        return fail(cudaErrorInvalidResourceHandle);
    if (mode != cudaStreamCaptureModeGlobal && mode != cudaStreamCaptureModeThreadLocal &&
        mode != cudaStreamCaptureModeRelaxed)
        return fail(cudaErrorInvalidValue);
    if (is_legacy(stream))
        return fail(cudaErrorStreamCaptureUnsupported);
    if (st->capture)
        return fail(cudaErrorIllegalState);
    uint64_t id = g_next_id++;
    g_captures[id] = capture{stream, mode, std::this_thread::get_id(), false, {}};
    st->capture = id;
    return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
    if (!pGraph)
        return fail(cudaErrorInvalidValue);
    *pGraph = nullptr;
    std::lock_guard<std::mutex> lock(g_mu);
    CUstream_st *st = stream_of(stream);
    if (!st)
        return fail(cudaErrorInvalidResourceHandle);
    capture *c = capture_of(st);
    if (!c)
        return fail(cudaErrorIllegalState);
    if (c->origin != stream)
        return fail(cudaErrorStreamCaptureUnmatched);
    if (c->mode != cudaStreamCaptureModeRelaxed && c->thread != std::this_thread::get_id())
        return fail(cudaErrorStreamCaptureWrongThread);
    // every stream (the origin and the forks) leaves capture mode
    uint64_t id = st->capture;
    each_stream([id](CUstream_st *s) {
        if (s->capture == id)
            s->capture = 0;
    });
    capture done = std::move(*c);
    g_captures.erase(id);
    if (done.invalid)
        return fail(cudaErrorStreamCaptureInvalidated);
    if (fakegpu::resource_fails("cudaStreamEndCapture")) // the capture ended all the same
        return fail(cudaErrorMemoryAllocation);
    CUgraph_st *g = new CUgraph_st{std::move(done.ops)};
    g_graphs.insert(g);
    *pGraph = g;
    return cudaSuccess;
}

/* ---- graphs -------------------------------------------------------------- */
cudaError_t cudaGraphDestroy(cudaGraph_t graph) { return destroy_live(g_graphs, graph); }

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                 unsigned long long flags)
{
    const unsigned long long known =
        cudaGraphInstantiateFlagAutoFreeOnLaunch | cudaGraphInstantiateFlagUpload |
        cudaGraphInstantiateFlagDeviceLaunch | cudaGraphInstantiateFlagUseNodePriority;
    if (!pGraphExec || (flags & ~known))
        return fail(cudaErrorInvalidValue);
    *pGraphExec = nullptr;
    std::lock_guard<std::mutex> lock(g_mu);
    if (!g_graphs.count(graph))
        return fail(cudaErrorInvalidValue);
    if (fakegpu::resource_fails("cudaGraphInstantiate"))
        return fail(cudaErrorMemoryAllocation);
    // a copy: the graph may be destroyed (or captured again) meanwhile
    CUgraphExec_st *x = new CUgraphExec_st{graph->ops};
    g_execs.insert(x);
    *pGraphExec = x;
    return cudaSuccess;
}

cudaError_t cudaGraphExecUpdate(cudaGraphExec_t hGraphExec, cudaGraph_t hGraph,
                                cudaGraphExecUpdateResultInfo *resultInfo)
{
    if (!resultInfo)
        return fail(cudaErrorInvalidValue);
    memset(resultInfo, 0, sizeof *resultInfo);
    std::lock_guard<std::mutex> lock(g_mu);
    if (!g_execs.count(hGraphExec) || !g_graphs.count(hGraph)) {
        resultInfo->result = cudaGraphExecUpdateError;
        return fail(cudaErrorInvalidValue);
    }
    // the new parameters may differ, the node sequence may not
    resultInfo->result = same_topology(hGraphExec->ops, hGraph->ops);
    if (resultInfo->result != cudaGraphExecUpdateSuccess)
        return fail(cudaErrorGraphExecUpdateFailure);
    hGraphExec->ops = hGraph->ops;
    return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec)
{
    return destroy_live(g_execs, graphExec);
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    {
        std::lock_guard<std::mutex> lock(g_mu);
        if (!g_execs.count(graphExec))
            return fail(cudaErrorInvalidValue);
        CUstream_st *st = stream_of(stream);
        if (!st)
            return fail(cudaErrorInvalidResourceHandle);
        if (capture *c = capture_of(st)) {
            // launched inside another capture: its nodes join that one
            if (c->invalid)
                return fail(cudaErrorStreamCaptureInvalidated);
            c->ops.insert(c->ops.end(), graphExec->ops.begin(), graphExec->ops.end());
            return cudaSuccess;
        }
        if (legacy_breaks_capture(stream))
            return fail(cudaErrorStreamCaptureImplicit);
        // a copy: the exec may be updated or destroyed meanwhile
        bool blocking = false;
        for (const op &o : graphExec->ops)
            blocking = blocking || o.blocking;
        queue_work(st, [ops = graphExec->ops]() {
            for (const op &o : ops)
                o.run();
        }, nullptr, blocking ? std::this_thread::get_id() : std::thread::id());
    }
    return cudaSuccess;
}

/* ---- events -------------------------------------------------------------- */
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    if (!event)
        return fail(cudaErrorInvalidValue);
    *event = nullptr;
    const unsigned known = cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;
    if ((flags & ~known) ||
        ((flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming)))
        return fail(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(g_mu);
    if ((g_event_fail_in > 0 && --g_event_fail_in == 0) ||
        fakegpu::resource_fails("cudaEventCreateWithFlags"))
        return fail(cudaErrorMemoryAllocation);
    CUevent_st *e = new CUevent_st{flags, g_next_id++, false, {}, 0};
    g_events.insert(e);
    *event = e;
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *event) { return cudaEventCreateWithFlags(event, 0); }

// Test hooks: the nth event creation from now (1: the next) fails with
// cudaErrorMemoryAllocation, as the real one does when the device is
// full; and how many events are live (created, not destroyed).
void fakegpu_fail_event_create(int nth)
{
    std::lock_guard<std::mutex> lock(g_mu);
    g_event_fail_in = nth;
}

size_t fakegpu_live_events(void)
{
    std::lock_guard<std::mutex> lock(g_mu);
    return g_events.size();
}

uint64_t fakegpu_host_waits(void)
{
    std::lock_guard<std::mutex> lock(g_mu);
    return g_host_waits;
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    if (!capturing_any())
        drain_all(); // no queued wait may refer to it
    std::lock_guard<std::mutex> lock(g_mu);
    if (cudaError_t e = event_ok(event))
        return e;
    g_events.erase(event);
    delete event;
    return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    uint64_t serial, n;
    {
        std::lock_guard<std::mutex> lock(g_mu);
        if (cudaError_t e = event_ok(event))
            return e;
        serial = event->serial;
        // Recorded into a capture: illegal to query until the capture ends,
        // and (unlike the device, where only an external record node would)
        // it records its time when the graph replays.
        CUstream_st *st = stream_of(stream);
        event->capture = st && capture_open(st->capture) ? st->capture : 0;
        n = event->capture ? 0 : ++event->records; // what later waits wait for
    }
    cudaError_t e = enqueue(stream, OP_EVENT, [event, serial, n]() { mark(event, serial, n); },
                            "cudaEventRecord");
    if (e && n) { // not issued: nothing will reach it
        std::lock_guard<std::mutex> lock(g_mu);
        event->records--;
    }
    return e;
}

cudaError_t cudaEventQuery(cudaEvent_t event) { return event_wait(event, false); }

cudaError_t cudaEventSynchronize(cudaEvent_t event) { return event_wait(event, true); }

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    if (!ms)
        return fail(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(g_mu);
    if (cudaError_t e = event_ok(start))
        return e;
    if (cudaError_t e = event_ok(end))
        return e;
    if (capture_open(start->capture) || capture_open(end->capture))
        return fail(cudaErrorCapturedEvent);
    if ((start->flags | end->flags) & cudaEventDisableTiming)
        return fail(cudaErrorInvalidResourceHandle);
    if (start->reached < start->records || end->reached < end->records)
        return fail(cudaErrorNotReady);
    if (!start->recorded || !end->recorded)
        return fail(cudaErrorInvalidResourceHandle);
    double d = std::chrono::duration<double, std::milli>(end->at - start->at).count();
    // the host clock can tick slower than the work: never report zero time
    *ms = d >= 0 && d < 1e-3 ? 1e-3f : (float)d;
    return cudaSuccess;
}

} // extern "C"
