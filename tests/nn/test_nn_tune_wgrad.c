/* Which kernel computes a layer's weight gradient under cpu-bf16,
 * oneDNN's backward weights, cpu_wgrad_amx (few input channels) or an
 * im2col and a matmul (NHWC bf16 input), is timed once per host and kept
 * in its tuning record (core/nn/tune.h, core/nn/cpu/cpu_wgrad_pick.c): a
 * plan follows the timings (ours only where 10% faster than oneDNN's,
 * and only those that take the layer), a later plan of the same layer
 * takes the recorded kernel, a bad entry is timed again, and the plan's
 * note says what the timing found and matches what runs.  Timings are
 * injected (DLG_NN_WGRAD_TIMES="<oneDNN s>,<amx s>,<im2col s>") except
 * in the last test, which times for real.  Skips where oneDNN has no AMX
 * kernels. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlgauge/nn.h>

#include "dnnl_isa.h"
#include "tune_testutil.h"

#define AMX_FASTER "2e-3,1e-3"
#define ONEDNN_FASTER "1e-3,2e-3"
#define AMX_BARELY "1e-3,0.95e-3" /* 5% faster: short of the 10% it needs */
#define IM2COL_FASTEST "3e-3,2e-3,1e-3"
#define AMX_FASTEST "3e-3,1e-3,2e-3"
#define KEY ":t1:n2c3h35w35:o32:k7x7:s2x2:p0x0:bias:xf32:amx "
#define KEY2 ":t1:n2c32h15w15:o32:k3x3:s1x1:p1x1:bias:xbf16:amxim2col "

/* AlexNet's first layer in small: 3 channels from the net's fp32 input,
 * 7x7 stride 2, into an LRN (which takes the NHWC tensor AMX writes);
 * then c2, 3x3 over that NHWC bf16 tensor, which the im2col takes too. */
static int first_layer_net(dlg_net *net)
{
    int x = dlg_conv(net, "c1", dlg_input(net, "x", 2, 3, 35, 35), 32, 7, 2, 0, 1);
    x = dlg_conv(net, "c2", dlg_lrn(net, "n1", x, 5, 1e-3f, 0.75f, 1.0f), 32, 3, 1, 1, 1);
    return dlg_fc(net, "L", dlg_avg_pool(net, "p1", x, 3, 2, 0), 10);
}

/* The impl of layer `name` in a cpu-bf16 training plan, one thread, with
 * the given injected timings (NULL: timed for real); its notes into nd. */
static void plan_impl(const char *times, tt_noted *nd, const char *name, char *impl, size_t n)
{
    dlg_net *net;
    if (times)
        setenv("DLG_NN_WGRAD_TIMES", times, 1);
    else
        unsetenv("DLG_NN_WGRAD_TIMES");
    assert_int_equal(dlg_net_create(&net, "tune"), 0);
    first_layer_net(net);
    dlg_plan_opts o = {.backend = "cpu-bf16", .threads = 1, .train = true, .note = nd ? tt_note_line : NULL,
                       .note_ctx = nd};
    if (dlg_net_status(net) < 0 || dlg_net_plan(net, &o) < 0)
        fail_msg("plan: %s", dlg_net_error(net));
    impl[0] = '\0';
    for (int i = 0; i < dlg_net_layer_count(net); i++) {
        dlg_layer_info li;
        if (dlg_net_layer_info(net, i, &li) == 0 && !strcmp(li.name, name))
            snprintf(impl, n, "%s", dlg_net_layer_impl(net, i));
    }
    assert_true(impl[0]);
    print_message("%s (times %s): %s\n", name, times ? times : "measured", impl);
    dlg_net_destroy(net);
    unsetenv("DLG_NN_WGRAD_TIMES");
}

/* Whether c1's weight gradient runs on cpu_wgrad_amx. */
static bool plans_amx(const char *times, tt_noted *nd)
{
    char impl[256];
    plan_impl(times, nd, "c1", impl, sizeof impl);
    return strstr(impl, "cpu_wgrad_amx") != NULL;
}

/* Which kernel c2's weight gradient runs on: "amx", "im2col" or "onednn". */
static const char *c2_kernel(const char *times)
{
    char impl[256];
    plan_impl(times, NULL, "c2", impl, sizeof impl);
    return strstr(impl, "cpu_wgrad_amx") ? "amx" : strstr(impl, "im2col + matmul") ? "im2col" : "onednn";
}

static void test_follows_times(void **st)
{
    (void)st;
    assert_int_equal(setenv("DLGAUGE_TUNE", "off", 1), 0);
    assert_true(plans_amx(AMX_FASTER, NULL));
    assert_false(plans_amx(ONEDNN_FASTER, NULL));
    assert_false(plans_amx(AMX_BARELY, NULL));
    /* c2: the fastest of the three; c1 is offered no im2col (its input
     * is the net's fp32 one), whatever its timing */
    assert_string_equal(c2_kernel(IM2COL_FASTEST), "im2col");
    assert_string_equal(c2_kernel(AMX_FASTEST), "amx");
    assert_string_equal(c2_kernel(ONEDNN_FASTER), "onednn");
    assert_string_equal(c2_kernel("3e-3,-1,2.9e-3"), "onednn");
    assert_true(plans_amx(IM2COL_FASTEST, NULL));
}

static void test_choice_kept(void **st)
{
    (void)st;
    char rec[64];
    tt_fresh_record(rec);
    assert_true(plans_amx(AMX_FASTER, NULL));
    char *text = tt_read(rec);
    assert_non_null(text);
    assert_non_null(strstr(text, KEY "amx\n"));
    assert_non_null(strstr(text, KEY2 "amx\n"));
    free(text);
    assert_true(plans_amx(ONEDNN_FASTER, NULL)); /* the record's, not timed again */
    assert_string_equal(c2_kernel(IM2COL_FASTEST), "amx");
    tt_remove_record(rec);
    tt_fresh_record(rec);
    assert_false(plans_amx(ONEDNN_FASTER, NULL));
    text = tt_read(rec);
    assert_non_null(strstr(text, KEY "onednn\n"));
    free(text);
    assert_false(plans_amx(AMX_FASTER, NULL));
    tt_remove_record(rec);
    tt_fresh_record(rec);
    assert_string_equal(c2_kernel(IM2COL_FASTEST), "im2col");
    text = tt_read(rec);
    assert_non_null(strstr(text, KEY2 "im2col\n"));
    free(text);
    assert_string_equal(c2_kernel(AMX_FASTEST), "im2col");
    tt_remove_record(rec);
}

static void test_bad_entry_retimed(void **st)
{
    (void)st;
    char rec[64];
    tt_fresh_record(rec);
    assert_false(plans_amx(ONEDNN_FASTER, NULL));
    char *text = tt_read(rec);
    char *at = strstr(text, KEY "onednn\n");
    assert_non_null(at);
    memcpy(at + strlen(KEY), "ondenn", 6);
    tt_write(rec, text, strlen(text));
    free(text);
    tt_stderr cap;
    tt_capture(&cap);
    bool amx = plans_amx(AMX_FASTER, NULL);
    char *err = tt_captured(&cap);
    assert_true(amx);
    assert_non_null(strstr(err, "'ondenn' names no kernel offered; timed again"));
    free(err);
    text = tt_read(rec);
    assert_non_null(strstr(text, KEY "amx\n"));
    assert_null(strstr(text, "ondenn"));
    free(text);
    tt_remove_record(rec);
}

/* Timed for real: one note line with both times, and the kernel it names
 * is the one the plan runs, by the 10% rule; a second plan reads the
 * record and says nothing. */
static void test_measured(void **st)
{
    (void)st;
    char rec[64];
    tt_fresh_record(rec);
    tt_noted nd = {"", 0};
    bool amx = plans_amx(NULL, &nd);
    print_message("noted: %s", nd.text);
    assert_int_equal(nd.lines, 3); /* c1, c2 and L (cpu_fc_wgrad's) */
    assert_non_null(strstr(nd.text, "cpu: L's weight gradient timed on 10 of its 10 outputs: oneDNN "));
    const char *at = strstr(nd.text, "cpu: c1's weight gradient timed at batch 2: oneDNN ");
    assert_non_null(at);
    double t_onednn, t_amx;
    char pick[32];
    assert_int_equal(sscanf(at, "cpu: c1's weight gradient timed at batch 2: oneDNN %lf ms, cpu_wgrad_amx %lf ms: %31[^;]",
                            &t_onednn, &t_amx, pick),
                     3);
    assert_true(t_onednn > 0 && t_amx > 0);
    assert_string_equal(pick, amx ? "cpu_wgrad_amx" : "oneDNN");
    /* the rule, within the 3 digits printed */
    if (t_amx < 0.89 * t_onednn)
        assert_true(amx);
    if (t_amx > 0.91 * t_onednn)
        assert_false(amx);
    assert_non_null(strstr(nd.text, rec));
    /* c2 timed all three */
    at = strstr(nd.text, "cpu: c2's weight gradient timed at batch 2: oneDNN ");
    assert_non_null(at);
    assert_non_null(strstr(at, " ms, cpu_wgrad_amx "));
    assert_non_null(strstr(at, " ms, im2col + matmul "));
    nd = (tt_noted){"", 0};
    assert_int_equal(plans_amx(NULL, &nd), amx);
    assert_int_equal(nd.lines, 0);
    tt_remove_record(rec);
}

/* An inner product's weight gradient (cpu_fc_wgrad.c's outer products or
 * oneDNN's) is chosen the same way: L, the net's last layer, under
 * injected times, kept in the record and read back. */
static void test_fc_choice_kept(void **st)
{
    (void)st;
    char rec[64], impl[256];
    tt_fresh_record(rec);
    setenv("DLG_NN_FC_WGRAD_TIMES", "2e-3,1e-3", 1);
    plan_impl(NULL, NULL, "L", impl, sizeof impl);
    assert_non_null(strstr(impl, "weight gradient by outer products (cpu_fc_wgrad)"));
    char *text = tt_read(rec);
    assert_non_null(text);
    const char *at = strstr(text, "\nfcwgrad1:dnnl");
    assert_non_null(at);
    assert_non_null(strstr(at, ":t1:b2i"));
    assert_non_null(strstr(at, "o10:bf16 outer\n"));
    free(text);
    setenv("DLG_NN_FC_WGRAD_TIMES", "1e-3,2e-3", 1);
    plan_impl(NULL, NULL, "L", impl, sizeof impl); /* the record's */
    assert_non_null(strstr(impl, "cpu_fc_wgrad"));
    tt_remove_record(rec);
    assert_int_equal(setenv("DLGAUGE_TUNE", "off", 1), 0);
    plan_impl(NULL, NULL, "L", impl, sizeof impl); /* timed: oneDNN's */
    assert_null(strstr(impl, "cpu_fc_wgrad"));
    unsetenv("DLG_NN_FC_WGRAD_TIMES");
}

int main(void)
{
    if (!has_amx()) {
        printf("oneDNN has no AMX kernels on this CPU: skipped\n");
        return 77; /* ctest's SKIP_RETURN_CODE */
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_follows_times),
        cmocka_unit_test(test_choice_kept),
        cmocka_unit_test(test_bad_entry_retimed),
        cmocka_unit_test(test_measured),
        cmocka_unit_test(test_fc_choice_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
