/* Does a buffer fit in the machine's physical memory?  Plugins ask before
 * they allocate: under overcommit malloc accepts any size, and the kernel
 * kills the process on first touch instead of letting it report. */
#ifndef DLG_PHYS_FIT_H
#define DLG_PHYS_FIT_H

#include <stdbool.h>

#include <stddef.h>

enum { DLG_BYTES_TXT = 32 };

/* bytes as text in binary units, one decimal: "1.5 GiB" */
void dlg_bytes_txt(char *buf, size_t len, double bytes);

/* true when need bytes fit, or physical memory is unknown; false fills
 * need_txt and phys_txt with both sizes as text ("1.5 GiB") */
bool dlg_phys_fits(double need, char need_txt[DLG_BYTES_TXT], char phys_txt[DLG_BYTES_TXT]);

#endif
