/* dlgauge compare: two result sets cell by cell, with significance and a
 * regression gate (the work is in core/report/compare*.c). */
#include "cli.h"
#include "compare.h"

int dlg_cmd_compare(const dlg_cli *cli, int argc, char **argv)
{
    (void)cli;
    return rep_compare_main(argc, argv);
}
