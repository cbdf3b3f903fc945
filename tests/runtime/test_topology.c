/* Kernel id lists (sysfs cpu/online, node/online) and the NUMA node count
 * that sysinfo prints, read from a fake sysfs tree: nodes with a gap
 * (0-1,3) are 3 nodes (probing node0, node1, ... stopped at the gap).
 * Ids of 1024 and more (cpu_set_t's limit) as machines with more CPUs
 * have: listed, counted, asked for by a cpus range and picked, and the
 * sockets, cores and threads that sysinfo prints. */
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
static void ids(const dlg_cpuset *set, char *out, size_t len)
{
    size_t o = 0;
    out[0] = '\0';
    for (int c = 0; c < set->nbits && o < len; c++)
        if (dlg_cpuset_has(set, c))
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
        {"0-1,1-2", "0,1,2", 3}, {"1024", "1024", 1}, {"1023-1025", "1023,1024,1025", 3},
        {"0,8191\n", "0,8191", 2}, {"65535", "65535", 1},
    };
    char got[256];
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        dlg_cpuset set;
        assert_int_equal(dlg_cpuset_init(&set, 0), 0);
        assert_int_equal(dlg_cpuset_parse_list(ok[i].text, &set), ok[i].n);
        ids(&set, got, sizeof got);
        assert_string_equal(got, ok[i].ids);
        dlg_cpuset_fini(&set);
    }
    dlg_cpuset big;
    assert_int_equal(dlg_cpuset_init(&big, 0), 0);
    assert_int_equal(dlg_cpuset_parse_list("0-4095", &big), 4096);
    char list[64];
    dlg_cpuset_format(&big, list, sizeof list);
    assert_string_equal(list, "0-4095");
    dlg_cpuset_fini(&big);
}

/* CPU topology as sysinfo prints it, CPU ids past 1023 included: CPUs
 * 0-1 are SMT siblings of one core of socket 0, 1100 and 1101 two cores of
 * socket 1 (sysinfo said "topology: unknown" for any id over 1023). */
static void put_cpu(const rt_dir *d, int cpu, const char *package, const char *core)
{
    char name[160], p[512];
    snprintf(name, sizeof name, "sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
    rt_write(d, name, package, p, sizeof p);
    snprintf(name, sizeof name, "sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
    if (core)
        rt_write(d, name, core, p, sizeof p);
}

static void topology_beyond_1024(void **st)
{
    const rt_dir *d = *st;
    char p[512], root[512];
    rt_write(d, "sys/devices/system/cpu/online", "0-1,1100-1101\n", p, sizeof p);
    put_cpu(d, 0, "0\n", "0\n");
    put_cpu(d, 1, "0\n", "0\n");
    put_cpu(d, 1100, "1\n", "5\n");
    put_cpu(d, 1101, "1\n", "6\n");
    put_cpu(d, 1102, "1\n", "7\n"); /* offline: not counted */
    snprintf(root, sizeof root, "%s/sys", d->path);
    dlg_cpu_topology t;
    assert_int_equal(dlg_cpu_topology_read(root, &t), 0);
    assert_int_equal(t.sockets, 2);
    assert_int_equal(t.cores, 3);
    assert_int_equal(t.threads, 4);
    /* one online CPU that does not say its core: unknown, not a guess */
    rt_write(d, "sys/devices/system/cpu/online", "0-1,1100-1102\n", p, sizeof p);
    put_cpu(d, 1102, "1\n", NULL);
    snprintf(p, sizeof p, "%s/sys/devices/system/cpu/cpu1102/topology/core_id", d->path);
    remove(p);
    assert_int_equal(dlg_cpu_topology_read(root, &t), -1);
    snprintf(root, sizeof root, "%s/none", d->path);
    assert_int_equal(dlg_cpu_topology_read(root, &t), -1);
}

static void list_refuses_malformed(void **st)
{
    (void)st;
    static const char *const bad[] = {"x",    "0-",   "-1",    "3-1",   "0,",     ",0",
                                      "0 1",  "0\n\n", "0:2",   "+1",    "0-3:2",  "65536",
                                      "0-99999999999999999999", "99999999999999999999"};
    dlg_cpuset set;
    assert_int_equal(dlg_cpuset_init(&set, 0), 0);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (dlg_cpuset_parse_list(bad[i], &set) != -1)
            fail_msg("'%s' was taken as a list", bad[i]);
    dlg_cpuset_fini(&set);
}

/* A machine whose node ids go past 1023 (sparse ids): each node counts. */
static void numa_nodes_beyond_1024(void **st)
{
    const rt_dir *d = *st;
    char p[512], root[512];
    rt_write(d, "sys/devices/system/node/online", "0,1100-1101\n", p, sizeof p);
    snprintf(root, sizeof root, "%s/sys", d->path);
    assert_int_equal(dlg_numa_nodes(root), 3);
}

/* cpus = A-B with ids past 1023 is a range, and picks exactly those CPUs
 * of a process allowed CPUs 0-1 and 1500-2047; a count picks among all. */
static void cpus_beyond_1024_chosen(void **st)
{
    (void)st;
    int count, first, last;
    char why[256], list[64];
    assert_int_equal(dlg_cpus_parse("1500-1501", &count, &first, &last, why, sizeof why), 0);
    assert_int_equal(count, 2);
    assert_int_equal(first, 1500);
    dlg_cpuset allowed, out;
    assert_int_equal(dlg_cpuset_init(&allowed, 0), 0);
    assert_int_equal(dlg_cpuset_init(&out, 0), 0);
    assert_int_equal(dlg_cpuset_parse_list("0-1,1500-2047", &allowed), 550);
    assert_int_equal(dlg_cpus_choose("1500-1501", &allowed, &out, why, sizeof why), 2);
    dlg_cpuset_format(&out, list, sizeof list);
    assert_string_equal(list, "1500-1501");
    assert_int_equal(dlg_cpus_choose("0", &allowed, &out, why, sizeof why), 550);
    assert_int_equal(dlg_cpuset_count(&out), 550);
    assert_int_equal(dlg_cpus_choose("550", &allowed, &out, why, sizeof why), 550);
    assert_true(dlg_cpuset_has(&out, 2047) && dlg_cpuset_has(&out, 0));
    assert_int_equal(dlg_cpus_choose("1499-1500", &allowed, &out, why, sizeof why), -1);
    assert_non_null(strstr(why, "CPU 1499 is not available"));
    dlg_cpuset_fini(&allowed);
    dlg_cpuset_fini(&out);
}

/* This process's own CPUs, read whatever the kernel's mask size. */
static void own_affinity_read(void **st)
{
    (void)st;
    dlg_cpuset s;
    assert_int_equal(dlg_cpuset_init(&s, 0), 0);
    assert_int_equal(dlg_cpuset_get_affinity(&s), 0);
    assert_true(dlg_cpuset_count(&s) >= 1);
    dlg_cpuset_fini(&s);
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
        cmocka_unit_test_setup_teardown(topology_beyond_1024, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test(list_refuses_malformed),
        cmocka_unit_test_setup_teardown(numa_nodes_beyond_1024, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test(cpus_beyond_1024_chosen),
        cmocka_unit_test(own_affinity_read),
        cmocka_unit_test_setup_teardown(numa_nodes_with_gap, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(numa_nodes_without_list, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test(numa_nodes_of_this_machine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
