/* INI loading: sections, comments, include, ${ENV}, --set, and that every
 * error is one line starting with file:line. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>
#include <ini.h>

#include "config.h"
#include "rt_util.h"

#define END NULL

/* Loads text as dir/name; returns the load status, err[] filled on failure. */
static int load(void **state, const char *name, const char *text, dlg_config *c, char *path, char *err)
{
    rt_write(*state, name, text, path, 512);
    err[0] = '\0';
    return dlg_config_load(c, path, err, 1024);
}

static const char *value(const dlg_config *c, dlg_section_kind k, const char *sec, const char *key)
{
    const dlg_entry *e = dlg_section_get(dlg_config_find(c, k, sec), key);
    return e ? e->value : NULL;
}

static void sections_and_comments(void **state)
{
    char path[512], err[1024];
    dlg_config c;
    assert_int_equal(load(state, "a.ini",
                          "; a comment\n"
                          "# another comment\n"
                          "\n"
                          "[global]\n"
                          "repeat = 3   ; inline comment\n"
                          "[job train]\n"
                          "workload=resnet50\n"
                          "  batch   =   64  \n"
                          "[storage cloud-ssd]\n"
                          "[sink csv]\n"
                          "path = out/x.csv\n"
                          "[job train]\n"
                          "memory = 8G, 30G\n",
                          &c, path, err),
                     0);
    assert_int_equal(c.n, 4); /* global + job + storage + sink; [job train] reopened */
    assert_string_equal(value(&c, DLG_SEC_GLOBAL, "", "repeat"), "3");
    assert_string_equal(value(&c, DLG_SEC_JOB, "train", "workload"), "resnet50");
    assert_string_equal(value(&c, DLG_SEC_JOB, "train", "batch"), "64");
    assert_string_equal(value(&c, DLG_SEC_JOB, "train", "memory"), "8G, 30G");
    assert_string_equal(value(&c, DLG_SEC_SINK, "csv", "path"), "out/x.csv");
    const dlg_section *st = dlg_config_find(&c, DLG_SEC_STORAGE, "cloud-ssd");
    assert_non_null(st);
    assert_int_equal(st->n, 0);
    assert_int_equal(st->line, 9);
    assert_string_equal(dlg_section_kind_name(st->kind), "storage");
    assert_null(dlg_config_find(&c, DLG_SEC_JOB, "cloud-ssd"));
    const dlg_entry *e = dlg_section_get(dlg_config_find(&c, DLG_SEC_JOB, "train"), "memory");
    assert_int_equal(e->line, 13);
    assert_string_equal(e->file, path);
    char where[600], want[600];
    dlg_entry_where(e, where, sizeof where);
    snprintf(want, sizeof want, "%s:13: ", path);
    assert_string_equal(where, want);
    dlg_config_free(&c);
}

static void duplicate_key(void **state)
{
    char path[512], err[1024];
    dlg_config c;
    assert_int_not_equal(load(state, "dup.ini", "[job a]\nbatch = 1\nworkload = x\nbatch = 2\n", &c, path, err), 0);
    rt_assert_error_at(err, path, 4, "[job a] batch: set twice in this section (first at line 2)", END);
    dlg_config_free(&c);
    /* the same key in two sections is fine */
    assert_int_equal(load(state, "ok.ini", "[job a]\nbatch = 1\n[job b]\nbatch = 2\n", &c, path, err), 0);
    dlg_config_free(&c);
}

/* A section written twice (a job copied and not renamed) is named as such,
 * with both headers, not only as a key set twice. */
static void duplicate_section(void **state)
{
    char path[512], inc[512], err[1024];
    dlg_config c;
    assert_int_not_equal(load(state, "twice.ini", "[job a]\nworkload = sleep\n[job b]\nworkload = sleep\n"
                              "[job a]\nworkload = stream\n", &c, path, err), 0);
    rt_assert_error_at(err, path, 6, "[job a] appears twice in this file (lines 1 and 5), and both set 'workload' "
                       "(first at line 2): give each section once, or rename one", END);
    dlg_config_free(&c);
    assert_int_not_equal(load(state, "g.ini", "[global]\nrepeat = 2\n[job a]\nworkload = x\n[global]\nrepeat = 3\n",
                              &c, path, err), 0);
    rt_assert_error_at(err, path, 6, "[global] appears twice in this file (again at line 5)", END);
    dlg_config_free(&c);
    /* first opened by an included file, then twice here */
    rt_write(*state, "base.ini", "[job a]\nworkload = sleep\n", inc, sizeof inc);
    assert_int_not_equal(load(state, "m.ini", "include = base.ini\n[job a]\nsleep = 1ms\n[job a]\nsleep = 2ms\n",
                              &c, path, err), 0);
    rt_assert_error_at(err, path, 5, "[job a] appears twice in this file (again at line 4), and both set 'sleep' "
                       "(first at line 3)", END);
    dlg_config_free(&c);
    /* within one appearance it stays a key set twice */
    assert_int_not_equal(load(state, "k.ini", "[job a]\nworkload = x\n[job a]\nsleep = 1\nsleep = 2\n", &c, path,
                              err), 0);
    rt_assert_error_at(err, path, 5, "sleep: set twice in this section (first at line 4)", END);
    dlg_config_free(&c);
}

static void include_relative_and_nested(void **state)
{
    char path[512], inc[512], inner[512], err[1024];
    dlg_config c;
    rt_write(*state, "conf/common.ini", "[global]\nrepeat = 2\ninclude = deeper/inner.ini\n", inc, sizeof inc);
    rt_write(*state, "conf/deeper/inner.ini", "warmup = 7\n[sink csv]\npath = r.csv\n", inner, sizeof inner);
    assert_int_equal(load(state, "main.ini",
                          "include = conf/common.ini\n"
                          "[job a]\n"
                          "workload = sleep\n"
                          "repeat = 5\n",
                          &c, path, err),
                     0);
    /* keys before the first header of an included file extend the includer's section */
    assert_string_equal(value(&c, DLG_SEC_GLOBAL, "", "repeat"), "2");
    assert_string_equal(value(&c, DLG_SEC_GLOBAL, "", "warmup"), "7");
    assert_string_equal(value(&c, DLG_SEC_SINK, "csv", "path"), "r.csv");
    assert_string_equal(value(&c, DLG_SEC_JOB, "a", "repeat"), "5");
    const dlg_entry *w = dlg_section_get(dlg_config_find(&c, DLG_SEC_GLOBAL, ""), "warmup");
    assert_string_equal(w->file, inner);
    assert_int_equal(w->line, 1);
    dlg_config_free(&c);
}

static void include_errors(void **state)
{
    char path[512], inc[512], err[1024];
    dlg_config c;
    assert_int_not_equal(load(state, "m.ini", "[job a]\nworkload = x\ninclude = nope/missing.ini\n", &c, path, err), 0);
    rt_assert_error_at(err, path, 3, "cannot open include file", "nope/missing.ini", "No such file", END);
    dlg_config_free(&c);
    /* an error inside an included file names that file and its line */
    rt_write(*state, "bad.ini", "[job b]\nworkload = x\nbogus line\n", inc, sizeof inc);
    assert_int_not_equal(load(state, "m2.ini", "[global]\ninclude = bad.ini\n", &c, path, err), 0);
    rt_assert_error_at(err, inc, 3, "syntax error", END);
    dlg_config_free(&c);
    /* a file including itself is a cycle, named as one */
    assert_int_not_equal(load(state, "self.ini", "[global]\ninclude = self.ini\n", &c, path, err), 0);
    rt_assert_error_at(err, path, 2, "include cycle: ", END);
    dlg_config_free(&c);
}

/* A cycle through files that set keys used to be reported as "key set
 * twice (first at line 2)" on line 2; a file included from two places
 * likewise.  Both are named for what they are. */
static void include_cycles_and_repeats(void **state)
{
    char path[512], a[512], b[512], err[1024], want[1200];
    dlg_config c;
    rt_write(*state, "inc/a.ini", "[global]\nrepeat = 2\ninclude = b.ini\n", a, sizeof a);
    rt_write(*state, "inc/b.ini", "[global]\nwarmup = 1\ninclude = a.ini\n", b, sizeof b);
    assert_int_not_equal(load(state, "cyc.ini", "include = inc/a.ini\n[job x]\nworkload = w\n", &c, path, err), 0);
    snprintf(want, sizeof want, "include cycle: %s -> %s -> %s -> %s", path, a, b, a);
    rt_assert_error_at(err, b, 3, want, END);
    dlg_config_free(&c);
    /* a diamond: common.ini reached through d1 and d2 */
    char d1[512];
    rt_write(*state, "inc/common.ini", "[global]\nrepeat = 2\n", a, sizeof a);
    rt_write(*state, "inc/d1.ini", "include = common.ini\n", d1, sizeof d1);
    rt_write(*state, "inc/d2.ini", "; the same base again\ninclude = common.ini\n", b, sizeof b);
    assert_int_not_equal(load(state, "dia.ini", "include = inc/d1.ini\ninclude = inc/d2.ini\n", &c, path, err), 0);
    snprintf(want, sizeof want, "'%s' is already included (at %s:1): include each file once", a, d1);
    rt_assert_error_at(err, b, 2, want, END);
    dlg_config_free(&c);
    /* a directory opens and reads as nothing: refused, as is an empty name */
    assert_int_not_equal(load(state, "dir.ini", "[job a]\nworkload = w\ninclude = inc\n", &c, path, err), 0);
    rt_assert_error_at(err, path, 3, "cannot open include file", "inc': it is a directory", END);
    dlg_config_free(&c);
    assert_int_not_equal(load(state, "empty.ini", "[job a]\nworkload = w\ninclude =\n", &c, path, err), 0);
    rt_assert_error_at(err, path, 3, "include needs a file name", END);
    dlg_config_free(&c);
    snprintf(want, sizeof want, "%s/inc", ((rt_dir *)*state)->path);
    assert_int_not_equal(dlg_config_load(&c, want, err, sizeof err), 0);
    rt_assert_error_at(err, want, 0, "cannot open: it is a directory", END);
    dlg_config_free(&c);
}

static void env_expansion(void **state)
{
    char path[512], err[1024];
    dlg_config c;
    setenv("DLGT_DIR", "/data/sets", 1);
    setenv("DLGT_EMPTY", "", 1);
    unsetenv("DLGT_UNSET");
    assert_int_equal(load(state, "env.ini",
                          "[job a]\n"
                          "data = recordio:${DLGT_DIR}/train.rec\n"
                          "batch = ${DLGT_UNSET:-32}\n"
                          "mode = ${DLGT_EMPTY:-train}\n"
                          "two = ${DLGT_DIR}${DLGT_DIR}\n",
                          &c, path, err),
                     0);
    assert_string_equal(value(&c, DLG_SEC_JOB, "a", "data"), "recordio:/data/sets/train.rec");
    assert_string_equal(value(&c, DLG_SEC_JOB, "a", "batch"), "32");
    assert_string_equal(value(&c, DLG_SEC_JOB, "a", "mode"), "train");
    assert_string_equal(value(&c, DLG_SEC_JOB, "a", "two"), "/data/sets/data/sets");
    dlg_config_free(&c);

    assert_int_not_equal(load(state, "env2.ini", "[job a]\nworkload = x\nbatch = ${DLGT_UNSET}\n", &c, path, err), 0);
    rt_assert_error_at(err, path, 3, "[job a] batch: environment variable 'DLGT_UNSET' is not set",
                       "${DLGT_UNSET:-default}", END);
    dlg_config_free(&c);
    /* a shell expands ~, an INI file does not: a folder named '~' would be made */
    static const char *const homes[] = {"~/r.csv", "raw:~/x.bin", "a.bin, ~/b.bin", "~"};
    for (size_t i = 0; i < sizeof homes / sizeof *homes; i++) {
        char text[128];
        snprintf(text, sizeof text, "[job a]\nworkload = x\ndata = %s\n", homes[i]);
        assert_int_not_equal(load(state, "home.ini", text, &c, path, err), 0);
        rt_assert_error_at(err, path, 3, "[job a] data: '~' is not expanded", "${HOME}/", END);
        dlg_config_free(&c);
    }
    assert_int_equal(load(state, "home2.ini", "[job a]\ndata = raw:a~/b, c~\nurl = http://h:1/~x\n", &c, path, err), 0);
    dlg_config_free(&c);
    assert_int_not_equal(load(state, "env3.ini", "[job a]\nbatch = ${DLGT_DIR\n", &c, path, err), 0);
    rt_assert_error_at(err, path, 2, "unterminated '${'", END);
    dlg_config_free(&c);
    /* include paths expand too */
    char inc[512];
    rt_write(*state, "sub/x.ini", "[job z]\nworkload = y\n", inc, sizeof inc);
    char text[700];
    snprintf(text, sizeof text, "include = ${DLGT_INC}/sub/x.ini\n");
    setenv("DLGT_INC", ((rt_dir *)*state)->path, 1);
    assert_int_equal(load(state, "env4.ini", text, &c, path, err), 0);
    assert_string_equal(value(&c, DLG_SEC_JOB, "z", "workload"), "y");
    dlg_config_free(&c);
}

/* Defaults may hold references, $$ is a literal $; what a shell would read
 * differently ($HOME, ${A-x}) is an error, never passed on as text. */
static void env_nested_and_escaped(void **state)
{
    char path[512], err[1024];
    dlg_config c;
    setenv("DLGT_SET", "8", 1);
    unsetenv("DLGT_UNSET");
    unsetenv("DLGT_UNSET2");
    assert_int_equal(load(state, "nest.ini",
                          "[job a]\n"
                          "a = ${DLGT_UNSET:-${DLGT_SET}}\n"
                          "b = ${DLGT_SET:-${DLGT_UNSET}}\n"
                          "c = x${DLGT_UNSET:-${DLGT_UNSET2:-deep}}y\n"
                          "d = cost$$5 $${DLGT_SET} $\n"
                          "e = ${DLGT_UNSET:-}${DLGT_SET}\n",
                          &c, path, err),
                     0);
    assert_string_equal(value(&c, DLG_SEC_JOB, "a", "a"), "8");
    assert_string_equal(value(&c, DLG_SEC_JOB, "a", "b"), "8"); /* lazy: the unset default is not read */
    assert_string_equal(value(&c, DLG_SEC_JOB, "a", "c"), "xdeepy");
    assert_string_equal(value(&c, DLG_SEC_JOB, "a", "d"), "cost$5 ${DLGT_SET} $");
    assert_string_equal(value(&c, DLG_SEC_JOB, "a", "e"), "8");
    dlg_config_free(&c);
    static const struct {
        const char *line, *msg;
    } bad[] = {
        {"k = ${DLGT_UNSET:-${DLGT_UNSET2}}", "[job a] k: environment variable 'DLGT_UNSET2' is not set"},
        {"k = $HOME/data", "[job a] k: '$HOME' in '$HOME/data' is not expanded: write ${HOME}, or $$ for a literal $"},
        {"k = ${DLGT_SET-1}", "'${DLGT_SET-1}' in '${DLGT_SET-1}' is not a variable reference"},
        {"k = ${:-1}", "'${:-1}' in '${:-1}' is not a variable reference"},
        {"k = ${A B}", "'${A B}' in '${A B}' is not a variable reference"},
        {"k = ${DLGT_UNSET:-${DLGT_SET}", "unterminated '${'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char text[256];
        snprintf(text, sizeof text, "[job a]\nworkload = w\n%s\n", bad[i].line);
        if (load(state, "nestbad.ini", text, &c, path, err) == 0)
            fail_msg("'%s' loaded", bad[i].line);
        rt_assert_error_at(err, path, 3, bad[i].msg, END);
        dlg_config_free(&c);
    }
}

/* A line holds 4095 characters; a longer value (a sweep over hundreds of
 * points) can come from the environment, as the README says. */
static void env_long_value(void **state)
{
    enum { N = 10000 };
    static char big[N + 1];
    char path[512], err[1024];
    dlg_config c;
    for (size_t i = 0; i < N; i += 4)
        memcpy(big + i, "1ms,", 4);
    big[N - 1] = '2'; /* "...,1ms,2" */
    setenv("DLGT_SWEEP", big, 1);
    assert_int_equal(load(state, "big.ini", "[job a]\nsleep = <${DLGT_SWEEP}>\n", &c, path, err), 0);
    const char *v = value(&c, DLG_SEC_JOB, "a", "sleep");
    assert_int_equal(strlen(v), N + 2);
    assert_memory_equal(v + 1, big, N);
    assert_int_equal(v[N + 1], '>');
    dlg_config_free(&c);
    unsetenv("DLGT_SWEEP");
}

/* What scripts and Windows editors write: a byte order mark, CRLF, tabs,
 * comments after values with ';' or '#', and quoted values. */
static void generated_files(void **state)
{
    char path[512], err[1024];
    dlg_config c;
    assert_int_equal(load(state, "win.ini",
                          "\xEF\xBB\xBF[global]\r\n"
                          "repeat = 3\t\r\n"
                          "[job\ttrain]\t# the job\r\n"
                          "workload = sleep # a comment, as on a line of its own\r\n"
                          "sleep = 1ms, 2ms ; two cells\r\n"
                          "tag = a#b;c\r\n"
                          "[sink csv]\r\n"
                          "path = \"results/my run ; #1.csv\"   # quoted: ';' and '#' kept\r\n"
                          "note = say \"hi\"\r\n",
                          &c, path, err),
                     0);
    assert_string_equal(value(&c, DLG_SEC_GLOBAL, "", "repeat"), "3");
    assert_string_equal(value(&c, DLG_SEC_JOB, "train", "workload"), "sleep");
    assert_string_equal(value(&c, DLG_SEC_JOB, "train", "sleep"), "1ms, 2ms");
    assert_string_equal(value(&c, DLG_SEC_JOB, "train", "tag"), "a#b;c");
    assert_string_equal(value(&c, DLG_SEC_SINK, "csv", "path"), "results/my run ; #1.csv");
    assert_string_equal(value(&c, DLG_SEC_SINK, "csv", "note"), "say \"hi\"");
    assert_int_equal(dlg_config_find(&c, DLG_SEC_JOB, "train")->line, 3);
    dlg_config_free(&c);
    static const struct {
        const char *text;
        int line;
        const char *msg;
    } bad[] = {
        {"[job a]\nworkload = \"sleep\n", 2, "[job a] workload: unbalanced quotes in '\"sleep'"},
        {"[job a]\nworkload = \"a\" \"b\"\n", 2, "unbalanced quotes in '\"a\" \"b\"'"},
        {"[job a]\nworkload = \"\"\n", 2, "[job a] workload: an empty value (give one, or leave the key out)"},
        {"[job a] b\nworkload = w\n", 1, "unexpected text 'b' after the section header [job a]"},
        {"[job a]]\n", 1, "unexpected text ']' after the section header [job a]"},
        {"[job a\tb]\n", 1, "section name 'a\tb' may not contain spaces"},
        {"\xEF\xBB\xBFkey = 1\n", 1, "'key' appears before any section header"},
        {"[job a]\n = 5\n", 2, "a key name is missing before the '='"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (load(state, "genbad.ini", bad[i].text, &c, path, err) == 0)
            fail_msg("case %zu loaded: %s", i, bad[i].text);
        rt_assert_error_at(err, path, bad[i].line, bad[i].msg, END);
        dlg_config_free(&c);
    }
}

static int keep_value(void *user, const char *section, const char *key, const char *value)
{
    (void)section;
    (void)key;
    snprintf(user, 64, "%s", value);
    return 1;
}

/* The reader strips comments itself; the other inih users in the process
 * (disk profiles, instance catalogs) must still get inih's own. */
static void inih_settings_restored(void **state)
{
    char path[512], err[1024], got[64] = "";
    dlg_config c;
    assert_int_equal(load(state, "q.ini", "[job a]\nk = \"x ; y\"\n", &c, path, err), 0);
    dlg_config_free(&c);
    assert_int_equal(ini_parse_string("[disk]\nread_mbps = 100 ; a comment\n", keep_value, got), 0);
    assert_string_equal(got, "100");
}

static void syntax_errors(void **state)
{
    char path[512], err[1024];
    dlg_config c;
    static const struct {
        const char *text;
        int line;
        const char *msg;
    } cases[] = {
        {"[job a]\nworkload = x\nno equals sign\n", 3, "syntax error"},
        {"[job a\nworkload = x\n", 1, "syntax error"},
        {"workload = x\n[job a]\n", 1, "'workload' appears before any section header"},
        {"[jobs a]\nx = 1\n", 1, "unknown section [jobs a]"},
        {"[sinks out]\n", 1, "(did you mean 'sink'?)"},
        {"[global extra]\n", 1, "[global] takes no name"},
        {"[job]\n", 1, "[job] needs a name"},
        {"[storage a.b]\n", 1, "may not contain spaces, dots, commas or '='"},
        {"[job a]\nbatch =\n", 2, "[job a] batch: an empty value"},
        {"[job a]\nworkload = x\n\n[job b\nworkload = y\n", 4, "syntax error"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char name[32];
        snprintf(name, sizeof name, "syn%zu.ini", i);
        if (load(state, name, cases[i].text, &c, path, err) == 0)
            fail_msg("case %zu loaded: %s", i, cases[i].text);
        rt_assert_error_at(err, path, cases[i].line, cases[i].msg, END);
        dlg_config_free(&c);
    }
    assert_int_not_equal(dlg_config_load(&c, "/nonexistent/dlg.ini", err, sizeof err), 0);
    rt_assert_error_at(err, "/nonexistent/dlg.ini", 0, "cannot open", END);
    dlg_config_free(&c);
}

static void long_lines(void **state)
{
    enum { CAP = 9000 };
    static char text[CAP + 100], val[CAP], want[64];
    char path[512], err[1024];
    dlg_config c;
    int max = dlg_config_line_max();
    assert_true(max >= 199 && max + 2 < CAP);
    /* max characters fit exactly: "key = " + max - 6 */
    memset(val, 'v', (size_t)max - 6);
    val[max - 6] = '\0';
    snprintf(text, sizeof text, "[job a]\nkey = %s\nnext = 1\n", val);
    assert_int_equal(load(state, "lmax.ini", text, &c, path, err), 0);
    assert_int_equal(strlen(value(&c, DLG_SEC_JOB, "a", "key")), max - 6);
    assert_string_equal(value(&c, DLG_SEC_JOB, "a", "next"), "1");
    dlg_config_free(&c);
    /* one more is an error on that line, not truncation */
    val[max - 6] = 'v';
    val[max - 5] = '\0';
    snprintf(text, sizeof text, "[job a]\nkey = %s\nnext = 1\n", val);
    assert_int_not_equal(load(state, "lover.ini", text, &c, path, err), 0);
    snprintf(want, sizeof want, "line is longer than %d characters", max);
    rt_assert_error_at(err, path, 2, want, END);
    dlg_config_free(&c);
    /* a long comment is also reported on its own line */
    memset(val, 'c', (size_t)max + 100);
    val[max + 100] = '\0';
    snprintf(text, sizeof text, "[job a]\nworkload = x\n; %s\nbatch = 2\n\n", val);
    assert_int_not_equal(load(state, "lc.ini", text, &c, path, err), 0);
    rt_assert_error_at(err, path, 3, want, END);
    dlg_config_free(&c);
    /* a section name past 255 characters is an error, not cut: two that
     * differ only past there were one section */
    memset(val, 'n', 300);
    val[300] = '\0';
    snprintf(text, sizeof text, "[job %sx]\nworkload = sleep\n[job %sy]\nbatch = 2\n", val, val);
    assert_int_not_equal(load(state, "lsec.ini", text, &c, path, err), 0);
    rt_assert_error_at(err, path, 1, "section header longer than 255 characters", END);
    dlg_config_free(&c);
}

/* A file with no end of line (a dataset included by mistake) was read to
 * its end before the error, /dev/zero for ever: the alarm kills the test. */
static void endless_line(void **state)
{
    char path[512], err[1024];
    dlg_config c;
    alarm(3);
    assert_int_not_equal(load(state, "z.ini", "[job a]\nworkload = x\ninclude = /dev/zero\n", &c, path, err), 0);
    rt_assert_error_at(err, "/dev/zero", 1, "a NUL byte in the line", END);
    dlg_config_free(&c);
    assert_int_not_equal(dlg_config_load(&c, "/dev/zero", err, sizeof err), 0);
    rt_assert_error_at(err, "/dev/zero", 1, "a NUL byte in the line", END);
    dlg_config_free(&c);
    alarm(0);
}

/* A named FIFO, as an include or the main file, is refused by name at
 * once (opening it waited for a writer for ever: the alarm kills the
 * test), so is a socket; a pipe that has a writer (`... | dlgauge run
 * /dev/stdin`) is read as before. */
static void fifo_and_socket(void **state)
{
    const rt_dir *d = *state;
    char path[512], err[1024], fifo[512], sock[512];
    dlg_config c;
    snprintf(fifo, sizeof fifo, "%s/f.ini", d->path);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    alarm(3);
    assert_int_not_equal(load(state, "m.ini", "[job a]\nworkload = x\ninclude = f.ini\n", &c, path, err), 0);
    rt_assert_error_at(err, path, 3, "cannot open include file", "f.ini", "it is a FIFO (named pipe)", END);
    dlg_config_free(&c);
    assert_int_not_equal(dlg_config_load(&c, fifo, err, sizeof err), 0);
    rt_assert_error_at(err, fifo, 0, "cannot open: it is a FIFO (named pipe)", END);
    dlg_config_free(&c);

    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sock, sizeof sock, "%s/s.ini", d->path);
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock);
    int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_int_equal(bind(sfd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_not_equal(dlg_config_load(&c, sock, err, sizeof err), 0);
    rt_assert_error_at(err, sock, 0, "cannot open: it is a socket", END);
    dlg_config_free(&c);
    close(sfd);

    int p[2];
    assert_int_equal(pipe(p), 0);
    static const char text[] = "[job piped]\nworkload = sleep\n";
    assert_int_equal(write(p[1], text, sizeof text - 1), (ssize_t)(sizeof text - 1));
    char in[64];
    snprintf(in, sizeof in, "/proc/self/fd/%d", p[0]);
    close(p[1]);
    assert_int_equal(dlg_config_load(&c, in, err, sizeof err), 0);
    assert_string_equal(value(&c, DLG_SEC_JOB, "piped", "workload"), "sleep");
    dlg_config_free(&c);
    close(p[0]);
    alarm(0);
}

static dlg_config *three_sections(void **state, dlg_config *c)
{
    char path[512], err[1024];
    assert_int_equal(load(state, "set.ini",
                          "[global]\nrepeat = 1\n"
                          "[job a]\nworkload = sleep\nbatch = 1\n"
                          "[job b]\nworkload = sleep\n"
                          "[sink a]\npath = x\n"
                          "[storage fast]\ntype = posix\n",
                          c, path, err),
                     0);
    return c;
}

static void set_overrides(void **state)
{
    char err[1024];
    dlg_config c;
    three_sections(state, &c);
    assert_int_equal(dlg_config_set(&c, "global.repeat=4", err, sizeof err), 0);
    assert_string_equal(value(&c, DLG_SEC_GLOBAL, "", "repeat"), "4");
    /* job.x reaches every job, and replaces a value from the file */
    assert_int_equal(dlg_config_set(&c, "job.batch=8", err, sizeof err), 0);
    assert_string_equal(value(&c, DLG_SEC_JOB, "a", "batch"), "8");
    assert_string_equal(value(&c, DLG_SEC_JOB, "b", "batch"), "8");
    const dlg_entry *e = dlg_section_get(dlg_config_find(&c, DLG_SEC_JOB, "a"), "batch");
    assert_string_equal(e->file, "--set");
    assert_int_equal(e->line, 0);
    assert_null(value(&c, DLG_SEC_SINK, "a", "batch"));
    assert_int_equal(dlg_config_set(&c, "job:b.batch=16", err, sizeof err), 0);
    assert_string_equal(value(&c, DLG_SEC_JOB, "a", "batch"), "8");
    assert_string_equal(value(&c, DLG_SEC_JOB, "b", "batch"), "16");
    assert_int_equal(dlg_config_set(&c, "sink:a.path=y.csv", err, sizeof err), 0);
    assert_string_equal(value(&c, DLG_SEC_SINK, "a", "path"), "y.csv");
    /* a bare name that names exactly one section */
    assert_int_equal(dlg_config_set(&c, "fast.type=mmap", err, sizeof err), 0);
    assert_string_equal(value(&c, DLG_SEC_STORAGE, "fast", "type"), "mmap");
    assert_int_equal(dlg_config_set(&c, "b.warmup=0", err, sizeof err), 0);
    assert_string_equal(value(&c, DLG_SEC_JOB, "b", "warmup"), "0");
    /* values may contain '=' and '.' */
    assert_int_equal(dlg_config_set(&c, "sink:a.url=http://h:8086/write?db=x.y", err, sizeof err), 0);
    assert_string_equal(value(&c, DLG_SEC_SINK, "a", "url"), "http://h:8086/write?db=x.y");
    /* blanks around the parts are layout, as in a file */
    assert_int_equal(dlg_config_set(&c, " job:a . warmup =  2 ", err, sizeof err), 0);
    assert_string_equal(value(&c, DLG_SEC_JOB, "a", "warmup"), "2");
    /* the same key twice on the command line: the last wins */
    assert_int_equal(dlg_config_set(&c, "global.repeat=5", err, sizeof err), 0);
    assert_string_equal(value(&c, DLG_SEC_GLOBAL, "", "repeat"), "5");
    dlg_config_free(&c);
}

static void set_errors(void **state)
{
    char err[1024];
    dlg_config c;
    three_sections(state, &c);
    static const struct {
        const char *arg, *msg, *msg2;
    } cases[] = {
        {"a.batch=3", "'a' names several sections; write job:a, storage:a or sink:a", NULL},
        {"fsat.type=x", "no section is called 'fsat'", "(did you mean 'fast'?)"},
        {"job:zz.batch=3", "there is no [job zz]", NULL},
        {"jbo:a.batch=3", "unknown section kind in 'jbo:a'", NULL},
        {"batch=3", "expected SECTION.key=value", NULL},
        {"job.batch", "expected SECTION.key=value", NULL},
        {"job.batch=", "expected SECTION.key=value", NULL},
        {".batch=1", "expected SECTION.key=value", NULL},
        {"job.batch=  ", "expected SECTION.key=value", NULL},
        {"job. =1", "expected SECTION.key=value", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        err[0] = '\0';
        if (dlg_config_set(&c, cases[i].arg, err, sizeof err) == 0)
            fail_msg("--set %s was accepted", cases[i].arg);
        char prefix[128];
        snprintf(prefix, sizeof prefix, "--set %s:", cases[i].arg);
        if (strncmp(err, prefix, strlen(prefix)) != 0 || !strstr(err, cases[i].msg) ||
            (cases[i].msg2 && !strstr(err, cases[i].msg2)))
            fail_msg("--set %s: unexpected error '%s'", cases[i].arg, err);
    }
    dlg_config_free(&c);
    /* job.x with no [job] at all is an error, not a silent no-op */
    char path[512];
    assert_int_equal(load(state, "nojobs.ini", "[global]\nrepeat = 1\n", &c, path, err), 0);
    assert_int_not_equal(dlg_config_set(&c, "job.batch=3", err, sizeof err), 0);
    assert_non_null(strstr(err, "the configuration has no [job] sections"));
    dlg_config_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(sections_and_comments, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(duplicate_key, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(duplicate_section, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(include_relative_and_nested, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(include_errors, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(include_cycles_and_repeats, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(env_expansion, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(env_nested_and_escaped, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(env_long_value, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(generated_files, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(inih_settings_restored, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(syntax_errors, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(long_lines, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(endless_line, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(fifo_and_socket, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(set_overrides, rt_dir_setup, rt_dir_teardown),
        cmocka_unit_test_setup_teardown(set_errors, rt_dir_setup, rt_dir_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
