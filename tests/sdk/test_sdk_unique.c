/* One plugin file declaring a workload (storage, sink) name twice is
 * refused at load, naming both descriptors: the second could never be
 * used, not even through plugin = FILE, and list called it shadowed by
 * its own file.  The same name under two kinds is fine. */
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
static int w_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *j, void **st) { (void)h, (void)o, (void)j, (void)st; return 0; }
static int w_step(void *st, dlg_step *out) { (void)st, (void)out; return 0; }
static void w_teardown(void *st) { (void)st; }

static const dlg_sink_ops sops = {.version = 1, .open = s_open, .write = s_write, .close = s_close};
static const dlg_workload_ops wops = {.version = 1, .unit = "items", .setup = w_setup, .step = w_step,
                                      .teardown = w_teardown};

static int check(const dlg_plugin_desc *a, const dlg_plugin_desc *b, const dlg_plugin_desc *c, char *why,
                 size_t len)
{
    const dlg_plugin_desc *items[] = {a, b, c, NULL};
    dlg_plugin_info info = {DLG_ABI_MAJOR, DLG_ABI_MINOR, sizeof info, "t", items};
    why[0] = '\0';
    return dlg_plugin_info_check(&info, why, len);
}

static void one_name_twice_in_one_file(void **state)
{
    (void)state;
    dlg_plugin_desc tsv = {sizeof tsv, DLG_KIND_SINK, "tsv", "1.0", "s", NULL, NULL, &sops};
    dlg_plugin_desc tsv2 = tsv;
    tsv2.version = "2.0";
    dlg_plugin_desc wl = {sizeof wl, DLG_KIND_WORKLOAD, "tsv", "1.0", "w", NULL, NULL, &wops};
    char why[512];
    /* a workload and a sink may share a name: configs never mix them up */
    if (check(&tsv, &wl, NULL, why, sizeof why) != 0)
        fail_msg("a sink and a workload both called tsv refused: %s", why);
    assert_int_not_equal(check(&tsv, &wl, &tsv2, why, sizeof why), 0);
    assert_string_equal(why, "sink 'tsv' is declared twice (descriptors #0 and #2): rename one");
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(one_name_twice_in_one_file)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
