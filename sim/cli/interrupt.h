#pragma once
// Graceful interruption of long commands (docs/sweep.md, "Resuming"): while an
// InterruptGuard lives, SIGINT, SIGTERM and SIGUSR1 (which mpirun forwards to
// every rank without ending them) only record that they came, so the
// command can stop taking new work, finish what is running and write what is
// done; a second signal ends the process at once, as it would have without the
// guard.
#include <string>

namespace trainsim::cli {

class InterruptGuard {
 public:
  InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
  ~InterruptGuard();  // restores the handlers it replaced

  // The signal that came (SIGINT, SIGTERM, SIGUSR1), 0 while none has.
  [[nodiscard]] static int signal();
  // "SIGINT", "SIGTERM" or "SIGUSR1".
  [[nodiscard]] static std::string name(int signal);
  // The exit status of a command stopped by `signal`: 128 + its number, as a
  // shell reports a process the signal ended (130, 143, 138).
  [[nodiscard]] static int exit_status(int signal) { return 128 + signal; }
};

}  // namespace trainsim::cli
