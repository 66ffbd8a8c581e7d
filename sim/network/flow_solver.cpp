#include "network/flow_solver.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace trainsim::net {

namespace {

constexpr std::uint32_t kMaxIndex = std::numeric_limits<std::uint32_t>::max();

std::string num(double x) { return std::to_string(x); }

// The finish-time heap is a plain binary heap with children 2i+1 and 2i+2,
// written out here rather than std::push_heap because completed() walks its
// layout, which the standard leaves unspecified.
template <class T>
bool earlier(const T& a, const T& b) {
  return a.finish < b.finish || (a.finish == b.finish && a.ticket < b.ticket);
}

template <class T>
void sift_up(std::vector<T>& h, std::size_t i) {
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!earlier(h[i], h[parent])) return;
    std::swap(h[i], h[parent]);
    i = parent;
  }
}

template <class T>
void sift_down(std::vector<T>& h, std::size_t i) {
  const std::size_t n = h.size();
  for (;;) {
    std::size_t best = i;
    const std::size_t left = 2 * i + 1;
    const std::size_t right = left + 1;
    if (left < n && earlier(h[left], h[best])) best = left;
    if (right < n && earlier(h[right], h[best])) best = right;
    if (best == i) return;
    std::swap(h[i], h[best]);
    i = best;
  }
}

// Removes the top (Floyd's bottom-up variant): the hole at the root moves down
// to a leaf along the earlier child, one comparison a level, and the last
// entry fills it from there, rising as far as it must (rarely far: it came from
// the bottom). About half the comparisons of a sift_down from the root.
template <class T>
void pop_top(std::vector<T>& h) {
  const std::size_t n = h.size() - 1;  // entries left
  std::size_t hole = 0;
  for (;;) {
    const std::size_t left = 2 * hole + 1;
    if (left >= n) break;
    const std::size_t child = left + 1 < n && earlier(h[left + 1], h[left]) ? left + 1 : left;
    h[hole] = h[child];
    hole = child;
  }
  if (hole != n) {
    h[hole] = h[n];
    sift_up(h, hole);
  }
  h.pop_back();
}

// Min-heap order for std::push_heap/pop_heap on the link heap: smallest share
// first, ties to the smallest link id.
struct LaterShare {
  template <class T>
  bool operator()(const T& a, const T& b) const {
    return a.share > b.share || (a.share == b.share && a.link > b.link);
  }
};

}  // namespace

LinkId FlowSolver::add_link(double capacity) {
  if (!(capacity > 0.0) || !std::isfinite(capacity)) {
    throw std::invalid_argument("FlowSolver::add_link: capacity must be finite and > 0 bytes/s, got " +
                                num(capacity));
  }
  if (links_.size() >= kMaxIndex) throw std::length_error("FlowSolver::add_link: too many links");
  Link link;
  link.capacity = capacity;
  links_.push_back(std::move(link));
  return LinkId{static_cast<std::uint32_t>(links_.size() - 1)};
}

std::uint32_t FlowSolver::link_index(LinkId link, const char* caller) const {
  const auto index = static_cast<std::uint32_t>(link);
  if (index >= links_.size()) {
    throw std::invalid_argument(std::string(caller) + ": unknown link id " + std::to_string(index) +
                                " (the solver has " + std::to_string(links_.size()) + " links)");
  }
  return index;
}

std::uint32_t FlowSolver::slot_of(FlowId id, const char* caller) const {
  const std::optional<std::uint32_t> slot = slot_of_.find(static_cast<std::uint64_t>(id));
  if (!slot) {
    throw std::invalid_argument(std::string(caller) + ": unknown flow id " +
                                std::to_string(static_cast<std::uint64_t>(id)) +
                                " (never added, or already removed)");
  }
  return *slot;
}

void FlowSolver::require_solved(const char* caller) const {
  if (needs_solve()) {
    throw std::logic_error(std::string(caller) +
                           ": flows were added or removed since the last solve(); call solve() first");
  }
}

void FlowSolver::check_flow(std::span<const LinkId> path, double bytes, double rate_cap, const char* where) {
  if (!(bytes >= 0.0) || !std::isfinite(bytes)) {
    throw std::invalid_argument(std::string(where) + ": bytes must be finite and >= 0, got " + num(bytes));
  }
  if (!(rate_cap > 0.0)) {
    throw std::invalid_argument(std::string(where) + ": rate cap must be > 0 bytes/s (kUnlimited for none), got " +
                                num(rate_cap));
  }
  std::vector<std::uint32_t>& indices = path_scratch_;
  indices.clear();
  for (const LinkId link : path) {
    const std::uint32_t index = link_index(link, where);
    // A link crossed twice would carry the flow twice; routes never do that,
    // so it is a caller bug. Paths are a few links long: a linear check is fine.
    if (std::find(indices.begin(), indices.end(), index) != indices.end()) {
      throw std::invalid_argument(std::string(where) + ": link id " + std::to_string(index) +
                                  " appears twice in the path");
    }
    indices.push_back(index);
  }
}

std::uint32_t FlowSolver::place_flow(std::uint64_t seq, double bytes, double rate_cap, std::uint64_t tag,
                                     double since) {
  const std::vector<std::uint32_t>& indices = path_scratch_;
  std::uint32_t slot = 0;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    if (flows_.size() >= kMaxIndex) throw std::length_error("FlowSolver::add_flow: too many flows");
    slot = static_cast<std::uint32_t>(flows_.size());
    cores_.emplace_back();
    flows_.emplace_back();
    visits_.emplace_back();
  }
  FlowCore& core = cores_[slot];
  core.rate = 0.0;
  core.cap = rate_cap;
  core.seq = seq;
  core.path_size = static_cast<std::uint32_t>(indices.size());
  Flow& f = flows_[slot];
  f.bytes = bytes;
  f.since = since;
  f.ticket = 0;
  f.tag = tag;
  f.active = true;
  if (indices.size() <= kInlineHops) {
    std::copy(indices.begin(), indices.end(), core.hops);
  } else {
    f.long_path.assign(indices.begin(), indices.end());
  }
  slot_of_.insert(seq, slot);

  // Callers add in id order on every link (add_flow: ids only grow;
  // adopt_flow checks), so appending keeps each link's flow list in id order.
  for (const std::uint32_t l : path_of(slot)) {
    links_[l].flows.push_back(slot);
    mark_dirty(l);
  }
  return slot;
}

FlowId FlowSolver::add_flow(std::span<const LinkId> path, double bytes, double rate_cap, std::uint64_t tag) {
  check_flow(path, bytes, rate_cap, "FlowSolver::add_flow");
  const std::uint64_t seq = next_seq_++;
  const std::uint32_t slot = place_flow(seq, bytes, rate_cap, tag, now_);
  if (cores_[slot].path_size == 0) pending_unconstrained_.push_back(Pending{seq, slot});
  return FlowId{seq};
}

void FlowSolver::adopt_flow(std::uint64_t id, std::span<const LinkId> path, double bytes, double rate_cap,
                            std::uint64_t tag, double since, double rate) {
  constexpr const char* kWhere = "FlowSolver::adopt_flow";
  check_flow(path, bytes, rate_cap, kWhere);
  if (path.empty() || id >= next_seq_ || !(rate >= 0.0) || !(since <= now_)) {
    throw std::logic_error(std::string(kWhere) + ": flow " + std::to_string(id) +
                           " needs links, a reserved id, a rate >= 0 and a start not after now");
  }
  for (const std::uint32_t l : path_scratch_) {
    if (!links_[l].flows.empty() && cores_[links_[l].flows.back()].seq >= id) {
      throw std::logic_error(std::string(kWhere) + ": flow " + std::to_string(id) + " is older than a flow on link " +
                             std::to_string(l) + " that was added before it");
    }
  }
  const std::uint32_t slot = place_flow(id, bytes, rate_cap, tag, since);
  if (rate == 0.0) return;  // the next solve sets it, as for a flow just added
  // What set_rate() at `since` did: the bytes counted from then, a finish entry.
  cores_[slot].rate = rate;
  Flow& f = flows_[slot];
  drop_entry(f);
  f.ticket = ++next_ticket_;
  const double finish = finish_time(since, bytes, rate);
  if (finish != kUnlimited) push_completion(f, slot, finish);
}

void FlowSolver::remove_flow(FlowId id) {
  remove_slot(slot_of(id, "FlowSolver::remove_flow"));
  drop_dead_completions();
}

void FlowSolver::remove_slot(std::uint32_t slot) {
  const std::uint64_t seq = cores_[slot].seq;
  for (const std::uint32_t l : path_of(slot)) {
    auto& members = links_[l].flows;
    const auto it = std::lower_bound(members.begin(), members.end(), seq,
                                     [this](std::uint32_t m, std::uint64_t s) { return cores_[m].seq < s; });
    members.erase(it);  // keeps the id order; the flow is present by construction
    mark_dirty(l);
  }
  release_slot(slot);
}

void FlowSolver::release_slot(std::uint32_t slot) {
  const std::uint64_t seq = cores_[slot].seq;
  cores_[slot].path_size = 0;
  Flow& f = flows_[slot];
  f.long_path.clear();  // keeps its capacity for the next flow in this slot
  f.active = false;
  drop_entry(f);  // its completion entry, if any, is now dead
  f.ticket = 0;
  slot_of_.erase(seq);
  free_slots_.push_back(slot);
}

void FlowSolver::mark_dirty(std::uint32_t link) {
  ++version_;
  if (links_[link].dirty) return;
  links_[link].dirty = true;
  dirty_links_.push_back(link);
}

double FlowSolver::remaining_of(std::uint32_t slot) const {
  const double rate = cores_[slot].rate;
  const Flow& f = flows_[slot];
  if (rate == kUnlimited) return 0.0;
  return std::max(0.0, f.bytes - rate * (now_ - f.since));
}

void FlowSolver::set_rate(std::uint32_t slot, double rate) {
  Flow& f = flows_[slot];
  f.bytes = remaining_of(slot);  // settle what the old rate sent
  f.since = now_;
  cores_[slot].rate = rate;
  ++version_;
  drop_entry(f);
  f.ticket = ++next_ticket_;
  const double finish = finish_time(now_, f.bytes, rate);
  if (finish != kUnlimited) push_completion(f, slot, finish);  // never finishes: no entry
}

void FlowSolver::drop_entry(Flow& f) {
  if (!f.queued) return;
  f.queued = false;
  --queued_;
}

void FlowSolver::push_completion(Flow& f, std::uint32_t slot, double finish) {
  f.queued = true;
  ++queued_;
  completions_.push_back(Completion{finish, f.ticket, slot});
  sift_up(completions_, completions_.size() - 1);
}

void FlowSolver::drop_dead_completions() {
  // Rate changes and finished flows leave dead entries behind. Once they are
  // as many as the live ones, dropping them all and rebuilding the heap (O(n))
  // is cheaper than popping each as it reaches the top (O(log n) each), and
  // keeps the heap O(flows). Which entries are live, and so the earliest live
  // one, does not depend on the heap's layout.
  const std::size_t dead = completions_.size() - queued_;
  if (dead > queued_ + 64) {
    std::erase_if(completions_, [this](const Completion& c) { return !live(c); });
    for (std::size_t i = completions_.size() / 2; i-- > 0;) sift_down(completions_, i);
  }
  while (!completions_.empty() && !live(completions_.front())) pop_top(completions_);
}

void FlowSolver::solve() {
  for (const Pending& p : pending_unconstrained_) {
    if (flows_[p.slot].active && cores_[p.slot].seq == p.seq) set_rate(p.slot, cores_[p.slot].cap);
  }
  pending_unconstrained_.clear();

  collect_component();
  last_solve_ = SolveStats{comp_links_.size(), comp_flows_.size()};
  progressive_filling();
  for (std::size_t i = 0; i < comp_flows_.size(); ++i) {
    // Only a changed rate moves the finish time; unchanged flows keep their
    // settled bytes and heap entry.
    if (comp_new_rate_[i] != comp_old_rate_[i]) set_rate(comp_flows_[i], comp_new_rate_[i]);
  }
  drop_dead_completions();
}

void FlowSolver::next_epoch() {
  if (++epoch_ != 0) return;
  // Wrapped after 2^32 solves: clear every mark so no old one matches.
  for (Link& link : links_) link.seen = 0;
  for (Visit& v : visits_) v.epoch = 0;
  epoch_ = 1;
}

// Breadth-first search from the dirty links over link -> flows -> links: the
// union of the components the changes can affect. Each flow is read once here,
// its path copied into comp_hops_ and its cap into caps_.
void FlowSolver::collect_component() {
  next_epoch();
  comp_links_.clear();
  comp_flows_.clear();
  comp_offset_.assign(1, 0);
  comp_hops_.clear();
  comp_old_rate_.clear();
  caps_.clear();
  for (const std::uint32_t l : dirty_links_) {
    links_[l].dirty = false;
    if (links_[l].seen != epoch_) {
      links_[l].seen = epoch_;
      comp_links_.push_back(l);
    }
  }
  dirty_links_.clear();
  for (std::size_t i = 0; i < comp_links_.size(); ++i) {
    for (const std::uint32_t slot : links_[comp_links_[i]].flows) {
      Visit& visit = visits_[slot];
      if (visit.epoch == epoch_) continue;
      const auto local = static_cast<std::uint32_t>(comp_flows_.size());
      visit = Visit{epoch_, local};
      const FlowCore& core = cores_[slot];
      comp_flows_.push_back(slot);
      comp_old_rate_.push_back(core.rate);
      if (core.cap != kUnlimited) caps_.push_back(CapEntry{core.cap, core.seq, local});
      for (const std::uint32_t l : path_of(slot)) {
        comp_hops_.push_back(l);
        if (links_[l].seen == epoch_) continue;
        links_[l].seen = epoch_;
        comp_links_.push_back(l);
      }
      comp_offset_.push_back(static_cast<std::uint32_t>(comp_hops_.size()));
    }
  }
}

void FlowSolver::fix(std::uint32_t local, double rate) {
  comp_fixed_[local] = 1;
  comp_new_rate_[local] = rate;
  for (std::uint32_t h = comp_offset_[local]; h < comp_offset_[local + 1]; ++h) {
    Link& link = links_[comp_hops_[h]];
    // rate <= remaining / unfixed <= remaining, so this stays >= 0 in exact
    // and in rounded arithmetic; the max only guards the invariant.
    link.remaining = std::max(0.0, link.remaining - rate);
    --link.unfixed;
    link.stale = true;
  }
}

void FlowSolver::progressive_filling() {
  const std::size_t n = comp_flows_.size();
  comp_fixed_.assign(n, 0);
  comp_new_rate_.assign(n, 0.0);
  link_heap_.clear();
  for (const std::uint32_t l : comp_links_) {
    Link& link = links_[l];
    link.remaining = link.capacity;
    link.unfixed = static_cast<std::uint32_t>(link.flows.size());
    link.stale = false;
    if (link.unfixed > 0) link_heap_.push_back(LinkShare{link.remaining / static_cast<double>(link.unfixed), l});
  }
  std::make_heap(link_heap_.begin(), link_heap_.end(), LaterShare{});
  std::sort(caps_.begin(), caps_.end(), [](const CapEntry& a, const CapEntry& b) {
    return a.cap < b.cap || (a.cap == b.cap && a.seq < b.seq);
  });

  std::size_t next_cap = 0;
  std::size_t unfixed = n;
  while (unfixed > 0) {
    // Shares only grow as flows are fixed (each fixed rate is at most the
    // smallest share), so an entry's share is a lower bound of its link's
    // current share. Refresh the top until it is current: then it is the true
    // minimum, ties going to the smallest link id.
    while (!link_heap_.empty()) {
      const std::uint32_t l = link_heap_.front().link;
      Link& link = links_[l];
      if (link.unfixed > 0 && !link.stale) break;
      std::pop_heap(link_heap_.begin(), link_heap_.end(), LaterShare{});
      link_heap_.pop_back();
      if (link.unfixed == 0) continue;  // all its flows were fixed elsewhere
      link.stale = false;
      link_heap_.push_back(LinkShare{link.remaining / static_cast<double>(link.unfixed), l});
      std::push_heap(link_heap_.begin(), link_heap_.end(), LaterShare{});
    }
    while (next_cap < caps_.size() && comp_fixed_[caps_[next_cap].local] != 0) ++next_cap;

    // A cap at or below the bottleneck share binds first (a cap is a link of
    // its own flow).
    if (next_cap < caps_.size() &&
        (link_heap_.empty() || caps_[next_cap].cap <= link_heap_.front().share)) {
      fix(caps_[next_cap].local, caps_[next_cap].cap);
      ++next_cap;
      --unfixed;
      continue;
    }
    if (link_heap_.empty()) {
      // Every unfixed flow crosses a link with unfixed > 0, so this is a bug.
      throw std::logic_error("FlowSolver::solve: unfixed flows left but no constraining link");
    }
    const LinkShare bottleneck = link_heap_.front();
    std::pop_heap(link_heap_.begin(), link_heap_.end(), LaterShare{});
    link_heap_.pop_back();
    for (const std::uint32_t slot : links_[bottleneck.link].flows) {
      const std::uint32_t local = visits_[slot].local;
      if (comp_fixed_[local] != 0) continue;
      fix(local, bottleneck.share);
      --unfixed;
    }
  }
}

double FlowSolver::rate(FlowId id) const {
  require_solved("FlowSolver::rate");
  return cores_[slot_of(id, "FlowSolver::rate")].rate;
}

double FlowSolver::remaining(FlowId id) const {
  return remaining_of(slot_of(id, "FlowSolver::remaining"));
}

double FlowSolver::time_to_next_completion() const {
  require_solved("FlowSolver::time_to_next_completion");
  if (completions_.empty()) return kUnlimited;  // the top is live: see drop_dead_completions
  return std::max(0.0, completions_.front().finish - now_);
}

void FlowSolver::advance(double seconds) {
  require_solved("FlowSolver::advance");
  if (!(seconds >= 0.0) || !std::isfinite(seconds)) {
    throw std::invalid_argument("FlowSolver::advance: seconds must be finite and >= 0, got " + num(seconds));
  }
  now_ += seconds;
}

void FlowSolver::completed_slots(double tolerance_s, std::vector<std::uint32_t>& slots) const {
  if (!(tolerance_s >= 0.0)) {
    throw std::invalid_argument("FlowSolver::completed: tolerance must be >= 0 seconds, got " +
                                num(tolerance_s));
  }
  // Walk the heap from the root, pruning subtrees whose root finishes later:
  // O(answer + dead entries met) instead of a scan of every flow.
  const double horizon = now_ + tolerance_s;
  found_.clear();
  walk_.clear();
  if (!completions_.empty()) walk_.push_back(0);
  while (!walk_.empty()) {
    const std::size_t i = walk_.back();
    walk_.pop_back();
    const Completion& c = completions_[i];
    if (c.finish > horizon) continue;
    if (live(c)) found_.push_back(Found{cores_[c.slot].seq, c.slot});
    for (const std::size_t child : {2 * i + 1, 2 * i + 2}) {
      if (child < completions_.size()) walk_.push_back(child);
    }
  }
  // Sorted by id read once per flow, not once per comparison.
  std::sort(found_.begin(), found_.end(), [](const Found& a, const Found& b) { return a.seq < b.seq; });
  slots.clear();
  for (const Found& f : found_) slots.push_back(f.slot);
}

std::vector<FlowId> FlowSolver::completed(double tolerance_s) const {
  std::vector<std::uint32_t> slots;
  completed_slots(tolerance_s, slots);
  std::vector<FlowId> ids;
  ids.reserve(slots.size());
  for (const std::uint32_t slot : slots) ids.push_back(FlowId{cores_[slot].seq});
  return ids;
}

void FlowSolver::take_completed(double tolerance_s, std::vector<std::uint64_t>& tags,
                                std::vector<std::uint64_t>* ids) {
  completed_slots(tolerance_s, taken_);
  if (taken_.empty()) return;
  // Each link's flow list is compacted once for all the flows leaving it, not
  // once per flow: a link shared by thousands of flows (a data-parallel
  // collective over a fabric) would otherwise cost O(flows) per removal.
  std::vector<std::uint32_t>& touched = touched_links_;
  touched.clear();
  next_epoch();
  if (leaving_.size() < cores_.size()) leaving_.resize(cores_.size(), 0);
  for (const std::uint32_t slot : taken_) {
    tags.push_back(flows_[slot].tag);
    if (ids != nullptr) ids->push_back(cores_[slot].seq);
    leaving_[slot] = 1;
    for (const std::uint32_t l : path_of(slot)) {
      mark_dirty(l);
      if (links_[l].seen == epoch_) continue;
      links_[l].seen = epoch_;
      touched.push_back(l);
    }
  }
  for (const std::uint32_t l : touched)
    std::erase_if(links_[l].flows, [this](std::uint32_t slot) { return leaving_[slot] != 0; });
  for (const std::uint32_t slot : taken_) {
    leaving_[slot] = 0;
    release_slot(slot);
  }
  drop_dead_completions();
}

double FlowSolver::link_utilization(LinkId link) const {
  require_solved("FlowSolver::link_utilization");
  const Link& l = links_[link_index(link, "FlowSolver::link_utilization")];
  double used = 0.0;
  for (const std::uint32_t slot : l.flows) used += cores_[slot].rate;
  return used / l.capacity;
}

double FlowSolver::capacity(LinkId link) const {
  return links_[link_index(link, "FlowSolver::capacity")].capacity;
}

}  // namespace trainsim::net
