// Max-min fair bandwidth sharing against closed forms worked out by hand, plus
// property checks (the definition of max-min fairness) on random instances.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <vector>

#include "core/rng.h"
#include "network/flow_index.h"
#include "network/flow_solver.h"

namespace trainsim::net {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kGB = 1e9;

TEST(FlowSolver, OneFlowOnOneLinkGetsTheFullCapacity) {
  FlowSolver s;
  const LinkId a = s.add_link(10.0);
  const FlowId f = s.add_flow({a}, 100.0);
  s.solve();
  EXPECT_EQ(s.rate(f), 10.0);
  EXPECT_EQ(s.link_utilization(a), 1.0);
}

// version() moves with every change a link utilization can see (a flow joins
// or leaves, a solve sets rates) and stands still otherwise (the clock moving,
// a solve with nothing to do): the flow backend skips re-reading utilizations
// while it stands still.
TEST(FlowSolver, VersionMovesExactlyWhenUtilizationsCanChange) {
  FlowSolver s;
  const LinkId a = s.add_link(10.0);
  const LinkId b = s.add_link(10.0);
  const std::uint64_t v0 = s.version();
  s.add_flow({a}, 100.0);
  const std::uint64_t v1 = s.version();
  EXPECT_NE(v1, v0);
  s.solve();
  const std::uint64_t v2 = s.version();
  EXPECT_NE(v2, v1);
  EXPECT_EQ(s.link_utilization(a), 1.0);
  s.solve();
  s.advance(1.0);
  EXPECT_EQ(s.version(), v2);
  s.add_flow({b}, 10.0);  // finishes at t = 2 s, before the first (t = 10 s)
  s.solve();
  EXPECT_NE(s.version(), v2);
  const std::uint64_t v3 = s.version();
  s.advance(1.0);
  std::vector<std::uint64_t> tags;
  s.take_completed(0.0, tags);
  ASSERT_EQ(tags.size(), 1U);
  EXPECT_NE(s.version(), v3);
  s.solve();
  EXPECT_EQ(s.link_utilization(b), 0.0);
  EXPECT_EQ(s.link_utilization(a), 1.0);
}

TEST(FlowSolver, TwoFlowsOnOneLinkGetHalfEach) {
  FlowSolver s;
  const LinkId a = s.add_link(10.0);
  const FlowId f1 = s.add_flow({a}, 1.0);
  const FlowId f2 = s.add_flow({a}, 1.0);
  s.solve();
  EXPECT_EQ(s.rate(f1), 5.0);
  EXPECT_EQ(s.rate(f2), 5.0);
}

// f_b crosses A (10) and B (3); f_a crosses A only. B limits f_b to 3, and
// max-min gives f_a what A has left: 7, not the equal split 5. f_c on its own
// link C (5) is another component and gets all of C.
TEST(FlowSolver, FlowBottleneckedElsewhereLeavesItsShareToOthers) {
  FlowSolver s;
  const LinkId a = s.add_link(10.0);
  const LinkId b = s.add_link(3.0);
  const LinkId c = s.add_link(5.0);
  const FlowId f_a = s.add_flow({a}, 1.0);
  const FlowId f_b = s.add_flow({a, b}, 1.0);
  const FlowId f_c = s.add_flow({c}, 1.0);
  s.solve();
  EXPECT_EQ(s.rate(f_b), 3.0);
  EXPECT_EQ(s.rate(f_a), 7.0);
  EXPECT_EQ(s.rate(f_c), 5.0);
  EXPECT_EQ(s.link_utilization(a), 1.0);
  EXPECT_EQ(s.link_utilization(b), 1.0);
}

// Three flows on a 10 B/s link, one capped at 2: it gets 2, the other two split
// the remaining 8.
TEST(FlowSolver, RateCapIsHonouredAndTheLeftoverGoesToTheOthers) {
  FlowSolver s;
  const LinkId a = s.add_link(10.0);
  const FlowId capped = s.add_flow({a}, 1.0, 2.0);
  const FlowId f2 = s.add_flow({a}, 1.0);
  const FlowId f3 = s.add_flow({a}, 1.0);
  s.solve();
  EXPECT_EQ(s.rate(capped), 2.0);
  EXPECT_EQ(s.rate(f2), 4.0);
  EXPECT_EQ(s.rate(f3), 4.0);
  // A cap above the fair share does not bind.
  FlowSolver t;
  const LinkId b = t.add_link(10.0);
  const FlowId loose = t.add_flow({b}, 1.0, 6.0);
  const FlowId other = t.add_flow({b}, 1.0);
  t.solve();
  EXPECT_EQ(t.rate(loose), 5.0);
  EXPECT_EQ(t.rate(other), 5.0);
}

// Parking lot: a chain of n links of capacity C, one short flow per link and a
// long flow across the whole chain. Every link carries two flows, so every flow
// gets C/2 (Bertsekas & Gallager, ch. 6, the standard max-min example).
TEST(FlowSolver, ParkingLotGetsTheTextbookMaxMinRates) {
  for (const int n : {1, 2, 5, 16}) {
    SCOPED_TRACE(n);
    FlowSolver s;
    std::vector<LinkId> chain;
    for (int i = 0; i < n; ++i) chain.push_back(s.add_link(8.0));
    const FlowId longest = s.add_flow(chain, 1.0);
    std::vector<FlowId> shorts;
    for (const LinkId l : chain) shorts.push_back(s.add_flow({l}, 1.0));
    s.solve();
    EXPECT_EQ(s.rate(longest), 4.0);
    for (const FlowId f : shorts) EXPECT_EQ(s.rate(f), 4.0);
    // Without the long flow each short flow has its link to itself.
    s.remove_flow(longest);
    s.solve();
    for (const FlowId f : shorts) EXPECT_EQ(s.rate(f), 8.0);
  }
}

// Parking lot with one narrow link: capacities 10, 10, 4. The narrow link gives
// the long flow and its short flow 4/2 = 2; the short flows on the wide links
// then get 10 - 2 = 8.
TEST(FlowSolver, ParkingLotWithANarrowLinkGivesTheRestToTheShortFlows) {
  FlowSolver s;
  const std::vector<LinkId> chain{s.add_link(10.0), s.add_link(10.0), s.add_link(4.0)};
  const FlowId longest = s.add_flow(chain, 1.0);
  const FlowId s0 = s.add_flow({chain[0]}, 1.0);
  const FlowId s1 = s.add_flow({chain[1]}, 1.0);
  const FlowId s2 = s.add_flow({chain[2]}, 1.0);
  s.solve();
  EXPECT_EQ(s.rate(longest), 2.0);
  EXPECT_EQ(s.rate(s2), 2.0);
  EXPECT_EQ(s.rate(s0), 8.0);
  EXPECT_EQ(s.rate(s1), 8.0);
}

TEST(FlowSolver, RemovingAFlowRedistributesItsShare) {
  FlowSolver s;
  const LinkId a = s.add_link(10.0);
  const LinkId b = s.add_link(3.0);
  const LinkId c = s.add_link(5.0);
  const FlowId f_a = s.add_flow({a}, 1.0);
  const FlowId f_b = s.add_flow({a, b}, 1.0);
  const FlowId f_c = s.add_flow({c}, 1.0);
  s.solve();
  ASSERT_EQ(s.rate(f_a), 7.0);
  s.remove_flow(f_b);
  EXPECT_TRUE(s.needs_solve());
  s.solve();
  EXPECT_EQ(s.rate(f_a), 10.0);
  EXPECT_EQ(s.rate(f_c), 5.0);
  EXPECT_EQ(s.link_utilization(b), 0.0);
  // Only A and B (the links f_b crossed) and f_a were re-solved; C's component
  // was left alone.
  EXPECT_EQ(s.last_solve().links, 2u);
  EXPECT_EQ(s.last_solve().flows, 1u);
  EXPECT_EQ(s.num_flows(), 2u);
  EXPECT_THROW((void)s.rate(f_b), std::invalid_argument);
}

// 1 GB and 2 GB on a 1 GB/s link: 0.5 GB/s each until the first finishes at
// 2 s; the second then has 1 GB left at 1 GB/s and finishes at 3 s.
TEST(FlowSolver, AdvanceAndCompletionTimes) {
  FlowSolver s;
  const LinkId a = s.add_link(1 * kGB);
  const FlowId small = s.add_flow({a}, 1 * kGB);
  const FlowId large = s.add_flow({a}, 2 * kGB);
  s.solve();
  EXPECT_EQ(s.time_to_next_completion(), 2.0);
  s.advance(1.0);
  EXPECT_EQ(s.remaining(small), 0.5 * kGB);
  EXPECT_EQ(s.remaining(large), 1.5 * kGB);
  EXPECT_TRUE(s.completed().empty());
  EXPECT_EQ(s.time_to_next_completion(), 1.0);
  s.advance(1.0);
  EXPECT_EQ(s.completed(), std::vector<FlowId>{small});
  EXPECT_EQ(s.remaining(large), 1 * kGB);
  s.remove_flow(small);
  s.solve();
  EXPECT_EQ(s.rate(large), 1 * kGB);
  EXPECT_EQ(s.time_to_next_completion(), 1.0);
  s.advance(s.time_to_next_completion());
  EXPECT_EQ(s.now(), 3.0);
  EXPECT_EQ(s.completed(), std::vector<FlowId>{large});
  s.remove_flow(large);
  s.solve();
  EXPECT_EQ(s.time_to_next_completion(), kInf);
}

// Processor sharing on one link: with bytes b_1 <= ... <= b_n, the k-th flow
// finishes at t_k = t_(k-1) + (n - k + 1)(b_k - b_(k-1)) / C, and the last at
// sum(b) / C (the link never idles). Runs the event loop a simulator would.
TEST(FlowSolver, DrainingOneLinkFollowsProcessorSharing) {
  core::Rng rng(3);
  const double C = 25e9;
  std::vector<double> bytes;
  for (int i = 0; i < 50; ++i) bytes.push_back(std::floor(rng.uniform(1e6, 1e9)));
  FlowSolver s;
  const LinkId a = s.add_link(C);
  std::vector<FlowId> ids;
  for (const double b : bytes) ids.push_back(s.add_flow({a}, b));
  std::vector<double> sorted = bytes;
  std::sort(sorted.begin(), sorted.end());
  std::vector<double> expected;
  double t = 0.0;
  double prev = 0.0;
  double total = 0.0;
  for (std::size_t k = 0; k < sorted.size(); ++k) {
    t += static_cast<double>(sorted.size() - k) * (sorted[k] - prev) / C;
    prev = sorted[k];
    total += sorted[k];
    expected.push_back(t);
  }
  std::vector<double> finished;
  s.solve();
  while (s.num_flows() > 0) {
    s.advance(s.time_to_next_completion());
    const std::vector<FlowId> done = s.completed(1e-12);
    ASSERT_FALSE(done.empty());
    for (const FlowId f : done) {
      finished.push_back(s.now());
      s.remove_flow(f);
    }
    s.solve();
  }
  ASSERT_EQ(finished.size(), expected.size());
  for (std::size_t k = 0; k < expected.size(); ++k) EXPECT_NEAR(finished[k], expected[k], 1e-9 * expected[k]) << k;
  EXPECT_NEAR(s.now(), total / C, 1e-9 * total / C);
  EXPECT_EQ(s.time_to_next_completion(), kInf);
}

TEST(FlowSolver, CompletedUsesTheToleranceAndListsIdsInOrder) {
  FlowSolver s;
  const LinkId a = s.add_link(4.0);
  const LinkId b = s.add_link(4.0);
  const FlowId slow = s.add_flow({a}, 8.0);        // alone on a: 4 B/s, 2 s
  const FlowId on_time = s.add_flow({b}, 4.0);     // b: 2 B/s each, 2 s
  const FlowId late = s.add_flow({b}, 4.0 + 1e-6);  // 2 s + 0.5 us
  s.solve();
  s.advance(2.0);
  EXPECT_EQ(s.completed(), (std::vector<FlowId>{slow, on_time}));
  EXPECT_EQ(s.completed(1e-6), (std::vector<FlowId>{slow, on_time, late}));
  EXPECT_THROW((void)s.completed(-1.0), std::invalid_argument);
}

// take_completed() removes what completed() lists, in that order, and hands back
// the tags given to add_flow; the flow left keeps its rate until the next solve.
TEST(FlowSolver, TakeCompletedRemovesTheFinishedFlowsAndReturnsTheirTags) {
  FlowSolver s;
  const LinkId a = s.add_link(4.0);
  const LinkId b = s.add_link(4.0);
  s.add_flow({b}, 4.0, FlowSolver::kUnlimited, 20);           // b: 2 B/s each, 2 s
  s.add_flow({a}, 8.0, FlowSolver::kUnlimited, 10);           // alone on a: 4 B/s, 2 s
  const FlowId late = s.add_flow({b}, 6.0, FlowSolver::kUnlimited, 30);  // 3 s at 2 B/s
  s.solve();
  s.advance(2.0);
  std::vector<std::uint64_t> tags{99};
  s.take_completed(0.0, tags);
  EXPECT_EQ(tags, (std::vector<std::uint64_t>{99, 20, 10}));  // appended, in id order
  EXPECT_EQ(s.num_flows(), 1u);
  EXPECT_TRUE(s.needs_solve());
  s.solve();
  EXPECT_EQ(s.rate(late), 4.0);  // b to itself: 2 B left at 4 B/s
  EXPECT_EQ(s.time_to_next_completion(), 0.5);
  EXPECT_THROW(s.take_completed(-1.0, tags), std::invalid_argument);
}

// A flow kept outside the solver and adopted later goes on as if added at the
// start: f1 (100 B) alone on a 10 B/s link for 2 s has 80 B left; f2 (40 B)
// joins and both get 5 B/s, so f2 ends 8 s later and f1 (40 B left) 4 s after.
TEST(FlowSolver, AnAdoptedFlowContinuesAsIfItHadBeenThereAllAlong) {
  FlowSolver s;
  const LinkId a = s.add_link(10.0);
  const std::uint64_t id = s.reserve_ids(1);
  EXPECT_EQ(id, 0u);
  s.advance(2.0);
  s.adopt_flow(id, std::vector<LinkId>{a}, 100.0, FlowSolver::kUnlimited, 1, 0.0, 10.0);
  EXPECT_EQ(s.remaining(FlowId{id}), 80.0);
  s.add_flow({a}, 40.0, FlowSolver::kUnlimited, 2);
  s.solve();
  EXPECT_EQ(s.rate(FlowId{id}), 5.0);
  EXPECT_EQ(s.time_to_next_completion(), 8.0);
  s.advance(8.0);
  std::vector<std::uint64_t> tags;
  std::vector<std::uint64_t> ids;
  s.take_completed(0.0, tags, &ids);
  EXPECT_EQ(tags, (std::vector<std::uint64_t>{2}));
  EXPECT_EQ(ids, (std::vector<std::uint64_t>{1}));  // after the reserved id
  s.solve();
  EXPECT_EQ(s.time_to_next_completion(), 4.0);
}

// Adopted before any solve rated it (rate 0), a flow is rated by the next
// solve like one just added; ids must stay in order on every link.
TEST(FlowSolver, AnUnratedAdoptedFlowIsRatedByTheNextSolve) {
  FlowSolver s;
  const LinkId a = s.add_link(10.0);
  const std::uint64_t id = s.reserve_ids(1);
  s.adopt_flow(id, std::vector<LinkId>{a}, 30.0, FlowSolver::kUnlimited, 7, 0.0, 0.0);
  EXPECT_TRUE(s.needs_solve());
  s.solve();
  EXPECT_EQ(s.rate(FlowId{id}), 10.0);
  EXPECT_EQ(s.time_to_next_completion(), 3.0);
  // A later id is already on the link: adopting an older one would break the order.
  const std::uint64_t older = s.reserve_ids(1);
  s.add_flow({a}, 1.0);
  EXPECT_THROW(s.adopt_flow(older, std::vector<LinkId>{a}, 1.0, FlowSolver::kUnlimited, 0, 0.0, 0.0),
               std::logic_error);
  EXPECT_THROW(s.adopt_flow(99, std::vector<LinkId>{a}, 1.0, FlowSolver::kUnlimited, 0, 0.0, 0.0),
               std::logic_error);  // never reserved
  EXPECT_TRUE(s.link_idle(s.add_link(1.0)));
  EXPECT_FALSE(s.link_idle(a));
}

// FlowIndex, the id -> slot map behind the ids, against std::map under random
// inserts and erases that wrap around its table and shift runs back.
TEST(FlowIndex, AgreesWithAnOrderedMap) {
  core::Rng rng(7);
  FlowIndex index;
  std::map<std::uint64_t, std::uint32_t> expected;
  std::uint64_t next = 0;
  for (int step = 0; step < 20000; ++step) {
    if (expected.empty() || rng.uniform() < 0.55) {
      const auto slot = static_cast<std::uint32_t>(rng.uniform() * 1000);
      index.insert(next, slot);
      expected[next++] = slot;
    } else {
      auto it = expected.begin();
      std::advance(it, static_cast<long>(rng.uniform() * static_cast<double>(expected.size())));
      index.erase(it->first);
      expected.erase(it);
    }
    if (step % 97 == 0) {
      ASSERT_EQ(index.size(), expected.size());
      for (std::uint64_t id = next > 300 ? next - 300 : 0; id < next; ++id) {
        const auto found = index.find(id);
        const auto it = expected.find(id);
        ASSERT_EQ(found.has_value(), it != expected.end()) << id;
        if (found) {
          ASSERT_EQ(*found, it->second) << id;
        }
      }
    }
  }
  index.erase(next + 5);  // absent: nothing happens
  EXPECT_EQ(index.size(), expected.size());
}

TEST(FlowSolver, EmptyPathIsLimitedOnlyByItsCap) {
  FlowSolver s;
  const FlowId capped = s.add_flow({}, 10.0, 5.0);
  const FlowId unlimited = s.add_flow({}, 10.0);
  const FlowId empty = s.add_flow({}, 0.0);
  EXPECT_TRUE(s.needs_solve());
  s.solve();
  EXPECT_EQ(s.rate(capped), 5.0);
  EXPECT_EQ(s.rate(unlimited), kInf);
  EXPECT_EQ(s.remaining(unlimited), 0.0);
  EXPECT_EQ(s.time_to_next_completion(), 0.0);
  EXPECT_EQ(s.completed(), (std::vector<FlowId>{unlimited, empty}));
  s.remove_flow(unlimited);
  s.remove_flow(empty);
  EXPECT_FALSE(s.needs_solve());  // removing pathless flows changes no other rate
  EXPECT_EQ(s.time_to_next_completion(), 2.0);
}

TEST(FlowSolver, ZeroByteFlowCompletesAtOnceButSharesUntilRemoved) {
  FlowSolver s;
  const LinkId a = s.add_link(10.0);
  const FlowId zero = s.add_flow({a}, 0.0);
  const FlowId other = s.add_flow({a}, 10.0);
  s.solve();
  EXPECT_EQ(s.time_to_next_completion(), 0.0);
  EXPECT_EQ(s.completed(), std::vector<FlowId>{zero});
  EXPECT_EQ(s.rate(other), 5.0);
}

// Builds a random instance: `links` links of capacity 1..100 and `flows` flows
// over 1..4 distinct random links, a quarter of them capped.
struct Instance {
  std::vector<double> capacities;
  std::vector<std::vector<LinkId>> paths;
  std::vector<double> caps;
};

Instance random_instance(std::uint64_t seed, int links, int flows) {
  core::Rng rng(seed);
  Instance in;
  for (int i = 0; i < links; ++i) in.capacities.push_back(rng.uniform(1.0, 100.0));
  for (int i = 0; i < flows; ++i) {
    std::vector<LinkId> path;
    const auto hops = 1 + rng.below(4);
    while (path.size() < hops) {
      const LinkId l{static_cast<std::uint32_t>(rng.below(static_cast<std::uint64_t>(links)))};
      if (std::find(path.begin(), path.end(), l) == path.end()) path.push_back(l);
    }
    in.paths.push_back(std::move(path));
    in.caps.push_back(rng.below(4) == 0 ? rng.uniform(0.5, 20.0) : kInf);
  }
  return in;
}

std::vector<FlowId> load(FlowSolver& s, const Instance& in) {
  for (const double c : in.capacities) s.add_link(c);
  std::vector<FlowId> ids;
  for (std::size_t i = 0; i < in.paths.size(); ++i) ids.push_back(s.add_flow(in.paths[i], 1.0, in.caps[i]));
  return ids;
}

// The definition (Bertsekas & Gallager): rates are feasible, and every flow is
// either at its cap or crosses a saturated link on which no flow is faster.
TEST(FlowSolver, RandomInstancesAreFeasibleAndMaxMinFair) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE(seed);
    const Instance in = random_instance(seed, 12, 40);
    FlowSolver s;
    const std::vector<FlowId> ids = load(s, in);
    s.solve();
    const double tol = 1e-9;
    std::vector<double> used(in.capacities.size(), 0.0);
    std::vector<double> fastest(in.capacities.size(), 0.0);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const double r = s.rate(ids[i]);
      ASSERT_GT(r, 0.0);
      ASSERT_LE(r, in.caps[i] * (1 + tol));
      for (const LinkId l : in.paths[i]) {
        used[static_cast<std::uint32_t>(l)] += r;
        fastest[static_cast<std::uint32_t>(l)] = std::max(fastest[static_cast<std::uint32_t>(l)], r);
      }
    }
    for (std::size_t l = 0; l < used.size(); ++l) ASSERT_LE(used[l], in.capacities[l] * (1 + tol));
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const double r = s.rate(ids[i]);
      bool bottlenecked = r >= in.caps[i] * (1 - tol);
      for (const LinkId l : in.paths[i]) {
        const auto k = static_cast<std::uint32_t>(l);
        if (used[k] >= in.capacities[k] * (1 - tol) && r >= fastest[k] * (1 - tol)) bottlenecked = true;
      }
      EXPECT_TRUE(bottlenecked) << "flow " << i << " could go faster";
    }
  }
}

TEST(FlowSolver, SameInputsGiveTheSameRatesBitForBit) {
  const Instance in = random_instance(7, 50, 400);
  FlowSolver s1;
  FlowSolver s2;
  const std::vector<FlowId> ids1 = load(s1, in);
  const std::vector<FlowId> ids2 = load(s2, in);
  s1.solve();
  s2.solve();
  ASSERT_EQ(ids1, ids2);
  for (std::size_t i = 0; i < ids1.size(); ++i) {
    EXPECT_EQ(std::bit_cast<std::uint64_t>(s1.rate(ids1[i])), std::bit_cast<std::uint64_t>(s2.rate(ids2[i])));
  }
}

// Solving after every change (incremental, component by component) ends bit for
// bit where one solve of the surviving flows from scratch ends: the rates
// depend on the current flows only, not on the history.
TEST(FlowSolver, IncrementalSolvesMatchASolveFromScratchBitForBit) {
  const Instance in = random_instance(11, 60, 300);
  core::Rng rng(12);
  FlowSolver inc;
  for (const double c : in.capacities) inc.add_link(c);
  std::vector<std::size_t> alive;  // indices into the instance, in add order
  std::vector<FlowId> ids;
  for (std::size_t i = 0; i < in.paths.size(); ++i) {
    alive.push_back(i);
    ids.push_back(inc.add_flow(in.paths[i], 1.0, in.caps[i]));
    inc.solve();
    if (rng.below(3) == 0) {  // remove a random live flow
      const auto k = static_cast<std::size_t>(rng.below(alive.size()));
      inc.remove_flow(ids[k]);
      alive.erase(alive.begin() + static_cast<std::ptrdiff_t>(k));
      ids.erase(ids.begin() + static_cast<std::ptrdiff_t>(k));
      inc.solve();
    }
  }

  FlowSolver scratch;
  for (const double c : in.capacities) scratch.add_link(c);
  std::vector<FlowId> scratch_ids;
  for (const std::size_t i : alive) scratch_ids.push_back(scratch.add_flow(in.paths[i], 1.0, in.caps[i]));
  scratch.solve();
  ASSERT_EQ(ids.size(), scratch_ids.size());
  for (std::size_t k = 0; k < ids.size(); ++k) {
    EXPECT_EQ(std::bit_cast<std::uint64_t>(inc.rate(ids[k])), std::bit_cast<std::uint64_t>(scratch.rate(scratch_ids[k])))
        << "flow " << alive[k];
  }
}

TEST(FlowSolver, BadInputThrows) {
  FlowSolver s;
  EXPECT_THROW(s.add_link(0.0), std::invalid_argument);
  EXPECT_THROW(s.add_link(-1.0), std::invalid_argument);
  EXPECT_THROW(s.add_link(std::nan("")), std::invalid_argument);
  EXPECT_THROW(s.add_link(kInf), std::invalid_argument);
  const LinkId a = s.add_link(1.0);
  EXPECT_THROW(s.add_flow({LinkId{1}}, 1.0), std::invalid_argument);
  EXPECT_THROW(s.add_flow({a}, -1.0), std::invalid_argument);
  EXPECT_THROW(s.add_flow({a}, std::nan("")), std::invalid_argument);
  EXPECT_THROW(s.add_flow({a}, kInf), std::invalid_argument);
  EXPECT_THROW(s.add_flow({a}, 1.0, 0.0), std::invalid_argument);
  EXPECT_THROW(s.add_flow({a}, 1.0, -2.0), std::invalid_argument);
  EXPECT_THROW(s.add_flow({a}, 1.0, std::nan("")), std::invalid_argument);
  EXPECT_THROW(s.add_flow({a, a}, 1.0), std::invalid_argument);
  EXPECT_EQ(s.num_flows(), 0u);  // nothing half-added
  EXPECT_FALSE(s.needs_solve());
  EXPECT_THROW(s.remove_flow(FlowId{0}), std::invalid_argument);
  EXPECT_THROW((void)s.link_utilization(LinkId{5}), std::invalid_argument);
  EXPECT_THROW(s.advance(-1.0), std::invalid_argument);
  EXPECT_THROW(s.advance(kInf), std::invalid_argument);
  try {
    s.add_flow({LinkId{9}}, 1.0);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "FlowSolver::add_flow: unknown link id 9 (the solver has 1 links)");
  }
  // Using rates that no longer hold is a caller bug.
  const FlowId f = s.add_flow({a}, 1.0);
  EXPECT_THROW((void)s.rate(f), std::logic_error);
  EXPECT_THROW(s.advance(1.0), std::logic_error);
  EXPECT_THROW((void)s.time_to_next_completion(), std::logic_error);
  s.solve();
  s.remove_flow(f);
  EXPECT_THROW(s.remove_flow(f), std::invalid_argument);
}

}  // namespace
}  // namespace trainsim::net
