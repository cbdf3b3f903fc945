/* Where the shipped conf/ (quick start, study suites, disk profiles,
 * instance catalogs) is for the running executable. */
#ifndef DLG_REPORT_SHIPPED_CONF_H
#define DLG_REPORT_SHIPPED_CONF_H

#include <stddef.h>

/* The folder DLG_CONF_FROM_BIN names from the executable's own folder
 * (/proc/self/exe): installed, PREFIX/bin -> PREFIX/share/dlgauge/conf;
 * in a build tree, bin/ -> the link to the source conf/ that CMake makes
 * there.  Resolved when it is there, as written when not (so a message
 * can say where it looked).  0, or -1 when the executable's path cannot
 * be read or does not fit len. */
int rep_shipped_conf(char *dir, size_t len);

#endif
