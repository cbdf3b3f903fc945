/* FNV-1a, 64-bit: the hash behind dlgauge's keys and fingerprints (a run's
 * configuration in its journal, the tuning record's name, vocabularies,
 * per-split seeds).  Stable across builds and machines, byte by byte; not
 * for anything an adversary chooses. */
#ifndef DLGAUGE_FNV1A_H
#define DLGAUGE_FNV1A_H

#include <stddef.h>
#include <stdint.h>

#define DLG_FNV1A_INIT 1469598103934665603ull /* offset basis */
#define DLG_FNV1A_PRIME 1099511628211ull

/* h (DLG_FNV1A_INIT to start) carried over len bytes of data. */
static inline uint64_t dlg_fnv1a(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = (const unsigned char *)data;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * DLG_FNV1A_PRIME;
    return h;
}

/* The same over a NUL-terminated string. */
static inline uint64_t dlg_fnv1a_str(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * DLG_FNV1A_PRIME;
    return h;
}

#endif
