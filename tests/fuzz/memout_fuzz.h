/* Same in-memory output as tests/data/memout.h (kept here so the fuzz
 * sources build standalone with clang). */
#include "../data/memout.h"
