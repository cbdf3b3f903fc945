// A workload written in C++ (as a team wrapping a C++ framework would):
// DLG_PLUGIN must export the entry under its C name.  Built with
// -DOLD_ENTRY, the entry is defined as an older plugin.h expanded it in
// C++, without extern "C", which the loader names.
#include <dlgauge/plugin.h>

#include <vector>

namespace {
struct Sum {
    std::vector<unsigned> v;
    unsigned long long total = 0;
};

int setup(const dlg_host *, const dlg_value *, const dlg_job_info *, void **state)
{
    *state = new Sum{std::vector<unsigned>(1000, 3u)};
    return 0;
}

int step(void *state, dlg_step *out)
{
    Sum *s = static_cast<Sum *>(state);
    for (unsigned x : s->v)
        s->total += x;
    out->items = s->v.size();
    return 0;
}

int report(void *state, const dlg_report_api *api, dlg_fields *f)
{
    api->add_int(f, "sum_total", static_cast<int64_t>(static_cast<Sum *>(state)->total));
    return 0;
}

void teardown(void *state) { delete static_cast<Sum *>(state); }

dlg_workload_ops make_ops()
{
    dlg_workload_ops o{};
    o.version = 1;
    o.unit = "items";
    o.setup = setup;
    o.step = step;
    o.report = report;
    o.teardown = teardown;
    return o;
}

const dlg_workload_ops ops = make_ops();
const dlg_metric metrics[] = {{"sum_total", DLG_FIELD_INT, "", "sum of every element of every step"},
                              {nullptr, DLG_FIELD_INT, nullptr, nullptr}};
const dlg_plugin_desc desc = {sizeof(dlg_plugin_desc), DLG_KIND_WORKLOAD, "cxxsum", "1.0",
                              "sums a std::vector each step", nullptr, metrics, &ops};
} // namespace

#ifndef OLD_ENTRY
DLG_PLUGIN("cxxsum", &desc)
#else
DLG_EXPORT const dlg_plugin_info *dlgauge_plugin_entry(void);
DLG_EXPORT const dlg_plugin_info *dlgauge_plugin_entry(void)
{
    static const dlg_plugin_desc *const items[] = {&desc, nullptr};
    static const dlg_plugin_info info = {DLG_ABI_MAJOR, DLG_ABI_MINOR, sizeof(dlg_plugin_info), "cxxsum", items};
    return &info;
}
#endif
