/* MXNet's ImageRecordIter refuses images smaller than data_shape; the
 * input pipeline would upscale them silently.  inception-v3 checks the
 * first records of a RecordIO dataset at setup instead. */
#ifndef DLG_MXNET_IMG_CHECK_H
#define DLG_MXNET_IMG_CHECK_H

#include <dlgauge/plugin.h>

/* For data = recordio:PATH: reads up to `records` records through the
 * job's storage and fails (one line naming the byte offset and size) if a
 * JPEG is narrower or lower than crop.  Other data specs pass. */
int img_check_recordio(const dlg_host *h, const char *data, int crop, int records);

#endif
