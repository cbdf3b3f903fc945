/* dlgauge list / dlgauge help: both print from the plugins' own tables, so
 * the docs can never disagree with the code (docs/config.md is generated
 * by `dlgauge help --markdown all`). */
#include "cli.h"

#include "metrics.h"
#include "options.h"
#include "plan.h"
#include "registry.h"

#include <stdio.h>
#include <string.h>

static int open_registry(const dlg_cli *cli, dlg_registry *reg)
{
    if (dlg_registry_init(reg, cli->plugin_dirs) != 0) {
        fprintf(stderr, "dlgauge: %s\n", reg->why);
        return -1;
    }
    if (dlg_registry_scan(reg) != 0) {
        fprintf(stderr, "dlgauge: %s\n", reg->why);
        dlg_registry_free(reg);
        return -1;
    }
    dlg_registry_notes(reg, stderr);
    return 0;
}

/* One descriptor; one that another file's copy hides says which file is used. */
static void list_line(const dlg_registry *reg, const dlg_plugin_desc *d, const char *path, int wfile)
{
    const char *by = dlg_registry_shadowed_by(reg, d);
    printf("%-9s %-16s %-8s %-*s  %s%s%s%s\n", dlg_kind_name(d->kind), d->name, d->version, wfile, path,
           by ? "(shadowed by " : "", by ? by : "", by ? ", not used) " : "", d->summary);
}

/* Each plugin file that failed to load, on stderr; returns how many. */
static int load_failures(const dlg_registry *reg)
{
    int bad = 0;
    for (size_t i = 0; i < reg->nfiles; i++)
        if (reg->files[i].error) {
            fprintf(stderr, "dlgauge: %s: %s\n", reg->files[i].path, reg->files[i].error);
            bad++;
        }
    return bad;
}

/* " DIR DIR ...": where plugins were looked for. */
static void searched(const dlg_registry *reg)
{
    for (size_t i = 0; i < reg->ndirs; i++)
        fprintf(stderr, " %s", reg->dirs[i]);
}

int dlg_cmd_list(const dlg_cli *cli, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    dlg_registry reg;
    if (open_registry(cli, &reg) != 0)
        return DLG_EXIT_USAGE;
    /* the file column as wide as the longest path; summaries last and whole */
    int wfile = 4;
    for (size_t i = 0; i < reg.nfiles; i++)
        if (reg.files[i].info && (int)strlen(reg.files[i].path) > wfile)
            wfile = (int)strlen(reg.files[i].path);
    printf("%-9s %-16s %-8s %-*s  %s\n", "KIND", "NAME", "VERSION", wfile, "FILE", "SUMMARY");
    for (dlg_kind k = DLG_KIND_WORKLOAD; k <= DLG_KIND_SINK; k++)
        for (size_t i = 0; i < reg.nfiles; i++)
            for (const dlg_plugin_desc *const *d = reg.files[i].info ? reg.files[i].info->items : NULL; d && *d; d++)
                if ((*d)->kind == k)
                    list_line(&reg, *d, reg.files[i].path, wfile);
    int bad = load_failures(&reg);
    if (!reg.nfiles) { /* an install without its plugins: no health check may pass it */
        fprintf(stderr, "dlgauge: no plugins found; searched:");
        searched(&reg);
        fprintf(stderr, "\n");
        bad = 1;
    }
    dlg_registry_free(&reg);
    return bad ? DLG_EXIT_FAILED : DLG_EXIT_OK;
}

static void range_text(const dlg_option *o, char *buf, size_t len)
{
    if (o->type == DLG_OPT_ENUM)
        snprintf(buf, len, "%s", o->choices);
    else if (o->min && o->max)
        snprintf(buf, len, "%s..%s", o->min, o->max);
    else if (o->min)
        snprintf(buf, len, ">= %s", o->min);
    else if (o->max)
        snprintf(buf, len, "<= %s", o->max);
    else
        buf[0] = '\0';
}

/* A Markdown table cell: a bare '|' would end the cell (enum choices have them). */
static void md_cell(const char *s)
{
    fputc(' ', stdout);
    for (; s && *s; s++) {
        if (*s == '|')
            fputc('\\', stdout);
        fputc(*s, stdout);
    }
    fputs(" |", stdout);
}

static const char *option_default(const dlg_option *o)
{
    return o->def ? o->def : (o->flags & DLG_OPT_REQUIRED) ? "(required)" : "(unset)";
}

/* The help, and what the path flags say of the option (a workload's read
 * path is checked before any cell: plan_inputs.c). */
static const char *option_help(const dlg_option *o, char *buf, size_t len)
{
    const char *path = (o->flags & DLG_OPT_PATH_IN) ? " [reads a path]"
                       : (o->flags & DLG_OPT_PATH_OUT) ? " [writes a path]" : "";
    snprintf(buf, len, "%s%s", o->help ? o->help : "", path);
    return buf;
}

static void print_options(const dlg_option *opts, bool md)
{
    if (!opts || !opts->name) {
        printf(md ? "_No options._\n\n" : "  (no options)\n");
        return;
    }
    /* text columns as wide as their longest entry (a default like
     * "0.485,0.456,0.406" pushed the rest of its row out of line) */
    int wkey = 3, wdef = 7, wrange = 5;
    for (const dlg_option *o = opts; o->name; o++) {
        char range[256];
        range_text(o, range, sizeof range);
        int kl = (int)strlen(o->name), dl = (int)strlen(option_default(o)), rl = (int)strlen(range);
        wkey = kl > wkey ? kl : wkey;
        wdef = dl > wdef ? dl : wdef;
        wrange = rl > wrange ? rl : wrange;
    }
    if (md)
        printf("| key | type | default | range | description |\n|---|---|---|---|---|\n");
    else
        printf("  %-*s %-8s %-*s %-*s %s\n", wkey, "KEY", "TYPE", wdef, "DEFAULT", wrange, "RANGE", "HELP");
    for (const dlg_option *o = opts; o->name; o++) {
        char range[256];
        range_text(o, range, sizeof range);
        const char *def = option_default(o);
        char help[2048];
        option_help(o, help, sizeof help);
        if (md) {
            printf("| `%s` | %s |", o->name, dlg_opt_type_name(o->type));
            md_cell(def);
            md_cell(range);
            md_cell(help);
            printf("\n");
        } else
            printf("  %-*s %-8s %-*s %-*s %s\n", wkey, o->name, dlg_opt_type_name(o->type), wdef, def, wrange,
                   range, help);
    }
    if (md)
        printf("\n");
}

static void print_metrics(const dlg_metric *m, bool md)
{
    if (!m || !m->name)
        return;
    static const char *const types[] = {"", "float", "integer", "unsigned", "string", "bool"};
    int wname = 5, wunit = 4;
    for (const dlg_metric *x = m; x->name; x++) {
        wname = (int)strlen(x->name) > wname ? (int)strlen(x->name) : wname;
        wunit = (int)strlen(x->unit) > wunit ? (int)strlen(x->unit) : wunit;
    }
    if (md)
        printf("| field | type | unit | meaning |\n|---|---|---|---|\n");
    else
        printf(" result fields:\n");
    for (; m->name; m++) {
        if (md)
        {
            printf("| `%s` | %s |", m->name, types[m->type]);
            md_cell(m->unit);
            md_cell(m->help);
            printf("\n");
        }
        else
            printf("  %-*s %-8s %-*s %s\n", wname, m->name, types[m->type], wunit, m->unit, m->help);
    }
    if (md)
        printf("\n");
}

/* A copy that another file's hides is printed too, saying which is used. */
static void print_desc(const dlg_registry *reg, const dlg_plugin_desc *d, const char *path, bool md)
{
    const char *by = dlg_registry_shadowed_by(reg, d);
    if (md) {
        printf("### %s `%s`\n\n%s (version %s, `%s`%s%s%s)\n\n", dlg_kind_name(d->kind), d->name, d->summary,
               d->version, strrchr(path, '/') ? strrchr(path, '/') + 1 : path, by ? ", shadowed by `" : "",
               by ? by : "", by ? "`, not used" : "");
    } else {
        printf("%s %s %s — %s\n  file: %s%s%s%s\n", dlg_kind_name(d->kind), d->name, d->version, d->summary, path,
               by ? " (shadowed by " : "", by ? by : "", by ? ", not used)" : "");
    }
    print_options(d->options, md);
    if (d->kind == DLG_KIND_WORKLOAD) {
        if (!md)
            printf("  unit: %s\n", ((const dlg_workload_ops *)d->ops)->unit);
        print_metrics(d->metrics, md);
    }
}

static void print_core(const char *what, bool md)
{
    if (strcmp(what, "job") == 0 || strcmp(what, "all") == 0) {
        if (md)
            printf("## `[job NAME]`: core keys\n\nEvery job takes these, plus its workload's options. "
                   "A comma-separated value makes a sweep axis; a run has at most %d cells.\n\n",
                   DLG_PLAN_MAX_CELLS);
        else
            printf("[job NAME] core keys (plus the workload's options):\n");
        print_options(dlg_core_job_options, md);
    }
    if (strcmp(what, "global") == 0 || strcmp(what, "all") == 0) {
        printf(md ? "## `[global]`\n\nThese, plus any job key as a default for every job.\n\n"
                  : "[global] keys (plus any job key, as a default for every job):\n");
        print_options(dlg_global_options, md);
        printf(md ? "## `[storage NAME]` and `[sink NAME]`: common keys\n\n"
                  : "[storage NAME] / [sink NAME] common keys:\n");
        print_options(dlg_section_options, md);
    }
    if (strcmp(what, "metrics") == 0 || strcmp(what, "all") == 0) {
        printf(md ? "## Result fields (`%s`)\n\nTags: " : "%s tags:", DLG_MEASUREMENT_RESULT);
        for (size_t i = 0; dlg_core_tags[i]; i++)
            printf(md ? "`%s`%s" : " %s%s", dlg_core_tags[i], dlg_core_tags[i + 1] ? (md ? ", " : "") : "");
        printf(md ? ", one tag per swept key, and one per workload field named like a setting of its job (io's "
                    "`depth`, stream's `threads`), swept or not.\n\n"
                  : " + one per swept key and per workload field named like a job setting\n");
        print_metrics(dlg_core_metrics, md);
        printf(md ? "## Progress points (`%s`)\n\n" : "%s fields:\n", DLG_MEASUREMENT_PROGRESS);
        print_metrics(dlg_progress_metrics, md);
    }
}

static bool is_core_topic(const char *w)
{
    return !strcmp(w, "job") || !strcmp(w, "global") || !strcmp(w, "metrics") || !strcmp(w, "all");
}

/* Every plugin called NAME (or all of them); returns how many were printed. */
static int print_plugins(const dlg_registry *reg, const char *name, bool md)
{
    bool all = strcmp(name, "all") == 0;
    int found = 0;
    for (dlg_kind k = DLG_KIND_WORKLOAD; k <= DLG_KIND_SINK; k++) {
        if (md && all)
            printf("## %ss\n\n", dlg_kind_name(k));
        for (size_t i = 0; i < reg->nfiles; i++)
            for (const dlg_plugin_desc *const *d = reg->files[i].info ? reg->files[i].info->items : NULL; d && *d; d++)
                if ((*d)->kind == k && (all || strcmp((*d)->name, name) == 0)) {
                    print_desc(reg, *d, reg->files[i].path, md);
                    found++;
                }
    }
    return found;
}

/* NAME is nothing help knows: one line, with the closest name it does
 * know and the plugin files that failed to load (NAME may be in one). */
static void unknown_name(const dlg_registry *reg, const char *name)
{
    const dlg_plugin_file *failed = dlg_registry_failed_naming(reg, name);
    if (failed) { /* not the name's fault (under a tight ulimit -v, every file fails) */
        fprintf(stderr, "dlgauge: plugin file %s, which names '%s', could not be loaded: %s\n", failed->path, name,
                failed->error);
        return;
    }
    const char *names[512] = {"job", "global", "metrics", "all"};
    size_t n = 4;
    n += dlg_command_names(names + n, 512 - n);
    for (size_t i = 0; i < reg->nfiles; i++)
        for (const dlg_plugin_desc *const *d = reg->files[i].info ? reg->files[i].info->items : NULL;
             d && *d && n < 512; d++)
            names[n++] = (*d)->name;
    char msg[512];
    snprintf(msg, sizeof msg, "no command, workload, storage or sink is called '%s'", name);
    dlg_append_suggestion(msg, sizeof msg, dlg_suggest(name, names, n));
    fprintf(stderr, "dlgauge: %s; dlgauge list shows the plugins, dlgauge --help the commands", msg);
    for (size_t i = 0; i < reg->nfiles; i++)
        if (reg->files[i].error)
            fprintf(stderr, "; %s failed to load: %s", reg->files[i].path, reg->files[i].error);
    if (!reg->nfiles) {
        fprintf(stderr, "; no plugins found, searched:");
        searched(reg);
    }
    fputc('\n', stderr);
}

/* One NAME: a command's usage, a core topic, or the plugins of that name. */
static int help_one(const dlg_cli *cli, const dlg_registry *reg, const char *name, bool md)
{
    if (dlg_command_help(cli, name) >= 0)
        return DLG_EXIT_OK;
    if (md && strcmp(name, "all") == 0)
        printf("# Configuration reference\n\nGenerated by `dlgauge help --markdown all` from the option "
               "tables in the code; do not edit by hand.\n\n");
    if (is_core_topic(name))
        print_core(name, md);
    if (!print_plugins(reg, name, md) && !is_core_topic(name)) {
        unknown_name(reg, name);
        return DLG_EXIT_USAGE;
    }
    /* a reference (docs/config.md) without a plugin that failed to load is
     * incomplete: say which, and fail it as list does */
    if (strcmp(name, "all") == 0 && load_failures(reg))
        return DLG_EXIT_FAILED;
    return DLG_EXIT_OK;
}

int dlg_cmd_help(const dlg_cli *cli, int argc, char **argv)
{
    bool md = false;
    int nnames = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--markdown") == 0)
            md = true;
        else if (argv[i][0] == '-') {
            fprintf(stderr, "dlgauge: help: unknown option '%s' (usage: dlgauge help [--markdown] NAME...)\n",
                    argv[i]);
            return DLG_EXIT_USAGE;
        } else
            nnames++;
    }
    if (!nnames && md) { /* it printed the plain usage, as if --markdown were not there */
        fprintf(stderr, "dlgauge: help: --markdown needs a NAME (dlgauge help --markdown all, or metrics)\n");
        return DLG_EXIT_USAGE;
    }
    if (!nnames) { /* `dlgauge help` alone: what there is to ask about */
        dlg_usage(stdout);
        return DLG_EXIT_OK;
    }
    dlg_registry reg;
    if (open_registry(cli, &reg) != 0)
        return DLG_EXIT_USAGE;
    int rc = DLG_EXIT_OK;
    for (int i = 1; i < argc && rc == DLG_EXIT_OK; i++)
        if (argv[i][0] != '-')
            rc = help_one(cli, &reg, argv[i], md);
    dlg_registry_free(&reg);
    return rc;
}
