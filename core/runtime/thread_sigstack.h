/* The core's threads (the data loader's workers, the ticker) and the
 * crash guard's arming thread take their alternate signal stack from the
 * SDK's header, as plugins' threads do (signals.h). */
#ifndef DLG_THREAD_SIGSTACK_H
#define DLG_THREAD_SIGSTACK_H

#include <dlgauge/sigstack.h>

#endif
