/* The tuning record itself (core/nn/tune.h), below the plans that use it:
 * a record that cannot be read or written costs one warning line, not one
 * per look-up, layer and pass; a full record keeps its entries and stops
 * growing instead of wiping itself; stores racing within one process do
 * not share a temporary file; and the record is keyed by the CPU, not by
 * the hostname (containers get a new one every run). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <pthread.h>
#include <sys/stat.h>

#include "tune.h"
#include "file_text.h"
#include "tune_testutil.h"

#ifndef DLG_TUNE_MAX_BYTES
#define DLG_TUNE_MAX_BYTES (8 << 20) /* builds against a tune.h without it too */
#endif

/* A fresh folder of the test's own. */
static void fresh_dir(char dir[64])
{
    snprintf(dir, 64, "/tmp/dlg_tune_rec_XXXXXX");
    assert_non_null(mkdtemp(dir));
}

static void remove_dir(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static int lines_of(const char *text)
{
    int n = 0;
    for (const char *c = text; c && *c; c++)
        n += *c == '\n';
    return n;
}

/* What a plan does per 3x3 layer: looks up its three passes, times them,
 * stores each; `layers` times.  Returns how many look-ups found a value
 * and how many stores failed through *found and *failed. */
static void plan_layers(const char *path, int layers, int *found, int *failed)
{
    static const char *const pass[] = {"fwd", "bwdd", "bwdw"};
    char key[DLG_TUNE_KEY_MAX], val[DLG_TUNE_VAL_MAX];
    *found = *failed = 0;
    for (int l = 0; l < layers; l++) {
        for (int p = 0; p < 3; p++) {
            snprintf(key, sizeof key, "conv:layer%d:%s", l, pass[p]);
            *found += dlg_tune_get(path, key, val, sizeof val);
        }
        for (int p = 0; p < 3; p++) {
            snprintf(key, sizeof key, "conv:layer%d:%s", l, pass[p]);
            *failed += dlg_tune_put(path, key, "direct") != 0;
        }
    }
}

/* Five layers planned against an unusable record at path: nothing found,
 * every store (3 passes each) failed, and one stderr line naming it. */
static void expect_one_line(const char *path)
{
    int found, failed;
    tt_stderr cap;
    tt_capture(&cap);
    plan_layers(path, 5, &found, &failed);
    char *err = tt_captured(&cap);
    assert_int_equal(found, 0);
    assert_int_equal(failed, 15);
    assert_int_equal(lines_of(err), 1);
    assert_non_null(strstr(err, path));
    free(err);
}

/* A record in a folder that does not exist: nothing stored, one line. */
static void test_unwritable_one_line(void **st)
{
    (void)st;
    char dir[64], path[128];
    fresh_dir(dir);
    snprintf(path, sizeof path, "%s/missing/tune.txt", dir);
    expect_one_line(path);
    remove_dir(dir);
}

/* A record that cannot be read (here a folder in its place): not
 * trusted, not overwritten, one line. */
static void test_unreadable_one_line(void **st)
{
    (void)st;
    char dir[64], path[128];
    fresh_dir(dir);
    snprintf(path, sizeof path, "%s/tune.txt", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    expect_one_line(path);
    struct stat s;
    assert_int_equal(stat(path, &s), 0);
    assert_true(S_ISDIR(s.st_mode)); /* left as it was */
    remove_dir(dir);
}

/* A corrupt record: one line for the first look-up, rewritten by the
 * first store; the later layers read the new record without a word. */
static void test_corrupt_one_line(void **st)
{
    (void)st;
    char dir[64], path[128], val[DLG_TUNE_VAL_MAX];
    int found, failed;
    fresh_dir(dir);
    snprintf(path, sizeof path, "%s/tune.txt", dir);
    tt_write(path, "garbage\n", 8);
    tt_stderr cap;
    tt_capture(&cap);
    plan_layers(path, 5, &found, &failed);
    char *err = tt_captured(&cap);
    assert_int_equal(found, 0);
    assert_int_equal(failed, 0);
    assert_int_equal(lines_of(err), 1);
    assert_non_null(strstr(err, "not a dlgauge tuning record"));
    assert_true(dlg_tune_get(path, "conv:layer0:fwd", val, sizeof val));
    assert_string_equal(val, "direct");
    assert_true(dlg_tune_get(path, "conv:layer4:bwdw", val, sizeof val));
    /* corrupt again later: a new line, since it is news */
    tt_write(path, "garbage\n", 8);
    tt_capture(&cap);
    assert_false(dlg_tune_get(path, "conv:layer0:fwd", val, sizeof val));
    free(err);
    err = tt_captured(&cap);
    assert_int_equal(lines_of(err), 1);
    free(err);
    remove_dir(dir);
}

/* A record filled to within `room` bytes of the limit, whose header is
 * this host's; its text (malloc'ed) and the last filler key. */
static char *fill_record(const char *path, size_t room, char last[32])
{
    assert_int_equal(dlg_tune_put(path, "first", "1"), 0);
    char *head = file_text(path);
    *strstr(head, "first 1\n") = '\0';
    size_t want = (size_t)DLG_TUNE_MAX_BYTES - room, len = strlen(head);
    char *text = malloc(want + 64);
    assert_non_null(text);
    memcpy(text, head, len);
    for (int i = 0; len < want - 60; i++) {
        snprintf(last, 32, "fill%07d", i);
        len += (size_t)sprintf(text + len, "%s direct_or_winograd_%040d\n", last, i);
    }
    tt_write(path, text, len);
    text[len] = '\0';
    free(head);
    return text;
}

/* Full: a new entry is not stored (one line, however many try), the
 * record keeps every entry it has, and an entry of the same size still
 * changes in place. */
static void test_full_record_kept(void **st)
{
    (void)st;
    char dir[64], path[128], last[32], val[DLG_TUNE_VAL_MAX];
    fresh_dir(dir);
    snprintf(path, sizeof path, "%s/tune.txt", dir);
    char *text = fill_record(path, 40, last);
    tt_stderr cap;
    tt_capture(&cap);
    int rc1 = dlg_tune_put(path, "conv:a_new_layer_with_a_rather_long_key_of_its_own:fwd",
                           "winograd_but_in_more_words_than_fit_the_room_that_is_left");
    int rc2 = dlg_tune_put(path, "conv:another_new_layer_with_a_long_key_as_well:fwd",
                           "winograd_but_in_more_words_than_fit_the_room_that_is_left");
    char *err = tt_captured(&cap);
    assert_int_not_equal(rc1, 0);
    assert_int_not_equal(rc2, 0);
    assert_int_equal(lines_of(err), 1);
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, "full"));
    char *now = file_text(path);
    assert_string_equal(now, text); /* untouched */
    free(now);
    assert_true(dlg_tune_get(path, "fill0000000", val, sizeof val));
    assert_string_equal(val, "direct_or_winograd_0000000000000000000000000000000000000000");
    assert_true(dlg_tune_get(path, last, val, sizeof val));
    /* a value of the same size replaces the old one */
    assert_int_equal(dlg_tune_put(path, "fill0000000", "direct_or_winograd_0000000000000000000000000000000000000009"),
                     0);
    assert_true(dlg_tune_get(path, "fill0000000", val, sizeof val));
    assert_string_equal(val, "direct_or_winograd_0000000000000000000000000000000000000009");
    assert_true(dlg_tune_get(path, last, val, sizeof val));
    free(err);
    free(text);
    remove_dir(dir);
}

enum { THREADS = 4, PUTS = 60 };

typedef struct racer {
    const char *path;
    int id, failed;
} racer;

static void *race(void *arg)
{
    racer *r = arg;
    char key[64];
    for (int i = 0; i < PUTS; i++) {
        snprintf(key, sizeof key, "thread%d:entry%d", r->id, i);
        r->failed += dlg_tune_put(r->path, key, "direct") != 0;
    }
    return NULL;
}

/* Threads of one process storing unlocked (the lock could not be taken):
 * each store writes a temporary file of its own, so none fails or
 * renames another's half-written file, and none is left behind. */
static void test_threads_store_apart(void **st)
{
    (void)st;
    char dir[64], path[128], val[DLG_TUNE_VAL_MAX];
    fresh_dir(dir);
    snprintf(path, sizeof path, "%s/tune.txt", dir);
    pthread_t t[THREADS];
    racer r[THREADS];
    tt_stderr cap;
    tt_capture(&cap);
    int started = 0, failed = 0;
    for (int i = 0; i < THREADS; i++) {
        r[i] = (racer){.path = path, .id = i};
        started += pthread_create(&t[i], NULL, race, &r[i]) == 0;
    }
    for (int i = 0; i < started; i++) {
        pthread_join(t[i], NULL);
        failed += r[i].failed;
    }
    char *err = tt_captured(&cap);
    assert_int_equal(started, THREADS);
    assert_int_equal(failed, 0);
    assert_string_equal(err, "");
    free(err);
    /* a whole record: the last store's own entry is in it, read silently */
    int seen = 0;
    tt_capture(&cap);
    for (int i = 0; i < THREADS; i++) {
        char key[64];
        snprintf(key, sizeof key, "thread%d:entry%d", i, PUTS - 1);
        seen += dlg_tune_get(path, key, val, sizeof val);
    }
    err = tt_captured(&cap);
    assert_string_equal(err, "");
    assert_true(seen >= 1);
    DIR *d = opendir(dir);
    assert_non_null(d);
    int files = 0;
    for (struct dirent *e; (e = readdir(d));)
        files += e->d_name[0] != '.';
    closedir(d);
    assert_int_equal(files, 1); /* no temporary file left */
    free(err);
    remove_dir(dir);
}

/* The record is this CPU's: the hostname (new in every container run)
 * names neither the file nor the host line it is checked by. */
static void test_keyed_by_cpu(void **st)
{
    (void)st;
    char host[512], name[256] = "";
    assert_int_equal(gethostname(name, sizeof name - 1), 0);
    dlg_tune_host(host, sizeof host);
    printf("  host line: %s (hostname %s)\n", host, name);
    /* no " | "-separated field of it is the hostname */
    size_t len = strlen(name);
    for (const char *f = host; f; f = strstr(f, " | "), f = f ? f + 3 : NULL)
        assert_false(strncmp(f, name, len) == 0 && (f[len] == '\0' || f[len] == ' '));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unwritable_one_line), cmocka_unit_test(test_unreadable_one_line),
        cmocka_unit_test(test_corrupt_one_line),    cmocka_unit_test(test_full_record_kept),
        cmocka_unit_test(test_threads_store_apart), cmocka_unit_test(test_keyed_by_cpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
