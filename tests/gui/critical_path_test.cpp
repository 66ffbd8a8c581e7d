// The critical path, both ways (model/critical_path.h), on hand-made chains.
#include <gtest/gtest.h>

#include "gui_fixtures.h"
#include "model/critical_path.h"
#include "model/timeline_reader.h"

namespace trainsim::gui {
namespace {

TEST(CriticalPath, FollowsEndEqualsStartAcrossLanes) {
  // f1 [0,1] on compute, c [1,2] on tp_comm, f2 [2,3] on compute, and a
  // distraction d [0,0.5] on tp_comm: the path is f1 -> c -> f2.
  const TimelineData t = parse_timeline_text(
      R"({"format": "trainsim-timeline", "lanes": [
         {"rank": 0, "stream": "compute", "spans": [
           {"category": "forward", "name": "f1", "start": 0, "end": 1},
           {"category": "forward", "name": "f2", "start": 2, "end": 3}]},
         {"rank": 0, "stream": "tp_comm", "spans": [
           {"category": "all_reduce", "name": "d", "start": 0, "end": 0.5},
           {"category": "all_reduce", "name": "c", "start": 1, "end": 2}]}]})",
      "chain");
  const CriticalPath cp = critical_path(t);
  EXPECT_FALSE(cp.from_deps);
  ASSERT_EQ(cp.spans.size(), 3u);
  EXPECT_EQ(t.name_of(t.span(cp.spans[0])), "f1");
  EXPECT_EQ(t.name_of(t.span(cp.spans[1])), "c");
  EXPECT_EQ(t.name_of(t.span(cp.spans[2])), "f2");
  EXPECT_DOUBLE_EQ(cp.busy_s, 3.0);
}

TEST(CriticalPath, CrossesAGapOnTheSameLane) {
  // a [0,1], b [1.5,2] on one lane, nothing ends at 1.5: the wait is on that lane.
  const TimelineData t = parse_timeline_text(
      R"({"format": "trainsim-timeline", "lanes": [{"rank": 0, "stream": "compute", "spans": [
           {"category": "forward", "name": "a", "start": 0, "end": 1},
           {"category": "backward", "name": "b", "start": 1.5, "end": 2}]}]})",
      "gap");
  const CriticalPath cp = critical_path(t);
  ASSERT_EQ(cp.spans.size(), 2u);
  EXPECT_DOUBLE_EQ(cp.busy_s, 1.5);
}

TEST(CriticalPath, PrefersTheSameLaneAndStopsAtTheIteration) {
  // The fixture: bwd [1,2] ends last (first in lane order among the spans ending
  // at 2), fwd [0,1] touches it on its lane.
  const TimelineData t = parse_timeline_text(testing::two_node_timeline(), "fixture");
  const CriticalPath cp = critical_path(t);
  ASSERT_EQ(cp.spans.size(), 2u);
  EXPECT_EQ(cp.spans[0], (SpanRef{0, 0}));
  EXPECT_EQ(cp.spans[1], (SpanRef{0, 1}));
}

TEST(CriticalPath, UsesDepsWhenPresent) {
  // c [2,3] depends on a [0,1] (ends 1) and b [0,1.8] (ends 1.8): the binding
  // dependency is b, which depends on nothing.
  const TimelineData t = parse_timeline_text(
      R"({"format": "trainsim-timeline", "lanes": [
         {"rank": 0, "stream": "compute", "spans": [
           {"category": "forward", "name": "a", "start": 0, "end": 1, "id": 1},
           {"category": "forward", "name": "c", "start": 2, "end": 3, "id": 3, "deps": [1, 2]}]},
         {"rank": 1, "stream": "compute", "spans": [
           {"category": "forward", "name": "b", "start": 0, "end": 1.8, "id": 2}]}]})",
      "deps");
  const CriticalPath cp = critical_path(t);
  EXPECT_TRUE(cp.from_deps);
  ASSERT_EQ(cp.spans.size(), 2u);
  EXPECT_EQ(t.name_of(t.span(cp.spans[0])), "b");
  EXPECT_EQ(t.name_of(t.span(cp.spans[1])), "c");
  EXPECT_DOUBLE_EQ(cp.busy_s, 2.8);
}

}  // namespace
}  // namespace trainsim::gui
