// Painting under QT_QPA_PLATFORM=offscreen: pixels at hand-derived places.
// Geometry (view/headless_render.h, view/timeline_painter.h, model/lane_layout.h):
// title 22 px, ruler 24 px, so rows start at y = 46: node 0 header 46..64,
// GPU 0 compute 64..80, GPU 0 dp_comm 80..96, node 1 header 96..114, GPU 1
// compute 114..130, the counter 130..154. Spans fill a lane but its top and
// bottom pixel rows. Labels take 170 px; at 1170 px wide the 2 s of the fixture
// fill 1000 px: 2 ms per px, x = 170 + t / 0.002.
#include <gtest/gtest.h>

#include <QTest>

#include "gui_fixtures.h"
#include "model/timeline_reader.h"
#include "view/headless_render.h"
#include "view/run_page.h"
#include "view/timeline_view.h"

namespace trainsim::gui {
namespace {

gui::Run fixture_run() {
  gui::Run run;
  run.label = "fixture";
  run.timeline = std::make_shared<const TimelineData>(parse_timeline_text(testing::two_node_timeline(), "fixture"));
  return run;
}

QColor rgb(Category c) { return to_qcolor(category_color(c)); }

QImage render(bool critical_path) {
  RenderOptions o;
  o.size = QSize(1170, 300);
  o.critical_path = critical_path;
  return render_run(fixture_run(), o);
}

TEST(Render, SpansHaveTheirCategoryColourAtTheirTimes) {
  const QImage image = render(false);
  ASSERT_EQ(image.size(), QSize(1170, 300));
  EXPECT_EQ(image.pixelColor(420, 72), rgb(Category::kForward));     // t = 0.5 s, GPU 0 compute: fwd
  EXPECT_EQ(image.pixelColor(1000, 72), rgb(Category::kBackward));   // t = 1.66 s: bwd
  EXPECT_EQ(image.pixelColor(1000, 88), rgb(Category::kAllReduce));  // GPU 0 dp_comm: ar [1.5, 2]
  EXPECT_EQ(image.pixelColor(420, 88), QColor(240, 240, 244));       // dp_comm idle at 0.5 s: odd lane
  EXPECT_EQ(image.pixelColor(300, 122), rgb(Category::kForward));    // GPU 1 fwd1 [0, 0.5]
  EXPECT_EQ(image.pixelColor(600, 122), QColor(248, 248, 248));      // GPU 1 idle at 0.86 s: even lane
  EXPECT_EQ(image.pixelColor(420, 55), QColor(220, 224, 232));       // node 0 header
  // The counter holds 0.5 from 1.5 s: half of the row's 22 px, from its bottom (154) up.
  EXPECT_EQ(image.pixelColor(1000, 150), QColor(90, 120, 200));
  EXPECT_EQ(image.pixelColor(1000, 138), QColor(248, 248, 248));
  EXPECT_EQ(image.pixelColor(800, 150), QColor(248, 248, 248));      // 1.26 s: before the counter rises
}

TEST(Render, CountsOneBandPerLane) {
  const QImage image = render(false);
  // At x = 1000 (1.66 s) every lane runs a span: count the coloured bands.
  std::vector<QColor> palette;
  for (const Category c : all_categories()) palette.push_back(rgb(c));
  int bands = 0;
  bool inside = false;
  for (int y = 46; y < 130; ++y) {
    const QColor c = image.pixelColor(1000, y);
    const bool span = std::find(palette.begin(), palette.end(), c) != palette.end();
    if (span && !inside) ++bands;
    inside = span;
  }
  EXPECT_EQ(bands, 3);
}

TEST(Render, OutlinesTheCriticalPath) {
  const QImage image = render(true);
  // fwd -> bwd on GPU 0 compute: a red bar along the lane's bottom rows.
  EXPECT_EQ(image.pixelColor(420, 78), QColor(229, 0, 0));
  EXPECT_EQ(image.pixelColor(1000, 78), QColor(229, 0, 0));
  EXPECT_EQ(image.pixelColor(420, 72), rgb(Category::kForward));
  EXPECT_NE(image.pixelColor(1000, 126), QColor(229, 0, 0));  // GPU 1 is not on it
}

// A result with failures: the whole run (one day, fixture one_day_run_timeline)
// as a strip under the title, fitted to the same 1000 px: 86.4 s per px. Strip:
// ruler 22..46, its "whole run" header 46..64, the job lane 64..80; strip height
// 24 + 34 + 2 = 60, gap 6, so the iteration's ruler starts at y = 88 and its rows
// sit 66 px lower than above: node 0 header 112..130, GPU 0 compute 130..146,
// GPU 0 dp_comm 146..162.
gui::Run fixture_run_with_failures() {
  gui::Run run = fixture_run();
  run.run_timeline =
      std::make_shared<const TimelineData>(parse_timeline_text(testing::one_day_run_timeline(), "run fixture"));
  return run;
}

TEST(Render, AResultWithFailuresShowsTheWholeRunAboveTheIteration) {
  RenderOptions o;
  o.size = QSize(1170, 300);
  o.critical_path = false;
  const QImage image = render_run(fixture_run_with_failures(), o);
  EXPECT_EQ(run_strip_height(*fixture_run_with_failures().run_timeline), 60);
  EXPECT_EQ(image.pixelColor(300, 72), rgb(Category::kTrain));     // t = 130 px x 86.4 s = 3.1 h: train
  EXPECT_EQ(image.pixelColor(590, 72), rgb(Category::kFailure));   // 420 px: 10 h 4.8 min, the failure [10 h, 10 h 10 min]
  EXPECT_EQ(image.pixelColor(630, 72), rgb(Category::kRestart));   // 460 px: 11 h 2 min, restarting until 12 h
  EXPECT_EQ(image.pixelColor(1100, 72), rgb(Category::kTrain));    // 930 px: 22.3 h, training again
  EXPECT_EQ(image.pixelColor(420, 55), QColor(220, 224, 232));     // the strip's "whole run" header row
  // The iteration below, 66 px lower than without the strip.
  EXPECT_EQ(image.pixelColor(420, 138), rgb(Category::kForward));  // GPU 0 compute at 0.5 s
  EXPECT_EQ(image.pixelColor(1000, 154), rgb(Category::kAllReduce));  // GPU 0 dp_comm 146..162 at 1.66 s
  EXPECT_EQ(image.pixelColor(420, 121), QColor(220, 224, 232));    // node 0 header 112..130
}

TEST(RunPage, ShowsTheRunStripOnlyForAResultWithFailures) {
  RunPage plain(fixture_run());
  EXPECT_EQ(plain.run_timeline(), nullptr);
  RunPage failures(fixture_run_with_failures());
  ASSERT_NE(failures.run_timeline(), nullptr);
  failures.resize(1400, 700);
  failures.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&failures));
  EXPECT_EQ(failures.run_timeline()->height(), 60);
  // The strip fits the whole day, the iteration view its 2 s.
  EXPECT_NEAR(failures.run_timeline()->mapping().t_of(failures.run_timeline()->width() - 1), 86400.0, 86400.0 * 0.01);
  EXPECT_LT(failures.timeline()->mapping().t_of(failures.timeline()->width() - 1), 2.1);
  EXPECT_LT(failures.run_timeline()->geometry().bottom(), failures.timeline()->geometry().top());
}

TEST(TimelineView, PaintsHitTestsAndCollapsesNodes) {
  TimelineView view;
  view.resize(1170, 200);
  view.set_timeline(fixture_run().timeline);
  // In the widget rows start under the 24 px ruler: node 0 header 24..42, GPU 0 compute 42..58.
  EXPECT_EQ(view.grab().toImage().pixelColor(420, 50), rgb(Category::kForward));
  EXPECT_EQ(view.span_at(QPoint(420, 50)), (SpanRef{0, 0}));
  EXPECT_EQ(view.span_at(QPoint(1000, 66)), (SpanRef{1, 0}));  // dp_comm 58..74: ar
  EXPECT_FALSE(view.span_at(QPoint(420, 66)).has_value());
  // Zoom 2x around x = 420 keeps t = 0.5 s there.
  QTest::keyClick(&view, Qt::Key_F);
  const double t = view.mapping().t_of(420);
  EXPECT_DOUBLE_EQ(t, 0.5);
  // A click on node 0's header folds its two lanes: node 1's header moves to 42..60.
  QTest::mouseClick(&view, Qt::LeftButton, {}, QPoint(420, 30));
  EXPECT_EQ(view.grab().toImage().pixelColor(420, 50), QColor(220, 224, 232));
}

}  // namespace
}  // namespace trainsim::gui
