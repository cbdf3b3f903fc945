/* The disks and filesystems that sysinfo lists and the run inventory
 * records, from a fake sysfs tree and a fake mounts table: zram (memory,
 * not a disk) is skipped by both, as loop and ram are (sysinfo listed
 * zram0 as an "ssd/virtual 0.0 GiB" disk); a folder mounted twice is
 * listed once, with the top mount's type and source (those statvfs's
 * sizes belong to), also past 64 mount points and for a path longer than
 * 127 characters (sysinfo's fixed table of seen paths stopped there). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "inventory.h"
#include "rt_util.h"

static void disk(const rt_dir *d, const char *name, const char *rot, const char *sectors, const char *model)
{
    char path[512], file[128];
    snprintf(file, sizeof file, "block/%s/queue/rotational", name);
    rt_write(d, file, rot, path, sizeof path);
    snprintf(file, sizeof file, "block/%s/size", name);
    rt_write(d, file, sectors, path, sizeof path);
    if (model) {
        snprintf(file, sizeof file, "block/%s/device/model", name);
        rt_write(d, file, model, path, sizeof path);
    }
}

static void disks_skip_memory_devices(void **state)
{
    const rt_dir *d = *state;
    disk(d, "zram0", "0\n", "0\n", NULL);
    disk(d, "sdb", "1\n", "7814037168\n", "ST4000NM0035\n");
    disk(d, "loop0", "0\n", "2048\n", NULL);
    disk(d, "ram0", "0\n", "131072\n", NULL);
    disk(d, "nvme0n1", "0\n", "3750748848\n", "SAMSUNG MZQL21T9HCJR\n");
    disk(d, "vda", "0\n", "536870912\n", NULL);
    dlg_disk *v;
    int n = dlg_disks_read(d->path, &v);
    assert_int_equal(n, 3);
    static const char *const names[] = {"nvme0n1", "sdb", "vda"}, *const kinds[] = {"nvme", "rotational", "ssd"};
    static const double gib[] = {1788.5, 3726.0, 256.0};
    for (int i = 0; i < n; i++) {
        assert_string_equal(v[i].name, names[i]);
        assert_string_equal(v[i].kind, kinds[i]);
        assert_true(v[i].gib > gib[i] - 0.1 && v[i].gib < gib[i] + 0.1);
    }
    assert_string_equal(v[0].model, "SAMSUNG MZQL21T9HCJR");
    assert_string_equal(v[2].model, "");
    free(v);
}

/* The index of dir in m[0..n), -1 if absent; fails if it is there twice. */
static int find_mount(const dlg_mount *m, int n, const char *dir)
{
    int at = -1;
    for (int i = 0; i < n; i++)
        if (strcmp(m[i].dir, dir) == 0) {
            if (at >= 0)
                fail_msg("%s listed twice", dir);
            at = i;
        }
    return at;
}

static void mounts_top_once(void **state)
{
    const rt_dir *d = *state;
    char longdir[200], *text = malloc(65536), path[512];
    assert_non_null(text);
    memset(longdir, 'x', sizeof longdir - 1);
    longdir[0] = '/';
    longdir[sizeof longdir - 1] = '\0';
    size_t o = 0;
    /* the folder first mounted ext4 from /dev/sdb1, then tmpfs over it */
    o += (size_t)sprintf(text + o, "/dev/sdb1 /data ext4 rw 0 0\n");
    for (int i = 0; i < 80; i++)
        o += (size_t)sprintf(text + o, "/dev/vd%d /mnt/m%02d xfs rw 0 0\n", i, i);
    o += (size_t)sprintf(text + o, "/dev/sdc1 %s ext4 rw 0 0\n", longdir);
    o += (size_t)sprintf(text + o, "/dev/sdc1 %s ext4 rw 0 0\n", longdir);
    o += (size_t)sprintf(text + o, "/dev/vd70 /mnt/m70 xfs rw 0 0\n"); /* past 64 */
    o += (size_t)sprintf(text + o, "tmpfs /data tmpfs rw 0 0\n");
    o += (size_t)sprintf(text + o, "nfs:/export /a\\040b nfs4 rw 0 0\n");
    rt_write(d, "mounts", text, path, sizeof path);
    free(text);
    dlg_mount *m;
    int n = dlg_mounts_read(path, &m);
    assert_int_equal(n, 83);
    int data = find_mount(m, n, "/data");
    assert_true(data >= 0);
    assert_string_equal(m[data].type, "tmpfs");
    assert_string_equal(m[data].source, "tmpfs");
    assert_true(find_mount(m, n, longdir) >= 0);
    assert_true(find_mount(m, n, "/mnt/m70") >= 0);
    assert_true(find_mount(m, n, "/a b") >= 0);
    assert_string_equal(m[0].dir, "/mnt/m00"); /* the table's order */
    dlg_mounts_free(m, n);
    assert_int_equal(dlg_mounts_read("/nonexistent/mounts", &m), -1);
    assert_null(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(disks_skip_memory_devices, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(mounts_top_once, rt_dir_setup, rt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
