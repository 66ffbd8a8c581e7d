// The executor's stream semantics on hand-built task graphs with fake costs.
#include <gtest/gtest.h>

#include <map>
#include <utility>

#include "execution/executor.h"
#include "fake_costs.h"

namespace trainsim {
namespace {

using workload::Category;
using workload::Stream;
using workload::Task;
using workload::TaskGraph;

using testing::BytesAreSeconds;
using testing::FlopsAreSeconds;

Task compute(TaskGraph& g, int rank, double seconds, std::vector<workload::TaskId> deps = {},
             hw::HostPass pass = hw::HostPass::kNone, hw::KernelClass kind = hw::KernelClass::kMatmul) {
  Task t;
  workload::Work w{"k", {kind, seconds, 0.0, 1}, std::nullopt, 0.0, std::nullopt, std::nullopt};
  w.compute.host_pass = pass;
  t.work = g.add_work(std::move(w));
  t.rank = rank;
  t.deps = std::move(deps);
  return t;
}

Task collective(TaskGraph& g, int rank, double seconds, std::vector<workload::TaskId> deps) {
  Task t;
  t.work = g.add_work({"ar", {}, net::Collective{net::CollectiveKind::kAllReduce, seconds, {2, 1, 2, nullptr}}, 0.0, std::nullopt, std::nullopt});
  t.rank = rank;
  t.stream = Stream::kDpComm;
  t.category = Category::kAllReduce;
  t.deps = std::move(deps);
  return t;
}

// A collective sharing `instance` with the other tasks of one call.
workload::TaskId add_shared(TaskGraph& g, int rank, double seconds, std::vector<workload::TaskId> deps,
                            std::int64_t instance) {
  const workload::TaskId id = g.add(collective(g, rank, seconds, std::move(deps)));
  g.share_collective(id, instance);
  return id;
}

struct Fixture {
  FlopsAreSeconds compute_model;
  net::AnalyticBackend backend{std::make_unique<BytesAreSeconds>()};
  core::Simulator sim;
  double overlap_slowdown = 0.0;  // tensor-core kernels
  double overlap_memory = 0.0;    // memory-bound kernels
  exec::Timeline run(const TaskGraph& g) {
    exec::Executor e(compute_model, backend, hw::Precision::kBf16);
    e.set_overlap_slowdown(overlap_slowdown, overlap_memory);
    return e.run(g, sim);
  }
};

core::Time at(double s) { return core::from_seconds(s); }

TEST(Executor, OneLaneRunsInProgramOrder) {
  TaskGraph g;
  g.add(compute(g, 0, 1.0));
  g.add(compute(g, 0, 2.0));
  Fixture f;
  const auto tl = f.run(g);
  ASSERT_EQ(tl.spans.size(), 2u);
  EXPECT_EQ(tl.spans[1].start, at(1.0));
  EXPECT_EQ(tl.makespan, at(3.0));
}

TEST(Executor, CommunicationOverlapsLaterComputation) {
  // backward 1 s -> all-reduce 3 s (depends on it) while backward 2 s runs; then
  // the optimizer (1 s) waits for both: 1 + max(3, 2) + 1 = 5 s.
  TaskGraph g;
  const auto b1 = g.add(compute(g, 0, 1.0));
  const auto ar = g.add(collective(g, 0, 3.0, {b1}));
  g.add(compute(g, 0, 2.0));
  g.add(compute(g, 0, 1.0, {ar}));
  Fixture f;
  EXPECT_EQ(f.run(g).makespan, at(5.0));
}

TEST(Executor, ComputeBesideACollectiveIsSlowedForTheOverlapOnly) {
  // docs/model.md, "Compute beside communication", s = 0.5. backward 1 s, then the
  // all-reduce (2 s, t = 1..3) beside a 4 s backward started at t = 1: for 2 s it
  // does 2 / 1.5 s of its work, the remaining 4 - 4/3 s at full speed after t = 3:
  // it ends at 3 + 8/3 s. Without the slowdown: at 5 s.
  TaskGraph g;
  const auto b1 = g.add(compute(g, 0, 1.0));
  g.add(collective(g, 0, 2.0, {b1}));
  const auto b2 = g.add(compute(g, 0, 4.0));
  Fixture f;
  f.overlap_slowdown = 0.5;
  const auto tl = f.run(g);
  EXPECT_NEAR(static_cast<double>(tl.makespan), static_cast<double>(at(3.0 + 8.0 / 3.0)), 1.0);
  for (const auto& span : tl.spans)
    if (span.task == b2) {
      EXPECT_NEAR(static_cast<double>(span.end), static_cast<double>(at(3.0 + 8.0 / 3.0)), 1.0);
    }
  Fixture plain;
  EXPECT_EQ(plain.run(g).makespan, at(5.0));
}

TEST(Executor, ACopyEngineTransferSlowsNoCompute) {
  // The same graph as above with the transfer on the copy engines (Transformer
  // Engine's userbuffers ring exchange): the 4 s backward runs at its own speed
  // beside it and ends at 1 + 4 = 5 s.
  TaskGraph g;
  const auto b1 = g.add(compute(g, 0, 1.0));
  Task copy = collective(g, 0, 2.0, {b1});
  net::Collective c = *g.works()[copy.work].collective;
  c.copy_engine = true;
  copy.work = g.add_work({"ring", {}, c, 0.0, std::nullopt, std::nullopt});
  g.add(std::move(copy));
  g.add(compute(g, 0, 4.0));
  Fixture f;
  f.overlap_slowdown = 0.5;
  EXPECT_EQ(f.run(g).makespan, at(5.0));
}

TEST(Executor, AChainStartedBesideACollectiveSpeedsUpWhenItEnds) {
  // s = 0.5: an all-reduce of 1 s (t = 0..1) and two back-to-back kernels of 2 s
  // each on the compute lane, started beside it at 1.5x: the first would end at 3;
  // at t = 1 it has done 1 / 1.5 s of its work, the rest (4/3 s) at full speed: it
  // ends at 7/3 s, the second runs 7/3 .. 13/3 s.
  TaskGraph g;
  g.add(collective(g, 0, 1.0, {}));
  g.add(compute(g, 0, 2.0));
  const auto c1 = g.add(compute(g, 0, 2.0));
  Fixture f;
  f.overlap_slowdown = 0.5;
  const auto tl = f.run(g);
  for (const auto& span : tl.spans)
    if (span.task == c1) {
      EXPECT_NEAR(static_cast<double>(span.start), static_cast<double>(at(7.0 / 3.0)), 1.0);
      EXPECT_NEAR(static_cast<double>(span.end), static_cast<double>(at(13.0 / 3.0)), 1.0);
    }
  EXPECT_NEAR(static_cast<double>(tl.makespan), static_cast<double>(at(13.0 / 3.0)), 1.0);
}

TEST(Executor, MemoryBoundKernelsBesideACollectiveTakeTheirOwnFactor) {
  // s = 0.5 for tensor-core kernels, 0.1 for memory-bound ones: an all-reduce of
  // 1.5 s (t = 0..1.5) beside a chain of a memory-bound kernel (1.1 s) and a GEMM
  // (2 s). The first takes 1.1 x 1.1 = 1.21 s; the GEMM starts at 1.21 at 1.5x, does
  // 0.29 / 1.5 s of its work by t = 1.5 and the rest at full speed: it ends at
  // 1.5 + 2 - 0.29 / 1.5 = 3.306667 s. Without the slowdown: 3.1 s.
  TaskGraph g;
  g.add(collective(g, 0, 1.5, {}));
  const auto m = g.add(compute(g, 0, 1.1, {}, hw::HostPass::kNone, hw::KernelClass::kMemoryBound));
  const auto k = g.add(compute(g, 0, 2.0));
  Fixture f;
  f.overlap_slowdown = 0.5;
  f.overlap_memory = 0.1;
  const auto tl = f.run(g);
  for (const auto& span : tl.spans) {
    if (span.task == m) {
      EXPECT_NEAR(static_cast<double>(span.end), static_cast<double>(at(1.21)), 1.0);
    }
    if (span.task == k) {
      EXPECT_NEAR(static_cast<double>(span.end), static_cast<double>(at(1.5 + 2.0 - 0.29 / 1.5)), 1.0);
    }
  }
  EXPECT_NEAR(static_cast<double>(tl.makespan), static_cast<double>(at(1.5 + 2.0 - 0.29 / 1.5)), 1.0);
  Fixture plain;
  EXPECT_EQ(plain.run(g).makespan, at(3.1));

  // The all-reduce ends (t = 1) inside the memory-bound kernel: it has done 1 / 1.1 s
  // of its work, the rest (1.1 - 1 / 1.1 s) at full speed: it ends at 1.190909 s, the
  // GEMM at full speed after it, at 3.190909 s.
  TaskGraph h;
  h.add(collective(h, 0, 1.0, {}));
  const auto m2 = h.add(compute(h, 0, 1.1, {}, hw::HostPass::kNone, hw::KernelClass::kMemoryBound));
  h.add(compute(h, 0, 2.0));
  Fixture g2;
  g2.overlap_slowdown = 0.5;
  g2.overlap_memory = 0.1;
  const auto tl2 = g2.run(h);
  for (const auto& span : tl2.spans)
    if (span.task == m2) {
      EXPECT_NEAR(static_cast<double>(span.end), static_cast<double>(at(1.0 + 1.1 - 1.0 / 1.1)), 1.0);
    }
  EXPECT_NEAR(static_cast<double>(tl2.makespan), static_cast<double>(at(3.0 + 1.1 - 1.0 / 1.1)), 1.0);
}

TEST(Executor, ANegativeOverlapSlowdownIsRefused) {
  FlopsAreSeconds compute_model;
  net::AnalyticBackend backend{std::make_unique<BytesAreSeconds>()};
  exec::Executor e(compute_model, backend, hw::Precision::kBf16);
  EXPECT_THROW(e.set_overlap_slowdown(-0.1, 0.0), std::invalid_argument);
  EXPECT_THROW(e.set_overlap_slowdown(0.0, -1.0), std::invalid_argument);
}

TEST(Executor, ExposedCommunicationWhenComputeIsShort) {
  TaskGraph g;
  const auto b1 = g.add(compute(g, 0, 1.0));
  const auto ar = g.add(collective(g, 0, 3.0, {b1}));
  g.add(compute(g, 0, 0.5));
  g.add(compute(g, 0, 1.0, {ar}));
  Fixture f;
  EXPECT_EQ(f.run(g).makespan, at(5.0));  // 1 + 3 + 1; the 0.5 s hides under the all-reduce
}

TEST(Executor, SharedCollectiveStartsWhenTheLastParticipantArrives) {
  TaskGraph g;
  const auto a = g.add(compute(g, 0, 1.0));
  const auto b = g.add(compute(g, 1, 4.0));
  const auto c0 = add_shared(g, 0, 2.0, {a}, 7);
  const auto c1 = add_shared(g, 1, 2.0, {b}, 7);
  Fixture f;
  const auto tl = f.run(g);
  for (const auto& s : tl.spans)
    if (s.task == c0 || s.task == c1) {
      EXPECT_EQ(s.start, at(4.0));
      EXPECT_EQ(s.end, at(6.0));
    }
  EXPECT_EQ(tl.makespan, at(6.0));
}

// Kernels a lane runs back to back, none waited on by another lane and none waiting
// on one, take one event (docs/architecture.md, "Engine speed"), and each keeps
// its own span. k1 -> k2 run as one; the all-reduce waits for k2, so k3 does not
// join them; k4 waits for the all-reduce. Spans: k1 0-1, k2 1-3, ar 3-5, k3 3-3.5,
// k4 5-6.
TEST(Executor, KernelsWithNothingBetweenThemRunAsOneEvent) {
  TaskGraph g;
  const auto k1 = g.add(compute(g, 0, 1.0));
  const auto k2 = g.add(compute(g, 0, 2.0));
  const auto ar = g.add(collective(g, 0, 2.0, {k2}));
  const auto k3 = g.add(compute(g, 0, 0.5));
  const auto k4 = g.add(compute(g, 0, 1.0, {ar}));
  Fixture f;
  const auto tl = f.run(g);
  ASSERT_EQ(tl.spans.size(), 5u);
  std::map<workload::TaskId, std::pair<core::Time, core::Time>> span;
  for (const auto& s : tl.spans) span[s.task] = {s.start, s.end};
  EXPECT_EQ(span[k1], std::make_pair(at(0.0), at(1.0)));
  EXPECT_EQ(span[k2], std::make_pair(at(1.0), at(3.0)));
  EXPECT_EQ(span[ar], std::make_pair(at(3.0), at(5.0)));
  EXPECT_EQ(span[k3], std::make_pair(at(3.0), at(3.5)));
  EXPECT_EQ(span[k4], std::make_pair(at(5.0), at(6.0)));
  EXPECT_EQ(f.sim.events_executed(), 4u);  // k1 + k2, ar, k3, k4
}

TEST(Executor, SameGraphGivesTheSameTimeline) {
  TaskGraph g;
  const auto a = g.add(compute(g, 0, 0.25));
  g.add(collective(g, 0, 0.5, {a}));
  g.add(compute(g, 0, 0.125));
  Fixture f1, f2;
  const auto t1 = f1.run(g);
  const auto t2 = f2.run(g);
  ASSERT_EQ(t1.spans.size(), t2.spans.size());
  for (std::size_t i = 0; i < t1.spans.size(); ++i) {
    EXPECT_EQ(t1.spans[i].task, t2.spans[i].task);
    EXPECT_EQ(t1.spans[i].start, t2.spans[i].start);
  }
}

// Tasks repeating one work (every micro-batch's copy of a kernel) are priced
// once, and a straggler's slowdown still applies to its own rank's copies only:
// rank 0 runs two 1 s kernels, rank 1 (slowed by 50%) the same two in 3 s.
TEST(Executor, TasksSharingAWorkKeepTheirRanksSlowdown) {
  TaskGraph g;
  const Task kernel = compute(g, 0, 1.0);
  for (int rank : {0, 0, 1, 1}) {
    Task t = kernel;
    t.rank = rank;
    g.add(t);
  }
  ASSERT_EQ(g.works().size(), 1U);
  Fixture f;
  exec::Executor e(f.compute_model, f.backend, hw::Precision::kBf16);
  e.set_compute_slowdown({{1, 0.5}});
  const exec::Timeline tl = e.run(g, f.sim);
  ASSERT_EQ(tl.spans.size(), 4U);
  EXPECT_EQ(tl.makespan, at(3.0));
  for (const exec::Span& sp : tl.spans) EXPECT_EQ(sp.end - sp.start, at(g[sp.task].rank == 0 ? 1.0 : 1.5));
}

// A span carries its task's rank (per-rank passes read no task): ranks 3 and 5,
// compute and collectives, chained kernels and single ones.
TEST(Executor, ASpanCarriesItsTasksRank) {
  TaskGraph g;
  const auto a = g.add(compute(g, 5, 1.0));
  g.add(compute(g, 5, 1.0));
  const auto b = g.add(compute(g, 3, 2.0));
  g.add(collective(g, 3, 1.0, {b}));
  g.add(collective(g, 5, 1.0, {a}));
  g.add(compute(g, 3, 1.0));
  Fixture f;
  const exec::Timeline tl = f.run(g);
  ASSERT_EQ(tl.spans.size(), 6U);
  for (const exec::Span& sp : tl.spans) EXPECT_EQ(sp.rank, g[sp.task].rank) << "task " << sp.task;
}

// Only a collective of the graph shares an instance, marked in the order the
// tasks were added, with an instance >= 0.
TEST(TaskGraph, RefusesASharedCollectiveItCannotRun) {
  TaskGraph g;
  const auto k = g.add(compute(g, 0, 1.0));
  const auto c = g.add(collective(g, 0, 1.0, {k}));
  const auto d = g.add(collective(g, 1, 1.0, {}));
  EXPECT_THROW(g.share_collective(k, 1), std::invalid_argument);      // a kernel
  EXPECT_THROW(g.share_collective(d + 1, 1), std::invalid_argument);  // no such task
  EXPECT_THROW(g.share_collective(c, -1), std::invalid_argument);
  g.share_collective(d, 1);
  EXPECT_THROW(g.share_collective(c, 1), std::invalid_argument);  // before d
  ASSERT_EQ(g.shared_collectives().size(), 1U);
  EXPECT_EQ(g.shared_collectives()[0].task, d);
}

// A task must name a work of its own graph.
TEST(TaskGraph, RefusesATaskWithoutItsWork) {
  TaskGraph g;
  Task t;
  t.work = 0;
  EXPECT_THROW(g.add(t), std::invalid_argument);
}

TEST(Executor, ReportsADeadlockInsteadOfHanging) {
  // Two participants of one collective queued on the same lane: the first waits
  // for the second, which can never reach the head of the lane.
  TaskGraph stuck;
  const auto x = stuck.add(compute(stuck, 0, 1.0));
  add_shared(stuck, 0, 1.0, {x}, 9);
  add_shared(stuck, 0, 1.0, {}, 9);
  Fixture f;
  EXPECT_THROW(f.run(stuck), std::logic_error);
}

// Kernels of 10, 1, 1, 1 and 1 us issued by a host thread 3 us apart (at 3, 6, 9,
// 12 and 15 us): the first runs 3-13 while the host runs ahead, so the other four,
// all issued by the time the GPU is free, run back to back 13-17. The host's cost
// shows only before the first kernel: a GPU-bound stretch hides it.
TEST(HostDispatch, TheGpuWaitsOnlyWhereTheHostIsBehind) {
  Fixture f;
  f.compute_model.host_s = 3e-6;
  TaskGraph g;
  for (double us : {10.0, 1.0, 1.0, 1.0, 1.0}) {
    g.add(compute(g, 0, us * 1e-6, {}, hw::HostPass::kForward));
  }
  const exec::Timeline tl = f.run(g);
  ASSERT_EQ(tl.spans.size(), 5U);
  EXPECT_EQ(tl.spans[0].start, at(3e-6));
  EXPECT_EQ(tl.spans[0].end, at(13e-6));
  EXPECT_EQ(tl.spans[3].end, at(16e-6));
  EXPECT_EQ(tl.spans[4].start, at(16e-6));
  EXPECT_EQ(tl.makespan, at(17e-6));
}

// Host-bound: n kernels of 1 us issued 3 us apart end at 3n + 1 us; kernels not
// marked host-dispatched (the fused step's) never wait.
TEST(HostDispatch, ManyShortKernelsRunAtTheHostsPace) {
  Fixture f;
  f.compute_model.host_s = 3e-6;
  TaskGraph dispatched;
  TaskGraph fused;
  for (int i = 0; i < 100; ++i) {
    fused.add(compute(fused, 0, 1e-6));
    dispatched.add(compute(dispatched, 0, 1e-6, {}, hw::HostPass::kForward));
  }
  EXPECT_EQ(f.run(dispatched).makespan, at(301e-6));
  core::Simulator sim;
  exec::Executor e(f.compute_model, f.backend, hw::Precision::kBf16);
  EXPECT_EQ(e.run(fused, sim).makespan, at(100e-6));
}

// The step synchronizes with the GPU: iteration 1's first kernel is issued 3 us
// after iteration 0's last one ends (20 us), not 3 us after the host issued it.
TEST(HostDispatch, EachIterationIsIssuedAfterThePreviousOneFinished) {
  Fixture f;
  f.compute_model.host_s = 3e-6;
  TaskGraph g;
  for (int iteration : {0, 0, 1, 1}) {
    Task t = compute(g, 0, iteration == 0 ? 8.5e-6 : 1e-6, {}, hw::HostPass::kForward);
    t.iteration = iteration;
    g.add(t);
  }
  const exec::Timeline tl = f.run(g);
  // Iteration 0: 3-11.5, 11.5-20. Iteration 1: issued at 23 and 26.
  EXPECT_EQ(tl.spans[1].end, at(20e-6));
  EXPECT_EQ(tl.spans[2].start, at(23e-6));
  EXPECT_EQ(tl.spans[3].start, at(26e-6));
  EXPECT_EQ(tl.makespan, at(27e-6));
}

}  // namespace
}  // namespace trainsim
