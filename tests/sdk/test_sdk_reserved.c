/* A storage or sink option called `type` or `plugin` never reaches the
 * plugin (those keys select the plugin of every [storage]/[sink]), so the
 * registry refuses such a table at load, naming the option.  The workload
 * side (core job keys, core result fields) is checked out of tree, with
 * the installed SDK, in out_of_tree.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "registry.h"

static int s_open(const dlg_host *h, const dlg_value *o, const char *n, void **st) { (void)h, (void)o, (void)n, (void)st; return 0; }
static int s_write(void *st, const dlg_point *p, size_t n) { (void)st, (void)p, (void)n; return 0; }
static void s_close(void *st) { (void)st; }

static const dlg_sink_ops sops = {.version = 1, .open = s_open, .write = s_write, .close = s_close};

static void sink_option_named_like_a_section_key(void **state)
{
    (void)state;
    static const struct {
        const char *option, *want; /* want NULL: loads */
    } cases[] = {
        {"type", "sink 'tsv': option 'type' is a core key of every [storage]/[sink] (dlgauge help global)"},
        {"plugin", "sink 'tsv': option 'plugin' is a core key of every [storage]/[sink]"},
        {"workload", NULL}, /* a [job] key means nothing to a sink */
        {"format", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        dlg_option opts[] = {{cases[i].option, DLG_OPT_STRING, NULL, NULL, NULL, NULL, "h", 0}, {0}};
        dlg_plugin_desc d = {sizeof d, DLG_KIND_SINK, "tsv", "1.0", "s", opts, NULL, &sops};
        const dlg_plugin_desc *items[] = {&d, NULL};
        dlg_plugin_info info = {DLG_ABI_MAJOR, DLG_ABI_MINOR, sizeof info, "t", items};
        char why[512] = "";
        int rc = dlg_plugin_info_check(&info, why, sizeof why);
        if (cases[i].want ? rc == 0 || !strstr(why, cases[i].want) : rc != 0)
            fail_msg("option '%s': rc %d, '%s', expected '%s'", cases[i].option, rc, why,
                     cases[i].want ? cases[i].want : "(loads)");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(sink_option_named_like_a_section_key)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
