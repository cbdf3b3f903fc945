/* The diag plugin: diagnostic workloads that check the machine (stream)
 * and the runner's own timing (sleep). */
#include "diag.h"

DLG_PLUGIN("diag", &stream_desc, &sleep_desc, &noop_desc)
