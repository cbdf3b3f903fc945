/* A 3x3 layer's Winograd/direct choice (oneDNN's Winograd, AVX-512) is
 * timed once per host and kept in its tuning record (core/nn/tune.h):
 * a later plan of the same layer takes the recorded kernels even when
 * its own timing would pick the others, so the same configuration runs
 * the same kernels run after run.  The timings are injected
 * (DLG_NN_CONV_TIMES="<direct s>,<winograd s>", cpu_conv_algo.c's test
 * hook), so the test does not depend on this machine's speeds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlgauge/nn.h>

#include "tune_testutil.h"

#define WINO_FASTER "2e-3,1e-3"
#define DIRECT_FASTER "1e-3,2e-3"

/* 8 -> 64 channels by a 1x1, then the 3x3 layer "L" (64 -> 64). */
static int wino_net(dlg_net *net)
{
    int x = dlg_relu(net, "r0", dlg_conv(net, "c0", dlg_input(net, "x", 2, 8, 20, 15), 64, 1, 1, 0, 1));
    return dlg_relu(net, "r1", dlg_conv(net, "L", x, 64, 3, 1, 1, 1));
}

/* L's kernel (its forward primitive) in a cpu plan, one thread, with the
 * given injected timings, into impl: 0, or -1 with why in impl.  nd: where
 * the plan's notes go (NULL: stderr). */
static int plan_noted(bool train, const char *times, char *impl, size_t n, tt_noted *nd)
{
    dlg_net *net;
    setenv("DLG_NN_CONV_TIMES", times, 1);
    if (dlg_net_create(&net, "tune") != 0) {
        snprintf(impl, n, "no net");
        return -1;
    }
    wino_net(net);
    dlg_plan_opts o = {.backend = "cpu", .threads = 1, .train = train, .note = nd ? tt_note_line : NULL, .note_ctx = nd};
    int rc = dlg_net_status(net) < 0 || dlg_net_plan(net, &o) < 0 ? -1 : 0;
    snprintf(impl, n, "%s", rc ? dlg_net_error(net) : "no layer L");
    for (int i = 0; rc == 0 && i < dlg_net_layer_count(net); i++) {
        dlg_layer_info li;
        if (dlg_net_layer_info(net, i, &li) == 0 && !strcmp(li.name, "L")) {
            snprintf(impl, n, "%s", dlg_net_layer_impl(net, i));
            rc = 1;
        }
    }
    dlg_net_destroy(net);
    unsetenv("DLG_NN_CONV_TIMES");
    return rc == 1 ? 0 : -1;
}

static int plan_impl(bool train, const char *times, char *impl, size_t n)
{
    return plan_noted(train, times, impl, n, NULL);
}

/* Whether L's kernel is oneDNN's Winograd (jit_wino_4x3), with the given
 * injected timings. */
static bool plans_winograd(bool train, const char *times)
{
    char impl[256];
    if (plan_impl(train, times, impl, sizeof impl) != 0)
        fail_msg("%s", impl);
    printf("  L (%s, times %s): %s\n", train ? "train" : "infer", times, impl);
    return strstr(impl, "wino_4x3") != NULL; /* oneDNN's (AVX2: the engine's own, untimed) */
}

/* Whether oneDNN has a Winograd kernel here (AVX-512): 1, 0, or -1 when
 * the plan fails. */
static int onednn_winograd(void)
{
    char impl[256];
    setenv("DLGAUGE_TUNE", "off", 1);
    setenv("DLG_NN_CONV_ALGO", "winograd", 1);
    int rc = plan_impl(true, DIRECT_FASTER, impl, sizeof impl);
    unsetenv("DLG_NN_CONV_ALGO");
    printf("  L (forced winograd): %s\n", impl);
    return rc < 0 ? -1 : strstr(impl, "wino_4x3") != NULL;
}

static void test_choice_kept(void **st)
{
    (void)st;
    /* without a record every plan times again, and follows its timings */
    assert_int_equal(setenv("DLGAUGE_TUNE", "off", 1), 0);
    assert_true(plans_winograd(true, WINO_FASTER));
    assert_false(plans_winograd(true, DIRECT_FASTER));
    char rec[64];
    tt_fresh_record(rec);
    assert_true(plans_winograd(true, WINO_FASTER));
    char *text = tt_read(rec);
    assert_non_null(text);
    assert_non_null(strstr(text, ":t1:f32:train:n2c64h20w15:o64:p1x1:bias:fwd winograd\n"));
    assert_non_null(strstr(text, ":bwdd winograd\n"));
    assert_non_null(strstr(text, ":bwdw winograd\n"));
    free(text);
    /* the same layer again, timed the other way: the record's kernels */
    assert_true(plans_winograd(true, DIRECT_FASTER));
    assert_true(plans_winograd(true, DIRECT_FASTER));
    /* inference is another key; its first choice holds too */
    assert_false(plans_winograd(false, DIRECT_FASTER));
    assert_false(plans_winograd(false, WINO_FASTER));
    text = tt_read(rec);
    assert_non_null(strstr(text, ":infer:n2c64h20w15:o64:p1x1:bias:fwd direct\n"));
    free(text);
    tt_remove_record(rec);
}

/* An entry that is no choice is not trusted: timed again (with a
 * warning) and replaced; a record of another host is ignored whole. */
static void test_bad_entries_retimed(void **st)
{
    (void)st;
    char rec[64];
    tt_fresh_record(rec);
    assert_true(plans_winograd(true, WINO_FASTER));
    char *text = tt_read(rec);
    assert_non_null(text);
    char *at = strstr(text, ":fwd winograd\n");
    assert_non_null(at);
    memcpy(at + 5, "maybesoo", 8);
    tt_write(rec, text, strlen(text));
    tt_stderr cap;
    tt_capture(&cap);
    bool wino = plans_winograd(true, DIRECT_FASTER);
    char *err = tt_captured(&cap);
    assert_false(wino);
    assert_non_null(strstr(err, "'maybesoo' is neither winograd nor direct"));
    free(err);
    free(text);
    text = tt_read(rec);
    assert_non_null(strstr(text, ":fwd direct\n"));
    assert_null(strstr(text, "maybesoo"));
    /* another host's record: its choices are not this one's */
    char *host = strstr(text, "\nhost ");
    assert_non_null(host);
    memcpy(host + 6, "XX", 2);
    tt_write(rec, text, strlen(text));
    tt_capture(&cap);
    wino = plans_winograd(true, WINO_FASTER);
    err = tt_captured(&cap);
    assert_true(wino);
    assert_non_null(strstr(err, "another host"));
    free(err);
    free(text);
    tt_remove_record(rec);
}

/* A record that cannot be written (its folder is missing): every plan
 * times its layers as without a record, and the process says so once,
 * not once per plan, layer and pass. */
static void test_unwritable_record_one_line(void **st)
{
    (void)st;
    char dir[64] = "/tmp/dlg_tune_gone_XXXXXX", path[96];
    assert_non_null(mkdtemp(dir));
    assert_int_equal(rmdir(dir), 0);
    snprintf(path, sizeof path, "%s/tune.txt", dir);
    assert_int_equal(setenv("DLGAUGE_TUNE", path, 1), 0);
    tt_stderr cap;
    tt_capture(&cap);
    bool w1 = plans_winograd(true, WINO_FASTER), w2 = plans_winograd(true, DIRECT_FASTER);
    bool w3 = plans_winograd(false, WINO_FASTER);
    char *err = tt_captured(&cap);
    assert_true(w1);
    assert_false(w2); /* timed again: nothing kept */
    assert_true(w3);
    int lines = 0;
    for (const char *l = strstr(err, "tuning record"); l; l = strstr(l + 1, "tuning record"))
        lines++;
    assert_int_equal(lines, 1);
    assert_non_null(strstr(err, path));
    free(err);
}

/* What the timing found goes to the workload's note (its host's log,
 * which -q silences), not to stderr; a plan that times nothing (the record
 * has the layer) says nothing. */
static void test_choice_noted(void **st)
{
    (void)st;
    char rec[64], impl[256];
    tt_fresh_record(rec);
    tt_noted nd = {"", 0};
    tt_stderr cap;
    tt_capture(&cap);
    int rc = plan_noted(true, WINO_FASTER, impl, sizeof impl, &nd);
    char *err = tt_captured(&cap);
    assert_int_equal(rc, 0);
    print_message("noted: %s", nd.text);
    assert_int_equal(nd.lines, 1);
    assert_non_null(strstr(nd.text, "cpu: L timed direct vs oneDNN winograd: forward winograd (direct 2 ms, "
                                    "winograd 1 ms)"));
    assert_non_null(strstr(nd.text, rec));
    assert_null(strstr(err, "timed direct vs"));
    free(err);
    nd = (tt_noted){"", 0};
    assert_int_equal(plan_noted(true, WINO_FASTER, impl, sizeof impl, &nd), 0);
    assert_int_equal(nd.lines, 0);
    tt_remove_record(rec);
}

int main(void)
{
    int has = onednn_winograd();
    if (has <= 0) {
        printf(has ? "the probe plan failed\n" : "oneDNN has no Winograd kernel on this CPU: skipped\n");
        return has ? 1 : 77; /* ctest's SKIP_RETURN_CODE */
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_choice_kept),
        cmocka_unit_test(test_bad_entries_retimed),
        cmocka_unit_test(test_unwritable_record_one_line),
        cmocka_unit_test(test_choice_noted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
