#include "execution/executor.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <unordered_map>
#include <string>
#include <utility>

namespace trainsim::exec {

namespace {

using workload::Task;
using workload::TaskGraph;
using workload::TaskId;

struct Lane {
  std::vector<TaskId> order;
  std::size_t head = 0;
  bool busy = false;
  // Host dispatch (docs/model.md, "Host dispatch"): when the host thread has issued
  // the task at `issued` (an index into `order`), and the iteration it is issuing.
  core::Time host_clock = 0;
  std::size_t issued = static_cast<std::size_t>(-1);
  int host_iteration = 0;
  bool waking = false;  // a wake-up at host_clock is scheduled
};

// The mutable state of one run; lives on Executor::run's stack.
class Run {
 public:
  Run(const TaskGraph& graph, core::Simulator& sim, const hw::ComputeModel& compute,
      net::CommunicationBackend& network, hw::Precision precision, const std::map<int, double>& slowdown,
      core::Progress* progress)
      : graph_(graph), sim_(sim), compute_(compute), network_(network), precision_(precision), slowdown_(slowdown),
        progress_(progress) {
    const std::size_t n = graph.size();
    remaining_.resize(n);
    lane_of_.resize(n);
    start_.assign(n, -1);
    finished_.assign(n, false);
    timeline_.spans.reserve(n);
    // Two passes over the tasks (they are large, so each pass costs a sweep of
    // memory): the first counts, the second fills. Lanes are numbered in order
    // of first appearance; a flat (rank, stream) table finds them (ranks are
    // small integers, offset by the least). Dependents are kept in compressed
    // rows (the same order as pushing them one by one).
    int min_rank = n > 0 ? graph[0].rank : 0;
    int max_rank = min_rank;
    dependents_begin_.assign(n + 1, 0);
    std::size_t instances = 0;
    for (const Task& t : graph.tasks()) {
      min_rank = std::min(min_rank, t.rank);
      max_rank = std::max(max_rank, t.rank);
      for (TaskId d : t.deps) ++dependents_begin_[d + 1];
      if (t.collective_instance >= 0) ++instances;
    }
    for (std::size_t i = 0; i < n; ++i) dependents_begin_[i + 1] += dependents_begin_[i];
    dependents_.resize(dependents_begin_[n]);
    std::vector<std::size_t> fill(dependents_begin_.begin(), dependents_begin_.end() - 1);
    constexpr auto kStreams = static_cast<std::size_t>(workload::kNumStreams);
    std::vector<std::int32_t> lane_index(
        (static_cast<std::size_t>(static_cast<long long>(max_rank) - min_rank) + 1) * kStreams, -1);
    instances_.reserve(instances);
    // What starting each task needs, priced once here in graph order: the run
    // then reads these few bytes per task instead of the task itself (tasks are
    // large and start in an order far from the graph's).
    launch_.resize(n);
    for (TaskId id = 0; id < n; ++id) {
      const Task& t = graph[id];
      remaining_[id] = t.deps.size();
      for (TaskId d : t.deps) dependents_[fill[d]++] = id;
      std::int32_t& lane = lane_index[static_cast<std::size_t>(static_cast<long long>(t.rank) - min_rank) * kStreams +
                                      static_cast<std::size_t>(t.stream)];
      if (lane < 0) {
        lane = static_cast<std::int32_t>(lanes_.size());
        lanes_.emplace_back();
      }
      lane_of_[id] = static_cast<std::size_t>(lane);
      lanes_[static_cast<std::size_t>(lane)].order.push_back(id);
      if (t.collective_instance >= 0) instances_[t.collective_instance].members.push_back(id);
      Launch& l = launch_[id];
      l.collective = t.collective.has_value();
      l.instance = t.collective_instance;
      l.iteration = t.iteration;
      if (l.collective) continue;
      const auto slow = slowdown_.find(t.rank);
      const double factor = slow == slowdown_.end() ? 1.0 : 1.0 + slow->second;
      l.duration = core::from_seconds(compute_.seconds(t.compute, precision_) * factor);
      l.host_s = compute_.host_seconds(t.compute);
    }
    // Runs of compute tasks a lane can run back to back as one event: the next
    // task has no dependencies and is issued at once, and the one before it has
    // no dependents (docs/architecture.md, "Engine speed").
    chain_next_.assign(n, kNoTask);
    for (const Lane& lane : lanes_)
      for (std::size_t k = 0; k + 1 < lane.order.size(); ++k) {
        const TaskId a = lane.order[k];
        const TaskId b = lane.order[k + 1];
        const Launch& la = launch_[a];
        const Launch& lb = launch_[b];
        if (la.collective || lb.collective || la.host_s > 0.0 || lb.host_s > 0.0) continue;
        if (remaining_[b] != 0 || dependents_begin_[a] != dependents_begin_[a + 1]) continue;
        chain_next_[a] = b;
      }
  }

  Timeline execute() {
    for (std::size_t l = 0; l < lanes_.size(); ++l) try_start(l);
    sim_.run();
    for (TaskId id = 0; id < graph_.size(); ++id)
      if (!finished_[id])
        throw std::logic_error("task graph deadlocked: task '" + graph_[id].name + "' on rank " +
                               std::to_string(graph_[id].rank) + " never ran");
    timeline_.makespan = sim_.now();
    return std::move(timeline_);
  }

 private:
  struct Instance {
    std::vector<TaskId> members;
    std::size_t arrived = 0;
  };
  // A task as the run starts it (the constructor fills these from the graph).
  struct Launch {
    core::Time duration = 0;  // compute tasks: the kernel's time, with the rank's slowdown
    double host_s = 0.0;      // compute tasks: the host's time to issue it (ComputeModel::host_seconds)
    std::int64_t instance = -1;
    int iteration = 0;
    bool collective = false;
  };

  void try_start(std::size_t lane_id) {
    Lane& lane = lanes_[lane_id];
    if (lane.busy || lane.head == lane.order.size()) return;
    const TaskId id = lane.order[lane.head];
    if (remaining_[id] > 0) return;
    const Launch& t = launch_[id];
    if (!t.collective && !issued_by_host(lane_id, t)) return;
    lane.busy = true;
    if (!t.collective) {
      core::Time at = sim_.now();
      TaskId last = id;
      for (TaskId k = id;; k = chain_next_[k]) {
        start_[k] = at;
        at += launch_[k].duration;
        last = k;
        if (chain_next_[k] == kNoTask) break;
      }
      sim_.schedule_at(at, [this, id, last] { finish_chain(id, last); });
      return;
    }
    if (t.instance < 0) {
      launch_collective(id);
      return;
    }
    Instance& inst = instances_[t.instance];
    if (++inst.arrived == inst.members.size()) launch_collective(inst.members);
  }

  // Whether the host thread has issued the lane's head task by now (a kernel the
  // framework dispatches one by one: ComputeModel::host_seconds > 0). The host
  // issues in lane order, each task host_seconds after the one before it, without
  // waiting for the GPU, except at an iteration's start: the step synchronizes
  // with the device, so the next step's first kernel is issued after the GPU has
  // run the last one. If not yet issued, wakes the lane when it is.
  bool issued_by_host(std::size_t lane_id, const Launch& t) {
    const double host_s = t.host_s;
    if (host_s <= 0.0) return true;
    Lane& lane = lanes_[lane_id];
    if (lane.issued != lane.head) {
      if (t.iteration != lane.host_iteration) {
        lane.host_clock = std::max(lane.host_clock, sim_.now());
        lane.host_iteration = t.iteration;
      }
      lane.host_clock += core::from_seconds(host_s);
      lane.issued = lane.head;
    }
    if (sim_.now() >= lane.host_clock) return true;
    if (!lane.waking) {
      lane.waking = true;
      sim_.schedule_after(lane.host_clock - sim_.now(), [this, lane_id] {
        lanes_[lane_id].waking = false;
        try_start(lane_id);
      });
    }
    return false;
  }

  // A collective of one task, or of an instance's members (which outlive the run's events).
  void launch_collective(TaskId id) {
    start_[id] = sim_.now();
    network_.start(*graph_[id].collective, sim_, [this, id] { finish(id); });
  }
  void launch_collective(const std::vector<TaskId>& members) {
    for (TaskId m : members) start_[m] = sim_.now();
    const net::Collective& c = *graph_[members.front()].collective;
    network_.start(c, sim_, [this, &members] {
      for (TaskId m : members) finish(m);
    });
  }

  // A chain's tasks (finish() for the last one).
  void finish_chain(TaskId first, TaskId last) {
    for (TaskId k = first; k != last; k = chain_next_[k]) {
      finished_[k] = true;
      timeline_.spans.push_back({k, start_[k], start_[chain_next_[k]]});
      ++lanes_[lane_of_[k]].head;
      if (progress_ != nullptr) progress_->advance();
    }
    finish(last);
  }

  void finish(TaskId id) {
    finished_[id] = true;
    timeline_.spans.push_back({id, start_[id], sim_.now()});
    Lane& lane = lanes_[lane_of_[id]];
    lane.busy = false;
    ++lane.head;
    try_start(lane_of_[id]);
    for (std::size_t k = dependents_begin_[id]; k < dependents_begin_[id + 1]; ++k) {
      const TaskId d = dependents_[k];
      if (--remaining_[d] == 0) try_start(lane_of_[d]);
    }
    if (progress_ != nullptr) progress_->advance();
  }

  const TaskGraph& graph_;
  core::Simulator& sim_;
  const hw::ComputeModel& compute_;
  net::CommunicationBackend& network_;
  hw::Precision precision_;
  const std::map<int, double>& slowdown_;
  core::Progress* progress_;
  std::vector<std::size_t> remaining_;
  std::vector<std::size_t> dependents_begin_;  // task id -> its first entry in dependents_
  std::vector<TaskId> dependents_;
  std::vector<std::size_t> lane_of_;
  std::vector<core::Time> start_;
  std::vector<bool> finished_;
  std::vector<Lane> lanes_;
  std::vector<Launch> launch_;  // by task id
  static constexpr TaskId kNoTask = static_cast<TaskId>(-1);
  std::vector<TaskId> chain_next_;  // by task id: the next task of its chain, or kNoTask
  std::unordered_map<std::int64_t, Instance> instances_;  // elements stay put: events hold their members
  Timeline timeline_;
};

}  // namespace

Timeline Executor::run(const workload::TaskGraph& graph, core::Simulator& sim, core::Progress* progress) {
  Run state(graph, sim, compute_, network_, precision_, slowdown_, progress);
  return state.execute();
}

}  // namespace trainsim::exec
