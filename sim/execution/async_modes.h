#pragma once
// The asynchronous training modes on top of one simulated worker iteration
// (docs/model.md, "Asynchronous training").
#include <optional>

#include "core/time.h"
#include "execution/async_replay.h"

namespace trainsim::exec {

struct AsyncPsResult {
  AsyncPsInputs inputs;  // what the replay was given (step, push, pull, server times)
  AsyncPsReport report;
  double server_bandwidth = 0.0;        // B/s of one server's NIC(s)
  double bytes_per_server_push = 0.0;   // one worker's push, to one server
  double bytes_per_server_pull = 0.0;
  core::Time server_update = 0;         // applying one push to a server's shard
};

struct LocalSgdResult {
  int sync_period = 1;
  core::Time plain_step = 0;     // a step without averaging (one iteration)
  core::Time averaged_step = 0;  // a step that ends with the parameter average
};

// Mean time per iteration: d worker steps for async_ps (the global batch), and
// ((H - 1) plain + averaged) / H for local SGD.
struct AsyncModes {
  std::optional<AsyncPsResult> async_ps;
  std::optional<LocalSgdResult> local_sgd;
  [[nodiscard]] std::optional<double> iteration_time_s(int workers) const;
};

}  // namespace trainsim::exec
