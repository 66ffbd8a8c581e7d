#pragma once
// The points of a corpus report (`trainsim validate --corpus --out DIR` writes
// DIR/corpus.json; docs/validation.md "The public corpus") for the predicted
// against measured plot (view/corpus_plot.h).
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::gui {

struct CorpusPoint {
  std::string id;
  double measured_s = 0.0;
  double predicted_s = 0.0;
  std::string family;  // precision and dense or MoE, from the case's tags ("fp8 dense")
  bool held_out = false;
};

struct CorpusPlotData {
  std::vector<CorpusPoint> points;  // the predicted cases
  int refused = 0;
};

// Whether `text` is a corpus report.
bool is_corpus_report(std::string_view text);
// Throws ReadError naming `source` and the place when a case lacks its times.
CorpusPlotData parse_corpus_report_text(std::string_view text, std::string_view source);

}  // namespace trainsim::gui
