/* Result rows read back from dlgauge's CSV and JSONL files: tags and
 * fields by name, with the file and line each row came from. */
#ifndef DLG_REPORT_ROWS_H
#define DLG_REPORT_ROWS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct rep_kv {
    char *key;
    char *str;   /* text as written (numbers too) */
    double num;  /* valid when is_num */
    bool is_num;
} rep_kv;

typedef struct rep_row {
    const char *src; /* file name (owned by rep_rows.files) */
    long line;       /* 1-based line in src */
    rep_kv *tags;
    size_t ntags;
    rep_kv *fields;
    size_t nfields;
} rep_row;

/* One dlgauge_host point (JSONL only): the inventory of a run. */
typedef struct rep_host {
    char *run_id, *host, *cpu_model, *version;
    double cpus_online, mem_total_bytes;
} rep_host;

typedef struct rep_rows {
    rep_row *v;
    size_t n, cap;
    char **files;
    size_t nfiles;
    rep_host *hosts;
    size_t nhosts;
    char **warnings; /* one line each ("FILE: record N: ..."): what was skipped */
    size_t nwarnings;
} rep_rows;

/* How rows and messages name results read from standard input ("-"). */
#define REP_STDIN_NAME "standard input"

/* Reads one results file (CSV or JSONL, by content; "-": standard input,
 * once per process) and appends its dlgauge_result rows.  Returns 0 or a negative DLG_E* code with a one-line
 * message ("FILE:LINE: ...") in err.  A row cut short by a crash is
 * skipped with a line in rs->warnings; a file left with no row is an error. */
int rep_read_file(rep_rows *rs, const char *path, char *err, size_t errlen);
int rep_read_csv(rep_rows *rs, const char *path, const char *src, char *err, size_t errlen);
int rep_read_jsonl(rep_rows *rs, const char *path, const char *src, char *err, size_t errlen);
/* Whether the row carries figures: ok, or partial (a run stopped mid-cell)
 * with a repetition measured; a partial row stopped before its first
 * repetition has no throughput and counts as a failed one. */
bool rep_row_measured(const rep_row *r);
/* Checks what the model needs: required columns and one dlgauge version. */
int rep_rows_validate(const rep_rows *rs, char *err, size_t errlen);
void rep_rows_free(rep_rows *rs);

/* Internal to the readers: appends a warning line; 0 or -1 (out of memory). */
int rep_rows_warn(rep_rows *rs, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Internal to the readers: a new empty row for src at line, or NULL. */
rep_row *rep_rows_add(rep_rows *rs, const char *src, long line);
const char *rep_rows_add_file(rep_rows *rs, const char *path);
/* Appends key=value to a row's tags or fields; numbers are recognised in
 * fields only (tags stay text).  Returns 0 or -1 (out of memory). */
int rep_row_put(rep_row *r, bool tag, const char *key, const char *val);
int rep_row_put_num(rep_row *r, const char *key, double v, const char *text);

/* Next "key=value" of a `config`-style field (space-separated, spaces and
 * backslashes in values escaped with a backslash), unescaped into key and
 * val; advances *p.  False at the end. */
bool rep_config_next(const char **p, char *key, size_t klen, char *val, size_t vlen);
/* Whether cfg (may be NULL) says key=val, the key whole: a wrapped
 * storage's inner.type=throttle is not type=throttle. */
bool rep_config_has(const char *cfg, const char *key, const char *val);

const char *rep_tag(const rep_row *r, const char *key);
/* A tag, else a text field, else NULL. */
const char *rep_str(const rep_row *r, const char *key);
bool rep_num(const rep_row *r, const char *key, double *out);

#endif
