/* The plugin registry: descriptor checks on in-memory plugins, loading the
 * purpose-built broken .so files, search-path order and de-duplication. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "child_pipe.h"
#include "registry.h"
#include "registry_elf.h"
#include "rt_util.h"

#include <elf.h>

static int w_setup(const dlg_host *h, const dlg_value *o, const dlg_job_info *j, void **st)
{
    (void)h, (void)o, (void)j, (void)st;
    return 0;
}
static int w_step(void *st, dlg_step *out) { (void)st, (void)out; return 0; }
static void w_teardown(void *st) { (void)st; }
static int s_open(const dlg_host *h, const dlg_value *o, const char *n, void **st) { (void)h, (void)o, (void)n, (void)st; return 0; }
static void s_close(void *st) { (void)st; }

static const dlg_option good_opts[] = {{"batch", DLG_OPT_INT, "1", "1", NULL, NULL, "b", 0},
                                       {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0}};
static const dlg_option dup_opts[] = {{"batch", DLG_OPT_INT, "1", NULL, NULL, NULL, "b", 0},
                                      {"batch", DLG_OPT_INT, "1", NULL, NULL, NULL, "b", 0},
                                      {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0}};
static const dlg_metric good_metrics[] = {{"imgs", DLG_FIELD_DOUBLE, "", ""}, {NULL, 0, NULL, NULL}};
static const dlg_metric dup_metrics[] = {{"imgs", DLG_FIELD_DOUBLE, "", ""}, {"imgs", DLG_FIELD_INT, "", ""},
                                         {NULL, 0, NULL, NULL}};
static const dlg_metric under_metrics[] = {{"_x", DLG_FIELD_DOUBLE, "", ""}, {NULL, 0, NULL, NULL}};
static const dlg_metric nounit_metrics[] = {{"imgs", DLG_FIELD_DOUBLE, NULL, "h"}, {NULL, 0, NULL, NULL}};
static const dlg_metric nohelp_metrics[] = {{"imgs", DLG_FIELD_DOUBLE, "", NULL}, {NULL, 0, NULL, NULL}};
static const dlg_workload_ops wops = {1, "steps", w_setup, w_step, NULL, w_teardown, NULL, NULL};
static const dlg_workload_ops wops_nounit = {1, "", w_setup, w_step, NULL, w_teardown, NULL, NULL};
static const dlg_sink_ops sops_nowrite = {.version = 1, .open = s_open, .close = s_close};
static const dlg_storage_ops stops_async = {.version = 1, .caps = DLG_CAP_ASYNC, .file_size = sizeof(dlg_file)};

/* Checks an info with one descriptor; want = NULL means it must pass. */
static void expect(const dlg_plugin_desc *d, uint32_t major, uint32_t minor, const char *want)
{
    const dlg_plugin_desc *items[] = {d, NULL};
    dlg_plugin_info info = {major, minor, sizeof info, "t", items};
    char why[512] = "";
    int rc = dlg_plugin_info_check(&info, why, sizeof why);
    if (!want) {
        if (rc != 0)
            fail_msg("refused: %s", why);
        return;
    }
    if (rc == 0)
        fail_msg("accepted, expected '%s'", want);
    if (!strstr(why, want))
        fail_msg("'%s' lacks '%s'", why, want);
}

static void descriptor_checks(void **state)
{
    (void)state;
    dlg_plugin_desc d = {sizeof d, DLG_KIND_WORKLOAD, "w", "1.0", "a workload", good_opts, good_metrics, &wops};
    expect(&d, DLG_ABI_MAJOR, DLG_ABI_MINOR, NULL);
    char want[128];
    snprintf(want, sizeof want, "built for plugin ABI 2.0, but this dlgauge speaks ABI %d.%d", DLG_ABI_MAJOR,
             DLG_ABI_MINOR);
    expect(&d, 2, 0, want);
    expect(&d, 0, 9, "built for plugin ABI 0.9");
    expect(&d, DLG_ABI_MAJOR, DLG_ABI_MINOR + 1, "upgrade dlgauge");
    dlg_plugin_desc x = d;
    x.struct_size = 8;
    expect(&x, 1, 0, "descriptor #0: struct_size 8 is smaller than");
    /* each names what is wrong (all said "missing kind, name, version,
     * summary or ops", a kind of 9 too) */
    x = d, x.kind = (dlg_kind)9;
    expect(&x, 1, 0, "descriptor #0 'w': unknown kind 9 (DLG_KIND_WORKLOAD, DLG_KIND_STORAGE or DLG_KIND_SINK)");
    x = d, x.name = "";
    expect(&x, 1, 0, "descriptor #0: no name");
    x = d, x.version = NULL;
    expect(&x, 1, 0, "workload 'w' (descriptor #0): no version");
    x = d, x.summary = NULL;
    expect(&x, 1, 0, "workload 'w' (descriptor #0): no summary");
    x = d, x.ops = NULL;
    expect(&x, 1, 0, "workload 'w' (descriptor #0): no ops table");
    x = d, x.options = dup_opts;
    expect(&x, 1, 0, "workload 'w': malformed option table: option 'batch' is declared twice");
    x = d, x.metrics = dup_metrics;
    expect(&x, 1, 0, "w: metric 'imgs' is declared twice");
    x = d, x.metrics = under_metrics;
    expect(&x, 1, 0, "empty or '_'-prefixed name");
    /* dlgauge help/list printed these with %s and crashed on NULL */
    x = d, x.metrics = nounit_metrics;
    expect(&x, 1, 0, "w: metric 'imgs' has no unit");
    x = d, x.metrics = nohelp_metrics;
    expect(&x, 1, 0, "w: metric 'imgs' has no help");
    x = d, x.ops = &wops_nounit;
    expect(&x, 1, 0, "workload 'w': ops table lacks unit");
    dlg_plugin_desc s = {sizeof s, DLG_KIND_SINK, "s", "1.0", "a sink", NULL, NULL, &sops_nowrite};
    expect(&s, 1, 0, "sink 's': ops table lacks open/write/close");
    dlg_plugin_desc st = {sizeof st, DLG_KIND_STORAGE, "st", "1.0", "a store", NULL, NULL, &stops_async};
    expect(&st, 1, 0, "storage 'st': ops table lacks create/destroy");
    /* a file_size that is set but too small is not "lacking" */
    dlg_storage_ops small = stops_async;
    small.file_size = 4;
    st.ops = &small;
    char fs_want[160];
    snprintf(fs_want, sizeof fs_want, "storage 'st': ops table's file_size 4 is smaller than a dlg_file (%zu bytes)",
             sizeof(dlg_file));
    expect(&st, 1, 0, fs_want);
    small.file_size = 0;
    expect(&st, 1, 0, "storage 'st': ops table lacks file_size");

    /* the plugin info itself */
    const dlg_plugin_desc *items[] = {&d, NULL};
    dlg_plugin_info info = {1, 0, 4, "t", items};
    char why[512];
    assert_int_not_equal(dlg_plugin_info_check(&info, why, sizeof why), 0);
    assert_non_null(strstr(why, "malformed plugin info (struct_size 4"));
    info.struct_size = sizeof info;
    info.items = NULL; /* said "malformed plugin info (struct_size 32, expected 32)" */
    assert_int_not_equal(dlg_plugin_info_check(&info, why, sizeof why), 0);
    assert_string_equal(why, "plugin info has no descriptor list (items is NULL) (DLG_PLUGIN(\"name\", &desc, ...) "
                             "fills both)");
    info.items = items, info.name = NULL;
    assert_int_not_equal(dlg_plugin_info_check(&info, why, sizeof why), 0);
    assert_non_null(strstr(why, "plugin info has no name (NULL)"));
}

static const char *tp(const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", DLG_TEST_PLUGIN_DIR, name);
    return buf;
}

static void broken_files(void **state)
{
    (void)state;
    static const struct {
        const char *file, *msg;
    } cases[] = {
        {"abi_major2.so", "built for plugin ABI 2.3, but this dlgauge speaks ABI"},
        {"abi_minor_newer.so", "newer than this dlgauge's"},
        {"not_a_plugin.so", "not a dlgauge plugin (no dlgauge_plugin_entry symbol)"},
        {"null_entry.so", "not a dlgauge plugin (its dlgauge_plugin_entry returned NULL)"},
        {"bad_options.so", "workload 'dupopt': malformed option table: option 'batch' is declared twice"},
        {"bad_default.so", "option 'depth' has a bad default: 2000 is above the maximum 1024"},
        {"missing_ops.so", "workload 'nostep': ops table lacks step"},
        {"undef_symbol.so", "undefined symbol: dlgt_symbol_nobody_defines"},
        {"no_such.so", "does not exist"},
        {"null_items.so", "null_items.so: plugin info has no descriptor list (items is NULL)"},
        {"bad_kind.so", "bad_kind.so: descriptor #0 'kind9': unknown kind 9"},
        {"small_file_size.so", "small_file_size.so: storage 'tiny': ops table's file_size 4 is smaller than a dlg_file"},
    };
    dlg_registry r;
    assert_int_equal(dlg_registry_init(&r, NULL), 0);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char path[512], err[2048] = "";
        tp(cases[i].file, path, sizeof path);
        if (dlg_registry_load_file(&r, path, err, sizeof err) >= 0)
            fail_msg("%s loaded", cases[i].file);
        if (!strstr(err, cases[i].msg) || !strstr(err, cases[i].file))
            fail_msg("%s: '%s' lacks '%s' or the file name", cases[i].file, err, cases[i].msg);
    }
    /* a good one: loaded once, found only in that file when asked */
    char path[512], err[2048];
    int a = dlg_registry_load_file(&r, tp("testwl.so", path, sizeof path), err, sizeof err);
    assert_true(a >= 0);
    assert_int_equal(dlg_registry_load_file(&r, path, err, sizeof err), a);
    const char *from = NULL;
    const dlg_plugin_desc *d = dlg_registry_find(&r, DLG_KIND_WORKLOAD, "count", a, &from, err, sizeof err);
    assert_non_null(d);
    assert_string_equal(d->name, "count");
    assert_non_null(strstr(from, "testwl.so"));
    assert_null(dlg_registry_find(&r, DLG_KIND_SINK, "count", a, NULL, err, sizeof err));
    assert_non_null(strstr(err, "unknown sink 'count'"));
    /* a failed lookup also says which files failed to load */
    assert_null(dlg_registry_find(&r, DLG_KIND_WORKLOAD, "cuont", -1, NULL, err, sizeof err));
    assert_non_null(strstr(err, "unknown workload 'cuont' (did you mean 'count'?)"));
    assert_non_null(strstr(err, "abi_major2.so failed to load: built for plugin ABI 2.3"));
    dlg_registry_free(&r);
}

/* An ELF header of class cls, this build's byte order, machine em, type ET_DYN. */
static void write_elf(const rt_dir *d, const char *name, unsigned char cls, uint16_t em, char *path, size_t len)
{
    unsigned char h[64] = {0x7f, 'E', 'L', 'F', cls, __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 1 : 2, 1};
    uint16_t type = ET_DYN;
    memcpy(h + 16, &type, 2);
    memcpy(h + 18, &em, 2);
    snprintf(path, len, "%s/%s", d->path, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(h, 1, sizeof h, f), sizeof h);
    fclose(f);
}

/* The first half of the file at src, as d/name. */
static void write_cut(const char *src, const rt_dir *d, const char *name, char *path, size_t len)
{
    static char buf[1 << 20];
    FILE *in = fopen(src, "rb");
    assert_non_null(in);
    size_t n = fread(buf, 1, sizeof buf, in);
    fclose(in);
    assert_true(n > 4096);
    snprintf(path, len, "%s/%s", d->path, name);
    FILE *out = fopen(path, "wb");
    assert_non_null(out);
    assert_int_equal(fwrite(buf, 1, n / 2, out), n / 2);
    fclose(out);
}

/* A file that is no shared object for this machine says so, not "check
 * its dependencies with ldd" (which fits a missing library only). */
static void not_shared_objects(void **state)
{
    const rt_dir *d = *state;
    char paths[6][512];
    rt_write(d, "passwd.so", "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n",
             paths[0], sizeof paths[0]);
    rt_write(d, "fake.so", "abc", paths[1], sizeof paths[1]);
    write_elf(d, "elf32.so", sizeof(void *) == 8 ? ELFCLASS32 : ELFCLASS64, 0, paths[2], sizeof paths[2]);
#if defined(__x86_64__)
    write_elf(d, "other.so", sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32, EM_AARCH64, paths[3], sizeof paths[3]);
#else
    write_elf(d, "other.so", sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32, EM_X86_64, paths[3], sizeof paths[3]);
#endif
    snprintf(paths[4], sizeof paths[4], "%s", d->path);
    static const char *const want[] = {
        "not a shared object (ELF) file (invalid ELF header; it starts with \"root:x:0:0:root:/root:/b\")",
        "not a shared object (ELF) file (file too short)",
        "not a shared object (ELF) file for this machine: a ",
        "not a shared object (ELF) file for this machine: built for ",
        "a folder, not a plugin file",
    };
    dlg_registry r;
    assert_int_equal(dlg_registry_init(&r, NULL), 0);
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        char err[2048] = "";
        if (dlg_registry_load_file(&r, paths[i], err, sizeof err) >= 0)
            fail_msg("%s loaded", paths[i]);
        if (!strstr(err, want[i]) || strstr(err, "ldd") || strncmp(err, paths[i], strlen(paths[i])) != 0)
            fail_msg("%s: '%s' lacks '%s' or names ldd", paths[i], err, want[i]);
    }
    /* a good ELF file that does not link keeps its hint */
    char err[2048] = "";
    assert_true(dlg_registry_load_file(&r, tp("undef_symbol.so", paths[5], sizeof paths[5]), err, sizeof err) < 0);
    assert_non_null(strstr(err, "list them with: ldd -r "));
    /* cut short (an interrupted copy): glibc's dlopen would SIGBUS on it */
    char cut[512];
    write_cut(paths[5], d, "cut.so", cut, sizeof cut);
    err[0] = '\0';
    assert_true(dlg_registry_load_file(&r, cut, err, sizeof err) < 0);
    if (!strstr(err, "cut.so: truncated shared object: its loadable segments need "))
        fail_msg("'%s'", err);
    dlg_registry_free(&r);
}

static void search_path(void **state)
{
    (void)state;
    char env[2048];
    const char *plugdir = getenv("DLGAUGE_PLUGIN_PATH");
    assert_non_null(plugdir);
    /* the same folders spelled differently, plus one that does not exist */
    snprintf(env, sizeof env, "%s/:/nonexistent-dlg:%s/../plugins", DLG_TEST_PLUGIN_DIR, DLG_TEST_PLUGIN_DIR);
    setenv("DLGAUGE_PLUGIN_PATH", env, 1);
    dlg_registry r;
    char extra[1024];
    snprintf(extra, sizeof extra, "%s/.", plugdir);
    const char *extras[] = {extra, NULL};
    assert_int_equal(dlg_registry_init(&r, extras), 0);
    assert_true(r.ndirs >= 3);
    assert_string_equal(r.dirs[0], plugdir);                    /* --plugin-dir first */
    assert_string_equal(r.dirs[1], DLG_TEST_PLUGIN_DIR);        /* then the environment */
    assert_string_equal(r.dirs[2], "/nonexistent-dlg");
    for (size_t i = 3; i < r.ndirs; i++) {                      /* nothing twice */
        assert_string_not_equal(r.dirs[i], plugdir);
        assert_string_not_equal(r.dirs[i], DLG_TEST_PLUGIN_DIR);
    }
    /* the folder that is not there: one note (it was skipped unsaid) */
    assert_int_equal(r.nnotes, 1);
    assert_string_equal(r.notes[0], "DLGAUGE_PLUGIN_PATH folder '/nonexistent-dlg': No such file or directory; skipped");
    dlg_registry_scan(&r);
    /* an unknown name says where it was looked for, the missing folder too */
    char err[8192], want[2048];
    assert_null(dlg_registry_find(&r, DLG_KIND_WORKLOAD, "mlp3", -1, NULL, err, sizeof err));
    snprintf(want, sizeof want, "; searched: %s %s /nonexistent-dlg (missing) ", plugdir, DLG_TEST_PLUGIN_DIR);
    if (!strstr(err, want))
        fail_msg("'%s' lacks '%s'", err, want);
    size_t sleeps = 0, counts = 0, failed = 0;
    for (size_t i = 0; i < r.nfiles; i++) {
        if (r.files[i].error)
            failed++;
        for (const dlg_plugin_desc *const *d = r.files[i].info ? r.files[i].info->items : NULL; d && *d; d++) {
            sleeps += strcmp((*d)->name, "sleep") == 0;
            counts += strcmp((*d)->name, "count") == 0;
        }
    }
    assert_int_equal(sleeps, 1);
    assert_int_equal(counts, 1);
    assert_int_equal(failed, 12); /* every broken test plugin, none of the good ones */
    dlg_registry_free(&r);
    setenv("DLGAUGE_PLUGIN_PATH", plugdir, 1);
}

/* A folder of 600 *.so files: the scan registers every one (it stopped at
 * 512 without a word); `plugin = FILE` naming one that failed in the scan,
 * however spelled, gives its failure without loading it a second time
 * (which listed it twice among the files that failed). */
static void scan_many_failed_once(void **state)
{
    const rt_dir *d = *state;
    char path[512], err[2048];
    for (int i = 0; i < 600; i++) {
        char name[32];
        snprintf(name, sizeof name, "p%03d.so", i);
        rt_write(d, name, "abc", path, sizeof path);
    }
    dlg_registry r;
    const char *dirs[] = {d->path, NULL};
    assert_int_equal(dlg_registry_init(&r, dirs), 0);
    dlg_registry_scan(&r);
    size_t mine = 0, n = r.nfiles;
    for (size_t i = 0; i < r.nfiles; i++)
        mine += strncmp(r.files[i].path, d->path, strlen(d->path)) == 0;
    assert_int_equal(mine, 600);
    snprintf(path, sizeof path, "%s/./p599.so", d->path);
    assert_true(dlg_registry_load_file(&r, path, err, sizeof err) < 0);
    assert_non_null(strstr(err, "p599.so: not a shared object (ELF) file"));
    assert_int_equal(r.nfiles, n);
    /* a good one the scan loaded is the same entry */
    const char *plugdir = getenv("DLGAUGE_PLUGIN_PATH");
    assert_non_null(plugdir);
    snprintf(path, sizeof path, "%s//posix.so", plugdir);
    int a = dlg_registry_load_file(&r, path, err, sizeof err);
    assert_true(a >= 0);
    assert_true(r.files[a].info);
    assert_int_equal(r.nfiles, n);
    dlg_registry_free(&r);
}

/* VmSize of this process, in bytes (0 when unknown). */
static unsigned long long vm_size(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long kib = 0;
    while (f && fgets(line, sizeof line, f) && sscanf(line, "VmSize: %llu", &kib) != 1) {
    }
    if (f)
        fclose(f);
    return kib * 1024;
}

/* A load under ulimit -v in a child (testwl.so's copy at path), then a
 * lookup of find (NULL: none): what it said into the child's pipe. */
typedef struct as_case {
    const char *path, *find;
} as_case;

static int load_under_limit(int fd, void *arg)
{
    const as_case *c = arg;
    static char err[4096];
    dlg_registry r;
    struct rlimit as;
    if (dlg_registry_init(&r, NULL) != 0 || getrlimit(RLIMIT_AS, &as) != 0)
        return 2;
    as.rlim_cur = vm_size() + 4096; /* no room to map the plugin */
    if (setrlimit(RLIMIT_AS, &as) != 0)
        return 2;
    if (dlg_registry_load_file(&r, c->path, err, sizeof err) >= 0)
        return 1;
    if (c->find && dlg_registry_find(&r, DLG_KIND_WORKLOAD, c->find, -1, NULL, err, sizeof err))
        return 1;
    size_t n = strlen(err);
    return write(fd, err, n) == (ssize_t)n ? 0 : 1;
}

static void said_under_limit(const char *path, const char *find, char *got, size_t len)
{
    as_case c = {path, find};
    int st = child_pipe_run(load_under_limit, &c, got, len);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("exit status %d: '%s'", st, got);
}

/* A plugin that cannot be mapped under ulimit -v: the message blames the
 * limit, not the file's dependencies (ldd shows nothing wrong); a lookup
 * of a workload it names leads with the file that failed, not with
 * "unknown workload" (which it said before the file's reason); one of a
 * name no file has is still unknown. */
static void address_space_limit(void **state)
{
    const rt_dir *d = *state;
#if defined(__SANITIZE_ADDRESS__)
    skip(); /* the sanitizer's allocator dies under a tight limit */
#endif
    /* a copy (another inode): dlopen maps it anew, where the plugin itself
     * an earlier test loaded would be found loaded already */
    char src[512], path[512];
    FILE *in = fopen(tp("testwl.so", src, sizeof src), "rb");
    snprintf(path, sizeof path, "%s/copy.so", d->path);
    FILE *out = fopen(path, "wb");
    assert_true(in && out);
    char buf[65536];
    for (size_t n; (n = fread(buf, 1, sizeof buf, in)) > 0;)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
    static char got[4096], want[1024];
    said_under_limit(path, NULL, got, sizeof got);
    if (!strstr(got, "most likely the address-space limit, ulimit -v ") || strstr(got, "ldd"))
        fail_msg("'%s' does not blame ulimit -v, or names ldd", got);
    said_under_limit(path, "fail_setup", got, sizeof got);
    snprintf(want, sizeof want, "plugin file %s, which names workload 'fail_setup', could not be loaded: ", path);
    if (strncmp(got, want, strlen(want)) != 0 || !strstr(got, "address-space limit, ulimit -v "))
        fail_msg("'%s' does not start with '%s' or does not blame ulimit -v", got, want);
    said_under_limit(path, "no_such_wl", got, sizeof got);
    snprintf(want, sizeof want, "%s failed to load: ", path);
    if (strncmp(got, "unknown workload 'no_such_wl'", 29) != 0 || !strstr(got, want))
        fail_msg("'%s' is not an unknown workload, or lacks '%s'", got, want);
}

/* Which names a plugin file holds as strings of its own: whole ones only. */
static void names_in_file(void **state)
{
    (void)state;
    char path[512];
    tp("testwl.so", path, sizeof path);
    assert_true(dlg_plugin_names(path, "fail_setup"));
    assert_true(dlg_plugin_names(path, "gpuish"));
    assert_false(dlg_plugin_names(path, "ail_setup"));
    assert_false(dlg_plugin_names(path, "fail_set"));
    assert_false(dlg_plugin_names(path, "no_such_wl"));
    assert_false(dlg_plugin_names("/nonexistent/x.so", "fail_setup"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(descriptor_checks),
        cmocka_unit_test(broken_files),
        cmocka_unit_test_setup_teardown(not_shared_objects, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test(search_path),
        cmocka_unit_test_setup_teardown(address_space_limit, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test(names_in_file),
        cmocka_unit_test_setup_teardown(scan_many_failed_once, rt_dir_setup, rt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
