/* bf16 <-> fp32 for the tests of cpu-bf16's hand-written passes, as the
 * passes round (nearest even; the tests round no NaNs). */
#ifndef DLG_TEST_NN_BF16_TESTUTIL_H
#define DLG_TEST_NN_BF16_TESTUTIL_H

#include <stdint.h>
#include <string.h>

static inline uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static inline float from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

#endif
