/* dlgauge report: knees, bottlenecks and an instance recommendation from
 * results files (the work is in core/report). */
#include "cli.h"
#include "report.h"

int dlg_cmd_report(const dlg_cli *cli, int argc, char **argv)
{
    (void)cli;
    return rep_main(argc, argv);
}
