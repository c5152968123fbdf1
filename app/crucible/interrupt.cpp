#include "app/crucible/interrupt.h"

#include <pthread.h>

#include <csignal>
#include <thread>

namespace crucible::cli {

std::stop_source& interruptSource() {
  static std::stop_source source;
  return source;
}

void watchForInterrupt() {
  static sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([] {
    int signal = 0;
    if (sigwait(&set, &signal) == 0) interruptSource().request_stop();
  }).detach();
}

}  // namespace crucible::cli
