/* A plan is a validated configuration: every job bound to its workload,
 * every value parsed, sweep axes expanded, storages and sinks resolved to
 * plugins.  Everything that can be wrong with the input is found here,
 * before anything runs (so --dry-run catches it too). */
#ifndef DLG_PLAN_H
#define DLG_PLAN_H

#include "config.h"
#include "registry.h"

#include <stdio.h>

/* The core's own job keys, in this order. */
enum dlg_core_key {
    DLG_K_WORKLOAD,
    DLG_K_PLUGIN,
    DLG_K_STORAGE,
    DLG_K_CPUS,
    DLG_K_WARMUP,
    DLG_K_ITERATIONS,
    DLG_K_DURATION,
    DLG_K_MIN_STEPS,
    DLG_K_REPEAT,
    DLG_K_SEED,
    DLG_K_MEMORY,
    DLG_K_CPU_QUOTA,
    DLG_K_TIMEOUT,
    DLG_K_ISOLATION,
    DLG_K_COUNT
};

extern const dlg_option dlg_core_job_options[];
enum dlg_isolation { DLG_ISOLATE_PROCESS = 0, DLG_ISOLATE_NONE = 1 };
extern const dlg_option dlg_global_options[];
extern const dlg_option dlg_section_options[]; /* type, plugin: [storage]/[sink] */

typedef struct dlg_axis {
    const char *key;
    bool core;          /* a core key, else a workload option */
    size_t index;       /* into the core or workload table */
    char **values;
    size_t nvalues;
} dlg_axis;

typedef struct dlg_job {
    const char *name;
    const dlg_section *sec;
    const dlg_plugin_desc *workload;
    const char *workload_path;
    const dlg_entry *core_src[DLG_K_COUNT]; /* where each value came from, NULL = default */
    const char *core_text[DLG_K_COUNT];
    const dlg_entry **wl_src;
    const char **wl_text;
    size_t nwl;
    dlg_axis *axes;
    size_t naxes;
    size_t ncells;
} dlg_job;

typedef struct dlg_instance_spec {
    const char *name;
    const dlg_section *sec;      /* NULL: a bare type name with defaults */
    const dlg_plugin_desc *desc;
    const char *plugin_path;
    dlg_value *vals;             /* parsed options of desc */
} dlg_instance_spec;

typedef struct dlg_cell {
    const dlg_job *job;
    size_t index;                /* 0..job->ncells-1 */
    dlg_value core[DLG_K_COUNT];
    dlg_value *wl;               /* job->nwl values */
    dlg_tag *tags;               /* one per axis: key = value */
    size_t ntags;
} dlg_cell;

/* The most cells a run may have (its jobs' sweeps together): a million
 * cells of a second each take 12 days; more is a sweep written by mistake,
 * refused at plan time rather than wrapping the count around. */
#define DLG_PLAN_MAX_CELLS 1000000
/* The longest run_id: results, the journal and the run keep it in fixed buffers. */
#define DLG_RUN_ID_MAX 63

typedef struct dlg_plan {
    dlg_config *cfg;
    dlg_registry *reg;
    dlg_job *jobs;
    size_t njobs;
    dlg_instance_spec *storages;
    size_t nstorages;
    dlg_instance_spec *sinks;    /* active sinks, in [global] sinks order */
    size_t nsinks;
    size_t total_cells;
    const char *run_id;          /* from [global] run_id (at most DLG_RUN_ID_MAX bytes), or NULL */
    /* result schema: every tag key and field of this run */
    const char **tag_keys;
    size_t ntag_keys;
    dlg_metric *fields;
    size_t nfields;
} dlg_plan;

/* only_jobs: run just those nonly jobs, in file order (nonly = 0: all);
 * a name that is no [job] is an error. */
int dlg_plan_build_jobs(dlg_plan *p, dlg_config *cfg, dlg_registry *reg, const char *const *only_jobs,
                        size_t nonly, char *err, size_t errlen);
/* only_job: run just that job (NULL = all). */
int dlg_plan_build(dlg_plan *p, dlg_config *cfg, dlg_registry *reg, const char *only_job, char *err,
                   size_t errlen);
/* Fills cell k of job (values parsed; they point into the plan): 0, -1
 * for a swept value that does not parse (the same on every run of the
 * file), or -DLG_ENOMEM when memory ran out; err says which. */
int dlg_plan_cell(const dlg_plan *p, const dlg_job *job, size_t k, dlg_cell *cell, char *err,
                  size_t errlen);
void dlg_cell_free(dlg_cell *cell);
const dlg_instance_spec *dlg_plan_storage(const dlg_plan *p, const char *name);
/* Whether key is a tag column of the run's results (core tag or swept key). */
bool dlg_plan_is_tag(const dlg_plan *p, const char *key);
void dlg_plan_free(dlg_plan *p);

/* Builds a spec for a [storage]/[sink] section or bare type name. */
int dlg_plan_instance(dlg_plan *p, dlg_kind kind, const char *name, dlg_instance_spec *out, char *err,
                      size_t errlen);



/* Only the sinks of cfg (for `dlgauge flush`): no jobs are needed. */
int dlg_plan_build_sinks(dlg_plan *p, dlg_config *cfg, dlg_registry *reg, char *err, size_t errlen);

/* What only this machine can tell about a built plan, checked by `dlgauge
 * run` (and --dry-run) before any cell, not by a cell's own re-plan (which
 * runs after earlier jobs wrote their outputs):
 *  - cpus: every value must fit the CPUs and CPU quota this process has.
 *    A sweep with some values that fit only warns on `warn` (those cells
 *    will fail: a study's 1, 2, 4, 8 stays portable); none fitting fails.
 *  - paths read: a workload option flagged DLG_OPT_PATH_IN (STRING), e.g.
 *    the loader's data and mean_file, preprocess's input.  Where its help
 *    declares forms as KIND:ARG or KIND[:ARG] (ARG in capitals), e.g.
 *    "recordio:FILE | ... | files:LIST_OR_DIR | synthetic[:N]", the value's
 *    kind must be a declared one and the path is the ARG where it names one
 *    (PATH, DIR, FILE, LIST); else the whole value is the path.  It must
 *    exist unless an earlier job of the plan writes it (an option flagged
 *    DLG_OPT_PATH_OUT, e.g. preprocess's output or mean_output, names the
 *    same path, by dlg_path_same, and the same kind where both say one),
 *    checked only when the job reads through the built-in file backends.
 *    Existing, it must be a directory where its ARG (or the one a whole
 *    value's help starts with: "DIR: ...") says DIR, and no directory
 *    where it says FILE or LIST; PATH, or DIR with FILE or LIST, is either.
 *  - a [storage] section's options flagged DLG_OPT_PATH_IN (the
 *    throttle's profile) must exist.
 *  - options of a plugin built before the flags (neither set) keep the
 *    rule by name: `data` whose help declares forms, `input` whose help
 *    starts with a path ARG ("DIR or LIST: ..."), are read; `output` written.
 * Errors name the key's file:line; returns 0 or -1 with err[] filled. */
int dlg_plan_check_inputs(const dlg_plan *p, FILE *warn, char *err, size_t errlen);

/* What only a workload can tell about a built plan: its ops' check
 * (version 3) is asked about every cell, before any cell runs, in `dlgauge
 * run` and --dry-run alike.  A job none of whose cells pass fails the run
 * with the first cell's message, said at the line of the option that the
 * message starts with (dlg_msg_key_len), else at the job's section; a
 * sweep where only some cells fail warns on `warn`, naming them, and the
 * others run.  Returns 0 or -1 with err[] filled. */
int dlg_plan_check_workloads(dlg_plan *p, int verbosity, FILE *warn, char *err, size_t errlen);

/* The length of the option name a plugin's message starts with, when it
 * names one as "KEY = ...", "KEY '...'" or "KEY: ..."; else 0. */
size_t dlg_msg_key_len(const char *msg);

/* Where a message of job j's workload belongs.  error is as its host said
 * it, "CTX: msg" (ctx: the host's context); returns msg, past the context
 * (error itself where it does not start so), and fills where[] with
 * "file:line: " of the workload option msg starts with, else of the job's
 * section (an option left at its default). */
const char *dlg_job_msg_where(const dlg_job *j, const char *ctx, const char *error, char *where, size_t len);

/* What a workload is told about cell c (check and setup alike): cpus as
 * given, seed + rep, the memory limit, and the caps of the storage's
 * backend type (known from the plan, without creating the storage). */
dlg_job_info dlg_cell_job_info(const dlg_plan *p, const dlg_cell *c, int cpus, int rep);

/* Helpers shared by the plan's files. */
/* "a, b, c" as trimmed strdup'ed values; empty elements are kept. */
int dlg_list_split(const char *text, char ***out, size_t *n);
void dlg_list_free(char **v, size_t n);
/* "file:line: " of e, else of the section s. */
void dlg_plan_where(const dlg_entry *e, const dlg_section *s, char *buf, size_t len);
/* Whether paths a and b name the same file: equal once "." components and
 * repeated or trailing slashes are dropped (./data/x, data//x, data/x/),
 * or the same names below the same existing directory (device and inode:
 * data/x and /abs/data/x).  Neither needs to exist. */
bool dlg_path_same(const char *a, const char *b);
/* The file that option k of instance a (a sink) writes, where it names
 * one (DLG_OPT_PATH_OUT, set, not empty): its value, else NULL. */
const char *dlg_spec_out_path(const dlg_instance_spec *a, size_t k);
#endif
