/* ${ENV} references in config values, as a shell reads them. */
#ifndef DLG_CONFIG_ENV_H
#define DLG_CONFIG_ENV_H

#include <stddef.h>

/* Expands ${NAME}, ${NAME:-default} (the default may itself hold
 * references) and $$ (a literal $) from the environment.  Returns the
 * result (malloc'ed, any length: a sweep list may come from a variable),
 * or NULL with the reason in why[]: an unset variable without a default,
 * a malformed reference, a bare $NAME, or no memory. */
char *dlg_expand_env(const char *in, char *why, size_t whylen);

#endif
