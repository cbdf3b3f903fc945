/* Fuzzes the parsers of config values: sizes, durations, numbers, bools,
 * option values against a table with bounds, ${ENV} expansion and the
 * line rules (byte order mark, comments, quotes). */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "config_env.h"
#include "config_line.h"
#include "fuzz_target.h"
#include "options.h"
#include "units.h"

static const dlg_option table[] = {
    {"n", DLG_OPT_INT, "4", "1", "4096", NULL, "", 0},
    {"mem", DLG_OPT_SIZE, NULL, "16MiB", "1TiB", NULL, "", 0},
    {"t", DLG_OPT_DURATION, NULL, "0", "30d", NULL, "", 0},
    {"q", DLG_OPT_DOUBLE, NULL, "0", "4096", NULL, "", 0},
    {"on", DLG_OPT_BOOL, NULL, NULL, NULL, NULL, "", 0},
    {"mode", DLG_OPT_ENUM, NULL, NULL, NULL, "train|infer", "", 0},
    {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
};

static void values(const char *s)
{
    char why[512];
    int64_t i;
    double d;
    bool b;
    why[0] = '\0';
    if (dlg_parse_int(s, &i, why, sizeof why) != 0)
        FUZZ_CHECK(why[0] != '\0');
    if (dlg_parse_double(s, &d, why, sizeof why) == 0)
        FUZZ_CHECK(isfinite(d));
    if (dlg_parse_size(s, &i, why, sizeof why) == 0)
        FUZZ_CHECK(i >= 0);
    if (dlg_parse_duration(s, &i, why, sizeof why) == 0)
        FUZZ_CHECK(i >= 0);
    (void)dlg_parse_bool(s, &b, why, sizeof why);
    for (size_t k = 0; table[k].name; k++) {
        dlg_value v;
        if (dlg_opt_parse(&table[k], s, &v, why, sizeof why) != 0)
            continue;
        FUZZ_CHECK(v.set && v.text == s);
        if (table[k].type == DLG_OPT_INT)
            FUZZ_CHECK(v.i >= 1 && v.i <= 4096);
        if (table[k].type == DLG_OPT_ENUM)
            FUZZ_CHECK(v.i == 0 || v.i == 1);
        if (table[k].type == DLG_OPT_DOUBLE)
            FUZZ_CHECK(v.d >= 0 && v.d <= 4096);
    }
}

static void line_rules(const char *s, size_t n)
{
    char why[512];
    why[0] = '\0';
    char *out = dlg_expand_env(s, why, sizeof why);
    FUZZ_CHECK(out || why[0] != '\0');
    free(out);
    char *line = malloc(n + 1);
    if (!line)
        return;
    memcpy(line, s, n + 1);
    dlg_ini_strip_bom(line);
    dlg_ini_strip_comment(line);
    FUZZ_CHECK(strlen(line) <= n);
    if (dlg_ini_unquote(line, why, sizeof why) == 0)
        FUZZ_CHECK(strlen(line) <= n);
    free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192)
        return 0;
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    values(s);
    line_rules(s, strlen(s));
    free(s);
    return 0;
}
