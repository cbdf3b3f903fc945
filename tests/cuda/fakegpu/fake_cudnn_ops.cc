// fake_cudnn_ops.cc — being written
#include "fakegpu.h"
