// cuda_emu.cc — the fiber scheduler behind cuda_emu.h (see there for why).
//
// One launch: for each block, one fiber per CUDA thread.  The
// scheduler resumes the runnable fibers in a shuffled order until each has
// finished or waits at a barrier; then it releases a barrier whose every
// live participant has arrived (the block's for __syncthreads*, a warp's
// for __ballot_sync).  Nothing runnable and nothing releasable is a
// deadlock: a barrier some threads never reach.
//
// With DLG_EMU_TSAN (this file itself is not instrumented; the kernels
// are) each fiber slot is also a ThreadSanitizer fiber, switched to without
// synchronisation, and the only happens-before edges are CUDA's: the host's
// work before a launch precedes every thread, every thread precedes the
// host's work after it, and a barrier orders the accesses before it in each
// participant before those after it in each.  Blocks rotate over the slots
// (thread i of block b runs in slot (i + b) mod n), so a word two blocks'
// thread 0 both write is two slots' accesses: a race unless atomic.
// Creating a ThreadSanitizer fiber costs ~0.5 ms here, so slots live for
// the process; a slot's successive threads are ordered by it, which hides
// a race between those two threads only.
#include "cuda_emu.h"

#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>
#include <vector>

#if defined(DLG_EMU_TSAN)
#include <sanitizer/tsan_interface.h>
#define DLG_EMU_RACES 1
#else
#define DLG_EMU_RACES 0
#endif

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define DLG_EMU_ASAN 1
#else
#define DLG_EMU_ASAN 0
#endif

// Context switches.  On x86-64 a few instructions that save the
// callee-saved registers and swap stacks: swapcontext also saves the signal
// mask, a system call per switch, which made it most of a run's time.  The
// SSE and x87 control words are left alone: every fiber runs on the
// launching thread, from a context made there, and no kernel changes them;
// storing and reloading them (stmxcsr/ldmxcsr, fnstcw/fldcw) was 80% of the
// switch's time here.
#if defined(__x86_64__)
extern "C" void dlg_emu_switch(void **save_sp, void *load_sp);
__asm__(".text\n"
        ".globl dlg_emu_switch\n"
        ".type dlg_emu_switch,@function\n"
        "dlg_emu_switch:\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size dlg_emu_switch,.-dlg_emu_switch\n");
#endif

namespace dlg_emu {
namespace {

struct context {
#if defined(__x86_64__)
    void *sp;
#else
    ucontext_t uc;
#endif
};

void switch_context(context *from, context *to)
{
#if defined(__x86_64__)
    dlg_emu_switch(&from->sp, to->sp);
#else
    swapcontext(&from->uc, &to->uc);
#endif
}

// a context that starts entry() on the given stack
void make_context(context *c, char *stack, size_t size, void (*entry)())
{
#if defined(__x86_64__)
    // what dlg_emu_switch pops: r15..r12, rbx, rbp, then the return
    // address entry(), entered with rsp = 8 mod 16 as after a call
    uintptr_t top = ((uintptr_t)stack + size) & ~(uintptr_t)15;
    uint64_t *sp = (uint64_t *)(top - 64);
    for (int i = 0; i < 6; i++)
        sp[i] = 0;
    sp[6] = (uint64_t)(uintptr_t)entry;
    c->sp = sp;
#else
    getcontext(&c->uc);
    c->uc.uc_stack.ss_sp = stack;
    c->uc.uc_stack.ss_size = size;
    c->uc.uc_link = nullptr;
    makecontext(&c->uc, entry, 0);
#endif
}

enum state { RUNNABLE, AT_BLOCK_BARRIER, AT_WARP_BARRIER, DONE };

constexpr size_t kStack = 128 * 1024;
constexpr size_t kStackTop = 16 * 1024; // what a finished fiber's frames may span (ASan)
constexpr unsigned kMaxThreads = 1024;

struct fiber {
    context ctx;
    char *stack = nullptr;
    size_t size = kStack; // the stack's bytes below its top (its slot's)
    void *tsan = nullptr; // its ThreadSanitizer fiber (DLG_EMU_TSAN)
    state st = DONE;
    uint3 tid;
    int pred = 0;        // this thread's vote at the barrier it waits on
    unsigned vote = 0;   // what the released barrier returns to it
    unsigned warp_mask = 0;
    unsigned block_waits = 0, warp_waits = 0; // barriers passed, for their sync addresses
};

struct grid_state {
    config cfg;
    const std::function<void()> *body = nullptr;
    const char *where = "";
    coords now;
    std::vector<fiber> fibers;
    std::vector<unsigned> order; // a block's threads in the order they run
    unsigned cur = 0;
    context sched;
    int error = 0;
    // the running block's shared arrays, by declaration
    struct shared_array {
        const void *tag;
        void *mem;
        size_t bytes;
    };
    std::vector<shared_array> shm;
    // DLG_EMU_TSAN only:
    std::vector<void *> shm_retired; // earlier blocks' shared arrays, freed after the grid
    void *host = nullptr;            // the launching thread's fiber
    char *tok = nullptr;             // the launch's sync addresses (TOK_*)
    char *btok = nullptr;            // the block's barriers' (wait_at)
#if DLG_EMU_ASAN
    void *sched_fake = nullptr;
    const void *sched_bottom = nullptr;
    size_t sched_size = 0;
#endif
    uint64_t rng = 0x9e3779b97f4a7c15ull;
};

// offsets in grid_state.tok: the launch (host -> threads), the end (threads
// -> host), a shared array's allocation (host -> threads)
enum { TOK_LAUNCH, TOK_DONE, TOK_SHM, TOK_SIZE };
// grid_state.btok, fresh each block (blocks share no barrier): the block
// barrier and each warp's, two addresses each used by turns: a thread
// takes a barrier's clocks when it resumes, which may be after others
// already arrived at the next one
enum { BTOK_SIZE = 2 + 2 * 32 };

grid_state *g_launch; // one host thread runs kernels (see g_now)
int g_last_error;
// fiber slots, allocated once and reused: first touch of memory is slow
struct slot {
    char *stack;
    size_t size; // kStack less the slot's colour (grow_slots)
    void *tsan;
};
struct slot_pool {
    std::vector<slot> v;
    ~slot_pool()
    {
        for (slot &s : v) {
            free(s.stack);
#if DLG_EMU_RACES
            __tsan_destroy_fiber(s.tsan);
#endif
        }
    }
};
slot_pool g_slots;

// the race detector's view: fiber switches and CUDA's synchronisation
void tsan_switch(void *to)
{
#if DLG_EMU_RACES
    __tsan_switch_to_fiber(to, __tsan_switch_to_fiber_no_sync);
#else
    (void)to;
#endif
}
// a launch token's sync address (DLG_EMU_TSAN)
char *launch_addr(grid_state &l, int tok) { return DLG_EMU_RACES ? l.tok + tok : nullptr; }

void tsan_release(char *addr)
{
#if DLG_EMU_RACES
    __tsan_release(addr);
#else
    (void)addr;
#endif
}
void tsan_acquire(char *addr)
{
#if DLG_EMU_RACES
    __tsan_acquire(addr);
#else
    (void)addr;
#endif
}

uint64_t next_rand(grid_state &l)
{
    l.rng ^= l.rng << 13;
    l.rng ^= l.rng >> 7;
    l.rng ^= l.rng << 17;
    return l.rng;
}

// the first m entries of l.order in a fresh random order (Fisher-Yates)
void shuffle(grid_state &l, unsigned m)
{
    for (unsigned i = m; i > 1; i--) {
        unsigned j = (unsigned)(next_rand(l) % i), t = l.order[i - 1];
        l.order[i - 1] = l.order[j];
        l.order[j] = t;
    }
}

// fiber -> scheduler
void yield_to_scheduler(bool finished)
{
    grid_state &l = *g_launch;
    fiber &f = l.fibers[l.cur];
    tsan_switch(l.host);
#if DLG_EMU_ASAN
    void *fake = nullptr;
    __sanitizer_start_switch_fiber(finished ? nullptr : &fake, l.sched_bottom, l.sched_size);
    switch_context(&f.ctx, &l.sched);
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
    (void)finished;
    switch_context(&f.ctx, &l.sched);
#endif
}

void fiber_entry()
{
#if DLG_EMU_ASAN
    grid_state &l0 = *g_launch;
    __sanitizer_finish_switch_fiber(nullptr, &l0.sched_bottom, &l0.sched_size);
#endif
    grid_state &l = *g_launch;
    tsan_acquire(launch_addr(l, TOK_LAUNCH));
    (*l.body)();
    tsan_release(launch_addr(l, TOK_DONE));
    l.fibers[l.cur].st = DONE;
    yield_to_scheduler(true);
}

// scheduler -> fiber i
void resume(grid_state &l, unsigned i)
{
    l.cur = i;
    l.now.thread = l.fibers[i].tid;
    tsan_switch(l.fibers[i].tsan);
#if DLG_EMU_ASAN
    __sanitizer_start_switch_fiber(&l.sched_fake, l.fibers[i].stack, kStack);
    switch_context(&l.sched, &l.fibers[i].ctx);
    __sanitizer_finish_switch_fiber(l.sched_fake, nullptr, nullptr);
#else
    switch_context(&l.sched, &l.fibers[i].ctx);
#endif
}

bool check_config(const config &c, char *why, size_t len)
{
    unsigned long long threads = (unsigned long long)c.block.x * c.block.y * c.block.z;
    if (!c.grid.x || !c.grid.y || !c.grid.z || !threads)
        snprintf(why, len, "a zero dimension (grid %u,%u,%u block %u,%u,%u)", c.grid.x, c.grid.y,
                 c.grid.z, c.block.x, c.block.y, c.block.z);
    else if (threads > kMaxThreads || c.block.x > 1024 || c.block.y > 1024 || c.block.z > 64)
        snprintf(why, len, "block %u,%u,%u over the 1024-thread limit", c.block.x, c.block.y,
                 c.block.z);
    else if (c.grid.y > 65535 || c.grid.z > 65535)
        snprintf(why, len, "grid y/z %u,%u over 65535", c.grid.y, c.grid.z);
    else if (c.shared > 48 * 1024)
        snprintf(why, len, "%zu bytes of dynamic shared memory", c.shared);
    else
        return true;
    return false;
}

bool any_live(const grid_state &l, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (l.fibers[i].st != DONE)
            return true;
    return false;
}

// releases what can be released; false when nothing could
bool release(grid_state &l, unsigned n)
{
    bool all_at_block = true;
    for (unsigned i = 0; i < n; i++)
        if (l.fibers[i].st != DONE && l.fibers[i].st != AT_BLOCK_BARRIER)
            all_at_block = false;
    if (!any_live(l, n))
        return false;
    if (all_at_block) {
        unsigned any = 0;
        for (unsigned i = 0; i < n; i++)
            if (l.fibers[i].st != DONE)
                any |= l.fibers[i].pred ? 1u : 0u;
        for (unsigned i = 0; i < n; i++)
            if (l.fibers[i].st != DONE) {
                l.fibers[i].st = RUNNABLE;
                l.fibers[i].vote = any;
            }
        return true;
    }
    bool released = false;
    for (unsigned w = 0; w * 32 < n; w++) {
        unsigned end = w * 32 + 32 < n ? w * 32 + 32 : n, bits = 0, live = 0;
        bool ready = false;
        for (unsigned i = w * 32; i < end; i++) {
            if (l.fibers[i].st == DONE)
                continue;
            live |= 1u << (i - w * 32);
            ready = l.fibers[i].st == AT_WARP_BARRIER;
            if (!ready)
                break;
            if (l.fibers[i].pred)
                bits |= 1u << (i - w * 32);
        }
        if (!ready)
            continue;
        for (unsigned i = w * 32; i < end; i++) {
            fiber &f = l.fibers[i];
            if (f.st == DONE)
                continue;
            if ((f.warp_mask & ~live) && !l.error) {
                fprintf(stderr, "cuda_emu: %s: block (%u,%u,%u) warp %u: __ballot_sync mask %#x "
                        "names lanes that exited or do not exist (live %#x)\n",
                        l.where, l.now.block.x, l.now.block.y, l.now.block.z, w, f.warp_mask,
                        live);
                l.error = cudaErrorLaunchFailure;
            }
            f.vote = bits & f.warp_mask;
            f.st = RUNNABLE;
        }
        released = true;
    }
    return released;
}

// getcontext returns twice: kept out of the scheduler's loops (-Wclobbered)
__attribute__((noinline)) void start_fiber(fiber &f, uint3 tid)
{
    f.tid = tid;
    f.st = RUNNABLE;
    f.pred = 0;
    f.block_waits = f.warp_waits = 0;
#if DLG_EMU_ASAN
    // the last fiber on this stack left the redzones of the frames it
    // switched away from poisoned (it never returned): fiber_entry's and
    // yield_to_scheduler's, at the top; the kernel's own frames below had
    // returned.  swapcontext's interceptor would clear them, our switch
    // does not.  Only the top: clearing the whole 128 KiB was a quarter of
    // a fake-GPU test's time under ASan (a block abandoned at a deadlock
    // clears all of its stacks: abandon_stacks)
    __asan_unpoison_memory_region(f.stack + f.size - kStackTop, kStackTop);
#endif
    make_context(&f.ctx, f.stack, f.size, fiber_entry);
}

// a kernel without barriers: each thread is a plain call, in a shuffled order
void run_block_direct(grid_state &l)
{
    const dim3 b = l.cfg.block;
    const unsigned n = b.x * b.y * b.z;
    for (unsigned i = 0; i < n; i++)
        l.order[i] = i;
    shuffle(l, n);
    for (unsigned k = 0; k < n; k++) {
        unsigned i = l.order[k];
        l.now.thread = make_uint3(i % b.x, (i / b.x) % b.y, i / (b.x * b.y));
        (*l.body)();
    }
}

// the parked fibers of a deadlocked block never return: their stacks keep
// the kernel's frames' redzones poisoned all the way down (ASan)
void abandon_stacks(grid_state &l, unsigned n)
{
#if DLG_EMU_ASAN
    for (unsigned i = 0; i < n; i++)
        if (l.fibers[i].st != DONE)
            __asan_unpoison_memory_region(l.fibers[i].stack, kStack);
#else
    (void)l;
    (void)n;
#endif
}

void run_block(grid_state &l)
{
    const dim3 b = l.cfg.block;
    const unsigned n = b.x * b.y * b.z;
    for (unsigned i = 0; i < n; i++)
        start_fiber(l.fibers[i], make_uint3(i % b.x, (i / b.x) % b.y, i / (b.x * b.y)));
    for (;;) {
        // one phase: every runnable fiber, in a fresh shuffled order
        unsigned m = 0;
        for (unsigned i = 0; i < n; i++)
            if (l.fibers[i].st == RUNNABLE)
                l.order[m++] = i;
        shuffle(l, m);
        for (unsigned k = 0; k < m; k++)
            resume(l, l.order[k]);
        if (release(l, n))
            continue;
        if (!any_live(l, n))
            return;
        fprintf(stderr, "cuda_emu: %s: block (%u,%u,%u): deadlock, a barrier that some "
                "threads of the block never reach\n", l.where, l.now.block.x, l.now.block.y,
                l.now.block.z);
        l.error = cudaErrorLaunchFailure;
        abandon_stacks(l, n);
#if DLG_EMU_RACES
        // the launch failed: its parked threads end, as far as the host's
        // order with them goes
        for (unsigned i = 0; i < n; i++)
            if (l.fibers[i].st != DONE) {
                tsan_switch(l.fibers[i].tsan);
                tsan_release(launch_addr(l, TOK_DONE));
            }
        tsan_switch(l.host);
#endif
        return;
    }
}

void wait_at(state s, int pred, unsigned mask)
{
    grid_state &l = *g_launch;
    if (!l.cfg.may_sync) { // a harness bug, not the kernel's: no fiber to park
        fprintf(stderr, "cuda_emu: %s: a barrier in a kernel rewrite_launches.py found none in\n",
                l.where);
        abort();
    }
    fiber &f = l.fibers[l.cur];
    f.st = s;
    f.pred = pred;
    f.warp_mask = mask;
    unsigned turn = s == AT_BLOCK_BARRIER ? f.block_waits++ & 1 : f.warp_waits++ & 1;
    char *tok = !DLG_EMU_RACES             ? nullptr
                : s == AT_BLOCK_BARRIER ? l.btok + turn
                                        : l.btok + 2 + 2 * (l.cur / 32) + turn;
    tsan_release(tok);
    yield_to_scheduler(false); // resume() sets the coordinates back
    tsan_acquire(tok);
}

// a fresh shared array of the running block, poisoned (0xff bytes)
void *new_shared(grid_state &l, size_t bytes)
{
    void *p = malloc(bytes);
    if (!p) {
        fprintf(stderr, "cuda_emu: %s: out of memory for %zu bytes of shared memory\n", l.where,
                bytes);
        abort();
    }
    memset(p, 0xff, bytes);
    return p;
}

// a new block: its shared arrays start over
void reset_shared(grid_state &l)
{
#if DLG_EMU_RACES
    // fresh memory, so that no earlier block's accesses are remembered;
    // freed after the grid, when the host has synchronised with every thread
    for (auto &a : l.shm)
        l.shm_retired.push_back(a.mem);
    l.shm.clear();
#else
    for (auto &a : l.shm)
        memset(a.mem, 0xff, a.bytes);
#endif
}

// slots 0..n-1 exist (stacks, and ThreadSanitizer fibers where built)
void grow_slots(unsigned n)
{
    while (g_slots.v.size() < n) {
        // each stack's top 64 bytes lower than the last one's, over 256
        // slots: the stacks are 128 KiB apart, so their tops, where every
        // switch saves and loads, otherwise fall in the same few cache
        // sets and evict each other (a block of 256 threads missed the
        // cache at every switch)
        slot s = {(char *)malloc(kStack), kStack - g_slots.v.size() % 256 * 64, nullptr};
#if DLG_EMU_RACES
        s.tsan = __tsan_create_fiber(0);
#endif
        if (!s.stack) {
            fprintf(stderr, "cuda_emu: out of memory for fiber stacks\n");
            abort();
        }
        g_slots.v.push_back(s);
    }
}

} // namespace

const coords *g_now;

// runs the grid: every block, every thread
void run(const config &cfg, const std::function<void()> &body, const char *where)
{
    grid_state l;
    l.cfg = cfg;
    l.body = &body;
    l.where = where;
    l.now.block_dim = cfg.block;
    l.now.grid_dim = cfg.grid;
    // the race detector needs every thread in a fiber of its own
    const bool fibers = cfg.may_sync || DLG_EMU_RACES;
    unsigned threads = cfg.block.x * cfg.block.y * cfg.block.z, n = fibers ? threads : 0;
    l.order.resize(threads);
    l.fibers.resize(n);
    grow_slots(n);
#if DLG_EMU_RACES
    l.host = __tsan_get_current_fiber();
    l.tok = (char *)malloc(TOK_SIZE);
    __tsan_release(l.tok + TOK_LAUNCH);
#endif
    grid_state *outer = g_launch;
    const coords *outer_now = g_now;
    g_launch = &l;
    g_now = &l.now;
    unsigned long long b = 0;
    for (unsigned z = 0; z < cfg.grid.z && !l.error; z++)
        for (unsigned y = 0; y < cfg.grid.y && !l.error; y++)
            for (unsigned x = 0; x < cfg.grid.x && !l.error; x++, b++) {
                l.now.block = make_uint3(x, y, z);
                reset_shared(l);
                for (unsigned i = 0; i < n; i++) {
                    const slot &s = g_slots.v[(i + b) % n];
                    l.fibers[i].stack = s.stack;
                    l.fibers[i].size = s.size;
                    l.fibers[i].tsan = s.tsan;
                }
#if DLG_EMU_RACES
                l.btok = (char *)malloc(BTOK_SIZE); // freed: no clocks carried over
#endif
                if (fibers)
                    run_block(l);
                else
                    run_block_direct(l);
#if DLG_EMU_RACES
                free(l.btok);
#endif
            }
    g_launch = outer;
    g_now = outer_now;
#if DLG_EMU_RACES
    __tsan_acquire(l.tok + TOK_DONE);
    free(l.tok);
    for (void *p : l.shm_retired)
        free(p);
#endif
    for (auto &a : l.shm)
        free(a.mem);
    if (l.error)
        g_last_error = l.error;
}

int launch(const config &cfg, std::function<void()> body, const char *where)
{
    char why[160];
    if (!check_config(cfg, why, sizeof why)) {
        fprintf(stderr, "cuda_emu: %s: invalid launch: %s\n", where, why);
        return g_last_error = cudaErrorInvalidConfiguration;
    }
    dlg_emu_submit(cfg.stream, [cfg, body, where]() { run(cfg, body, where); });
    return 0;
}

void *shared_memory(const void *tag, size_t bytes)
{
    grid_state &l = *g_launch;
    for (auto &a : l.shm)
        if (a.tag == tag) {
            tsan_acquire(launch_addr(l, TOK_SHM));
            return a.mem;
        }
#if DLG_EMU_RACES
    // allocated and poisoned as the host: every thread, this one
    // included, takes it over through TOK_SHM, and no thread gains an
    // order with another by it
    tsan_switch(l.host);
    void *p = new_shared(l, bytes);
    __tsan_release(l.tok + TOK_SHM);
    tsan_switch(l.fibers[l.cur].tsan);
    tsan_acquire(launch_addr(l, TOK_SHM));
#else
    void *p = new_shared(l, bytes);
#endif
    l.shm.push_back({tag, p, bytes});
    return p;
}

void syncthreads() { wait_at(AT_BLOCK_BARRIER, 0, 0); }

int syncthreads_or(int pred)
{
    wait_at(AT_BLOCK_BARRIER, pred, 0);
    return (int)g_launch->fibers[g_launch->cur].vote;
}

unsigned ballot(unsigned mask, int pred)
{
    wait_at(AT_WARP_BARRIER, pred, mask);
    return g_launch->fibers[g_launch->cur].vote;
}

} // namespace dlg_emu

// weak: tests/cuda/fakegpu queues the grid on its stream instead
__attribute__((weak)) void dlg_emu_submit(cudaStream_t s, std::function<void()> grid)
{
    (void)s;
    grid();
}

cudaError_t dlg_emu_get_last_error()
{
    int e = dlg_emu::g_last_error;
    dlg_emu::g_last_error = 0;
    return (cudaError_t)e;
}
