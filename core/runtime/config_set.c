/* --set overrides: "SECTION.key=value" from the command line, set in the
 * section (or every job) it names, over what the files said. */
#include "config.h"

#include "config_add.h"
#include "options.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static dlg_section *resolve_set_target(dlg_config *c, const char *sec, char *err, size_t errlen,
                                       const char *assignment)
{
    static const char *const kinds[] = {"global", "job", "storage", "sink"};
    if (strcmp(sec, "global") == 0)
        return dlg_config_find(c, DLG_SEC_GLOBAL, "");
    const char *colon = strchr(sec, ':');
    if (colon) {
        for (int k = 1; k < 4; k++) {
            if (strlen(kinds[k]) == (size_t)(colon - sec) && !strncmp(sec, kinds[k], (size_t)(colon - sec))) {
                dlg_section *s = dlg_config_find(c, (dlg_section_kind)k, colon + 1);
                if (!s)
                    snprintf(err, errlen, "--set %s: there is no [%s %s]", assignment, kinds[k], colon + 1);
                return s;
            }
        }
        snprintf(err, errlen, "--set %s: unknown section kind in '%s'", assignment, sec);
        return NULL;
    }
    dlg_section *found = NULL;
    int count = 0;
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->sections[i].name, sec) == 0) {
            found = &c->sections[i];
            count++;
        }
    if (count == 1)
        return found;
    if (count > 1)
        snprintf(err, errlen, "--set %s: '%s' names several sections; write job:%s, storage:%s or sink:%s",
                 assignment, sec, sec, sec, sec);
    else {
        const char *names[256];
        size_t n = 0;
        for (size_t i = 0; i < c->n && n < 256; i++)
            if (c->sections[i].name[0])
                names[n++] = c->sections[i].name;
        snprintf(err, errlen, "--set %s: no section is called '%s'", assignment, sec);
        dlg_append_suggestion(err, errlen, dlg_suggest(sec, names, n));
    }
    return NULL;
}

/* s without the blanks around it, in place */
static char *trim_blanks(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* Sets key = value in every job, or in the one section lhs names. */
static int set_in(dlg_config *c, const char *lhs, const char *key, const char *value, const char *assignment,
                  char *err, size_t errlen)
{
    if (strcmp(lhs, "job") == 0) {
        int jobs = 0;
        for (size_t i = 0; i < c->n; i++) {
            if (c->sections[i].kind != DLG_SEC_JOB)
                continue;
            jobs++;
            if (dlg_section_put(&c->sections[i], key, value, "--set", 0, err, errlen) != 0)
                return -1;
        }
        if (!jobs && !dlg_config_find(c, DLG_SEC_JOB, "job")) {
            snprintf(err, errlen, "--set %s: the configuration has no [job] sections", assignment);
            return -1;
        }
        return 0;
    }
    dlg_section *s = resolve_set_target(c, lhs, err, errlen, assignment);
    if (!s)
        return -1;
    return dlg_section_put(s, key, value, "--set", 0, err, errlen);
}

int dlg_config_set(dlg_config *c, const char *assignment, char *err, size_t errlen)
{
    const char *eq = strchr(assignment, '=');
    char lhs_buf[256];
    if (!eq || (size_t)(eq - assignment) >= sizeof lhs_buf) {
        snprintf(err, errlen, "--set %s: expected SECTION.key=value", assignment);
        return -1;
    }
    memcpy(lhs_buf, assignment, (size_t)(eq - assignment));
    lhs_buf[eq - assignment] = '\0';
    /* blanks around the parts are layout, as in a file: "job.batch = 32" */
    char *lhs = trim_blanks(lhs_buf);
    char *dot = strrchr(lhs, '.');
    char *copy = strdup(eq + 1);
    if (!copy) {
        snprintf(err, errlen, "--set %s: out of memory", assignment);
        return -1;
    }
    const char *value = trim_blanks(copy);
    int rc = -1;
    const char *key = "";
    if (dot) {
        *dot = '\0';
        key = trim_blanks(dot + 1);
        lhs = trim_blanks(lhs);
    }
    if (!dot || !*lhs || !*key || !*value)
        snprintf(err, errlen, "--set %s: expected SECTION.key=value (e.g. job.batch=32)", assignment);
    else
        rc = set_in(c, lhs, key, value, assignment, err, errlen);
    free(copy);
    return rc;
}
