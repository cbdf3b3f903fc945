// fake_cudnn_rnn.cc — being written
#include "fakegpu.h"
