/* Why a file dlopen refused is no shared object this process can load,
 * judged from its ELF header. */
#ifndef DLG_REGISTRY_ELF_H
#define DLG_REGISTRY_ELF_H

#include <stdbool.h>
#include <stddef.h>

/* Writes why into why and returns true when path is no loadable shared
 * object (not ELF, another class, byte order or machine, not ET_DYN); false
 * when its header is fine and the failure lies elsewhere (a dependency, a
 * symbol).  msg: dlerror()'s text without the path. */
bool dlg_plugin_not_loadable(const char *path, const char *msg, char *why, size_t whylen);

/* Writes why and returns true when path is an ELF file of this machine's
 * class whose loadable segments reach past its end: dlopen would fault
 * (SIGBUS) on it rather than fail. */
bool dlg_plugin_truncated(const char *path, char *why, size_t whylen);

/* Whether the file at path holds name as a string of its own (a
 * descriptor's name is one): a file that failed to load and names a
 * workload nothing else provides is most likely its provider. */
bool dlg_plugin_names(const char *path, const char *name);

#endif
