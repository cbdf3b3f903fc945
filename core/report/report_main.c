/* dlgauge report RESULTS... [options]: reads, models, writes. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dlgauge/plugin.h>

#include "cmd_files.h"
#include "report.h"
#include "units.h"

static void usage(FILE *f)
{
    fputs("usage: dlgauge report RESULTS.csv|.jsonl|-... [--catalog conf/instances/X.ini]... [--target 0.95]\n"
          "                      [--html OUT.html] [--markdown OUT.md|-] [--disks DIR]... [--disk NAME=PROFILE.ini]...\n"
          "                      [--workload NAME[/MODE]]... [--weight NAME[/MODE]=AMOUNT]... [--gpu MODEL]\n"
          "                      [--color auto|always|never]\n"
          "  knees, bottlenecks and the cheapest instance meeting every knee; storage values are judged\n"
          "  against disk profiles found by name in conf/disks, --disks DIRs or given by --disk;\n"
          "  '--' ends the options.  --html and --markdown files are replaced only when complete\n",
          f);
}

typedef struct opts {
    const char **results, **catalogs, **diskdirs, **disks, **workloads, **weights;
    size_t nresults, ncatalogs, ndiskdirs, ndisks, nworkloads, nweights;
    const char *html, *markdown, *gpu, *color;
    double target;
    int nstdin; /* "-" given (standard input) */
} opts;

static int push(const char ***arr, size_t *n, const char *v)
{
    const char **na = realloc(*arr, (*n + 1) * sizeof *na);
    if (!na)
        return -1;
    na[(*n)++] = v;
    *arr = na;
    return 0;
}

static void free_opts(opts *o)
{
    free(o->results);
    free(o->catalogs);
    free(o->diskdirs);
    free(o->disks);
    free(o->workloads);
    free(o->weights);
}

/* The options; each takes a value (report.h: main.c reads this list too). */
const char *const rep_report_valued[] = {"--catalog", "--disks", "--disk", "--workload", "--weight", "--html",
                                         "--markdown", "--gpu", "--color", "--colour", "--target", NULL};

static bool is_option(const char *a)
{
    for (const char *const *v = rep_report_valued; *v; v++)
        if (strcmp(a, *v) == 0)
            return true;
    return false;
}

/* One option (is_option) and its value; 0, or 2 after saying why. */
static int set_option(opts *o, const char *a, const char *val)
{
    int rc = 0;
    if (!val[0]) { /* every value names something */
        fprintf(stderr, "dlgauge report: %s '': an empty value\n", a);
        return 2;
    }
    if (strcmp(a, "--catalog") == 0)
        rc = push(&o->catalogs, &o->ncatalogs, val);
    else if (strcmp(a, "--disks") == 0)
        rc = push(&o->diskdirs, &o->ndiskdirs, val);
    else if (strcmp(a, "--disk") == 0)
        rc = push(&o->disks, &o->ndisks, val);
    else if (strcmp(a, "--workload") == 0)
        rc = push(&o->workloads, &o->nworkloads, val);
    else if (strcmp(a, "--weight") == 0)
        rc = push(&o->weights, &o->nweights, val);
    else if (strcmp(a, "--html") == 0)
        o->html = val;
    else if (strcmp(a, "--markdown") == 0)
        o->markdown = val;
    else if (strcmp(a, "--gpu") == 0)
        o->gpu = val;
    else if (strcmp(a, "--color") == 0 || strcmp(a, "--colour") == 0)
        o->color = val;
    else { /* --target */
        char *end;
        o->target = strtod(val, &end);
        if (*end || end == val || !(o->target > 0 && o->target <= 1)) {
            fprintf(stderr, "dlgauge report: --target '%s': a fraction in (0, 1], e.g. 0.95\n", val);
            return 2;
        }
    }
    if (rc)
        fprintf(stderr, "dlgauge report: out of memory\n");
    return rc ? 2 : 0;
}

/* A results file; 0, or 2 after saying why. */
static int add_result(opts *o, const char *a)
{
    if (strcmp(a, "-") == 0 && ++o->nstdin > 1) { /* read once, it would be empty the second time */
        fprintf(stderr, "dlgauge report: '-' (standard input) given twice\n");
        return 2;
    }
    if (push(&o->results, &o->nresults, a) == 0)
        return 0;
    fprintf(stderr, "dlgauge report: out of memory\n");
    return 2;
}

/* Returns 0, 1 (--help shown), or 2 after one line saying why; "--" ends
 * the options (a results file may then start with '-'). */
static int parse_args(opts *o, int argc, char **argv)
{
    o->target = 0.95;
    o->color = "auto";
    bool files_only = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int rc = 0;
        if (!files_only && (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)) {
            usage(stdout);
            return 1;
        }
        if (!files_only && strcmp(a, "--") == 0)
            files_only = true;
        else if (files_only || a[0] != '-' || strcmp(a, "-") == 0)
            rc = add_result(o, a);
        else if (!is_option(a)) {
            fprintf(stderr, "dlgauge report: unknown option '%s' (dlgauge report --help lists them)\n", a);
            return 2;
        } else if (i + 1 >= argc || is_option(argv[i + 1])) { /* "--html --markdown x.md": no file "--markdown" */
            fprintf(stderr, "dlgauge report: %s needs a value\n", a);
            return 2;
        } else
            rc = set_option(o, a, argv[++i]);
        if (rc)
            return rc;
    }
    if (strcmp(o->color, "auto") && strcmp(o->color, "always") && strcmp(o->color, "never")) {
        fprintf(stderr, "dlgauge report: --color '%s': auto, always or never\n", o->color);
        return 2;
    }
    if (o->nresults == 0) {
        fprintf(stderr, "dlgauge report: no results file given (dlgauge report RESULTS.csv|.jsonl|- [options]; "
                        "--help lists them)\n");
        return 2;
    }
    return 0;
}

/* Profiles found by name: the shipped ones, if here, then --disks DIRs. */
static int load_disk_dirs(rep_report *r, const opts *o, char *err, size_t errlen)
{
    int rc = rep_disks_load_dir(&r->disks, "conf/disks", err, errlen);
    for (size_t i = 0; i < o->ndiskdirs && !rc; i++) {
        if (access(o->diskdirs[i], R_OK) != 0) {
            snprintf(err, errlen, "--disks %s: %s", o->diskdirs[i], strerror(errno));
            return -DLG_EINVAL;
        }
        rc = rep_disks_load_dir(&r->disks, o->diskdirs[i], err, errlen);
    }
    return rc;
}

/* --disk NAME=PROFILE.ini: loaded last, so they win over every other source. */
static int load_named_disks(rep_report *r, const opts *o, char *err, size_t errlen)
{
    int rc = 0;
    for (size_t i = 0; i < o->ndisks && !rc; i++) {
        const char *eq = strchr(o->disks[i], '=');
        if (!eq || eq == o->disks[i] || !eq[1]) {
            snprintf(err, errlen, "--disk '%s': expected NAME=PROFILE.ini", o->disks[i]);
            return -DLG_EINVAL;
        }
        char *name = strndup(o->disks[i], (size_t)(eq - o->disks[i]));
        if (!name)
            return -DLG_ENOMEM;
        rc = rep_input_check(eq + 1, "disk profile", err, errlen);
        if (!rc)
            rc = rep_disks_load(&r->disks, eq + 1, name, err, errlen);
        free(name);
    }
    return rc;
}

/* The first n bytes of name are exactly s. */
static bool names(const char *name, size_t n, const char *s)
{
    return strlen(s) == n && memcmp(name, s, n) == 0;
}

/* Selects (and weighs, weight > 0) the groups the first n bytes of name
 * name: NAME or NAME/MODE.  False when none. */
/* Selects the groups NAME or NAME/MODE names (name[0..n)); with weight >
 * 0 gives them that weight, where weighted_by[g] (the --weight that gave
 * group g one, or NULL) says none did yet: else *twice is that group and
 * *prev the --weight before. */
static bool select_named(rep_report *r, const char *name, size_t n, double weight, const char **weighted_by,
                         const char *arg, long *twice, const char **prev)
{
    bool any = false;
    for (size_t g = 0; g < r->model.n; g++) {
        const rep_group *gr = &r->model.g[g];
        char both[512];
        snprintf(both, sizeof both, "%s/%s", gr->workload, gr->mode);
        if (!names(name, n, gr->workload) && !names(name, n, both))
            continue;
        any = r->selected[g] = true;
        if (weight > 0 && weighted_by[g] && *twice < 0) {
            *twice = (long)g;
            *prev = weighted_by[g];
        }
        if (weight > 0) {
            r->weights[g] = weight;
            weighted_by[g] = arg;
        }
    }
    return any;
}

/* --weight NAME[/MODE]=AMOUNT: the amount of that work in the mix; a
 * group weighed twice (sim=1 and sim/train=2) is refused, not overwritten. */
static int select_weighted(rep_report *r, const char *arg, const char **weighted_by, char *err, size_t errlen)
{
    const char *eq = strrchr(arg, '=');
    char why[96];
    double w;
    if (!eq || eq == arg || dlg_parse_double(eq + 1, &w, why, sizeof why) != 0 || !(w > 0)) {
        snprintf(err, errlen, "--weight '%s': expected NAME[/MODE]=AMOUNT, the amount of that work in the mix "
                 "(millions of items, TB for bytes) > 0, e.g. sim/train=50", arg);
        return -DLG_EINVAL;
    }
    long twice = -1;
    const char *prev = NULL;
    if (!select_named(r, arg, (size_t)(eq - arg), w, weighted_by, arg, &twice, &prev)) {
        snprintf(err, errlen, "--weight %s: no such workload in the results", arg);
        return -DLG_EINVAL;
    }
    if (twice >= 0) {
        const rep_group *gr = &r->model.g[twice];
        bool mode = gr->mode && gr->mode[0] && strcmp(gr->mode, "-") != 0;
        snprintf(err, errlen, "--weight %s: %s%s%s already has a weight (--weight %s): give each workload one", arg,
                 gr->workload, mode ? "/" : "", mode ? gr->mode : "", prev);
        return -DLG_EINVAL;
    }
    return 0;
}

/* Groups counted in the recommendation: --workload or --weight NAME or
 * NAME/MODE, else all.  With weights, a group named by --workload alone
 * weighs 1. */
static int select_groups(rep_report *r, const opts *o, char *err, size_t errlen)
{
    if (!(r->selected = calloc(r->model.n + 1, sizeof *r->selected)))
        return -DLG_ENOMEM;
    if (o->nweights && !(r->weights = calloc(r->model.n + 1, sizeof *r->weights)))
        return -DLG_ENOMEM;
    for (size_t g = 0; g < r->model.n; g++) {
        r->selected[g] = o->nworkloads + o->nweights == 0;
        if (r->weights)
            r->weights[g] = 1;
    }
    const char **weighted_by = calloc(r->model.n + 1, sizeof *weighted_by);
    if (!weighted_by)
        return -DLG_ENOMEM;
    long none = -1;
    int rc = 0;
    for (size_t w = 0; w < o->nworkloads && rc == 0; w++)
        if (!select_named(r, o->workloads[w], strlen(o->workloads[w]), 0, weighted_by, NULL, &none, NULL)) {
            snprintf(err, errlen, "--workload %s: no such workload in the results", o->workloads[w]);
            rc = -DLG_EINVAL;
        }
    for (size_t w = 0; w < o->nweights && rc == 0; w++)
        rc = select_weighted(r, o->weights[w], weighted_by, err, errlen);
    free(weighted_by);
    return rc;
}

static int md_writer(FILE *f, const void *r) { return rep_out_markdown(f, r); }
static int html_writer(FILE *f, const void *r) { return rep_out_html(f, r); }

/* conf/instances/X.ini -> conf/disks: the profiles its disks name. */
static int catalog_disks(rep_report *r, const char *catalog, char *err, size_t errlen)
{
    char dir[4096];
    const char *slash = strrchr(catalog, '/');
    int n = slash ? (int)(slash - catalog) : 0;
    snprintf(dir, sizeof dir, "%.*s%s../disks", n, catalog, slash ? "/" : "");
    return rep_disks_load_dir(&r->disks, dir, err, errlen);
}

/* A catalog's disk that no profile describes is most likely a typo
 * ("aws-gp4"): the instance would meet only a storage of exactly that
 * name.  Said once per catalog and name. */
static void warn_unknown_disks(const rep_report *r)
{
    for (size_t i = 0; i < r->cat.n; i++) {
        const rep_instance *in = &r->cat.v[i];
        for (size_t d = 0; d < in->ndisks; d++) {
            bool said = rep_disks_find(&r->disks, in->disks[d]) != NULL;
            for (size_t j = 0; j <= i && !said; j++)
                for (size_t e = 0; e < r->cat.v[j].ndisks && !said && (j < i || e < d); e++)
                    said = strcmp(r->cat.v[j].disks[e], in->disks[d]) == 0 &&
                           strcmp(r->cat.v[j].catalog, in->catalog) == 0;
            if (!said)
                fprintf(stderr, "dlgauge report: warning: %s: [instance %s] disks = %s: no disk profile has that name "
                        "(conf/disks, --disks, the results' throttles), so only a storage named exactly so can use it\n",
                        in->catalog, in->name, in->disks[d]);
        }
    }
}

/* Every results file and catalog named: a typo or a folder is said with
 * its reason before any work. */
static int check_inputs(const opts *o, char *err, size_t errlen)
{
    int rc = 0;
    for (size_t i = 0; i < o->nresults && !rc; i++)
        if (strcmp(o->results[i], "-") != 0)
            rc = rep_input_check(o->results[i], "results file", err, errlen);
    for (size_t i = 0; i < o->ncatalogs && !rc; i++)
        rc = rep_input_check(o->catalogs[i], "instance catalog", err, errlen);
    return rc;
}

static int run(rep_report *r, const opts *o, bool *write_failed, char *err, size_t errlen)
{
    int rc = check_inputs(o, err, errlen);
    for (size_t i = 0; i < o->ncatalogs && !rc; i++)
        rc = catalog_disks(r, o->catalogs[i], err, errlen);
    if (!rc)
        rc = load_disk_dirs(r, o, err, errlen);
    for (size_t i = 0; i < o->nresults && !rc; i++)
        rc = rep_read_file(&r->rows, o->results[i], err, errlen);
    for (size_t i = 0; i < r->rows.nwarnings; i++) /* what was skipped, before any error */
        fprintf(stderr, "dlgauge report: %s\n", r->rows.warnings[i]);
    if (!rc)
        rc = rep_rows_validate(&r->rows, err, errlen);
    if (!rc) /* what the throttles ran with beats a profile that merely shares the name */
        rc = rep_disks_from_rows(&r->disks, &r->rows, err, errlen);
    for (size_t i = 0; i < r->disks.nwarnings; i++) /* profiles named in rows and not found */
        fprintf(stderr, "dlgauge report: warning: %s\n", r->disks.warnings[i]);
    if (!rc)
        rc = load_named_disks(r, o, err, errlen);
    if (!rc)
        rc = rep_model_build(&r->model, &r->rows, &r->disks, o->target, err, errlen);
    for (size_t i = 0; !rc && i < r->model.nwarnings; i++) /* rows of one job not pooled: other settings */
        fprintf(stderr, "dlgauge report: warning: %s\n", r->model.warnings[i]);
    if (!rc)
        rc = select_groups(r, o, err, errlen);
    for (size_t i = 0; i < o->ncatalogs && !rc; i++)
        rc = rep_catalog_load(&r->cat, o->catalogs[i], err, errlen);
    if (!rc && o->ncatalogs) {
        warn_unknown_disks(r);
        rc = rep_recommend(&r->reco, &r->model, r->selected, r->weights, &r->cat, &r->disks, o->gpu, err, errlen);
        r->have_reco = rc == 0;
    }
    if (rc)
        return rc;
    bool tty = isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
    bool colour = strcmp(o->color, "always") == 0 || (strcmp(o->color, "auto") == 0 && tty);
    int text_lost = 0; /* the files are still written, then the run fails */
    if (!(o->markdown && strcmp(o->markdown, "-") == 0))
        text_lost = rep_out_text(stdout, r, colour);
    *write_failed = true;
    if (o->markdown && (rc = rep_output_write(o->markdown, md_writer, r, err, errlen)) != 0)
        return rc;
    if (o->html && (rc = rep_output_write(o->html, html_writer, r, err, errlen)) != 0)
        return rc;
    if (fflush(stdout) != 0) {
        snprintf(err, errlen, "standard output: %s", strerror(errno));
        return -DLG_EIO;
    }
    if (text_lost) {
        snprintf(err, errlen, "standard output: out of memory: part of the report is missing");
        return -DLG_ENOMEM;
    }
    *write_failed = false;
    return 0;
}

int rep_main(int argc, char **argv)
{
    opts o = {0};
    int prc = parse_args(&o, argc, argv);
    if (prc) {
        free_opts(&o);
        return prc == 1 ? 0 : 2;
    }
    rep_report r = {0};
    r.target = o.target;
    r.gpu_filter = o.gpu;
    char err[1024] = "";
    bool write_failed = false;
    int rc = run(&r, &o, &write_failed, err, sizeof err);
    if (rc)
        fprintf(stderr, "dlgauge report: %s\n", err[0] ? err : "out of memory");
    rep_reco_free(&r.reco);
    rep_catalog_free(&r.cat);
    rep_model_free(&r.model);
    rep_disks_free(&r.disks);
    rep_rows_free(&r.rows);
    free(r.selected);
    free(r.weights);
    free_opts(&o);
    if (rc > 0) /* stopped by this signal while writing a file */
        return 128 + rc;
    return rc == 0 ? 0 : write_failed ? 1 : 2; /* 2: bad input, 1: an output could not be written */
}
