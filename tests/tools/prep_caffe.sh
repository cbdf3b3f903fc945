# BVLC's dataset flow through the real CLI, one run of two jobs: mkdata
# images -> preprocess (convert_imageset --resize_width/--resize_height into
# LMDB, with compute_image_mean's mean image) -> AlexNet training with that
# mean_file, which needs every image stored at the mean's size (tests/data
# covers the loader's refusal of other sizes).
#   bash prep_caffe.sh DLGAUGE PLUGIN_DIR TEST_PLUGIN_DIR WORK_DIR
. "$(dirname "$0")/../e2e/lib.sh"
. "$E2E/prep_run.sh"

S=72 # AlexNet needs a crop of 67 at least
run_cli mkdata mkdata images --out data --classes 2 --images 8 --seed 3 --threads 1
expect_rc mkdata 0

prep_ini run.ini exact <<EOT
resize_width = $S
resize_height = $S
mean_output = mean.binaryproto
threads = 2
iterations = 8
warmup = 0
[job caffe]
workload = alexnet
mode = train
data = lmdb:db
mean_file = mean.binaryproto
pixel_range = 255
channel_order = bgr
std = 1,1,1
crop = 67
classes = 2
batch = 1
device = cpu
winograd = false
iterations = 2
warmup = 0
EOT
run_cli run -q run run.ini
expect_rc run 0
[ "$(field exact passes)" = 1 ] || fail "preprocess: passes $(field exact passes), expected 1"
# 1 x 3 x 72 x 72 packed floats after 12 bytes of shape and length
size=$(stat -c %s mean.binaryproto 2>/dev/null || echo 0)
[ "$size" = $((3 * S * S * 4 + 12)) ] || fail "mean.binaryproto: $size bytes, expected $((3 * S * S * 4 + 12))"
[ ! -e mean.binaryproto.part ] || fail "mean.binaryproto.part left behind"
[ "$(field caffe items)" = 2 ] || fail "caffe: items $(field caffe items), expected 2"
[ "$(field caffe data_source)" = lmdb ] || fail "caffe: data_source $(field caffe data_source)"
finish
