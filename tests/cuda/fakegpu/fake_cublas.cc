// fake_cublas.cc — being written
#include "fakegpu.h"
