#pragma once
// What a span is, in words: for the hover tooltip and the details panel.
#include <QString>

#include "model/timeline_data.h"

namespace trainsim::gui {

// op, category, GPU and stream, start, duration, FLOPs, bytes, achieved rate
// (FLOP/s of a kernel, B/s of a collective), iteration, micro-batch, layer, deps.
QString span_details_html(const TimelineData& t, SpanRef r);
// "1.23 T", "456 M": SI prefixes with 3 significant digits, as the CLI prints.
QString si(double v);

}  // namespace trainsim::gui
