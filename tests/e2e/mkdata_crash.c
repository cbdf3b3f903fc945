/* LD_PRELOAD for mkdata_crash.sh: the generator crashes (SIGSEGV) as it
 * renames its finished .part output into place, the last moment before the
 * output would look whole.  Only mkdata's generator process renames, so
 * the parent that waits for it is untouched. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

int rename(const char *from, const char *to)
{
    (void)from;
    (void)to;
    /* the default action, even under ASan (whose handler would exit 1) */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigaction(SIGSEGV, &sa, NULL);
    raise(SIGSEGV);
    return -1;
}
