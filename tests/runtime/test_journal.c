/* The run journal: records read back, a torn last line (a power cut
 * mid-write) forgotten and cut off, so the records appended after it on
 * resume stay whole lines, a record of any length read whole, a journal
 * of another configuration refused, and one that a run holds left to it. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <errno.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "journal.h"

/* While set, flock() fails with it, as a file system without locks
 * answers (Lustre without -o flock: ENOSYS).  This definition interposes
 * the one libdlgauge calls. */
static int flock_errno;
int flock(int fd, int op)
{
    if (flock_errno) {
        errno = flock_errno;
        return -1;
    }
    return (int)syscall(SYS_flock, fd, op);
}

static void journal_path(char *dir, size_t dlen, char *path, size_t plen)
{
    snprintf(dir, dlen, "/tmp/dlg-journal-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(path, plen, "%s/run.journal", dir);
}

static void append_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void test_torn_last_line(void **unused)
{
    (void)unused;
    char dir[64], path[128], err[512];
    journal_path(dir, sizeof dir, path, sizeof path);
    dlg_journal j;
    assert_int_equal(dlg_journal_create(&j, path, "r1", "abc", err, sizeof err), 0);
    assert_int_equal(dlg_journal_record(&j, "a", 0, "ok", err, sizeof err), 0);
    dlg_journal_close(&j);
    append_text(path, "done a 5 o"); /* cell 5's record, cut mid-write */

    assert_int_equal(dlg_journal_resume(&j, path, "abc", err, sizeof err), 0);
    assert_true(dlg_journal_is_done(&j, "a", 0));
    assert_false(dlg_journal_is_done(&j, "a", 5)); /* not recorded: measured again */
    assert_int_equal(dlg_journal_record(&j, "a", 1, "ok", err, sizeof err), 0);
    assert_int_equal(dlg_journal_record(&j, "a", 2, "ok", err, sizeof err), 0);
    dlg_journal_close(&j);

    assert_int_equal(dlg_journal_resume(&j, path, "abc", err, sizeof err), 0);
    for (size_t c = 0; c < 3; c++)
        assert_true(dlg_journal_is_done(&j, "a", c));
    assert_false(dlg_journal_is_done(&j, "a", 5)); /* glued to the next record, it read as done */
    assert_int_equal(j.ndone, 3);
    assert_string_equal(j.run_id, "r1");
    dlg_journal_close(&j);

    assert_int_not_equal(dlg_journal_resume(&j, path, "other", err, sizeof err), 0);
    assert_non_null(strstr(err, "the configuration changed"));
    dlg_journal_close(&j);
    unlink(path);
    rmdir(dir);
}

/* The file may grow by only `room` more bytes (as a nearly full disk
 * allows): a write past it is cut short, the next one fails (EFBIG). */
static void limit_growth(const char *path, long room, struct rlimit *saved)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(getrlimit(RLIMIT_FSIZE, saved), 0);
    struct rlimit r = {(rlim_t)(st.st_size + room), saved->rlim_max};
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &r), 0);
}

/* A full disk mid-record: the record is not half-written, so that when
 * space comes back the next one is a line of its own and --resume reads
 * the journal (the fragment used to glue the two into a malformed line). */
static void test_full_disk_mid_record(void **unused)
{
    (void)unused;
    char dir[64], path[128], err[512];
    journal_path(dir, sizeof dir, path, sizeof path);
    signal(SIGXFSZ, SIG_IGN);
    dlg_journal j;
    assert_int_equal(dlg_journal_create(&j, path, "r1", "abc", err, sizeof err), 0);
    assert_int_equal(dlg_journal_record(&j, "a", 0, "ok", err, sizeof err), 0);
    struct rlimit saved;
    limit_growth(path, 7, &saved); /* "done a 1 ok\n" does not fit */
    err[0] = '\0';
    assert_int_not_equal(dlg_journal_record(&j, "a", 1, "ok", err, sizeof err), 0);
    assert_non_null(strstr(err, "cannot write the run journal: File too large"));
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &saved), 0); /* space again */
    assert_int_equal(dlg_journal_record(&j, "a", 2, "error", err, sizeof err), 0);
    dlg_journal_close(&j);

    assert_int_equal(dlg_journal_resume(&j, path, "abc", err, sizeof err), 0);
    assert_true(dlg_journal_is_done(&j, "a", 0));
    assert_false(dlg_journal_is_done(&j, "a", 1)); /* not recorded: measured again */
    assert_true(dlg_journal_is_done(&j, "a", 2));
    assert_int_equal(j.nfailed, 1); /* cell 2's error counts in the resumed run's exit code */
    dlg_journal_close(&j);
    signal(SIGXFSZ, SIG_DFL);
    unlink(path);
    rmdir(dir);
}

/* A header cut off (no space for even that): nothing to resume, said so. */
static void test_torn_header(void **unused)
{
    (void)unused;
    char dir[64], path[128], err[512];
    journal_path(dir, sizeof dir, path, sizeof path);
    append_text(path, "dlgauge-journal 1 r1 ab");
    dlg_journal j;
    assert_int_not_equal(dlg_journal_resume(&j, path, "abc", err, sizeof err), 0);
    assert_non_null(strstr(err, "empty journal; run without --resume"));
    dlg_journal_close(&j);
    unlink(path);
    rmdir(dir);
}

static off_t file_size(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return st.st_size;
}

/* Records longer than 1 KiB (a long job name, or a hand-made journal):
 * whole lines, read back as such.  One in the middle used to read as a
 * torn last line, and the records after it were cut off the file. */
static void test_long_records(void **unused)
{
    (void)unused;
    char dir[64], path[128], err[512], name[1500];
    journal_path(dir, sizeof dir, path, sizeof path);
    memset(name, 'j', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    dlg_journal j;
    assert_int_equal(dlg_journal_create(&j, path, "r1", "abc", err, sizeof err), 0);
    assert_int_equal(dlg_journal_record(&j, name, 0, "ok", err, sizeof err), 0);
    assert_int_equal(dlg_journal_record(&j, "a", 1, "error", err, sizeof err), 0);
    dlg_journal_close(&j);
    off_t size = file_size(path);

    assert_int_equal(dlg_journal_resume(&j, path, "abc", err, sizeof err), 0);
    assert_true(dlg_journal_is_done(&j, name, 0));
    assert_true(dlg_journal_is_done(&j, "a", 1));
    assert_int_equal(j.ndone, 2);
    assert_int_equal(j.nfailed, 1);
    dlg_journal_close(&j);
    assert_int_equal(file_size(path), size); /* nothing cut off */

    name[300] = '\0'; /* another name that starts alike is not done */
    assert_int_equal(dlg_journal_resume(&j, path, "abc", err, sizeof err), 0);
    assert_false(dlg_journal_is_done(&j, name, 0));
    dlg_journal_close(&j);
    unlink(path);
    rmdir(dir);
}

/* While one run holds the journal, a second run (fresh or --resume) is
 * refused and the first's records stay; once it closes, --resume works.
 * The second fresh run used to truncate the journal, after which both
 * appended to it. */
static void test_one_run_per_journal(void **unused)
{
    (void)unused;
    char dir[64], path[128], err[512];
    journal_path(dir, sizeof dir, path, sizeof path);
    dlg_journal a, b;
    assert_int_equal(dlg_journal_create(&a, path, "r1", "abc", err, sizeof err), 0);
    assert_int_equal(dlg_journal_record(&a, "s", 0, "ok", err, sizeof err), 0);
    off_t size = file_size(path);

    assert_int_not_equal(dlg_journal_create(&b, path, "r2", "abc", err, sizeof err), 0);
    assert_non_null(strstr(err, "another dlgauge run is using this journal"));
    assert_int_equal(b.fd, -1);
    dlg_journal_close(&b);
    assert_int_equal(file_size(path), size); /* not truncated under the first run */
    assert_int_not_equal(dlg_journal_resume(&b, path, "abc", err, sizeof err), 0);
    assert_non_null(strstr(err, "cannot resume: another dlgauge run is using this journal"));
    dlg_journal_close(&b);

    assert_int_equal(dlg_journal_record(&a, "s", 1, "ok", err, sizeof err), 0);
    dlg_journal_close(&a);
    assert_int_equal(dlg_journal_resume(&b, path, "abc", err, sizeof err), 0);
    assert_string_equal(b.run_id, "r1");
    assert_int_equal(b.ndone, 2);
    /* a refused resume (another configuration) does not keep the lock */
    assert_int_not_equal(dlg_journal_resume(&a, path, "other", err, sizeof err), 0);
    assert_non_null(strstr(err, "another dlgauge run is using this journal"));
    dlg_journal_close(&b);
    assert_int_not_equal(dlg_journal_resume(&a, path, "other", err, sizeof err), 0);
    assert_non_null(strstr(err, "the configuration changed"));
    dlg_journal_close(&a);
    assert_int_equal(dlg_journal_create(&a, path, "r3", "abc", err, sizeof err), 0);
    dlg_journal_close(&a);
    unlink(path);
    rmdir(dir);
}

/* What dlg_journal_print_notes says of j (free it). */
static char *print_notes(const dlg_journal *j)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    dlg_journal_print_notes(j, f);
    assert_int_equal(fclose(f), 0);
    return text;
}

static int count_lines(const char *text)
{
    int n = 0;
    for (; *text; text++)
        n += *text == '\n';
    return n;
}

/* A journal on a file system that cannot lock is used unlocked: a run
 * there (a Lustre or FUSE results folder) used to be refused outright. */
static void test_no_locks_here(void **unused)
{
    (void)unused;
    static const int no_locks[] = {ENOSYS, ENOLCK, EOPNOTSUPP};
    for (size_t i = 0; i < sizeof no_locks / sizeof *no_locks; i++) {
        char dir[64], path[128], err[512] = "";
        journal_path(dir, sizeof dir, path, sizeof path);
        dlg_journal j;
        flock_errno = no_locks[i];
        int created = dlg_journal_create(&j, path, "r1", "abc", err, sizeof err);
        int recorded = created == 0 ? dlg_journal_record(&j, "s", 0, "ok", err, sizeof err) : -1;
        dlg_journal_close(&j);
        int resumed = dlg_journal_resume(&j, path, "abc", err, sizeof err);
        flock_errno = 0;
        if (created != 0 || recorded != 0 || resumed != 0)
            fail_msg("errno %d: %s", no_locks[i], err);
        assert_int_equal(j.ndone, 1);
        /* said once per run, naming the journal and why (it used to go on silently) */
        char *notes = print_notes(&j);
        char want[256];
        snprintf(want, sizeof want, "dlgauge: note: %s: used unlocked, as its file system has no locks (flock: %s)",
                 path, strerror(no_locks[i]));
        assert_ptr_equal(strstr(notes, want), notes);
        assert_int_equal(count_lines(notes), 1);
        free(notes);
        dlg_journal_close(&j);
        unlink(path);
        rmdir(dir);
    }
}

/* The run's inventory point is recorded, so that --resume on the same
 * machine does not write a second dlgauge_host point with the run's id;
 * a journal without the record (older, or killed before it) writes it. */
static void test_inventory_once(void **unused)
{
    (void)unused;
    char dir[64], path[128], err[512];
    journal_path(dir, sizeof dir, path, sizeof path);
    dlg_journal j;
    assert_int_equal(dlg_journal_create(&j, path, "r1", "abc", err, sizeof err), 0);
    assert_false(dlg_journal_has_inventory(&j, "00000000000000aa"));
    assert_int_equal(dlg_journal_record_inventory(&j, "00000000000000aa", err, sizeof err), 0);
    assert_int_equal(dlg_journal_record(&j, "a", 0, "ok", err, sizeof err), 0);
    dlg_journal_close(&j);

    assert_int_equal(dlg_journal_resume(&j, path, "abc", err, sizeof err), 0);
    assert_true(dlg_journal_has_inventory(&j, "00000000000000aa"));
    assert_false(dlg_journal_has_inventory(&j, "00000000000000bb")); /* another machine, or a new kernel */
    assert_true(dlg_journal_is_done(&j, "a", 0));
    assert_int_equal(j.ndone, 1);
    assert_int_equal(j.nfailed, 0);
    assert_int_equal(dlg_journal_record_inventory(&j, "00000000000000bb", err, sizeof err), 0);
    dlg_journal_close(&j);

    assert_int_equal(dlg_journal_resume(&j, path, "abc", err, sizeof err), 0);
    assert_true(dlg_journal_has_inventory(&j, "00000000000000bb")); /* the last one written */
    dlg_journal_close(&j);
    unlink(path);
    rmdir(dir);
}

/* A closed journal of run r1 (configuration "abc"): its header, and a
 * record of job a's cell 0 on line 2. */
static void journal_with_cell_0(char *dir, size_t dlen, char *path, size_t plen)
{
    char err[512];
    journal_path(dir, dlen, path, plen);
    dlg_journal j;
    assert_int_equal(dlg_journal_create(&j, path, "r1", "abc", err, sizeof err), 0);
    assert_int_equal(dlg_journal_record(&j, "a", 0, "ok", err, sizeof err), 0);
    dlg_journal_close(&j);
}

/* A journal with records of a kind this version does not know (as the
 * inventory line was to the version before it): skipped with one note
 * naming the first one's line and kind, the records known read as ever,
 * fields added past a known record's ignored.  --resume used to refuse
 * the whole journal as malformed. */
static void test_newer_records_skipped(void **unused)
{
    (void)unused;
    char dir[64], path[128], err[512] = "";
    journal_with_cell_0(dir, sizeof dir, path, sizeof path);
    dlg_journal j;
    append_text(path, "gpu_clock2 0 1410MHz\ndone a 1 error 12.5s more\ngpu_clock2 1 1395MHz\n");
    off_t size = file_size(path);

    if (dlg_journal_resume(&j, path, "abc", err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_true(dlg_journal_is_done(&j, "a", 0));
    assert_true(dlg_journal_is_done(&j, "a", 1));
    assert_int_equal(j.ndone, 2);
    assert_int_equal(j.nfailed, 1);
    char *notes = print_notes(&j);
    char want[256];
    snprintf(want, sizeof want, "dlgauge: note: %s:3: skipped 2 journal lines of a kind this dlgauge does not "
             "know (the first: gpu_clock2): a newer dlgauge's, or damaged", path);
    assert_ptr_equal(strstr(notes, want), notes);
    assert_int_equal(count_lines(notes), 1);
    free(notes);
    assert_int_equal(dlg_journal_record(&j, "a", 2, "ok", err, sizeof err), 0);
    dlg_journal_close(&j);
    assert_true(file_size(path) > size); /* the skipped lines stay, the next record follows them */

    assert_int_equal(dlg_journal_resume(&j, path, "abc", err, sizeof err), 0);
    assert_int_equal(j.ndone, 3);
    notes = print_notes(&j);
    assert_non_null(strstr(notes, ":3: skipped 2 journal lines"));
    free(notes);
    dlg_journal_close(&j);
    unlink(path);
    rmdir(dir);
}

/* A newer record kind with a long name (32 bytes or more) is a kind like
 * any other: skipped with the note, its name shortened there.  It used to
 * be refused as "not a record", failing --resume on a newer journal. */
static void test_long_newer_kind_skipped(void **unused)
{
    (void)unused;
    char dir[64], path[128], err[512] = "";
    journal_with_cell_0(dir, sizeof dir, path, sizeof path);
    append_text(path, "accelerator_clock_and_power_state_sample 0 1410MHz 300W\n");
    dlg_journal j;
    if (dlg_journal_resume(&j, path, "abc", err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_true(dlg_journal_is_done(&j, "a", 0));
    char *notes = print_notes(&j);
    char want[256];
    snprintf(want, sizeof want, "dlgauge: note: %s:3: skipped 1 journal line of a kind this dlgauge does not "
             "know (the first: accelerator_clock_and_power_...)", path);
    if (strstr(notes, want) != notes)
        fail_msg("%s", notes);
    free(notes);
    dlg_journal_close(&j);
    unlink(path);
    rmdir(dir);
}

/* A record of a known kind that cannot be read, or a line that is no
 * record at all (a damaged file), stays an error at its file:line: read
 * past, a cell would be taken for done, or its failure not counted.  The
 * cell number "1x" used to read as cell 1 with the status "x". */
static void test_malformed_known_kind(void **unused)
{
    (void)unused;
    static const struct {
        const char *line, *why;
    } bad[] = {
        {"done a 1x ok\n", "malformed journal line (done JOB CELL STATUS)"},
        {"done a -1 ok\n", "malformed journal line (done JOB CELL STATUS)"},
        {"done a 1\n", "malformed journal line (done JOB CELL STATUS)"},
        {"done a 99999999999999999999999 ok\n", "malformed journal line (done JOB CELL STATUS)"},
        {"inventory\n", "malformed journal line (inventory ID)"},
        {"inventory 0123456789abcdef0123456789\n", "malformed journal line (inventory ID)"},
        {"inventory_time 00000000000000aa\n", "malformed journal line (inventory_time ID TIME_NS)"},
        {"inventory_time 00000000000000aa 12x\n", "malformed journal line (inventory_time ID TIME_NS)"},
        {"inventory_time 00000000000000aa -5\n", "malformed journal line (inventory_time ID TIME_NS)"},
        {"Done a 1 ok\n", "malformed journal line (not a record)"},
        {"\n", "malformed journal line (not a record)"},
        {"\xff\xfe garbage\n", "malformed journal line (not a record)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char dir[64], path[128], err[512] = "";
        journal_with_cell_0(dir, sizeof dir, path, sizeof path);
        dlg_journal j;
        append_text(path, bad[i].line);
        char want[256];
        snprintf(want, sizeof want, "%s:3: %s", path, bad[i].why);
        if (dlg_journal_resume(&j, path, "abc", err, sizeof err) == 0 || strcmp(err, want) != 0)
            fail_msg("'%s' gave '%s', expected '%s'", bad[i].line, err, want);
        assert_int_equal(j.fd, -1); /* refused: the lock is not kept */
        dlg_journal_close(&j);
        unlink(path);
        rmdir(dir);
    }
}

/* A journal whose format a newer dlgauge changed incompatibly is refused
 * by name, not as "not a dlgauge run journal". */
static void test_newer_format_refused(void **unused)
{
    (void)unused;
    char dir[64], path[128], err[512] = "";
    journal_path(dir, sizeof dir, path, sizeof path);
    append_text(path, "dlgauge-journal 2 r1 abc\ndone a 0 ok\n");
    dlg_journal j;
    assert_int_not_equal(dlg_journal_resume(&j, path, "abc", err, sizeof err), 0);
    char want[256];
    snprintf(want, sizeof want, "%s:1: journal format 2, written by a newer dlgauge (this one reads format 1)",
             path);
    if (strstr(err, want) != err)
        fail_msg("%s", err);
    dlg_journal_close(&j);
    unlink(path);
    rmdir(dir);
}

/* A run_id of [global] may hold spaces: resumed as it was.  Its second
 * word used to be read as the configuration hash, so --resume said the
 * configuration had changed. */
static void test_run_id_with_spaces(void **unused)
{
    (void)unused;
    char dir[64], path[128], err[512] = "";
    journal_path(dir, sizeof dir, path, sizeof path);
    dlg_journal j;
    assert_int_equal(dlg_journal_create(&j, path, "nightly run 7", "abc", err, sizeof err), 0);
    dlg_journal_close(&j);
    if (dlg_journal_resume(&j, path, "abc", err, sizeof err) != 0)
        fail_msg("%s", err);
    assert_string_equal(j.run_id, "nightly run 7");
    dlg_journal_close(&j);
    unlink(path);
    rmdir(dir);
}

/* The run's ranks and nodes read back; --resume under other counts is
 * refused naming both, and a journal without the record (an older
 * dlgauge's) resumed under any.  A 2-rank run's journal used to be
 * resumed by one rank alone, its rows mixed under one run_id. */
static void test_ranks_recorded(void **unused)
{
    (void)unused;
    char dir[64], path[128], err[512] = "";
    journal_path(dir, sizeof dir, path, sizeof path);
    dlg_journal j;
    assert_int_equal(dlg_journal_create(&j, path, "r1", "abc", err, sizeof err), 0);
    assert_int_equal(dlg_journal_record_ranks(&j, 2, 1, err, sizeof err), 0);
    assert_int_equal(dlg_journal_record(&j, "a", 0, "partial", err, sizeof err), 0);
    dlg_journal_close(&j);
    assert_int_equal(dlg_journal_resume(&j, path, "abc", err, sizeof err), 0);
    assert_int_equal(j.ranks, 2);
    assert_int_equal(j.nodes, 1);
    assert_int_equal(dlg_journal_check_ranks(&j, 2, 1, err, sizeof err), 0);
    assert_int_equal(dlg_journal_check_ranks(&j, 1, 1, err, sizeof err), -1);
    char want[400];
    snprintf(want, sizeof want, "%s: run r1 ran on 2 ranks on 1 node, this one on 1 rank on 1 node: resume it "
             "with 2 ranks on 1 node (mpirun -np 2), or run without --resume to start a new run", path);
    assert_string_equal(err, want);
    assert_int_equal(dlg_journal_check_ranks(&j, 2, 2, err, sizeof err), -1); /* the nodes count too */
    assert_non_null(strstr(err, "ran on 2 ranks on 1 node, this one on 2 ranks on 2 nodes"));
    dlg_journal_close(&j);

    append_text(path, "ranks 2\n"); /* cut short: an error at its line */
    assert_int_equal(dlg_journal_resume(&j, path, "abc", err, sizeof err), -1);
    snprintf(want, sizeof want, "%s:4: malformed journal line (ranks RANKS NODES)", path);
    assert_string_equal(err, want);
    dlg_journal_close(&j);

    unlink(path);
    rmdir(dir);
    journal_with_cell_0(dir, sizeof dir, path, sizeof path); /* no ranks record */
    assert_int_equal(dlg_journal_resume(&j, path, "abc", err, sizeof err), 0);
    assert_int_equal(j.ranks, 0);
    assert_int_equal(dlg_journal_check_ranks(&j, 4, 2, err, sizeof err), 0);
    dlg_journal_close(&j);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_torn_last_line),
        cmocka_unit_test(test_full_disk_mid_record),
        cmocka_unit_test(test_torn_header),
        cmocka_unit_test(test_long_records),
        cmocka_unit_test(test_one_run_per_journal),
        cmocka_unit_test(test_inventory_once),
        cmocka_unit_test(test_no_locks_here),
        cmocka_unit_test(test_newer_records_skipped),
        cmocka_unit_test(test_malformed_known_kind),
        cmocka_unit_test(test_long_newer_kind_skipped),
        cmocka_unit_test(test_newer_format_refused),
        cmocka_unit_test(test_run_id_with_spaces),
        cmocka_unit_test(test_ranks_recorded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
