/* dlgauge mkdata: placeholder until the dataset generators land (core/data/synth). */
#include "cli.h"

#include <stdio.h>

int dlg_cmd_mkdata(const dlg_cli *cli, int argc, char **argv)
{
    (void)cli;
    (void)argc;
    (void)argv;
    fprintf(stderr, "dlgauge mkdata: not built yet\n");
    return DLG_EXIT_USAGE;
}
