/* The git revision libdlgauge was built from ("1a2b3c4d5e6f", with
 * "-dirty" for uncommitted changes to tracked files; "unknown" outside a
 * checkout).  Generated at every build by cmake/GitRev.cmake. */
#ifndef DLG_GIT_REV_H
#define DLG_GIT_REV_H

extern const char dlg_git_rev[];

#endif
