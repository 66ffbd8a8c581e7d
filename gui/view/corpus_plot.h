#pragma once
// The corpus report as a picture (trainsim-gui --render corpus.json --out
// corpus.png): predicted against measured step time, log-log, one point per
// case coloured by its family (precision, dense or MoE), the held-out cases
// hollow, with the line of no error and the +-10% and +-25% bands.
#include <QImage>
#include <QSize>

#include "model/corpus_points.h"

namespace trainsim::gui {

QImage render_corpus_plot(const CorpusPlotData& data, QSize size);

}  // namespace trainsim::gui
