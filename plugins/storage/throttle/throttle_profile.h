/* Loads a disk profile (conf/disks/X.ini): the throttle's own option names,
 * outside any section or in [disk], plus descriptive keys (name, vendor,
 * source, date) that are kept for humans and otherwise ignored. */
#ifndef DLG_THROTTLE_PROFILE_H
#define DLG_THROTTLE_PROFILE_H

#include "throttle_opts.h"

#define THR_TEXT_MAX 128

typedef struct thr_profile {
    dlg_value v[THR_OPT_COUNT];          /* set only for keys the file gives */
    char text[THR_OPT_COUNT][THR_TEXT_MAX]; /* v[i].text points here */
} thr_profile;

/* One key of a profile (section "" or "disk"): its value parsed into p by
 * the option table's type and bounds, or a descriptive key skipped.  The
 * report reads profiles through this too, so that both take the same
 * keys and values.  -1 with a one-line reason naming the key. */
int thr_profile_key(thr_profile *p, const char *section, const char *name, const char *value,
                    char *why, size_t whylen);

/* Reads path into p; an error names the file, the line and the key. */
/* A [storage] section's own key over its profile's (explicit keys win):
 * thr_profile_key, the key's earlier value dropped first. */
int thr_profile_override(thr_profile *p, const char *name, const char *value, char *why, size_t whylen);

int thr_profile_load(const dlg_host *h, const char *path, thr_profile *p);

#endif
