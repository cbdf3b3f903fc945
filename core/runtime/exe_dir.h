/* The folder of the running executable, for what an install puts beside
 * it (plugins, conf/): found from there, no path of the build machine. */
#ifndef DLG_EXE_DIR_H
#define DLG_EXE_DIR_H

#include <stddef.h>

/* The running executable's folder (from /proc/self/exe) into dir; -1 when
 * it cannot be read or does not fit. */
int dlg_exe_dir(char *dir, size_t len);

#endif
