/* The tools plugin: raw storage reads (io), the input pipeline against
 * emulated compute (io-pipeline) and dataset preprocessing (preprocess). */
#include "tools.h"

DLG_PLUGIN("tools", &io_desc, &iopipe_desc, &preprocess_desc)
