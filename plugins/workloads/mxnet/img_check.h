/* inception-v3 checks the first records of a RecordIO dataset at setup
 * for images it can never use: under transform = caffe, smaller than the
 * crop (Caffe takes a window of the stored image; torchvision resizes it
 * first), or, under transform = mxnet, smaller than max_crop_size's
 * window, which MXNet refuses too (an image smaller than the crop it
 * enlarges, as MXNet 1.3+ does). */
#ifndef DLG_MXNET_IMG_CHECK_H
#define DLG_MXNET_IMG_CHECK_H

#include <dlgauge/plugin.h>

/* For data = recordio:PATH: reads up to `records` records through the
 * job's storage and fails (one line naming the byte offset and size) if a
 * JPEG is narrower or lower than side, the option `name` ("crop" or
 * "max_crop_size").  Other data specs pass. */
int img_check_recordio(const dlg_host *h, const char *data, int side, const char *name,
                       int records);

#endif
