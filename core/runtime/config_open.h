/* Opening a configuration file (the main one or an include) for reading
 * without hanging on what is not a file: opening a named FIFO waits for a
 * writer that may never come, and the run reads its file again before each
 * cell, which a FIFO could not give twice. */
#ifndef DLG_CONFIG_OPEN_H
#define DLG_CONFIG_OPEN_H

#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

/* Opens path for reading and fills *st.  NULL with "what: why" in err
 * (what: "FILE: cannot open", or the include line's own words) for a file
 * that cannot be opened, a directory, a named FIFO or a socket.  A pipe
 * (/dev/stdin of `... | dlgauge`) and character devices open as before. */
FILE *dlg_config_fopen(const char *path, const char *what, struct stat *st, char *err, size_t errlen);

#endif
