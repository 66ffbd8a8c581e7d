#pragma once
// Flow-level bandwidth sharing: links with capacities, flows that cross lists of
// links, and rates that share every link max-min fairly (the SimGrid approach:
// Velho, Schnorr, Casanova & Legrand, "On the validity of flow-level TCP network
// models for grid and cloud simulations", ACM TOMACS 23(4), 2013). The engine
// asks for the time of the next completion and jumps there; no packets.
//
// Rates come from progressive filling (Bertsekas & Gallager, "Data Networks",
// 2nd ed., ch. 6, max-min flow control): repeatedly take the most constrained
// link (smallest remaining capacity / number of unfixed flows on it), or an
// unfixed flow whose rate cap is below that share, fix those flows at that rate,
// subtract it from every link they cross, and continue.
//
// Incremental solve: add_flow and remove_flow only mark the links of the flow's
// path; solve() re-solves the connected components (links joined by shared
// flows) that contain a marked link and leaves every other component alone,
// which is exact because a component's max-min rates depend only on its own
// links and flows. Inside a component every choice is ordered by values and ids
// ((share, link id) for links, (cap, flow id) for caps, flow id inside a link),
// never by history, pointers or hashes, so the rates are a function of the
// current flows alone: an incremental solve gives bit for bit what a solve from
// scratch gives. Cost of one solve: O((F P + L) log L) for the F flows with
// paths of P links and the L links of the re-solved components. Traffic that
// spans a whole fabric is one component, so there every solve is a full one:
// bench/bench_flow_solver.cpp measures about 0.4 ms, 5 ms and 50 ms per solve
// with 1e3, 1e4 and 1e5 flows on a 2048-host fat tree (2-core VM). Callers
// should therefore apply all the starts and finishes of one instant and then
// call solve() once.
//
// Time is seconds as double here; the caller (the simulator) converts to its
// integer nanoseconds. Remaining bytes are kept lazily (bytes at the last rate
// change, and when that was), so advance() is O(1) and completions come from a
// heap of finish times instead of a scan of all flows.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <span>
#include <vector>

#include "network/flow_index.h"

namespace trainsim::net {

// Links are numbered 0, 1, 2, ... in the order add_link is called.
enum class LinkId : std::uint32_t {};
// Flows are numbered 0, 1, 2, ... in the order add_flow is called; an id is
// never reused, so a stale id is reported instead of naming another flow.
enum class FlowId : std::uint64_t {};

class FlowSolver {
 public:
  static constexpr double kUnlimited = std::numeric_limits<double>::infinity();

  // Capacity in bytes/s, finite and > 0; otherwise std::invalid_argument.
  LinkId add_link(double capacity);

  // A flow of `bytes` (finite, >= 0) across `path` (known links, each at most
  // once) whose rate never exceeds `rate_cap` (> 0; kUnlimited for none). An
  // empty path is constrained only by the cap: its rate is the cap (infinite,
  // hence done at once, without one). Invalid input throws
  // std::invalid_argument. The flow's rate is set by the next solve().
  // `tag`: the caller's own number for the flow, handed back by take_completed().
  FlowId add_flow(std::span<const LinkId> path, double bytes, double rate_cap = kUnlimited,
                  std::uint64_t tag = 0);
  FlowId add_flow(std::initializer_list<LinkId> path, double bytes, double rate_cap = kUnlimited,
                  std::uint64_t tag = 0) {
    return add_flow(std::span<const LinkId>(path.begin(), path.size()), bytes, rate_cap, tag);
  }
  // Unknown (or already removed) ids throw std::invalid_argument.
  void remove_flow(FlowId id);

  // Recomputes the rates of the components touched since the last solve.
  void solve();
  // True when flows were added or removed since the last solve(); rates,
  // utilizations, advance() and time_to_next_completion() then throw
  // std::logic_error, because they would use rates that no longer hold.
  [[nodiscard]] bool needs_solve() const {
    return !dirty_links_.empty() || !pending_unconstrained_.empty();
  }

  // Rate in bytes/s from the last solve().
  [[nodiscard]] double rate(FlowId id) const;
  // Bytes still to send as of now(); valid at any time.
  [[nodiscard]] double remaining(FlowId id) const;
  // Seconds from now() until the first flow finishes at the current rates;
  // 0 when one already has, +infinity when none ever will (e.g. no flows).
  [[nodiscard]] double time_to_next_completion() const;
  // Moves the clock forward: every flow sends rate x seconds (seconds finite,
  // >= 0). O(1): remaining bytes are computed when asked for.
  void advance(double seconds);
  // Flows (ascending id) that finish by now() + tolerance_s at the rates of the
  // last solve(). The tolerance absorbs the caller's rounding of its own clock
  // (an integer-nanosecond clock passes 0.5e-9); completed flows stay until
  // removed.
  [[nodiscard]] std::vector<FlowId> completed(double tolerance_s = 0.0) const;
  // Removes the flows completed() lists, in that order, and appends their tags
  // to `tags` (and their ids to `ids`, when given): what completed() and
  // remove_flow() on each do, without looking the ids up.
  void take_completed(double tolerance_s, std::vector<std::uint64_t>& tags,
                      std::vector<std::uint64_t>* ids = nullptr);

  // Flows a caller accounts for outside the solver while they are alone on
  // their links (FlowBackend's exclusive phases). reserve_ids takes the next
  // `n` flow ids without adding flows, so that those flows and the solver's
  // keep one order of ids; it returns the first.
  std::uint64_t reserve_ids(std::size_t n) {
    const std::uint64_t first = next_seq_;
    next_seq_ += n;
    return first;
  }
  // adopt_flow hands such a flow to the solver when another is about to join
  // one of its links, in the state add_flow(path, bytes, rate_cap, tag) at
  // solver time `since` would have left it, under id `id` (from reserve_ids):
  // its rate `rate` if a solve has set it since (0: none yet, the next solve
  // does), its bytes counted from `since`. Every flow already on its links must
  // have a smaller id; otherwise std::logic_error.
  void adopt_flow(std::uint64_t id, std::span<const LinkId> path, double bytes, double rate_cap, std::uint64_t tag,
                  double since, double rate);
  // True when no flow crosses the link.
  [[nodiscard]] bool link_idle(LinkId link) const {
    return links_[link_index(link, "FlowSolver::link_idle")].flows.empty();
  }
  // When a flow of `bytes` (remaining at `now`) sent at `rate` finishes: `now`
  // when nothing is left or the rate is unlimited, +infinity at rate 0. The
  // solver's own finish times are these.
  [[nodiscard]] static double finish_time(double now, double bytes, double rate) {
    if (bytes == 0.0 || rate == kUnlimited) return now;
    if (rate > 0.0) return now + bytes / rate;
    return kUnlimited;
  }

  // Sum of the rates of the flows on the link over its capacity, in [0, 1].
  [[nodiscard]] double link_utilization(LinkId link) const;
  // Changes whenever a flow joins or leaves a link or a flow's rate is set:
  // while it stays the same, so does link_utilization() of every link.
  [[nodiscard]] std::uint64_t version() const { return version_; }
  [[nodiscard]] double capacity(LinkId link) const;
  [[nodiscard]] std::size_t num_links() const { return links_.size(); }
  [[nodiscard]] std::size_t num_flows() const { return slot_of_.size(); }
  // Seconds advanced since construction.
  [[nodiscard]] double now() const { return now_; }

  // Size of the part of the network the last solve() re-solved.
  struct SolveStats {
    std::size_t links = 0;
    std::size_t flows = 0;
  };
  [[nodiscard]] SolveStats last_solve() const { return last_solve_; }

 private:
  struct Link {
    double capacity = 0.0;
    std::vector<std::uint32_t> flows;  // slots, in ascending flow id
    bool dirty = false;                // listed in dirty_links_
    // Scratch of solve(): remaining capacity, flows not yet fixed, whether the
    // share in the link heap is out of date, and the solve that visited it.
    bool stale = false;
    std::uint32_t unfixed = 0;
    std::uint32_t seen = 0;
    double remaining = 0.0;
  };
  // A flow is split in two per-slot records. FlowCore is what solve() reads,
  // in one cache line: paths of up to kInlineHops links (fat-tree and
  // rail-optimized routes have at most 6) sit inline, longer ones in
  // Flow::long_path. Measured on the 1e5-flow fat-tree benchmark, a path in
  // its own allocation cost a second cache miss per flow and a third of a solve.
  static constexpr std::size_t kInlineHops = 9;
  struct alignas(64) FlowCore {
    double rate = 0.0;
    double cap = kUnlimited;
    std::uint64_t seq = 0;  // the FlowId
    std::uint32_t path_size = 0;
    std::uint32_t hops[kInlineHops] = {};  // link indices, when path_size <= kInlineHops
  };
  static_assert(sizeof(FlowCore) == 64, "FlowCore is meant to fill exactly one cache line");
  struct Flow {
    double bytes = 0.0;  // remaining bytes at time `since`
    double since = 0.0;
    std::uint64_t ticket = 0;  // its entry in completions_ (live while it matches); 0 = none
    std::uint64_t tag = 0;     // add_flow's
    bool active = false;
    bool queued = false;  // completions_ holds a live entry for it
    std::vector<std::uint32_t> long_path;  // when path_size > kInlineHops
  };
  // Which solve last visited a flow slot and its index in that solve's arrays;
  // kept apart from Flow so the hot loops read 8 bytes, not a cache line.
  struct Visit {
    std::uint32_t epoch = 0;
    std::uint32_t local = 0;
  };
  struct Pending {
    std::uint64_t seq;
    std::uint32_t slot;
  };
  struct LinkShare {  // an entry of the link heap in solve()
    double share;
    std::uint32_t link;
  };
  struct CapEntry {
    double cap;
    std::uint64_t seq;
    std::uint32_t local;
  };
  struct Completion {  // an entry of the finish-time heap; dead once its ticket is
    double finish;     // no longer its flow's ticket
    std::uint64_t ticket;
    std::uint32_t slot;
  };

  // add_flow's checks of its arguments; leaves the path's link indices in path_scratch_.
  void check_flow(std::span<const LinkId> path, double bytes, double rate_cap, const char* where);
  // A flow over path_scratch_'s links, not yet rated: its slot.
  std::uint32_t place_flow(std::uint64_t seq, double bytes, double rate_cap, std::uint64_t tag, double since);
  [[nodiscard]] std::uint32_t slot_of(FlowId id, const char* caller) const;
  [[nodiscard]] std::uint32_t link_index(LinkId link, const char* caller) const;
  void require_solved(const char* caller) const;
  [[nodiscard]] double remaining_of(std::uint32_t slot) const;
  [[nodiscard]] std::span<const std::uint32_t> path_of(std::uint32_t slot) const {
    const FlowCore& c = cores_[slot];
    if (c.path_size <= kInlineHops) return {c.hops, c.path_size};
    return flows_[slot].long_path;
  }
  [[nodiscard]] bool live(const Completion& c) const {
    return flows_[c.slot].ticket == c.ticket;
  }
  void mark_dirty(std::uint32_t link);
  void next_epoch();
  void collect_component();
  void progressive_filling();
  void fix(std::uint32_t local, double rate);
  void set_rate(std::uint32_t slot, double rate);
  // The flow's entry in completions_, if any, counts as dead from now on (the
  // caller changes its ticket).
  void drop_entry(Flow& f);
  void push_completion(Flow& f, std::uint32_t slot, double finish);
  void drop_dead_completions();
  // The slots of the flows finished by now() + tolerance_s, in ascending id.
  void completed_slots(double tolerance_s, std::vector<std::uint32_t>& slots) const;
  // remove_slot: off its links' lists, then release_slot: the slot freed.
  void remove_slot(std::uint32_t slot);
  void release_slot(std::uint32_t slot);

  std::vector<Link> links_;
  // Per flow slot; free slots are listed in free_slots_.
  std::vector<FlowCore> cores_;
  std::vector<Flow> flows_;
  std::vector<Visit> visits_;
  std::vector<std::uint32_t> free_slots_;
  FlowIndex slot_of_;  // id -> slot
  std::uint64_t next_seq_ = 0;

  std::vector<std::uint32_t> dirty_links_;
  std::vector<Pending> pending_unconstrained_;  // empty-path flows awaiting solve()

  double now_ = 0.0;
  std::vector<Completion> completions_;  // binary min-heap on (finish, ticket)
  std::size_t queued_ = 0;               // its live entries (the rest are dead)
  std::uint64_t next_ticket_ = 0;
  std::uint64_t version_ = 0;  // version()

  // Scratch of solve(), kept to reuse its memory. The flows of the re-solved
  // components get local indices 0..n-1 and a compact copy of their paths
  // (comp_hops_[comp_offset_[i] .. comp_offset_[i+1]]), so progressive filling
  // runs on contiguous arrays instead of chasing every flow's own vector.
  std::uint32_t epoch_ = 0;
  std::vector<std::uint32_t> comp_links_;
  std::vector<std::uint32_t> comp_flows_;  // local -> slot
  std::vector<std::uint32_t> comp_offset_;
  std::vector<std::uint32_t> comp_hops_;
  std::vector<double> comp_old_rate_;
  std::vector<double> comp_new_rate_;
  std::vector<std::uint8_t> comp_fixed_;
  std::vector<LinkShare> link_heap_;
  std::vector<std::uint32_t> path_scratch_;  // add_flow's checked path
  struct Found {  // a finished flow met by completed_slots(): its id and slot
    std::uint64_t seq;
    std::uint32_t slot;
  };
  mutable std::vector<std::size_t> walk_;  // completed_slots()'s heap walk
  mutable std::vector<Found> found_;       // ... and what it found
  std::vector<std::uint32_t> taken_;          // take_completed()'s slots
  std::vector<std::uint8_t> leaving_;         // take_completed(): by slot, 1 while being removed
  std::vector<std::uint32_t> touched_links_;  // take_completed(): the links they leave
  std::vector<CapEntry> caps_;
  SolveStats last_solve_;
};

}  // namespace trainsim::net
