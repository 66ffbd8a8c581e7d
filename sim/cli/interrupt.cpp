#include "cli/interrupt.h"

#include <atomic>
#include <csignal>

namespace trainsim::cli {

namespace {

std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the handler may only touch lock-free atomics");

struct sigaction g_previous_int {};
struct sigaction g_previous_term {};
struct sigaction g_previous_usr1 {};

extern "C" void on_signal(int signal) {
  int expected = 0;
  if (g_signal.compare_exchange_strong(expected, signal)) return;
  // The second signal: the default action, now.
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

}  // namespace

InterruptGuard::InterruptGuard() {
  g_signal = 0;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, &g_previous_int);
  sigaction(SIGTERM, &action, &g_previous_term);
  sigaction(SIGUSR1, &action, &g_previous_usr1);
}

InterruptGuard::~InterruptGuard() {
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
  sigaction(SIGUSR1, &g_previous_usr1, nullptr);
}

int InterruptGuard::signal() { return g_signal.load(); }

std::string InterruptGuard::name(int signal) {
  switch (signal) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGUSR1: return "SIGUSR1";
    default: return "signal " + std::to_string(signal);
  }
}

}  // namespace trainsim::cli
