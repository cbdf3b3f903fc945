/* Kernel id lists (sysfs cpu/online, node/online) and the NUMA node count
 * that sysinfo prints, read from a fake sysfs tree: nodes with a gap
 * (0-1,3) are 3 nodes (probing node0, node1, ... stopped at the gap). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rt_util.h"
#include "topology.h"

/* The ids of set as "0,1,3" (each id, no ranges). */
static void ids(const cpu_set_t *set, char *out, size_t len)
{
    size_t o = 0;
    out[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE && o < len; c++)
        if (CPU_ISSET(c, set))
            o += (size_t)snprintf(out + o, len - o, "%s%d", o ? "," : "", c);
}

static void list_parses(void **st)
{
    (void)st;
    static const struct {
        const char *text, *ids;
        int n;
    } ok[] = {
        {"0", "0", 1},         {"0-3\n", "0,1,2,3", 4}, {"0-1,3", "0,1,3", 3}, {"5,2", "2,5", 2},
        {"", "", 0},           {"\n", "", 0},           {"1023", "1023", 1},  {"7-7", "7", 1},
        {"0-1,1-2", "0,1,2", 3},
    };
    char got[256];
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        cpu_set_t set;
        assert_int_equal(dlg_cpulist_parse(ok[i].text, &set), ok[i].n);
        ids(&set, got, sizeof got);
        assert_string_equal(got, ok[i].ids);
    }
}

static void list_refuses_malformed(void **st)
{
    (void)st;
    static const char *const bad[] = {"x", "0-", "-1", "3-1", "0,", ",0", "0 1", "1024", "0-1024", "0\n\n",
                                      "0:2", "+1", "0-3:2"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cpu_set_t set;
        if (dlg_cpulist_parse(bad[i], &set) != -1)
            fail_msg("'%s' was taken as a list", bad[i]);
    }
}

/* node/online with a gap, and node0, node1, node3 folders as the kernel has. */
static void numa_nodes_with_gap(void **st)
{
    const rt_dir *d = *st;
    char p[512], root[512];
    rt_write(d, "sys/devices/system/node/online", "0-1,3\n", p, sizeof p);
    rt_write(d, "sys/devices/system/node/possible", "0-3\n", p, sizeof p);
    for (int n = 0; n < 4; n++) {
        char name[128];
        snprintf(name, sizeof name, "sys/devices/system/node/node%d/cpulist", n);
        if (n != 2)
            rt_write(d, name, "0\n", p, sizeof p);
    }
    snprintf(root, sizeof root, "%s/sys", d->path);
    assert_int_equal(dlg_numa_nodes(root), 3);
}

/* No node folder (a kernel without NUMA) or an unreadable list: 1. */
static void numa_nodes_without_list(void **st)
{
    const rt_dir *d = *st;
    char p[512], root[512];
    snprintf(root, sizeof root, "%s/none", d->path);
    assert_int_equal(dlg_numa_nodes(root), 1);
    rt_write(d, "bad/devices/system/node/online", "garbage\n", p, sizeof p);
    snprintf(root, sizeof root, "%s/bad", d->path);
    assert_int_equal(dlg_numa_nodes(root), 1);
}

/* This machine's own: at least 1, and what node/online says when readable. */
static void numa_nodes_of_this_machine(void **st)
{
    (void)st;
    int n = dlg_numa_nodes("/sys");
    assert_true(n >= 1);
    printf("this machine: %d NUMA node%s\n", n, n == 1 ? "" : "s");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(list_parses),
        cmocka_unit_test(list_refuses_malformed),
        cmocka_unit_test_setup_teardown(numa_nodes_with_gap, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(numa_nodes_without_list, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test(numa_nodes_of_this_machine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
