// fake_cudnn_core.cc — being written
#include "fakegpu.h"
