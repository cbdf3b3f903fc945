/* Fuzzes the host's tuning record (core/nn/tune.c), a text file under
 * ~/.cache that any process of the user, a crash or another version may
 * have left.  An input starting with 'H' has that byte replaced by this
 * host's two header lines (which name its CPU), so the fuzzer reaches
 * the entries.  A value read back is the one a line of the file gives
 * its key; a stored entry reads back, and the entries read before it
 * still read the same (a corrupt record is set aside whole: none did). */
#include <stdlib.h>
#include <string.h>

#include "fuzz_file.h"
#include "fuzz_target.h"
#include "tune.h"

#define MAX_KEYS 64

typedef struct seen {
    char key[DLG_TUNE_KEY_MAX], val[DLG_TUNE_VAL_MAX];
    bool found;
} seen;

/* The record's text: the input, 'H' first replaced by the header. */
static char *record_text(const uint8_t *data, size_t size, size_t *len)
{
    char host[512], head[600] = "";
    if (size && data[0] == 'H') {
        dlg_tune_host(host, sizeof host);
        snprintf(head, sizeof head, "dlgauge-tune 1\nhost %s\n", host);
        data++, size--;
    }
    size_t hl = strlen(head);
    char *text = malloc(hl + size + 1);
    FUZZ_CHECK(text);
    memcpy(text, head, hl);
    memcpy(text + hl, data, size);
    *len = hl + size;
    text[*len] = '\0';
    return text;
}

/* Whether text holds the line "key val" (a value read back must be one). */
static bool has_line(const char *text, size_t len, const char *key, const char *val)
{
    size_t kl = strlen(key), vl = strlen(val);
    for (const char *l = text, *e = text + len; l < e;) {
        const char *nl = memchr(l, '\n', (size_t)(e - l));
        size_t n = nl ? (size_t)(nl - l) : (size_t)(e - l);
        if (n == kl + 1 + vl && memcmp(l, key, kl) == 0 && l[kl] == ' ' && memcmp(l + kl + 1, val, vl) == 0)
            return true;
        l += n + 1;
    }
    return false;
}

/* The first word of each line that could be a key, looked up. */
static int look_up(const char *path, const char *text, size_t len, seen *s)
{
    int n = 0;
    for (const char *l = text, *e = text + len; l < e && n < MAX_KEYS;) {
        const char *nl = memchr(l, '\n', (size_t)(e - l));
        size_t ll = nl ? (size_t)(nl - l) : (size_t)(e - l);
        const char *sp = memchr(l, ' ', ll);
        size_t kl = sp ? (size_t)(sp - l) : 0;
        if (kl > 0 && kl < DLG_TUNE_KEY_MAX && !memchr(l, '\0', kl)) {
            memcpy(s[n].key, l, kl);
            s[n].key[kl] = '\0';
            s[n].found = dlg_tune_get(path, s[n].key, s[n].val, sizeof s[n].val);
            FUZZ_CHECK(!s[n].found || has_line(text, len, s[n].key, s[n].val));
            n++;
        }
        l += ll + 1;
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[128];
    size_t len;
    if (size > 1 << 16)
        return 0;
    char *text = record_text(data, size, &len);
    if (fuzz_write_file(path, sizeof path, "tune.txt", (const uint8_t *)text, len) != 0) {
        free(text);
        return 0;
    }
    seen *before = calloc(MAX_KEYS, sizeof *before);
    FUZZ_CHECK(before);
    int n = look_up(path, text, len, before);
    FUZZ_CHECK(dlg_tune_put(path, "fuzz_key", "v1") == 0);
    char val[DLG_TUNE_VAL_MAX] = "";
    FUZZ_CHECK(dlg_tune_get(path, "fuzz_key", val, sizeof val) && strcmp(val, "v1") == 0);
    for (int i = 0; i < n; i++) {
        if (!before[i].found || strcmp(before[i].key, "fuzz_key") == 0 ||
            strcmp(before[i].key, "written_by_host") == 0)
            continue;
        FUZZ_CHECK(dlg_tune_get(path, before[i].key, val, sizeof val) && strcmp(val, before[i].val) == 0);
    }
    free(before);
    free(text);
    fuzz_remove_file(path);
    return 0;
}
