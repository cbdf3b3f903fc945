// fake_runtime.cc — being written
#include "fakegpu.h"
