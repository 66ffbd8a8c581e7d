// The corpus report's plot (view/corpus_plot.h): points read from a report, and
// painted at hand-derived places. Geometry: the plot area starts at x = 78,
// y = 44 and ends 190 px from the right and 56 px from the bottom; at 1000x600
// its pixels are x 78..809 and y 44..543. The times span the decade 1 s..10 s,
// so x = 78 + 731 log10(t) and y = 543 - 499 log10(t).
#include <gtest/gtest.h>

#include "model/corpus_points.h"
#include "model/timeline_reader.h"
#include "view/corpus_plot.h"

namespace trainsim::gui {
namespace {

const char* kReport = R"({"format": "trainsim-corpus-report", "version": 1, "cases": [
  {"id": "a", "tags": ["H100", "fp8", "dense"], "held_out": false, "measured_iteration_time_s": 1.0,
   "predicted_iteration_time_s": 1.0},
  {"id": "b", "tags": ["B200", "bf16", "moe"], "held_out": true, "measured_iteration_time_s": 4.0,
   "predicted_iteration_time_s": 2.5},
  {"id": "d", "tags": ["B200", "bf16", "dense"], "held_out": false, "measured_iteration_time_s": 10.0,
   "predicted_iteration_time_s": 8.0},
  {"id": "c", "tags": [], "held_out": false, "measured_iteration_time_s": 2.0, "predicted_iteration_time_s": null}]})";

TEST(CorpusPlot, ReadsPointsFamiliesAndRefusals) {
  ASSERT_TRUE(is_corpus_report(kReport));
  const CorpusPlotData d = parse_corpus_report_text(kReport, "corpus.json");
  ASSERT_EQ(d.points.size(), 3u);
  EXPECT_EQ(d.refused, 1);
  EXPECT_EQ(d.points[0].family, "fp8 dense");
  EXPECT_EQ(d.points[1].family, "bf16 moe");
  EXPECT_TRUE(d.points[1].held_out);
  EXPECT_THROW((void)parse_corpus_report_text(R"({"cases": [{"measured_iteration_time_s": 0}]})", "x.json"),
               ReadError);
}

TEST(CorpusPlot, PaintsEachCaseWhereItsTimesPutIt) {
  const QImage image = render_corpus_plot(parse_corpus_report_text(kReport, "corpus.json"), QSize(1000, 600));
  ASSERT_EQ(image.size(), QSize(1000, 600));
  // Case a (1 s, 1 s): filled, at (78, 544) - the plot's corner; probe inside its disc.
  const QColor a = image.pixelColor(80, 542);
  EXPECT_GT(a.red() + a.green() + a.blue(), 0);
  EXPECT_NE(a, QColor(Qt::white));
  // Case b (4 s measured, 2.5 s predicted; off the grid and the bands), held
  // out: hollow, centred at x = 78 + 731 x 0.602 = 518.1, y = 543 - 499 x 0.398
  // = 344.4, radius 4: its ring is coloured, its centre white.
  EXPECT_NE(image.pixelColor(522, 344), QColor(Qt::white));
  EXPECT_EQ(image.pixelColor(518, 344), QColor(Qt::white));
}

}  // namespace
}  // namespace trainsim::gui
