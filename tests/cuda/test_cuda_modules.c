/* The engine's CUDA module loader (core/nn/cuda/cuda_loader.c) against
 * stand-in modules (fake_cuda_module.c): devices and backends come from the
 * module found in $DLGAUGE_NN_MODULE_DIR, and a module that is missing,
 * not loadable, without its table or from another build is refused with a
 * reason, never crashes.  The real modules' no-device path: cuda_nodevice. */
#include "cuda/cuda_device.h"
#include "cuda/cuda_module.h"
#include "backend.h"
#include "peak.h"

#include <dlgauge/nn.h>
#include <dlgauge/plugin.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static void use_dir(const char *name)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s", DLG_FAKE_MODULES, name);
    setenv("DLGAUGE_NN_MODULE_DIR", dir, 1);
}

static void test_good_module(void **st)
{
    use_dir("good");
    int n = -1;
    char why[512] = "x", name[64] = "";
    assert_int_equal(dlg_cuda_device_count(&n, why, sizeof why), 0);
    assert_int_equal(n, 3);
    assert_string_equal(why, "");
    assert_int_equal(dlg_cuda_device_name(2, name, sizeof name), 0);
    assert_string_equal(name, "NVIDIA H200");
    assert_int_equal(dlg_cuda_device_name(3, name, sizeof name), -DLG_ENOTSUP);
    /* % of peak takes the device's name from the probe: H200 at bf16 */
    dlg_peak p;
    dlg_peak_for_backend(&p, "cuda-bf16:1", 4);
    assert_string_equal(p.isa, "gpu");
    assert_true(p.flops > 900e12);
    assert_non_null(strstr(p.source, "NVIDIA H200"));
    /* backends come from the module's table, by their full name */
    const dlg_backend *b = dlg_backend_find("cuda:1");
    assert_non_null(b);
    assert_string_equal(b->name, "cuda:1");
    assert_null(b->open); /* the stand-in's, not a real backend */
    assert_null(dlg_backend_find("cuda:2"));
    assert_non_null(dlg_backend_find("ref")); /* never through a module */
}

/* device + precision -> backend (core/nn/device.c) through the modules */
static void test_device_backend(void **st)
{
    const char *bk = NULL;
    char note[160], err[768];
    use_dir("good");
    assert_int_equal(dlg_device_backend("cuda:1", "fp32", 0, "cpu", &bk, note, sizeof note, err,
                                        sizeof err), 0);
    assert_string_equal(bk, "cuda:1");
    assert_string_equal(note, "");
    /* auto with devices picks cuda:0 at the precision asked for */
    assert_int_equal(dlg_device_backend("auto", "bf16", 0, "cpu", &bk, note, sizeof note, err,
                                        sizeof err), -DLG_ENOTSUP);
    assert_non_null(strstr(err, "device = auto: cuda.so has no backend 'cuda-bf16:0'"));
    assert_int_equal(dlg_device_backend("cuda:3", "fp32", 0, "cpu", &bk, note, sizeof note, err,
                                        sizeof err), -DLG_ENOTSUP);
    assert_non_null(strstr(err, "CUDA devices 0..2"));
    /* one GPU per rank: local rank 4 of the node on its 3 GPUs is cuda:1,
     * for auto and a bare cuda, and the note says why */
    static const char *const anyone[] = {"auto", "cuda"};
    for (int a = 0; a < 2; a++) {
        bk = NULL;
        assert_int_equal(dlg_device_backend(anyone[a], "fp32", 4, "cpu", &bk, note, sizeof note, err, sizeof err),
                         0);
        assert_string_equal(bk, "cuda:1");
        assert_non_null(strstr(note, "rank 4 on its node: cuda:1 (local rank mod 3 GPUs)"));
        /* local rank 2 asks for cuda:2, which the stand-in has no backend for */
        assert_int_equal(dlg_device_backend(anyone[a], "fp32", 2, "cpu", &bk, note, sizeof note, err, sizeof err),
                         -DLG_ENOTSUP);
        assert_non_null(strstr(err, "has no backend 'cuda:2'"));
    }
    /* no module: auto runs on the CPU with a note, cuda:0 says why not */
    use_dir("nonexistent");
    bk = NULL;
    assert_int_equal(dlg_device_backend("auto", NULL, 0, "ref", &bk, note, sizeof note, err,
                                        sizeof err), 0);
    assert_string_equal(bk, "ref");
    assert_non_null(strstr(note, "no CUDA device found"));
    assert_int_equal(dlg_device_backend("cuda:0", "fp32", 0, "cpu", &bk, note, sizeof note, err,
                                        sizeof err), -DLG_ENOTSUP);
    assert_non_null(strstr(err, "no CUDA device (the CUDA module cuda-probe.so is in none of"));
    /* cpu never asks for devices */
    assert_int_equal(dlg_device_backend("cpu", "fp32", 0, "cpu", &bk, note, sizeof note, err,
                                        sizeof err), 0);
    assert_string_equal(bk, "cpu");
}

/* device_count's reason for 0 devices must contain want */
static void expect_refused(const char *dir, const char *want)
{
    use_dir(dir);
    int n = -1;
    char why[512] = "", name[64] = "";
    assert_int_equal(dlg_cuda_device_count(&n, why, sizeof why), 0);
    assert_int_equal(n, 0);
    if (!strstr(why, want))
        fail_msg("%s: reason '%s' lacks '%s'", dir, why, want);
    assert_int_equal(dlg_cuda_device_name(0, name, sizeof name), -DLG_ENOTSUP);
    /* no name: % of peak says so instead of guessing a GPU */
    dlg_peak p;
    dlg_peak_for_backend(&p, "cuda:0", 1);
    assert_true(p.flops == 0);
    assert_non_null(strstr(p.source, "not in dlgauge's peak table"));
}

static void test_refused_modules(void **st)
{
    expect_refused("skewed", "was built for another engine");
    expect_refused("notable", "has no dlg_cuda_module_v1 table");
    expect_refused("nonexistent", "is in none of");
    /* a file by the module's name that is no shared object */
    char dir[] = "/tmp/dlg_cuda_modules_XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/cuda-probe.so", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("not an ELF file\n", f);
    fclose(f);
    setenv("DLGAUGE_NN_MODULE_DIR", dir, 1);
    int n = -1;
    char why[512] = "";
    dlg_cuda_device_count(&n, why, sizeof why);
    assert_int_equal(n, 0);
    assert_non_null(strstr(why, "cannot load"));
    assert_non_null(strstr(why, path));
    unlink(path);
    rmdir(dir);
}

/* Where the loader looks: $DLGAUGE_NN_MODULE_DIR alone when set; else
 * backends/ beside the object holding the engine (here this program, as
 * lib/dlgauge/caffe.so in an install), the build tree's (which has the
 * real modules) and the install prefix's. */
static void test_search_dirs(void **st)
{
    char dir[1024], exe[1024], want[1100];
    setenv("DLGAUGE_NN_MODULE_DIR", "/opt/x", 1);
    assert_true(dlg_cuda_module_dir(0, dir, sizeof dir));
    assert_string_equal(dir, "/opt/x");
    assert_false(dlg_cuda_module_dir(1, dir, sizeof dir));
    unsetenv("DLGAUGE_NN_MODULE_DIR");
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    assert_true(n > 0);
    exe[n] = '\0';
    *strrchr(exe, '/') = '\0';
    snprintf(want, sizeof want, "%s/backends", exe);
    assert_true(dlg_cuda_module_dir(0, dir, sizeof dir));
    assert_string_equal(dir, want);
    assert_true(dlg_cuda_module_dir(1, dir, sizeof dir)); /* bin/../lib/dlgauge/backends */
    snprintf(want, sizeof want, "%s/../", exe);
    assert_true(strncmp(dir, want, strlen(want)) == 0);
    assert_non_null(strstr(dir, "/dlgauge/backends"));
    char beside[1024];
    snprintf(beside, sizeof beside, "%s", dir);
    assert_true(dlg_cuda_module_dir(2, dir, sizeof dir)); /* the program's: here the same */
    assert_string_equal(dir, beside);
    assert_true(dlg_cuda_module_dir(3, dir, sizeof dir));
    snprintf(want, sizeof want, "%s/cuda.so", dir);
    assert_int_equal(access(want, R_OK), 0);
    snprintf(want, sizeof want, "%s/cuda-probe.so", dir);
    assert_int_equal(access(want, R_OK), 0);
    assert_true(dlg_cuda_module_dir(4, dir, sizeof dir));
    assert_non_null(strstr(dir, "/dlgauge/backends"));
    assert_false(dlg_cuda_module_dir(5, dir, sizeof dir));
}

/* Planning on a cuda backend without its module: the net's error says
 * where it looked; an unknown backend lists the known ones. */
static void test_plan_errors(void **st)
{
    use_dir("nonexistent");
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "m"), 0);
    int x = dlg_input(net, "x", 1, 1, 2, 2);
    dlg_relu(net, "r", x);
    dlg_plan_opts o = {.backend = "cuda-fp16:0"};
    assert_true(dlg_net_plan(net, &o) < 0);
    assert_non_null(strstr(dlg_net_error(net), "backend cuda-fp16:0"));
    assert_non_null(strstr(dlg_net_error(net), "cuda.so is in none of"));
    dlg_net_destroy(net);

    assert_int_equal(dlg_net_create(&net, "m"), 0);
    x = dlg_input(net, "x", 1, 1, 2, 2);
    dlg_relu(net, "r", x);
    o.backend = "tpu";
    assert_true(dlg_net_plan(net, &o) < 0);
    assert_non_null(strstr(dlg_net_error(net), "unknown backend 'tpu' (known: ref"));
    dlg_net_destroy(net);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_module),
        cmocka_unit_test(test_refused_modules),
        cmocka_unit_test(test_plan_errors),
        cmocka_unit_test(test_device_backend),
        cmocka_unit_test(test_search_dirs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
