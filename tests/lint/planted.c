/* Three faults cppcheck.sh requires cppcheck to report before it trusts
 * a clean run of the real sources.  Never compiled. */
#include <stdlib.h>
#include <string.h>

int planted_uninit(int n)
{
    int sum;
    for (int i = 0; i < n; i++)
        sum += i; /* uninitvar */
    return sum;
}

size_t planted_null(const char *s)
{
    if (!s)
        return strlen(s); /* nullPointer */
    return 0;
}

int planted_leak(size_t n)
{
    char *p = malloc(n);
    if (!p)
        return -1;
    if (n > 8)
        return -2; /* memleak */
    free(p);
    return 0;
}
