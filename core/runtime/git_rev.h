/* The git revision libdlgauge was built from ("1a2b3c4d5e6f", with
 * "-dirty" for uncommitted changes to tracked files; "unknown" outside a
 * checkout).  Generated at every build by cmake/GitRev.cmake. */
#ifndef DLG_GIT_REV_H
#define DLG_GIT_REV_H

/* A function, not an array: the executable would copy an array's bytes
 * at link time (a copy relocation), so a libdlgauge rebuilt at another
 * revision without relinking it gave a truncated string and a loader
 * warning at every run. */
const char *dlg_git_rev(void);

#endif
