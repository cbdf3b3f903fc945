/* dlgauge mkdata: generated datasets (core/data/synth*), so that every suite
 * runs on a fresh machine with no downloads (usage text below). */
#define _GNU_SOURCE
#include "cli.h"

#include "synth.h"
#include "synth_out.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char mk_usage[] =
    "usage: dlgauge mkdata images --out DIR --classes C --images N [--seed S] [--quality 90]\n"
    "                             [--threads T] [--split train]\n"
    "       dlgauge mkdata text --out FILE --words N [--vocab 10000] [--seed S] [--splits]\n"
    "\n"
    "images: a photo-like JPEG tree DIR/SPLIT/nCCCCCCCC/nCCCCCCCC_Q.JPEG (image I is\n"
    "  number Q = I / C of class I % C) with lists DIR/SPLIT.txt (convert_imageset) and\n"
    "  DIR/SPLIT.lst (im2rec).\n"
    "  Each split has its own images (its name mixes into the seed; train's are as before).\n"
    "text: a PTB-like corpus of at least N tokens in whole sentences; --splits writes\n"
    "  FILE.train.txt, FILE.valid.txt and FILE.test.txt (85.6/6.8/7.6 %, at least a\n"
    "  sentence each); as in PTB, a valid/test word that train lacks is written <unk>.\n"
    "  --vocab V counts <eos> as PTB's 10000 does: V - 1 word types, <unk> among them,\n"
    "  so lstm-ptb's vocab = V holds every word.\n"
    "\n"
    "The same arguments and seed give the same bytes on any machine and thread count.\n"
    "Output is written under .part names and renamed into place when complete, so an\n"
    "interrupted run leaves nothing that looks whole.  A run stopped by SIGINT (Ctrl-C),\n"
    "SIGTERM or SIGHUP removes its .part output and exits 130, 143 or 129; one killed\n"
    "outright leaves it to the next mkdata of the same output, which replaces it.\n"
    "An existing DIR/SPLIT is replaced only if mkdata made it: it holds\n"
    "DIR/SPLIT/" DLG_SYNTH_MARKER " (written first, saying what mkdata made) and nothing\n"
    "but those images; a tree an older mkdata made has no such file: remove it\n"
    "yourself.  An existing DIR/SPLIT.txt or DIR/SPLIT.lst is replaced only if it is\n"
    "exactly a list mkdata writes.  Else mkdata refuses before any work, naming the\n"
    "first entry or line it did not write; all of them are checked again before\n"
    "anything is replaced, and what appeared during the run is refused and kept.\n"
    "Existing text files are replaced, whatever they hold.\n"
    "Exit status: 0 done, 2 bad arguments or an output refused, 1 any other failure\n"
    "(a write failed).\n";

/* The options of either kind that take a value (cli.h: main.c reads this
 * list too); a kind's other options are flags. */
const char *const dlg_mkdata_valued[] = {"--out",     "--classes", "--images", "--seed",  "--quality",
                                         "--threads", "--split",   "--words",  "--vocab", NULL};

typedef struct mk_opt {
    const char *name;  /* without the "--" */
    const char *value; /* NULL until given; "1" for flags */
} mk_opt;

static int usage_error(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "dlgauge mkdata: ");
    fprintf(stderr, fmt, a, b);
    fprintf(stderr, "\n");
    return DLG_EXIT_USAGE;
}

void dlg_mkdata_usage(FILE *out) { fputs(mk_usage, out); }

static bool is_help(const char *a) { return !strcmp(a, "--help") || !strcmp(a, "-h"); }

/* The first len bytes of name (no "--") name a dlg_mkdata_valued option. */
static bool takes_value(const char *name, size_t len)
{
    for (const char *const *v = dlg_mkdata_valued; *v; v++)
        if (strlen(*v + 2) == len && strncmp(*v + 2, name, len) == 0)
            return true;
    return false;
}

/* a is exactly one of dlg_mkdata_valued: "--out --classes 2" gives --out
 * no value, whichever kind has --classes (main.c's rule for -h too). */
static bool is_valued(const char *a)
{
    return strncmp(a, "--", 2) == 0 && takes_value(a + 2, strlen(a + 2));
}

/* The option "--name" or "--name=value" names; NULL if none. */
static mk_opt *find_opt(mk_opt *opts, const char *a)
{
    if (strncmp(a, "--", 2) != 0)
        return NULL;
    const char *eq = strchr(a + 2, '=');
    size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
    for (mk_opt *p = opts; p->name; p++)
        if (strlen(p->name) == len && strncmp(p->name, a + 2, len) == 0)
            return p;
    return NULL;
}

/* --name value | --name=value | --flag; unknown or repeated names are errors.
 * -1 after printing the usage for --help. */
static int parse_args(int argc, char **argv, mk_opt *opts)
{
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (is_help(a)) {
            fputs(mk_usage, stdout);
            return -1; /* done: exit 0 */
        }
        if (strncmp(a, "--", 2) != 0)
            return usage_error("unexpected argument '%s'%s", a, "");
        const char *eq = strchr(a + 2, '=');
        mk_opt *o = find_opt(opts, a);
        if (!o)
            return usage_error("unknown option '%s' for %s", a, argv[1]);
        if (o->value)
            return usage_error("option '%s' given twice%s", a, "");
        if (!takes_value(o->name, strlen(o->name))) {
            if (eq)
                return usage_error("option '--%s' takes no value%s", o->name, "");
            o->value = "1";
        } else if (eq) {
            o->value = eq + 1;
        } else if (i + 1 < argc && !find_opt(opts, argv[i + 1]) && !is_valued(argv[i + 1])) {
            /* "--out --classes 2" made a folder "--classes" of --out */
            o->value = argv[++i];
        } else {
            return usage_error("option '%s' needs a value%s", a, "");
        }
    }
    return 0;
}

/* A whole number in [min, max]; def when the option was not given. */
static int get_u64(const mk_opt *o, uint64_t def, uint64_t min, uint64_t max, uint64_t *out)
{
    if (!o->value) {
        *out = def;
        return 0;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(o->value, &end, 10);
    /* digits only: strtoull takes " -1" as 2^64 - 1 */
    if (!isdigit((unsigned char)o->value[0]) || *end || errno || v < min || v > max) {
        fprintf(stderr, "dlgauge mkdata: --%s '%s': expected a whole number from %llu to %llu\n",
                o->name, o->value, (unsigned long long)min, (unsigned long long)max);
        return DLG_EXIT_USAGE;
    }
    *out = v;
    return 0;
}

static int require(const mk_opt *o)
{
    if (o->value && o->value[0])
        return 0;
    fprintf(stderr, "dlgauge mkdata: --%s is required\n", o->name);
    return DLG_EXIT_USAGE;
}

/* ---- stopping: the work runs in a child process, which a stop signal
 * ends at once; the parent then removes its unfinished .part output ---- */
typedef struct mk_work {
    int (*run)(const struct mk_work *w);
    /* 0, or -1 with why the unfinished output could not all be removed */
    int (*remove_parts)(const struct mk_work *w, dlg_data_err *err);
    const dlg_synth_images_cfg *images;
    const char *text_out;
    bool text_splits;
    uint64_t words, vocab, seed;
} mk_work;

/* The stop signals that would end mkdata (not those it was started
 * ignoring, as by nohup), blocked; *old gets the previous mask. */
static void block_stops(sigset_t *stops, sigset_t *old)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    sigemptyset(stops);
    sigaddset(stops, SIGCHLD);
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction sa;
        if (sigaction(sigs[i], NULL, &sa) == 0 && sa.sa_handler != SIG_IGN)
            sigaddset(stops, sigs[i]);
    }
    sigprocmask(SIG_BLOCK, stops, old);
}

/* Waits for the child; the first stop signal kills it.  Returns the stop
 * signal, 0 when none came. */
static int wait_child(pid_t pid, const sigset_t *stops, int *status)
{
    int stop = 0;
    for (;;) {
        int s = sigwaitinfo(stops, NULL);
        if (s > 0 && s != SIGCHLD && !stop) {
            stop = s;
            kill(pid, SIGKILL);
        }
        if (waitpid(pid, status, WNOHANG) == pid)
            return stop;
    }
}

/* The generator's process ended by signal sig, which mkdata itself did
 * not get: a crash of its own, or a signal sent to it alone (the OOM
 * killer's SIGKILL).  Nobody asked mkdata to stop, so it failed (exit 1,
 * as a cell killed alone does) rather than "stopped by signal". */
static int died_alone(int sig, const char *removed)
{
    static const int crashes[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS, SIGTRAP};
    bool crashed = false;
    for (size_t i = 0; i < sizeof crashes / sizeof *crashes; i++)
        crashed |= sig == crashes[i];
    if (crashed)
        fprintf(stderr, "dlgauge mkdata: the generator crashed (signal %d, %s): %s\n", sig, strsignal(sig), removed);
    else
        fprintf(stderr, "dlgauge mkdata: the generator was killed by signal %d (%s), sent to its process alone: "
                        "%s\n", sig, strsignal(sig), removed);
    return DLG_EXIT_FAILED;
}

static int stoppable(const mk_work *w)
{
    sigset_t stops, old;
    block_stops(&stops, &old);
    fflush(NULL); /* nothing buffered is written twice */
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* a killed parent takes the work along */
        sigprocmask(SIG_SETMASK, &old, NULL);
        exit(w->run(w));
    }
    int status = 0, stop = pid > 0 ? wait_child(pid, &stops, &status) : 0;
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) /* no process to spare: the work runs here, unstoppable as before */
        return w->run(w);
    if (WIFEXITED(status))
        return WEXITSTATUS(status); /* done, even if a stop came as it finished */
    dlg_data_err err = {0};
    char removed[600] = "its unfinished .part output was removed";
    if (w->remove_parts(w, &err) != 0) /* said as it is: never "removed" when it was not */
        snprintf(removed, sizeof removed, "its unfinished .part output could not all be removed: %s", err.msg);
    if (!stop)
        return died_alone(WTERMSIG(status), removed);
    fprintf(stderr, "dlgauge mkdata: stopped by signal %d (%s): %s\n", stop, strsignal(stop), removed);
    return stop == SIGINT ? DLG_EXIT_SIGINT : stop == SIGTERM ? DLG_EXIT_SIGTERM : 128 + stop;
}

/* A .part file mkdata would have made (a regular file, never a device):
 * 0, or -1 with err saying why it stays. */
static int remove_part_file(const char *name, const char *suffix, dlg_data_err *err)
{
    char part[4200];
    struct stat st;
    snprintf(part, sizeof part, "%s%s%s", name, suffix, DLG_SYNTH_PART);
    if (lstat(part, &st) != 0 || !S_ISREG(st.st_mode) || unlink(part) == 0)
        return 0;
    dlg_data_fail(err, DLG_EIO, "%s: %s", part, strerror(errno));
    return -1;
}

static int remove_image_parts(const mk_work *w, dlg_data_err *err)
{
    char base[4200];
    snprintf(base, sizeof base, "%s/%s", w->images->out, w->images->split);
    int rc = remove_part_file(base, ".txt", err);
    rc |= remove_part_file(base, ".lst", err);
    char tree[4200];
    snprintf(tree, sizeof tree, "%s%s", base, DLG_SYNTH_PART);
    if (dlg_synth_tree_remove(tree, err) < 0) /* refuses all of a tree mkdata did not make */
        rc = -1;
    return rc;
}

static int remove_text_parts(const mk_work *w, dlg_data_err *err)
{
    static const char *const splits[3] = {".train.txt", ".valid.txt", ".test.txt"};
    int rc = w->text_splits ? 0 : remove_part_file(w->text_out, "", err);
    for (int k = 0; k < 3 && w->text_splits; k++)
        rc |= remove_part_file(w->text_out, splits[k], err);
    return rc;
}

static int write_images(const mk_work *w)
{
    const dlg_synth_images_cfg *cfg = w->images;
    dlg_synth_images_result res;
    dlg_data_err err = {0};
    if (dlg_synth_images_write(cfg, &res, &err) < 0) {
        fprintf(stderr, "dlgauge mkdata: %s\n", err.msg);
        /* a refused --out/--split is bad input, as `dlgauge help` says 2 is;
         * any other failure (a write, an internal limit) is 1 */
        return res.refused ? DLG_EXIT_USAGE : DLG_EXIT_FAILED;
    }
    bool mb = res.bytes >= 1000000; /* 48 KB is not "0.0 MB" */
    printf("wrote %llu images in %llu classes to %s/%s (%.1f %s, mean %.1f KB, %llu..%llu "
           "bytes, mean %.0fx%.0f) in %.2f s (%.0f images/s); lists %s/%s.txt and %s/%s.lst\n",
           (unsigned long long)res.images, (unsigned long long)cfg->classes, cfg->out, cfg->split,
           res.bytes / (mb ? 1e6 : 1e3), mb ? "MB" : "KB", res.bytes / 1e3 / (double)res.images,
           (unsigned long long)res.min_bytes, (unsigned long long)res.max_bytes, res.mean_w,
           res.mean_h, res.seconds, res.images / (res.seconds > 0 ? res.seconds : 1e-9), cfg->out,
           cfg->split, cfg->out, cfg->split);
    return DLG_EXIT_OK;
}

static int mk_images(int argc, char **argv)
{
    mk_opt o[] = {{"out", NULL},     {"classes", NULL}, {"images", NULL}, {"seed", NULL},
                  {"quality", NULL}, {"threads", NULL}, {"split", NULL},  {NULL, NULL}};
    uint64_t classes, images, seed, quality, threads;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int rc = parse_args(argc, argv, o);
    if (rc < 0)
        return DLG_EXIT_OK;
    if (!rc)
        rc = require(&o[0]);
    if (!rc)
        rc = require(&o[1]) ? DLG_EXIT_USAGE : get_u64(&o[1], 0, 1, 100000, &classes);
    if (!rc)
        rc = require(&o[2]) ? DLG_EXIT_USAGE : get_u64(&o[2], 0, 1, 100000000, &images);
    if (!rc)
        rc = get_u64(&o[3], 0, 0, UINT64_MAX, &seed);
    if (!rc)
        rc = get_u64(&o[4], 90, 1, 100, &quality);
    if (!rc)
        rc = get_u64(&o[5], cpus > 0 ? (uint64_t)cpus : 1, 1, 1024, &threads);
    if (rc)
        return rc;
    if (images < classes) /* a class folder with no image: readers disagree on what it is */
        return usage_error("--images %s is fewer than --classes %s: every class needs at least one image", o[2].value,
                           o[1].value);
    const char *split = o[6].value ? o[6].value : "train";
    if (!dlg_synth_split_ok(split)) {
        char most[24];
        snprintf(most, sizeof most, "%d", DLG_SYNTH_SPLIT_MAX);
        return usage_error("--split '%s': expected a plain name like train or val, at most %s bytes", split, most);
    }
    dlg_synth_images_cfg cfg = {o[0].value, split, (int)classes, images, seed, (int)quality,
                                (int)threads};
    mk_work w = {.run = write_images, .remove_parts = remove_image_parts, .images = &cfg};
    return stoppable(&w);
}

static int write_text(const mk_work *w)
{
    dlg_data_err err = {0};
    dlg_synth_text_result r;
    if (dlg_synth_text_files_res(w->text_out, w->words, (int)w->vocab, w->seed, w->text_splits, &r,
                                 &err) < 0) {
        fprintf(stderr, "dlgauge mkdata: %s\n", err.msg);
        return DLG_EXIT_FAILED;
    }
    if (w->text_splits)
        printf("wrote %llu + %llu + %llu words (%llu distinct in train, of %llu word types; with <eos> a vocabulary of %llu) to "
               "%s.train.txt, %s.valid.txt, %s.test.txt\n",
               (unsigned long long)r.words[0], (unsigned long long)r.words[1],
               (unsigned long long)r.words[2], (unsigned long long)r.vocab_used,
               (unsigned long long)w->vocab, (unsigned long long)w->vocab + 1, w->text_out, w->text_out,
               w->text_out);
    else
        printf("wrote %llu words (%llu distinct, of %llu word types; with <eos> a vocabulary of %llu) to %s\n",
               (unsigned long long)r.words[0], (unsigned long long)r.vocab_used,
               (unsigned long long)w->vocab, (unsigned long long)w->vocab + 1, w->text_out);
    return DLG_EXIT_OK;
}

static int mk_text(int argc, char **argv)
{
    mk_opt o[] = {{"out", NULL},  {"words", NULL},  {"vocab", NULL},
                  {"seed", NULL}, {"splits", NULL}, {NULL, NULL}};
    uint64_t words, vocab, seed;
    int rc = parse_args(argc, argv, o);
    if (rc < 0)
        return DLG_EXIT_OK;
    if (!rc)
        rc = require(&o[0]);
    if (!rc)
        rc = require(&o[1]) ? DLG_EXIT_USAGE : get_u64(&o[1], 0, 1, 100000000000ULL, &words);
    if (!rc)
        rc = get_u64(&o[2], 10000, 4, 10000001, &vocab);
    if (!rc)
        rc = get_u64(&o[3], 0, 0, UINT64_MAX, &seed);
    if (rc)
        return rc;
    /* --vocab counts <eos>, as a language model's vocabulary does: PTB's
     * 10000 is 9999 word types (<unk> among them) and <eos> */
    mk_work w = {.run = write_text, .remove_parts = remove_text_parts, .text_out = o[0].value,
                 .text_splits = o[4].value != NULL, .words = words, .vocab = vocab - 1, .seed = seed};
    return stoppable(&w);
}

int dlg_cmd_mkdata(const dlg_cli *cli, int argc, char **argv)
{
    (void)cli;
    /* the product is the files: a reader gone from stdout (| head) must not
     * kill the finished work at its summary line, called "stopped" */
    signal(SIGPIPE, SIG_IGN);
    if (argc >= 2 && is_help(argv[1])) {
        fputs(mk_usage, stdout);
        return DLG_EXIT_OK;
    }
    if (argc >= 2 && strcmp(argv[1], "images") == 0)
        return mk_images(argc, argv);
    if (argc >= 2 && strcmp(argv[1], "text") == 0)
        return mk_text(argc, argv);
    if (argc < 2)
        return usage_error("expected 'images' or 'text' (dlgauge mkdata images --out DIR "
                           "--classes C --images N | text --out FILE --words N)%s%s",
                           "", "");
    return usage_error("unknown dataset kind '%s' (expected images or text; --help for usage)%s",
                       argv[1], "");
}
