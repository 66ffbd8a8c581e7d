#pragma once
// Asynchronous data parallelism with parameter servers (docs/model.md,
// "Asynchronous training"): d workers, each a model replica, step on their own;
// after a step a worker pushes its gradients to the S parameter servers (each
// holds 1/S of the parameters), which apply them one push at a time, and pulls
// the parameters back (Li et al. 2014, "Scaling distributed machine learning
// with the parameter server"; Dean et al. 2012, Downpour SGD). With a staleness
// bound k >= 1 the pull runs beside the next step (stale synchronous parallel,
// Ho et al. 2013): a worker may be at most k steps ahead of the slowest one.
//
// The replay runs at step granularity on the core event simulator
// (core/simulator.h: integer nanoseconds, events in time and then scheduling
// order), as the iteration simulator does. Every push goes to all S servers in equal shares and the
// servers are alike, so one server queue stands for all of them (DESIGN.md,
// "Scale"). What one step, push and pull cost comes from the iteration
// simulator; the replay adds the queueing of the d workers at the servers.
#include <map>
#include <vector>

#include "core/time.h"

namespace trainsim::exec {

struct AsyncPsInputs {
  int workers = 1;
  int staleness_bound = 0;  // k: 0 = pull before every step
  core::Time step = 0;      // one worker's forward and backward passes (all its micro-batches)
  core::Time push = 0;      // one worker's push alone on the network
  core::Time pull = 0;      // one worker's pull alone on the network
  // Per push, what one server is busy with: receiving its share through its NIC
  // and applying the update; per pull, sending the share.
  core::Time server_push = 0;
  core::Time server_pull = 0;
  std::vector<double> slowdown;  // per worker step-time factor (1 = nominal); empty: all 1
  int steps_per_worker = 64;     // replayed; the first quarter is warm-up
};

struct AsyncPsReport {
  double step_time_s = 0.0;          // mean time between two updates of one worker, steady state
  double updates_per_s = 0.0;        // all workers together
  double server_utilization = 0.0;   // busy fraction of a server's receive side, steady state
  // Staleness of an applied update: updates by other pushes applied between the
  // pull whose parameters the step used and this update.
  std::map<long long, long long> staleness;  // staleness -> updates
  double mean_staleness = 0.0;
  long long max_staleness = 0;
  long long replayed_updates = 0;
};

AsyncPsReport replay_async_ps(const AsyncPsInputs& in);

}  // namespace trainsim::exec
