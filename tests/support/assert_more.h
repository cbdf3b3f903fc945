/* Assertions cmocka lacks, shared by the tests: a tolerance compare and a
 * substring check, each printing what it got when it fails.  Include after
 * <cmocka.h>. */
#ifndef DLG_TEST_ASSERT_MORE_H
#define DLG_TEST_ASSERT_MORE_H

#include <math.h>
#include <string.h>

#define assert_near(a, b, eps)                                                                                    \
    do {                                                                                                          \
        double an_a_ = (double)(a), an_b_ = (double)(b);                                                          \
        if (!(fabs(an_a_ - an_b_) <= (double)(eps)))                                                              \
            fail_msg("%s = %.17g, want %.17g within %g", #a, an_a_, an_b_, (double)(eps));                        \
    } while (0)

#define assert_has(hay, needle)                                                                                   \
    do {                                                                                                          \
        if (!strstr((hay), (needle)))                                                                             \
            fail_msg("missing \"%s\" in:\n%s", (needle), (hay));                                                  \
    } while (0)

#endif
