/* Loader configuration: defaults, the shared option fragment's values, and
 * batch sizes. */
#include "loader.h"

#include <stdio.h>
#include <stdlib.h>

void dlg_loader_config_defaults(dlg_loader_config *cfg)
{
    *cfg = (dlg_loader_config){
        .data = NULL,
        .batch = 32,
        .crop = 224,
        .resize = 0,
        .train = true,
        .mean = {0.485f, 0.456f, 0.406f},
        .std = {0.229f, 0.224f, 0.225f},
        .layout = DLG_LAYOUT_NCHW,
        .dtype = DLG_LOADER_FP32,
        .threads = 1,
        .prefetch = 4,
        .seed = 0,
        .shuffle = true,
        .skip_corrupt = false,
        .decode = true,
        .cache = DLG_CACHE_NONE,
        .alloc = NULL,
    };
}

/* "a,b,c" -> three floats in [0, 1] (positive: in (0, 1]).  Pixels are
 * in 0..1 units, so a mean or std past 1 is in other units: Caffe's
 * 104,117,123 (0..255, BGR) would make every input about -450. */
static int parse3(const char *text, float out[3], bool positive)
{
    const char *p = text;
    for (int i = 0; i < 3; i++) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || !(v <= 1.0) || (positive ? !(v > 0) : !(v >= 0)))
            return -1;
        out[i] = (float)v;
        while (*end == ' ')
            end++;
        if (i < 2 && *end++ != ',')
            return -1;
        p = end;
    }
    return *p == '\0' ? 0 : -1;
}

int dlg_loader_config_from_opts(dlg_loader_config *cfg, const dlg_value *v,
                                const dlg_job_info *job, bool train_mode, const dlg_host *h)
{
    cfg->data = v[DLG_LOPT_DATA].text;
    int cpus = job && job->cpus > 0 ? job->cpus : 1;
    cfg->threads = v[DLG_LOPT_THREADS].i > 0 ? (int)v[DLG_LOPT_THREADS].i : cpus;
    cfg->prefetch = (int)v[DLG_LOPT_PREFETCH].i;
    cfg->crop = (int)v[DLG_LOPT_CROP].i;
    cfg->resize = (int)v[DLG_LOPT_RESIZE].i;
    int64_t aug = v[DLG_LOPT_AUGMENT].i; /* auto|random|center */
    cfg->train = aug == 0 ? train_mode : aug == 1;
    cfg->layout = v[DLG_LOPT_LAYOUT].i == 1 ? DLG_LAYOUT_NHWC : DLG_LAYOUT_NCHW;
    cfg->dtype = v[DLG_LOPT_INPUT_DTYPE].i == 1 ? DLG_LOADER_FP16 : DLG_LOADER_FP32;
    if (parse3(v[DLG_LOPT_MEAN].text, cfg->mean, false) < 0)
        return h->error(h, DLG_EINVAL,
                        "mean = '%s': expected three numbers in 0..1 like 0.485,0.456,0.406 "
                        "(RGB, in 0..1 units: divide 0..255 means by 255)",
                        v[DLG_LOPT_MEAN].text);
    if (parse3(v[DLG_LOPT_STD].text, cfg->std, true) < 0)
        return h->error(h, DLG_EINVAL,
                        "std = '%s': expected three numbers in (0, 1] like 0.229,0.224,0.225 "
                        "(RGB, in 0..1 units: divide 0..255 values by 255)",
                        v[DLG_LOPT_STD].text);
    cfg->shuffle = v[DLG_LOPT_SHUFFLE].i != 0;
    cfg->skip_corrupt = v[DLG_LOPT_SKIP_CORRUPT].i != 0;
    cfg->cache = dlg_cache_mode_of(v[DLG_LOPT_CACHE].i, job);
    cfg->decode = v[DLG_LOPT_DECODE].i != 0;
    cfg->seed = job ? job->seed : 0;
    return 0;
}

dlg_cache_mode dlg_cache_mode_of(int64_t value, const dlg_job_info *job)
{
    if (value == 3) /* auto */
        return DLG_JOB_HAS(job, memory_limit) && job->memory_limit > 0 ? DLG_CACHE_COLD : DLG_CACHE_NONE;
    return (dlg_cache_mode)value;
}

size_t dlg_loader_batch_bytes(const dlg_loader_config *cfg)
{
    size_t elem = cfg->dtype == DLG_LOADER_FP16 ? 2 : 4;
    return (size_t)cfg->batch * 3 * (size_t)cfg->crop * cfg->crop * elem;
}
