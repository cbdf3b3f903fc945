/* The report's and compare's output files (rep_output_write): written
 * whole or not at all.  A stop signal or a failed write mid-file leaves the
 * earlier file as it was and no .part beside it; several writers at once
 * (every rank of an mpirun) each leave a whole file; a link keeps pointing at
 * the new file; a device is written in place.  A file rewritten keeps its
 * owner and hard links, one its user may not write is refused, and one in
 * a folder that takes no new file is written in place (these as the
 * unprivileged user 65534, in a child, when the test runs as root). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <signal.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <grp.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dlgauge/plugin.h>

#include "cmd_files.h"

typedef struct fake_out {
    const char *text;
    int raise_after; /* raise(SIGINT) after this many writes of text; -1: never */
    int writes;
} fake_out;

/* text writes times, flushed each time so that some of it reaches the file */
static int writer(FILE *f, const void *ctx)
{
    const fake_out *c = ctx;
    for (int i = 0; i < c->writes; i++) {
        if (i == c->raise_after)
            raise(SIGINT);
        fputs(c->text, f);
        fflush(f);
    }
    return 0;
}

/* The same text, with a part said to be left out for want of memory. */
static int lossy_writer(FILE *f, const void *ctx)
{
    writer(f, ctx);
    return ENOMEM;
}

/* The .part this process writes beside path (cmd_files.c). */
static const char *part_of(const char *path)
{
    static char buf[256];
    snprintf(buf, sizeof buf, "%s.part-%ld", path, (long)getpid());
    return buf;
}

/* Whether any writer's .part of path (dir/name) is still there. */
static bool part_left(const char *path)
{
    char dir[256] = ".";
    const char *name = strrchr(path, '/');
    if (name)
        snprintf(dir, sizeof dir, "%.*s", (int)(name - path), path);
    name = name ? name + 1 : path;
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s.part", name);
    DIR *d = opendir(dir);
    assert_non_null(d);
    bool found = false;
    for (struct dirent *e; !found && (e = readdir(d));)
        found = strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return found;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static int in_tmp(void **state)
{
    static char dir[64];
    strcpy(dir, "/tmp/dlg-outputsXXXXXX");
    assert_non_null(mkdtemp(dir));
    assert_int_equal(chdir(dir), 0);
    *state = dir;
    return 0;
}

static int out_tmp(void **state)
{
    unlink("out.md");
    unlink(part_of("out.md"));
    unlink("link.md");
    unlink("twin.md");
    unlink("d/out.md");
    unlink(part_of("d/out.md"));
    rmdir("d");
    assert_int_equal(chdir("/"), 0);
    rmdir(*state);
    return 0;
}

static void test_whole_file_replaces(void **state)
{
    (void)state;
    char err[512] = "";
    put("out.md", "old\n");
    fake_out c = {"new line\n", -1, 3};
    assert_int_equal(rep_output_write("out.md", writer, &c, err, sizeof err), 0);
    assert_string_equal(slurp("out.md"), "new line\nnew line\nnew line\n");
    assert_false(part_left("out.md"));
}

/* Ctrl-C halfway: the old file stays, the part goes, the signal is
 * returned (for exit 130) and no longer pending. */
static void test_sigint_keeps_old(void **state)
{
    (void)state;
    char err[512] = "";
    put("out.md", "old\n");
    fake_out c = {"new line\n", 2, 5};
    assert_int_equal(rep_output_write("out.md", writer, &c, err, sizeof err), SIGINT);
    assert_string_equal(slurp("out.md"), "old\n");
    assert_false(part_left("out.md"));
    assert_non_null(strstr(err, "out.md: stopped by signal 2"));
    sigset_t p;
    sigpending(&p);
    assert_false(sigismember(&p, SIGINT));
}

/* A report that left a table out for want of memory is no report: the
 * old file stays, no part is left, and the error says so; to a device,
 * the same error.  It was written as whole, exit 0. */
static void test_lost_part_keeps_old(void **state)
{
    (void)state;
    char err[512] = "";
    put("out.md", "old\n");
    fake_out c = {"new line\n", -1, 3};
    assert_int_equal(rep_output_write("out.md", lossy_writer, &c, err, sizeof err), -DLG_ENOMEM);
    assert_string_equal(slurp("out.md"), "old\n");
    assert_false(part_left("out.md"));
    assert_non_null(strstr(err, "out.md: out of memory; "));
    assert_int_equal(rep_output_write("new.md", lossy_writer, &c, err, sizeof err), -DLG_ENOMEM);
    assert_int_equal(access("new.md", F_OK), -1);
    assert_false(part_left("new.md"));
    assert_int_equal(rep_output_write("/dev/null", lossy_writer, &c, err, sizeof err), -DLG_ENOMEM);
    assert_string_equal(err, "/dev/null: out of memory: part of the report is missing");
}

/* rep_output_write("out.md") of 16 KiB past a 4 KiB file size limit:
 * the write fails (EFBIG), as on a full disk. */
static int write_past_limit(char *err, size_t errlen)
{
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 4096;
    signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    static char big[8192];
    memset(big, 'x', sizeof big - 1);
    fake_out c = {big, -1, 2};
    int rc = rep_output_write("out.md", writer, &c, err, errlen);
    setrlimit(RLIMIT_FSIZE, &old);
    return rc;
}

/* A write that fails (here past a file size limit: EFBIG) names the file
 * the user gave, not the .part. */
static void test_failed_write_keeps_old(void **state)
{
    (void)state;
    char err[512] = "";
    put("out.md", "old\n");
    assert_int_equal(write_past_limit(err, sizeof err), -DLG_EIO);
    assert_string_equal(slurp("out.md"), "old\n");
    assert_false(part_left("out.md"));
    assert_non_null(strstr(err, "out.md: write failed: File too large"));
    assert_null(strstr(err, ".part"));
}

/* A stale .part that is a link (a killed run's, or someone's trap) is
 * replaced, never written through. */
static void test_stale_part_link(void **state)
{
    (void)state;
    char err[512] = "";
    put("victim", "keep\n");
    assert_int_equal(symlink("victim", part_of("out.md")), 0);
    fake_out c = {"new\n", -1, 1};
    assert_int_equal(rep_output_write("out.md", writer, &c, err, sizeof err), 0);
    assert_string_equal(slurp("victim"), "keep\n");
    assert_string_equal(slurp("out.md"), "new\n");
    unlink("victim");
}

/* A link to the report: the file it names is replaced, the link stays. */
static void test_link_kept(void **state)
{
    (void)state;
    char err[512] = "";
    put("out.md", "old\n");
    assert_int_equal(symlink("out.md", "link.md"), 0);
    fake_out c = {"new\n", -1, 1};
    assert_int_equal(rep_output_write("link.md", writer, &c, err, sizeof err), 0);
    struct stat st;
    assert_int_equal(lstat("link.md", &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_string_equal(slurp("out.md"), "new\n");
}

/* The replaced file keeps its permissions: a report kept private (0600)
 * became world-readable (0666 less the umask) once renamed over. */
static void test_mode_kept(void **state)
{
    (void)state;
    char err[512] = "";
    put("out.md", "old\n");
    assert_int_equal(chmod("out.md", 0600), 0);
    mode_t mask = umask(022);
    fake_out c = {"new\n", -1, 1};
    int rc = rep_output_write("out.md", writer, &c, err, sizeof err);
    umask(mask);
    assert_int_equal(rc, 0);
    struct stat st;
    assert_int_equal(stat("out.md", &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_string_equal(slurp("out.md"), "new\n");
}

static void test_device_and_folder(void **state)
{
    (void)state;
    char err[512] = "";
    fake_out c = {"x\n", -1, 1};
    assert_int_equal(rep_output_write("/dev/null", writer, &c, err, sizeof err), 0);
    assert_int_equal(rep_output_write("/dev/full", writer, &c, err, sizeof err), -DLG_EIO);
    assert_string_equal(err, "/dev/full: write failed: No space left on device");
    assert_int_equal(rep_output_write(".", writer, &c, err, sizeof err), -DLG_EIO);
    assert_non_null(strstr(err, ".: is a directory"));
    assert_int_equal(rep_output_write("nodir/out.md", writer, &c, err, sizeof err), -DLG_EIO);
    assert_string_equal(err, "nodir/out.md: cannot write: No such file or directory");
}

enum { NOBODY = 65534 };

static void need_root(void)
{
    if (geteuid() != 0)
        skip(); /* owners and other users' files: only root can set them up */
}

/* Root rewriting a user's report: the file stays the user's (it became
 * root's, 0640 root:root, which its owner could no longer read). */
static void test_owner_kept(void **state)
{
    (void)state;
    need_root();
    char err[512] = "";
    put("out.md", "old\n");
    assert_int_equal(chown("out.md", NOBODY, NOBODY), 0);
    assert_int_equal(chmod("out.md", 0640), 0);
    fake_out c = {"new\n", -1, 1};
    assert_int_equal(rep_output_write("out.md", writer, &c, err, sizeof err), 0);
    struct stat st;
    assert_int_equal(stat("out.md", &st), 0);
    assert_int_equal(st.st_uid, NOBODY);
    assert_int_equal(st.st_gid, NOBODY);
    assert_int_equal(st.st_mode & 07777, 0640);
    assert_string_equal(slurp("out.md"), "new\n");
}

/* A report with a second hard link: both names show the new report (the
 * rename left the other name on the old one). */
static void test_hard_link_kept(void **state)
{
    (void)state;
    char err[512] = "";
    put("out.md", "old, longer than the new one\n");
    assert_int_equal(link("out.md", "twin.md"), 0);
    struct stat before, after;
    assert_int_equal(stat("out.md", &before), 0);
    fake_out c = {"new\n", -1, 2};
    assert_int_equal(rep_output_write("out.md", writer, &c, err, sizeof err), 0);
    assert_string_equal(slurp("twin.md"), "new\nnew\n");
    assert_string_equal(slurp("out.md"), "new\nnew\n");
    assert_int_equal(stat("out.md", &after), 0);
    assert_int_equal(after.st_ino, before.st_ino);
    assert_false(part_left("out.md"));
}

/* Written in place, a report too large for the space left (here a file
 * size limit) or stopped by a signal leaves the old one whole. */
static void test_in_place_failures_keep_old(void **state)
{
    (void)state;
    char err[512] = "";
    put("out.md", "old\n");
    assert_int_equal(link("out.md", "twin.md"), 0);
    assert_int_equal(write_past_limit(err, sizeof err), -DLG_EIO);
    assert_string_equal(err, "out.md: write failed: File too large; out.md is left as it was");
    assert_string_equal(slurp("twin.md"), "old\n");
    fake_out stop = {"new line\n", 1, 3};
    assert_int_equal(rep_output_write("out.md", writer, &stop, err, sizeof err), SIGINT);
    assert_non_null(strstr(err, "out.md: stopped by signal 2"));
    assert_string_equal(slurp("twin.md"), "old\n");
}

typedef struct nobody_run {
    int rc;
    char err[512];
} nobody_run;

/* rep_output_write("d/out.md") in a child run as user and group 65534 */
static nobody_run as_nobody(const char *text)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        nobody_run r = {0};
        close(p[0]);
        if (setgroups(0, NULL) != 0 || setgid(NOBODY) != 0 || setuid(NOBODY) != 0)
            _exit(3);
        fake_out c = {text, -1, 1};
        r.rc = rep_output_write("d/out.md", writer, &c, r.err, sizeof r.err);
        _exit(write(p[1], &r, sizeof r) == (ssize_t)sizeof r ? 0 : 4);
    }
    close(p[1]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid); /* r fits the pipe's buffer */
    nobody_run r = {0};
    bool dropped = !WIFEXITED(status) || WEXITSTATUS(status) != 3;
    if (dropped)
        assert_int_equal(read(p[0], &r, sizeof r), (ssize_t)sizeof r);
    close(p[0]);
    if (!dropped)
        skip(); /* a root without CAP_SETUID (some containers) */
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return r;
}

/* d/out.md with mode, owned by uid; d with dmode, owned by duid */
static void nobody_setup(mode_t mode, uid_t uid, mode_t dmode, uid_t duid)
{
    assert_int_equal(chmod(".", 0755), 0);
    assert_int_equal(mkdir("d", 0755), 0);
    put("d/out.md", "old\n");
    assert_int_equal(chown("d/out.md", uid, uid), 0);
    assert_int_equal(chmod("d/out.md", mode), 0);
    assert_int_equal(chown("d", duid, duid), 0);
    assert_int_equal(chmod("d", dmode), 0);
}

/* A read-only report in the user's own folder is refused, as writing it
 * always was: the rename replaced it. */
static void test_read_only_refused(void **state)
{
    (void)state;
    need_root();
    nobody_setup(0444, NOBODY, 0755, NOBODY);
    nobody_run r = as_nobody("new\n");
    assert_int_equal(r.rc, -DLG_EIO);
    assert_string_equal(r.err, "d/out.md: cannot write: Permission denied");
    assert_string_equal(slurp("d/out.md"), "old\n");
}

/* A report the user may write in a folder where they may not create a
 * file is written in place: the .part could not be created, so it failed. */
static void test_locked_folder_in_place(void **state)
{
    (void)state;
    need_root();
    nobody_setup(0644, NOBODY, 0755, 0);
    nobody_run r = as_nobody("new\n");
    assert_int_equal(r.rc, 0);
    assert_string_equal(slurp("d/out.md"), "new\n");
    assert_false(part_left("d/out.md"));
}

/* A shared report another user owns (0666 in a folder anyone may write):
 * written in place, so it stays theirs; renamed, it became the writer's. */
static void test_others_file_stays_theirs(void **state)
{
    (void)state;
    need_root();
    nobody_setup(0666, 0, 0777, 0);
    nobody_run r = as_nobody("new\n");
    assert_int_equal(r.rc, 0);
    struct stat st;
    assert_int_equal(stat("d/out.md", &st), 0);
    assert_int_equal(st.st_uid, 0);
    assert_int_equal(st.st_mode & 07777, 0666);
    assert_string_equal(slurp("d/out.md"), "new\n");
}

/* Every rank of an mpirun writing one --markdown file at once: each
 * writer's own .part, renamed whole.  With one shared .part the writers
 * unlinked and renamed each other's: failed writes, a torn file. */
static void test_writers_at_once(void **state)
{
    (void)state;
    enum { WRITERS = 4, ROUNDS = 20, LINES = 32 }; /* 32 KiB: slurp reads 64 */
    int go[2];
    assert_int_equal(pipe(go), 0);
    pid_t kids[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        kids[w] = fork();
        assert_true(kids[w] >= 0);
        if (kids[w] == 0) {
            char line[1025], err[512] = "", c;
            memset(line, 'a' + w, sizeof line - 2);
            line[sizeof line - 2] = '\n';
            line[sizeof line - 1] = '\0';
            close(go[1]);
            if (read(go[0], &c, 1) != 0) /* all start when the pipe closes */
                _exit(3);
            fake_out o = {line, -1, LINES};
            for (int r = 0; r < ROUNDS; r++)
                if (rep_output_write("out.md", writer, &o, err, sizeof err) != 0) {
                    fprintf(stderr, "writer %d: %s\n", w, err);
                    _exit(1);
                }
            _exit(0);
        }
    }
    close(go[0]);
    close(go[1]);
    for (int w = 0; w < WRITERS; w++) {
        int st = 0;
        assert_int_equal(waitpid(kids[w], &st, 0), kids[w]);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
    }
    const char *got = slurp("out.md");
    assert_int_equal(strlen(got), (size_t)LINES * 1024);
    for (size_t i = 0; got[i]; i++)
        if (got[i] != '\n' && got[i] != got[0])
            fail_msg("out.md mixes two writers' reports at byte %zu", i);
    assert_false(part_left("out.md"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_whole_file_replaces, in_tmp, out_tmp),
        cmocka_unit_test_setup_teardown(test_sigint_keeps_old, in_tmp, out_tmp),
        cmocka_unit_test_setup_teardown(test_lost_part_keeps_old, in_tmp, out_tmp),
        cmocka_unit_test_setup_teardown(test_failed_write_keeps_old, in_tmp, out_tmp),
        cmocka_unit_test_setup_teardown(test_stale_part_link, in_tmp, out_tmp),
        cmocka_unit_test_setup_teardown(test_writers_at_once, in_tmp, out_tmp),
        cmocka_unit_test_setup_teardown(test_link_kept, in_tmp, out_tmp),
        cmocka_unit_test_setup_teardown(test_mode_kept, in_tmp, out_tmp),
        cmocka_unit_test_setup_teardown(test_device_and_folder, in_tmp, out_tmp),
        cmocka_unit_test_setup_teardown(test_owner_kept, in_tmp, out_tmp),
        cmocka_unit_test_setup_teardown(test_hard_link_kept, in_tmp, out_tmp),
        cmocka_unit_test_setup_teardown(test_in_place_failures_keep_old, in_tmp, out_tmp),
        cmocka_unit_test_setup_teardown(test_read_only_refused, in_tmp, out_tmp),
        cmocka_unit_test_setup_teardown(test_locked_folder_in_place, in_tmp, out_tmp),
        cmocka_unit_test_setup_teardown(test_others_file_stays_theirs, in_tmp, out_tmp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
