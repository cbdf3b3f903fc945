// fake_cudnn_conv.cc — being written
#include "fakegpu.h"
