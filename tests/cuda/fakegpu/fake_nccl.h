// fake_nccl.h — what the fake NCCL's two halves share (see fake_nccl.cc):
// the shared-memory segment of a communicator, the communicator, and the
// helpers both use.  fake_nccl_comm.cc makes, joins and leaves
// communicators; fake_nccl.cc runs the collectives.
#ifndef DLG_FAKE_NCCL_H
#define DLG_FAKE_NCCL_H

#include <nccl.h>

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <atomic>
#include <functional>
#include <vector>

namespace fake_nccl {

constexpr size_t kSlot = (size_t)1 << 20; // bytes a rank moves per step
constexpr int kMaxRanks = 64;
constexpr uint64_t kMagic = 0x6c63636e656b6166ull; // "fakenccl"

enum kind { K_NONE, K_ALLREDUCE };

// one rank's current collective, compared across the ranks (but seq: a
// rank whose step was captured replays the same piece)
struct coll_desc {
    int kind, type, op;
    uint64_t count, seq;
};

// one rank's current send: to whom, what, and its chunks' progress
struct send_state {
    int to, type;
    uint64_t count;
    uint64_t id;            // the sender's send serial (1, 2, ...)
    uint64_t posted, taken; // chunks
    int active;
};

struct segment {
    uint64_t ready; // kMagic once the creator initialised it (atomic)
    int nranks;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int joined, left, unlinked;
    unsigned char present[kMaxRanks];
    int arrived;  // at the barrier
    uint64_t gen; // barrier generation
    int broken;   // an ncclResult_t: every rank fails from then on
    char why[200];
    coll_desc d[kMaxRanks];
    send_state s[kMaxRanks];
    char name[64];
};


// fake_runtime.cc's entry for work that may block on other threads'
using submit_fn = cudaError_t (*)(cudaStream_t, std::function<void()> *);

// the segment's header, page-aligned, then one slot per rank
size_t header_bytes();

// one line on stderr, "fake nccl: ..."
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
// now + seconds on CLOCK_MONOTONIC (the segment's condition's clock)
timespec deadline(int seconds);

} // namespace fake_nccl

struct ncclComm {
    fake_nccl::segment *h;
    unsigned char *slots;
    size_t map_bytes;
    int nranks, rank;
    int timeout_s;
    std::atomic<int> async{ncclSuccess};
    uint64_t seq = 0, send_id = 0; // this rank's collectives and sends run so far
    uint64_t got[fake_nccl::kMaxRanks] = {};  // the last send id taken from each rank
    std::vector<fake_nccl::submit_fn> submit; // fakegpu_submit_blocking of each runtime loaded
};

#endif
