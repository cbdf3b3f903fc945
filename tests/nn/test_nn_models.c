/* The reference models: parameters and forward multiply-adds per image
 * against published figures (shared/FORMATS.md), within 1%. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlgauge/nn.h>
#include <dlgauge/plugin.h>

#include <math.h>
#include <stdio.h>

static void sizes(const char *model, double gmacs, double mparams)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, model), 0);
    int loss = dlg_model_build(net, model, 1, 1000);
    if (loss < 0)
        fail_msg("%s: %s", model, dlg_net_error(net));
    double m = (double)dlg_net_macs_total(net) / 1e9, p = (double)dlg_net_param_total(net) / 1e6;
    printf("  %-10s %.4f GMACs (published %.3f), %.3f M params (published %.1f)\n", model, m, gmacs,
           p, mparams);
    assert_true(fabs(m / gmacs - 1) < 0.01);
    assert_true(fabs(p / mparams - 1) < 0.01);
    dlg_net_destroy(net);
}

/* FORMATS.md's AlexNet row is torchvision's (0.714 GMACs at 224); BVLC's
 * grouped AlexNet at 227 is ~0.72 GMACs with 61.0 M parameters. */
static void test_alexnet(void **st) { sizes("alexnet", 0.72, 61.1); }
static void test_vgg16(void **st) { sizes("vgg16", 15.47, 138.4); }
static void test_resnet50(void **st) { sizes("resnet50", 4.09, 25.6); }
/* FORMATS.md's GoogLeNet row (1.50 GMACs, 6.6 M) is torchvision's, which
 * uses 3x3 convolutions in the "5x5" branches.  BVLC's GoogLeNet has real
 * 5x5 branches: 1.58 GMACs and 7.0 M parameters (as Netscope reports). */
static void test_googlenet(void **st) { sizes("googlenet", 1.58, 7.0); }

static void test_unknown(void **st)
{
    dlg_net *net;
    assert_int_equal(dlg_net_create(&net, "x"), 0);
    assert_int_equal(dlg_model_build(net, "lenet", 1, 10), -DLG_EINVAL);
    dlg_net_destroy(net);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alexnet),  cmocka_unit_test(test_vgg16),
        cmocka_unit_test(test_resnet50), cmocka_unit_test(test_googlenet),
        cmocka_unit_test(test_unknown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
