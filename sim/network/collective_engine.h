#pragma once
// Collectives on the topology at both fidelities of DESIGN.md:
//  - CollectivePlanner turns a collective into a routed schedule (algorithms.h +
//    routing.h), chosen the way NCCL chooses (the algorithm of least modeled
//    time for the size) unless one is forced;
//  - ScheduleBackend ("analytic") charges each phase its latency plus the time
//    of its most loaded link, the phase alone on the network;
//  - FlowBackend ("flow") turns every transfer into a flow on its links and
//    shares link bandwidth max-min fairly with everything else in flight.
// With nothing else in flight and every link of a phase loaded evenly enough
// for max-min sharing to drain it at full capacity, the two agree to the
// nanosecond (tests/unit/collective_engine_test.cpp).
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/simulator.h"
#include "network/algorithms.h"
#include "network/collective_model.h"
#include "network/flow_solver.h"
#include "network/routing.h"

namespace trainsim::net {

struct RoutedPhase {
  double latency = 0.0;               // s: steps x the phase's slowest path, plus fixed start-up
  SizeLatency sized;                  // start-up that grows with S
  std::vector<std::uint32_t> offset;  // flow i crosses hops[offset[i] .. offset[i+1])
  std::vector<LinkId> hops;  // link ids of the topology
  std::vector<double> bytes;  // per flow, per byte of the collective's S
  std::vector<double> cap;    // per flow, B/s (FlowSolver::kUnlimited: none)
  double seconds_per_byte = 0.0;  // the phase alone: most loaded link (or cap), per byte of S
  [[nodiscard]] std::size_t flows() const { return bytes.size(); }
  [[nodiscard]] double latency_at(double bytes_of_s) const { return latency + sized.at(bytes_of_s); }
};

struct RoutedSchedule {
  Algorithm algorithm = Algorithm::kRing;
  std::vector<RoutedPhase> phases;
  // The analytic duration: every phase's latency, then its bandwidth term
  // rounded up to the nanosecond, as the flow model's clock rounds.
  [[nodiscard]] core::Time duration(double bytes) const;
};

// Rounds seconds up to the simulator's nanoseconds.
core::Time ceil_to_time(double seconds);

class CollectivePlanner {
 public:
  // `forced`: kAuto to choose per collective. `multipath`: equal-cost paths
  // every transfer between nodes is spread over, in equal shares (with D-mod-K
  // routing they all take the destination's path). `routing`: how switches pick
  // among equal-cost paths (routing.h).
  CollectivePlanner(const Topology& topology, Algorithm forced = Algorithm::kAuto, int multipath = 1,
                    Routing routing = Routing::kEcmp);

  // The routed schedule of `c` (for 1 byte; durations scale). Cached per group,
  // kind and algorithm, and the choice per group, kind and size: the executor
  // asks again at every launch, so a collective planned before costs one hash
  // lookup. Throws std::invalid_argument when the forced algorithm cannot run
  // `c` and no other can either.
  const RoutedSchedule& plan(const Collective& c);
  const RoutedSchedule& plan(const Collective& c, Algorithm algorithm);
  [[nodiscard]] const Topology& topology() const { return topology_; }
  [[nodiscard]] const Router& router() const { return router_; }
  [[nodiscard]] Algorithm forced() const { return forced_; }

 private:
  // What plan(c) returned for a collective of this group (its member lists,
  // pinned, or its default shape), kind and size.
  struct PlanKey {
    const void* members = nullptr;
    int size = 0;
    int nodes = 0;
    int ranks_per_node = 0;
    CollectiveKind kind = CollectiveKind::kAllReduce;
    double bytes = 0.0;
    bool operator==(const PlanKey&) const = default;
  };
  struct PlanKeyHash {
    std::size_t operator()(const PlanKey& k) const noexcept;
  };
  const RoutedSchedule& choose(const Collective& c);
  std::shared_ptr<const std::vector<std::vector<long long>>> members_of(const Collective& c);
  RoutedSchedule route(const Collective& c, Algorithm a, const std::vector<std::vector<long long>>& groups);

  const Topology& topology_;
  Router router_;
  Algorithm forced_;
  int multipath_;
  std::map<std::tuple<int, int, int>, std::shared_ptr<const std::vector<std::vector<long long>>>> default_members_;
  std::map<std::tuple<const void*, CollectiveKind, Algorithm>, RoutedSchedule> cache_;
  // Groups a cache entry was made for, kept alive so their addresses stay theirs.
  std::map<const void*, std::shared_ptr<const std::vector<std::vector<long long>>>> pinned_;
  std::vector<double> load_;  // scratch: bytes per link of the phase being routed
  std::map<std::tuple<const void*, CollectiveKind, double>, Algorithm> choice_;
  std::unordered_map<PlanKey, const RoutedSchedule*, PlanKeyHash> planned_;  // into cache_ (stable)
};

class ScheduleBackend final : public CommunicationBackend {
 public:
  explicit ScheduleBackend(CollectivePlanner& planner) : planner_(planner) {}
  void start(const Collective& c, core::Simulator& sim, std::function<void()> on_done) override;
  [[nodiscard]] std::string_view name() const override { return "analytic (alpha-beta per phase on the topology)"; }

 private:
  CollectivePlanner& planner_;
};

// What the flow model saw on the links.
struct LinkStatistics {
  std::vector<double> bytes;  // per link id
  // Utilization over time of the watched links: (time, utilization) at every change.
  std::map<std::uint32_t, std::vector<std::pair<core::Time, double>>> series;
  std::uint64_t solves = 0;
  std::uint64_t flows = 0;
  // Engine figures, not results: of `flows`, those that started in exclusive
  // phases (FlowBackend), and of those, the ones handed to the solver later.
  std::uint64_t exclusive_flows = 0;
  std::uint64_t adopted_flows = 0;
};

// Exclusive phases (docs/architecture.md, "Engine speed"): a phase whose links
// carry no other flow when it starts, and whose flows carry the same bytes and,
// solved alone, get the same rate (so finish together), is accounted for
// outside the solver: its links are its own
// component of the max-min problem, so its rates are those of the phase solved
// alone (FlowSolver's rates are a function of the component), computed once per
// phase, and its finish time is the solver's arithmetic on them. If another flow
// is about to join one of its links, the phase is handed to the solver first in
// the state it would have had there (FlowSolver::adopt_flow). Wake-ups, solves
// and the order completions are handled in are the solver's, so every time and
// statistic is the same with exclusive phases as without (`exclusive_phases`
// false: every flow in the solver; tests compare the two).
class FlowBackend final : public CommunicationBackend {
 public:
  // `watched`: links whose utilization over time is recorded.
  FlowBackend(CollectivePlanner& planner, std::vector<std::uint32_t> watched = {}, bool exclusive_phases = true);
  void start(const Collective& c, core::Simulator& sim, std::function<void()> on_done) override;
  [[nodiscard]] std::string_view name() const override { return "flow (max-min fair sharing per link)"; }
  [[nodiscard]] const LinkStatistics& statistics() const { return stats_; }

 private:
  struct Running {
    const RoutedSchedule* schedule = nullptr;
    double bytes = 0.0;
    std::size_t phase = 0;
    std::size_t pending = 0;
    std::function<void()> done;
    // The simulator it runs on: the phase-start event captures (this, run) only,
    // which std::function keeps without allocating.
    core::Simulator* sim = nullptr;
    // Per phase, the rates of its flows solved alone (empty: it is never exclusive).
    const std::vector<std::vector<double>>* solo = nullptr;
  };
  // A phase accounted for outside the solver.
  struct Exclusive {
    std::size_t run = 0;
    std::uint64_t first_id = 0;  // its flows' ids: first_id + index in the phase
    double since = 0.0;          // solver clock when it started
    double finish = 0.0;         // solver clock when its flows finish
    std::uint64_t solves_at_start = 0;  // stats_.solves then: rated once it has grown
    bool live = false;
  };
  struct Due {  // an entry of the exclusive phases' finish-time heap
    double finish;
    std::uint64_t first_id;
    std::uint32_t index;  // into exclusive_; stale once that entry is no longer live or is reused
  };
  void begin_phase(std::size_t run, core::Simulator& sim);
  void add_flows(std::size_t run, core::Simulator& sim);
  // The phase's flows, outside the solver; false when it cannot be exclusive.
  bool add_exclusive(std::size_t run);
  // Hands every exclusive phase on these links to the solver.
  void adopt_owners(std::span<const LinkId> links);
  void adopt(std::uint32_t index);
  void release(std::uint32_t index);
  [[nodiscard]] const std::vector<std::vector<double>>* solo_rates(const RoutedSchedule& s);
  void drop_stale_due();
  // Moves the exclusive phases due by `horizon` into due_, in order of id.
  void take_due(double horizon);
  // Accounts for a finished flow (tag and id as the solver gives them) or phase.
  void account_flow(std::uint64_t tag, std::vector<std::size_t>& finished);
  void account_exclusive(std::uint32_t index, std::vector<std::size_t>& finished);
  void phase_done(std::size_t run, core::Simulator& sim);
  void request_solve(core::Simulator& sim);
  void solve_and_wake(core::Simulator& sim);
  void wake(core::Simulator& sim);
  void sync_clock(core::Simulator& sim);

  CollectivePlanner& planner_;
  FlowSolver solver_;
  std::vector<Running> runs_;
  std::vector<std::size_t> free_runs_;
  std::vector<std::uint64_t> done_;  // scratch of wake(): the finished flows' tags, (run << 32) | index in its phase
  bool solve_pending_ = false;
  bool wake_pending_ = false;
  core::EventId wake_event_{};
  std::vector<std::uint32_t> watched_;
  std::vector<double> last_utilization_;
  // The solver's version() when the watched links were last read (none: never).
  std::uint64_t watched_version_ = std::numeric_limits<std::uint64_t>::max();
  std::vector<std::size_t> finished_phases_;  // scratch of wake()
  LinkStatistics stats_;
  // Exclusive phases.
  bool exclusive_phases_;
  std::vector<std::uint8_t> watched_link_;  // per link: watched links are never exclusive
  std::unordered_map<const RoutedSchedule*, std::vector<std::vector<double>>> solo_;
  std::vector<Exclusive> exclusive_;
  std::vector<std::uint32_t> free_exclusive_;
  std::vector<Due> due_heap_;                 // min-heap on (finish, first_id)
  std::vector<std::uint32_t> owner_;          // per link: 1 + the exclusive phase on it, 0 = none
  std::vector<std::uint64_t> done_ids_;       // scratch of wake(): the solver's finished flow ids
  std::vector<std::uint32_t> due_;            // scratch of wake(): exclusive phases due
};

}  // namespace trainsim::net
