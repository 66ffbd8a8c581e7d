#include "execution/executor.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
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
  std::uint32_t rank_index = 0;  // its rank less the graph's least rank
  std::uint32_t pool = 0;        // its rank's hardware (Executor::PoolHardware)
  // The compute chain it runs, when it runs one (docs/model.md, "Compute beside
  // communication"): from `head`, its last task and the task running at the last
  // retiming (indices into `order`), when it ends, whether its kernels' times were
  // scaled by their factors beside a collective, and a generation that tells the
  // chain's current end event from superseded ones.
  bool computing = false;
  bool beside = false;
  std::uint64_t generation = 0;
  std::size_t chain_cursor = 0;
  std::size_t chain_last = 0;
  core::Time chain_end = 0;
};

// The mutable state of one run; lives on Executor::run's stack.
class Run {
 public:
  Run(const TaskGraph& graph, core::Simulator& sim, std::vector<Executor::PoolHardware> pools,
      const std::map<int, int>& rank_pool, net::CommunicationBackend& network, hw::Precision precision,
      const std::map<int, double>& slowdown, int gpus_per_node, core::Progress* progress)
      : graph_(graph), sim_(sim), pools_(std::move(pools)), network_(network), precision_(precision),
        slowdown_(slowdown), gpus_per_node_(gpus_per_node), progress_(progress) {
    const std::size_t n = graph.size();
    slot_.resize(n + 1);
    for (const Executor::PoolHardware& h : pools_) any_overlap_ = any_overlap_ || h.overlap.any();
    // Which works are collectives, in one pass over them: the tasks then read
    // this small table instead of their works (one table per pool of hardware).
    priced_.resize(pools_.size());
    for (std::vector<Priced>& table : priced_) {
      table.resize(graph.works().size());
      for (std::size_t w = 0; w < table.size(); ++w) table[w].collective = graph.works()[w].collective.has_value();
    }
    timeline_.spans.reserve(n);
    // Two passes over the tasks: the first counts, the second fills. Lanes are
    // numbered in order of first appearance; a flat (rank, stream) table finds
    // them (ranks are small integers, offset by the least). Dependents are kept
    // in compressed rows (the same order as pushing them one by one).
    int min_rank = n > 0 ? graph[0].rank : 0;
    int max_rank = min_rank;
    for (const Task& t : graph.tasks()) {
      min_rank = std::min(min_rank, t.rank);
      max_rank = std::max(max_rank, t.rank);
      for (TaskId d : t.deps) ++slot_[d + 1].dependents;
    }
    min_rank_ = min_rank;
    // Slot i holds task i - 1's count: summed up to it, task i's first entry.
    std::uint64_t entries = 0;
    for (std::size_t i = 0; i <= n; ++i) {
      entries += slot_[i].dependents;
      if (entries > std::numeric_limits<std::uint32_t>::max())
        throw std::length_error("Executor: the task graph has 2^32 dependencies or more");
      slot_[i].dependents = static_cast<std::uint32_t>(entries);
    }
    dependents_.resize(entries);
    constexpr auto kStreams = static_cast<std::size_t>(workload::kNumStreams);
    std::vector<std::int32_t> lane_index(
        (static_cast<std::size_t>(static_cast<long long>(max_rank) - min_rank) + 1) * kStreams, -1);
    for (TaskId id = 0; id < n; ++id) {
      const Task& t = graph[id];
      Slot& slot = slot_[id];
      slot.remaining = static_cast<std::uint32_t>(t.deps.size());
      // Slot d's first entry serves as its fill cursor (moved back below).
      for (TaskId d : t.deps) dependents_[slot_[d].dependents++] = id;
      std::int32_t& lane = lane_index[static_cast<std::size_t>(static_cast<long long>(t.rank) - min_rank) * kStreams +
                                      static_cast<std::size_t>(t.stream)];
      if (lane < 0) {
        lane = static_cast<std::int32_t>(lanes_.size());
        lanes_.emplace_back();
        lanes_.back().rank_index = static_cast<std::uint32_t>(static_cast<long long>(t.rank) - min_rank);
        const auto pool = rank_pool.find(t.rank);
        lanes_.back().pool = pool == rank_pool.end() ? 0U : static_cast<std::uint32_t>(pool->second);
      }
      slot.lane = static_cast<std::uint32_t>(lane);
      lanes_[static_cast<std::size_t>(lane)].order.push_back(id);
      const Priced& p = priced(t.work, lanes_[static_cast<std::size_t>(lane)].pool);
      slot.collective = p.collective;
      if (slot.collective) {
        slot.comm = {t.work, -1};
        slot.copy_engine = graph.works()[t.work].collective->copy_engine;
        continue;
      }
      slot.unscaled = graph.works()[t.work].host.has_value() || graph.works()[t.work].measured_seconds.has_value();
      const auto slow = slowdown_.find(t.rank);
      const double factor = slow == slowdown_.end() || slot.unscaled ? 1.0 : 1.0 + slow->second;
      slot.duration = core::from_seconds(p.seconds * factor);
      slot.memory_bound = graph.works()[t.work].compute.kind == hw::KernelClass::kMemoryBound;
      slot.host = p.host_s > 0.0;
    }
    // Shared collectives: the graph's instances numbered 0, 1, ... in order of
    // first member, each member's slot naming its own.
    std::unordered_map<std::int64_t, std::int32_t> index;
    for (const workload::TaskGraph::SharedCollective& sc : graph.shared_collectives()) {
      const auto [it, added] = index.try_emplace(sc.instance, static_cast<std::int32_t>(instances_.size()));
      if (added) instances_.emplace_back();
      instances_[static_cast<std::size_t>(it->second)].members.push_back(sc.task);
      slot_[sc.task].comm.instance = it->second;
    }
    // Each cursor ended at the next slot's first entry: move them back one slot.
    for (std::size_t i = n; i-- > 1;) slot_[i].dependents = slot_[i - 1].dependents;
    if (n > 0) slot_[0].dependents = 0;
    if (any_overlap_) {
      inflight_.assign(static_cast<std::size_t>(static_cast<long long>(max_rank) - min_rank) + 1, 0);
      rank_lanes_.resize(inflight_.size());
      for (std::size_t l = 0; l < lanes_.size(); ++l) rank_lanes_[lanes_[l].rank_index].push_back(l);
    }
    // Runs of compute tasks a lane can run back to back as one event: the next
    // task has no dependencies and is issued at once, and the one before it has
    // no dependents (docs/architecture.md, "Engine speed").
    for (const Lane& lane : lanes_)
      for (std::size_t k = 0; k + 1 < lane.order.size(); ++k) {
        const TaskId a = lane.order[k];
        const TaskId b = lane.order[k + 1];
        const Slot& sa = slot_[a];
        const Slot& sb = slot_[b];
        if (sa.collective || sb.collective || sa.host || sb.host) continue;
        if (sb.remaining != 0 || sa.dependents != slot_[a + 1].dependents) continue;
        slot_[a].chained = true;
      }
  }

  Timeline execute() {
    for (std::size_t l = 0; l < lanes_.size(); ++l) try_start(l);
    sim_.run();
    // Every task ran, or a dependency cycle (a bug in the graph) left some waiting:
    // counted as they finish, searched only then.
    for (TaskId id = 0; finished_ != graph_.size() && id < graph_.size(); ++id)
      if (!slot_[id].finished)
        throw std::logic_error("task graph deadlocked: task '" + graph_.work(id).name + "' on rank " +
                               std::to_string(graph_[id].rank) + " never ran");
    // The last task's end: a retimed chain's superseded end event may fire after it.
    timeline_.makespan = last_finish_;
    return std::move(timeline_);
  }

 private:
  struct Instance {
    std::vector<TaskId> members;
    std::size_t arrived = 0;
  };
  // A task's state in the run, the fields every task's start and finish read
  // kept together (one record, not an entry in each of several arrays: the run
  // visits tasks in an order far from the graph's). One more record than tasks
  // ends the last one's dependents. Host-dispatched kernels read the rest from
  // their task.
  struct Slot {
    core::Time start = -1;
    // Compute tasks: the kernel's time, with the rank's slowdown. Collectives: their
    // work and their shared instance (an index into instances_, -1: none), read
    // here rather than from the graph (one record the run touches instead of two).
    struct CollectiveRef {
      workload::WorkId work;
      std::int32_t instance;
    };
    union {
      core::Time duration = 0;
      CollectiveRef comm;
    };
    std::uint32_t dependents = 0;  // its first entry in dependents_; the next slot's ends them
    std::uint32_t remaining = 0;   // dependencies not yet finished
    std::uint32_t lane = 0;
    // Flags in one byte: a slot is 32 bytes, so a cache line holds two whole ones.
    bool chained : 1 = false;     // the lane's next task runs right after it, in one event with it
    bool collective : 1 = false;
    bool host : 1 = false;  // issued by the host thread (Priced::host_s > 0)
    bool finished : 1 = false;
    bool memory_bound : 1 = false;  // compute tasks: beside a collective at the memory-bound factor, else tensor_core
    bool copy_engine : 1 = false;   // collectives: on the copy engines, slowing no compute (net::Collective)
    // Host work (workload::HostWork: a copy engine's or the CPU's) and measured kernels
    // (Work::measured_seconds, their time as measured): no overlap factor, no rank slowdown.
    bool unscaled : 1 = false;
  };
  static_assert(sizeof(Slot) == 32);
  // A work's costs, a compute work's priced once for all the tasks that repeat
  // it (when its first task is read).
  struct Priced {
    double seconds = -1.0;  // ComputeModel::seconds; < 0: not yet priced
    double host_s = 0.0;    // ComputeModel::host_seconds
    bool collective = false;
  };
  const Priced& priced(workload::WorkId id, std::uint32_t pool) {
    Priced& p = priced_[pool][id];
    if (!p.collective && p.seconds < 0.0) {
      const workload::Work& w = graph_.works()[id];
      if (w.host) {
        p.seconds = host_work_seconds(*w.host, pools_[pool].host);
        return p;
      }
      p.seconds = w.measured_seconds ? *w.measured_seconds : pools_[pool].compute->seconds(w.compute, precision_);
      p.host_s = pools_[pool].compute->host_seconds(w.compute);
    }
    return p;
  }

  void try_start(std::size_t lane_id) {
    Lane& lane = lanes_[lane_id];
    if (lane.busy || lane.head == lane.order.size()) return;
    const TaskId id = lane.order[lane.head];
    const Slot& t = slot_[id];
    if (t.remaining > 0) return;
    if (t.host && !issued_by_host(lane_id, graph_[id])) return;
    lane.busy = true;
    if (!t.collective) {
      start_chain(lane_id);
      return;
    }
    const std::int64_t instance = t.comm.instance;
    // The lane's next task is read when this one ends: fetch its record meanwhile.
    if (lane.head + 1 < lane.order.size()) __builtin_prefetch(&slot_[lane.order[lane.head + 1]]);
    if (instance < 0) {
      launch_collective(id);
      return;
    }
    Instance& inst = instances_[static_cast<std::size_t>(instance)];
    if (++inst.arrived == inst.members.size()) launch_collective(inst.members);
  }

  // Whether the host thread has issued the lane's head task by now (a kernel the
  // framework dispatches one by one: ComputeModel::host_seconds > 0). The host
  // issues in lane order, each task host_seconds after the one before it, without
  // waiting for the GPU, except at an iteration's start: the step synchronizes
  // with the device, so the next step's first kernel is issued after the GPU has
  // run the last one. If not yet issued, wakes the lane when it is.
  bool issued_by_host(std::size_t lane_id, const Task& t) {
    Lane& lane = lanes_[lane_id];
    if (lane.issued != lane.head) {
      if (t.iteration != lane.host_iteration) {
        lane.host_clock = std::max(lane.host_clock, sim_.now());
        lane.host_iteration = t.iteration;
      }
      lane.host_clock += core::from_seconds(priced_[lane.pool][t.work].host_s);
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

  // The compute task at the lane's head and the chain behind it, back to back, each
  // kernel's time scaled by its factor while its rank has a collective in flight;
  // one event at the chain's end.
  void start_chain(std::size_t lane_id) {
    Lane& lane = lanes_[lane_id];
    const bool beside = any_overlap_ && inflight_[lane.rank_index] > 0;
    core::Time at = sim_.now();
    std::size_t last = lane.head;
    for (;; ++last) {
      Slot& sk = slot_[lane.order[last]];
      sk.start = at;
      at += scaled(sk, beside);
      if (!sk.chained) break;
    }
    // The lane's task after the chain is read when the chain ends: fetch its record meanwhile.
    if (last + 1 < lane.order.size()) __builtin_prefetch(&slot_[lane.order[last + 1]]);
    lane.computing = true;
    lane.beside = beside;
    lane.chain_cursor = lane.head;
    lane.chain_last = last;
    lane.chain_end = at;
    schedule_chain_end(lane_id);
  }

  // A slot's task's rank, from its lane.
  int rank_of(const Slot& s) const { return static_cast<int>(lanes_[s.lane].rank_index) + min_rank_; }

  // A compute task's factor beside a collective, by its kernel class (a host copy
  // runs on a copy engine, a measured kernel took its measured time: 1).
  double beside_factor(const Slot& s) const {
    const Executor::OverlapFactors& o = pools_[lanes_[s.lane].pool].overlap;
    return s.unscaled ? 1.0 : s.memory_bound ? o.memory_bound : o.tensor_core;
  }

  // A copy: bytes / the link's rate per GPU in its direction; a CPU Adam update:
  // parameters / the host's rate, shared by the node's GPUs (hw::HostSpec).
  double host_work_seconds(const workload::HostWork& w, const hw::HostSpec& host) const {
    using Kind = workload::HostWork::Kind;
    const double rate = w.kind == Kind::kToHost     ? host.device_to_host_per_gpu()
                        : w.kind == Kind::kToDevice ? host.host_to_device_per_gpu()
                                                    : host.cpu_adam_rate / gpus_per_node_;
    if (!(rate > 0.0)) throw std::logic_error("Executor: host work without the host's rate");
    return w.amount / rate;
  }

  // A compute task's time, beside a collective or not.
  core::Time scaled(const Slot& s, bool beside) const {
    const double f = beside ? beside_factor(s) : 1.0;
    return f == 1.0 ? s.duration : static_cast<core::Time>(std::llround(static_cast<double>(s.duration) * f));
  }

  void schedule_chain_end(std::size_t lane_id) {
    Lane& lane = lanes_[lane_id];
    const std::uint64_t generation = ++lane.generation;
    sim_.schedule_at(lane.chain_end, [this, lane_id, generation] {
      Lane& l = lanes_[lane_id];
      if (l.generation != generation) return;  // retimed since: a later event ends it
      l.computing = false;
      finish_chain(l);
    });
  }

  // A collective on a rank starts (+1) or ends (-1). When the rank's count of
  // collectives in flight turns positive or returns to zero, its running compute
  // chains are retimed, beside a collective or not, each kernel at its own class's
  // factor (docs/model.md, "Compute beside communication").
  void collectives_in_flight(std::uint32_t rank_index, int delta) {
    int& count = inflight_[rank_index];
    const bool before = count > 0;
    count += delta;
    if (before == (count > 0)) return;
    for (std::size_t l : rank_lanes_[rank_index])
      if (lanes_[l].computing) retime(l, count > 0);
  }

  // The running chain from now on beside a collective or not: the kernel running
  // now keeps the work it has done and does the rest at its new factor, the
  // kernels after it start anew.
  void retime(std::size_t lane_id, bool beside) {
    Lane& lane = lanes_[lane_id];
    if (lane.beside == beside) return;
    const core::Time now = sim_.now();
    const auto& order = lane.order;
    std::size_t k = lane.chain_cursor;
    while (k != lane.chain_last && slot_[order[k + 1]].start <= now) ++k;
    lane.chain_cursor = k;
    const core::Time end = k == lane.chain_last ? lane.chain_end : slot_[order[k + 1]].start;
    const double f = beside_factor(slot_[order[k]]);
    const double ratio = beside ? f : 1.0 / f;
    core::Time at = now + static_cast<core::Time>(std::llround(static_cast<double>(end - now) * ratio));
    while (k != lane.chain_last) {
      Slot& sk = slot_[order[++k]];
      sk.start = at;
      at += scaled(sk, beside);
    }
    lane.beside = beside;
    lane.chain_end = at;
    schedule_chain_end(lane_id);
  }

  // A collective of one task, or of an instance's members (which outlive the run's events).
  void launch_collective(TaskId id) {
    slot_[id].start = sim_.now();
    if (any_overlap_ && !slot_[id].copy_engine) collectives_in_flight(lanes_[slot_[id].lane].rank_index, +1);
    network_.start(*graph_.works()[slot_[id].comm.work].collective, sim_, [this, id] { finish(id); });
  }
  void launch_collective(const std::vector<TaskId>& members) {
    for (TaskId m : members) slot_[m].start = sim_.now();
    if (any_overlap_)
      for (TaskId m : members)
        if (!slot_[m].copy_engine) collectives_in_flight(lanes_[slot_[m].lane].rank_index, +1);
    const net::Collective& c = *graph_.work(members.front()).collective;
    network_.start(c, sim_, [this, &members] {
      for (TaskId m : members) finish(m);
    });
  }

  // A lane's chain, from its head to chain_last (finish() for the last task).
  void finish_chain(Lane& lane) {
    for (; lane.head != lane.chain_last; ++lane.head) {
      const TaskId k = lane.order[lane.head];
      Slot& sk = slot_[k];
      sk.finished = true;
      ++finished_;
      timeline_.spans.push_back({k, rank_of(sk), sk.start, slot_[lane.order[lane.head + 1]].start});
      if (progress_ != nullptr) progress_->advance();
    }
    finish(lane.order[lane.chain_last]);
  }

  void finish(TaskId id) {
    Slot& slot = slot_[id];
    slot.finished = true;
    ++finished_;
    if (any_overlap_ && slot.collective && !slot.copy_engine) collectives_in_flight(lanes_[slot.lane].rank_index, -1);
    timeline_.spans.push_back({id, rank_of(slot), slot.start, sim_.now()});
    last_finish_ = sim_.now();
    Lane& lane = lanes_[slot.lane];
    lane.busy = false;
    ++lane.head;
    try_start(slot.lane);
    for (std::uint32_t k = slot.dependents; k < slot_[id + 1].dependents; ++k) {
      const TaskId d = dependents_[k];
      if (--slot_[d].remaining == 0) try_start(slot_[d].lane);
    }
    if (progress_ != nullptr) progress_->advance();
  }

  const TaskGraph& graph_;
  core::Simulator& sim_;
  // The hardware of each pool (a mixed cluster's GPU types; one otherwise): the
  // compute model, the factors of kernels beside a collective, the host.
  std::vector<Executor::PoolHardware> pools_;
  bool any_overlap_ = false;  // some pool slows kernels beside collectives
  net::CommunicationBackend& network_;
  hw::Precision precision_;
  const std::map<int, double>& slowdown_;
  int gpus_per_node_;
  core::Progress* progress_;
  std::vector<int> inflight_;                        // by rank index: collectives in flight (any_overlap_)
  std::vector<std::vector<std::size_t>> rank_lanes_;  // by rank index: its lanes (any_overlap_)
  std::vector<Slot> slot_;  // by task id, and one more
  std::vector<TaskId> dependents_;
  std::vector<Lane> lanes_;
  std::vector<std::vector<Priced>> priced_;  // by pool, then work id
  std::vector<Instance> instances_;  // not resized once built: events hold their members
  Timeline timeline_;
  core::Time last_finish_ = 0;
  int min_rank_ = 0;  // the graph's least rank (Lane::rank_index is relative to it)
  std::size_t finished_ = 0;  // tasks that ran
};

}  // namespace

Timeline Executor::run(const workload::TaskGraph& graph, core::Simulator& sim, core::Progress* progress) {
  std::vector<PoolHardware> pools = pools_;
  if (pools.empty()) pools.push_back({&compute_, overlap_, host_});
  Run state(graph, sim, std::move(pools), rank_pool_, network_, precision_, slowdown_, gpus_per_node_, progress);
  return state.execute();
}

}  // namespace trainsim::exec
