/* Which kernel computes a few-channel layer's weight gradient under
 * cpu-bf16, cpu_wgrad_amx or oneDNN's backward weights, is timed once per
 * host and kept in its tuning record (core/nn/tune.h,
 * core/nn/cpu/cpu_wgrad_pick.c): a plan follows the timings (the hand
 * kernel only where 10% faster), a later plan of the same layer takes the
 * recorded kernel, a bad entry is timed again, and the plan's note says
 * what the timing found and matches what runs.  Timings are injected
 * (DLG_NN_WGRAD_TIMES="<oneDNN s>,<amx s>") except in the last test,
 * which times for real.  Skips where oneDNN has no AMX kernels. */
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
#define KEY ":t1:n2c3h35w35:o32:k7x7:s2:p0:bias:xf32 "

/* AlexNet's first layer in small: 3 channels from the net's fp32 input,
 * 7x7 stride 2, into an LRN (which takes the NHWC tensor AMX writes). */
static int first_layer_net(dlg_net *net)
{
    int x = dlg_conv(net, "c1", dlg_input(net, "x", 2, 3, 35, 35), 32, 7, 2, 0, 1);
    x = dlg_avg_pool(net, "p1", dlg_lrn(net, "n1", x, 5, 1e-3f, 0.75f, 1.0f), 3, 2, 0);
    return dlg_fc(net, "L", x, 10);
}

typedef struct noted {
    char text[2048];
    int lines;
} noted;

static void note_line(void *ctx, const char *line)
{
    noted *nd = ctx;
    size_t len = strlen(nd->text);
    snprintf(nd->text + len, sizeof nd->text - len, "%s\n", line);
    nd->lines++;
}

/* Whether c1's weight gradient runs on cpu_wgrad_amx in a cpu-bf16
 * training plan, one thread, with the given injected timings (NULL:
 * timed for real); its notes into nd. */
static bool plans_amx(const char *times, noted *nd)
{
    dlg_net *net;
    if (times)
        setenv("DLG_NN_WGRAD_TIMES", times, 1);
    else
        unsetenv("DLG_NN_WGRAD_TIMES");
    assert_int_equal(dlg_net_create(&net, "tune"), 0);
    first_layer_net(net);
    dlg_plan_opts o = {.backend = "cpu-bf16", .threads = 1, .train = true, .note = nd ? note_line : NULL,
                       .note_ctx = nd};
    if (dlg_net_status(net) < 0 || dlg_net_plan(net, &o) < 0)
        fail_msg("plan: %s", dlg_net_error(net));
    const char *impl = NULL;
    for (int i = 0; i < dlg_net_layer_count(net); i++) {
        dlg_layer_info li;
        if (dlg_net_layer_info(net, i, &li) == 0 && !strcmp(li.name, "c1"))
            impl = dlg_net_layer_impl(net, i);
    }
    assert_non_null(impl);
    print_message("c1 (times %s): %s\n", times ? times : "measured", impl);
    bool amx = strstr(impl, "cpu_wgrad_amx") != NULL;
    dlg_net_destroy(net);
    unsetenv("DLG_NN_WGRAD_TIMES");
    return amx;
}

static void test_follows_times(void **st)
{
    (void)st;
    assert_int_equal(setenv("DLGAUGE_TUNE", "off", 1), 0);
    assert_true(plans_amx(AMX_FASTER, NULL));
    assert_false(plans_amx(ONEDNN_FASTER, NULL));
    assert_false(plans_amx(AMX_BARELY, NULL));
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
    free(text);
    assert_true(plans_amx(ONEDNN_FASTER, NULL)); /* the record's, not timed again */
    tt_remove_record(rec);
    tt_fresh_record(rec);
    assert_false(plans_amx(ONEDNN_FASTER, NULL));
    text = tt_read(rec);
    assert_non_null(strstr(text, KEY "onednn\n"));
    free(text);
    assert_false(plans_amx(AMX_FASTER, NULL));
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
    assert_non_null(strstr(err, "'ondenn' is neither amx nor onednn; timed again"));
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
    noted nd = {"", 0};
    bool amx = plans_amx(NULL, &nd);
    print_message("noted: %s", nd.text);
    assert_int_equal(nd.lines, 1);
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
    nd = (noted){"", 0};
    assert_int_equal(plans_amx(NULL, &nd), amx);
    assert_int_equal(nd.lines, 0);
    tt_remove_record(rec);
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
