/* Adding to the INI model (config.c), for the file reader (config_load.c)
 * and --set (config_set.c). */
#ifndef DLG_CONFIG_ADD_H
#define DLG_CONFIG_ADD_H

#include "config.h"

#include <stddef.h>

/* arr (n used of *cap elements of elem bytes) with room for one more, or
 * NULL (arr is then unchanged). */
void *dlg_room_for_one(void *arr, size_t n, size_t *cap, size_t elem);
/* A new empty section of c, opened at file:line (0: [global], which is
 * always there); NULL out of memory. */
dlg_section *dlg_config_add_section(dlg_config *c, dlg_section_kind kind, const char *name,
                                    const char *file, int line);
/* Sets key = value in s, from file:line (line 0: --set).  A key set before
 * is replaced (a later file or --set overrides), but one the same file
 * sets twice is an error.  0, or -1 with "file:line: why" in err[]. */
int dlg_section_put(dlg_section *s, const char *key, const char *value, const char *file,
                    int line, char *err, size_t errlen);

#endif
