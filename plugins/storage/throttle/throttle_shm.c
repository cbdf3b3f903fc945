#define _GNU_SOURCE
#include "throttle_shm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct thr_shm_disk {
    uint32_t users; /* ranks attached; 0: free */
    uint8_t rank_on[THR_SHM_RANKS];
    thr_shaper shaper;
} thr_shm_disk;

typedef struct thr_shm_seg {
    uint64_t magic; /* SEG_MAGIC once made (0 in a segment just created) */
    thr_shm_disk disk[THR_SHM_DISKS];
} thr_shm_seg;

/* A segment laid out by another build of the plugin is not ours to use.
 * (The last byte went 0 -> 1 when users began to hold the liveness lock:
 * the sweep below leaves older segments, whose users do not, alone.) */
#define SEG_MAGIC (0x646c672d64736b01u ^ (uint64_t)sizeof(thr_shm_seg))

/* Every attached user holds a read lock on the segment's first byte
 * (an open-file-description lock: the kernel drops it when the process
 * dies, however it dies), so a write lock granted on it means no user is
 * left.  Independent of the flock that orders attach and detach. */
static int liveness_lock(int fd, short type)
{
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
    return fcntl(fd, F_OFD_SETLK, &fl);
}

static int fail(char *why, size_t len, const char *name, const char *what)
{
    snprintf(why, len, "shared emulated disk %s (/dev/shm): %s: %s", name, what, strerror(errno));
    return -1;
}

/* Opens the segment's name, created if missing, and locks it; retried
 * when the last rank out removed the name between our open and lock. */
static int open_locked(const char *name, char *why, size_t len)
{
    for (int tries = 0; tries < 100; tries++) {
        int fd = shm_open(name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0)
            return fail(why, len, name, "shm_open");
        struct stat st;
        if (flock(fd, LOCK_EX) != 0 || fstat(fd, &st) != 0) {
            int e = errno;
            close(fd);
            errno = e;
            return fail(why, len, name, "lock");
        }
        if (st.st_nlink > 0)
            return fd;
        close(fd); /* removed meanwhile: make a new one */
    }
    errno = EAGAIN;
    return fail(why, len, name, "open");
}

/* Removes /dev/shm/NAME when it is one of our segments with no user
 * left: a run whose ranks were all killed never detached.  A segment busy
 * being attached (its flock held) is alive and skipped, not waited for. */
static void remove_if_stale(const char *name)
{
    char path[300];
    snprintf(path, sizeof path, "/%s", name);
    int fd = shm_open(path, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0)
        return;
    uint64_t magic = 0;
    struct stat st;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &st) == 0 && st.st_nlink > 0 &&
        st.st_size == (off_t)sizeof(thr_shm_seg) && pread(fd, &magic, sizeof magic, 0) == sizeof magic &&
        magic == SEG_MAGIC && liveness_lock(fd, F_WRLCK) == 0)
        shm_unlink(path);
    close(fd); /* drops both locks */
}

/* Sweeps this user's segments that no process uses any more, once per
 * segment made: leftovers of crashed runs would otherwise pile up in
 * /dev/shm (memory) until reboot. */
static void sweep_stale(const char *own)
{
    char prefix[64];
    int n = snprintf(prefix, sizeof prefix, "dlgauge-disk-%u-", (unsigned)getuid());
    DIR *dir = opendir("/dev/shm");
    if (!dir)
        return;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL)
        if (strncmp(e->d_name, prefix, (size_t)n) == 0 && strcmp(e->d_name, own + 1) != 0)
            remove_if_stale(e->d_name);
    closedir(dir);
}

static thr_shm_seg *map_seg(int fd, const char *name, char *why, size_t len)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return fail(why, len, name, "fstat"), NULL;
    if (st.st_size == 0 && ftruncate(fd, sizeof(thr_shm_seg)) != 0)
        return fail(why, len, name, "ftruncate"), NULL;
    if (st.st_size != 0 && st.st_size != (off_t)sizeof(thr_shm_seg)) {
        snprintf(why, len, "shared emulated disk %s (/dev/shm): %lld bytes, made by another dlgauge build",
                 name, (long long)st.st_size);
        return NULL;
    }
    void *p = mmap(NULL, sizeof(thr_shm_seg), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return fail(why, len, name, "mmap"), NULL;
    thr_shm_seg *seg = p;
    if (seg->magic == 0)
        seg->magic = SEG_MAGIC;
    if (seg->magic != SEG_MAGIC) {
        munmap(p, sizeof *seg);
        snprintf(why, len, "shared emulated disk %s (/dev/shm): made by another dlgauge build", name);
        return NULL;
    }
    return seg;
}

static bool any_user(const thr_shm_seg *seg)
{
    for (int i = 0; i < THR_SHM_DISKS; i++)
        if (seg->disk[i].users)
            return true;
    return false;
}

static bool same_limits(const thr_limits *a, const thr_limits *b)
{
    return a->bandwidth == b->bandwidth && a->iops == b->iops && a->write_own_bw == b->write_own_bw &&
           a->write_own_iops == b->write_own_iops && a->write_bandwidth == b->write_bandwidth &&
           a->write_iops == b->write_iops && a->write_shared == b->write_shared &&
           a->iops_unit == b->iops_unit && a->iops_merge == b->iops_merge && a->burst == b->burst &&
           a->burst_iops == b->burst_iops && a->peak_bandwidth == b->peak_bandwidth &&
           a->peak_iops == b->peak_iops && a->latency == b->latency && a->jitter == b->jitter &&
           a->dist == b->dist && a->seed == b->seed;
}

/* The disk this rank's next instance with these limits takes: the first
 * in use with them that this rank is not on yet, else a free one (made
 * now); -1 when all are taken. */
static int pick_disk(thr_shm_seg *seg, int rank, const thr_limits *lim)
{
    for (int i = 0; i < THR_SHM_DISKS; i++) {
        thr_shm_disk *d = &seg->disk[i];
        if (d->users && !d->rank_on[rank] && same_limits(&d->shaper.lim, lim))
            return i;
    }
    for (int i = 0; i < THR_SHM_DISKS; i++)
        if (!seg->disk[i].users)
            return thr_shaper_init_pshared(&seg->disk[i].shaper, lim) == 0 ? i : -1;
    return -1;
}

int thr_shm_attach(uint64_t node_key, int local_rank, const thr_limits *lim, thr_shm *out,
                   thr_shaper **shaper, char *why, size_t len)
{
    memset(out, 0, sizeof *out);
    out->fd = -1;
    snprintf(out->name, sizeof out->name, "/dlgauge-disk-%u-%016llx", (unsigned)getuid(),
             (unsigned long long)node_key);
    if (local_rank < 0 || local_rank >= THR_SHM_RANKS) {
        snprintf(why, len, "shared emulated disk: local rank %d, more than the %d it can tell apart",
                 local_rank, THR_SHM_RANKS);
        return -1;
    }
    int fd = open_locked(out->name, why, len);
    if (fd < 0)
        return -1;
    thr_shm_seg *seg = map_seg(fd, out->name, why, len);
    if (seg && liveness_lock(fd, F_RDLCK) != 0) { /* dropped with fd on failure */
        fail(why, len, out->name, "liveness lock");
        munmap(seg, sizeof *seg);
        seg = NULL;
    }
    bool made = seg && !any_user(seg);
    int disk = seg ? pick_disk(seg, local_rank, lim) : -1;
    if (seg && disk < 0)
        snprintf(why, len, "shared emulated disk %s: all %d disks in use (or its lock could not be made)",
                 out->name, THR_SHM_DISKS);
    if (disk < 0) {
        if (seg)
            munmap(seg, sizeof *seg);
        flock(fd, LOCK_UN);
        close(fd);
        return -1;
    }
    seg->disk[disk].rank_on[local_rank] = 1;
    seg->disk[disk].users++;
    flock(fd, LOCK_UN);
    out->fd = fd;
    out->disk = disk;
    out->local_rank = local_rank;
    out->seg = seg;
    *shaper = &seg->disk[disk].shaper;
    if (made)
        sweep_stale(out->name);
    return 0;
}

void thr_shm_detach(thr_shm *m)
{
    if (!m->seg)
        return;
    flock(m->fd, LOCK_EX);
    thr_shm_disk *d = &m->seg->disk[m->disk];
    d->rank_on[m->local_rank] = 0;
    if (--d->users == 0)
        thr_shaper_fini(&d->shaper);
    if (!any_user(m->seg)) /* an attach that opened the name before this sees it gone and makes anew */
        shm_unlink(m->name);
    flock(m->fd, LOCK_UN);
    munmap(m->seg, sizeof *m->seg);
    close(m->fd);
    m->seg = NULL;
    m->fd = -1;
}
