#pragma once
// A scenario with many micro-batches per replica, timed from three short runs
// (docs/sweep.md, "Speed"; docs/user-guide.md, "trainsim run"). Durations are
// deterministic, so once a pipeline schedule (GPipe, 1F1B, interleaved) is in
// its steady state every further micro-batch adds the same whole number of
// nanoseconds to the iteration and to each term of its breakdown, and the same
// counts of kernels, flows and bytes. Three runs with m_a < m_b < m_c
// micro-batches, equally spaced and all past the warm-up, show whether that
// holds for the scenario: when each total grows by exactly as much from m_b to
// m_c as from m_a to m_b, the totals for m are extrapolated along that line,
// bit for bit what the full simulation gives while the schedule stays in its
// steady state. With the flow network model too: a transfer's rate depends on
// what shares its links, which in the steady state repeats as well; when it
// does not, the check fails and the scenario is simulated in full.
// The sweep extrapolates its points' times this way; `trainsim run` its whole
// result.
#include <array>
#include <functional>
#include <optional>
#include <vector>

#include "config/scenario.h"
#include "execution/simulate.h"
#include "report/metrics.h"

namespace trainsim::report {

// The micro-batch counts per replica that stand for the scenario's m, or none
// when m is too small to gain from them or the scenario is not one this applies
// to (the asynchronous modes, whose step time comes from a replay). The steady
// state repeats every pp micro-batches (or a divisor of pp: stages wait on each
// other around the pipeline), so the counts are pp apart: m_a is the least
// count >= max(2, pp x chunks) (every stage's warm-up filled) with m_a = m
// modulo pp (the interleaved schedule's counts are multiples of pp), m_b = m_a
// + pp, m_c = m_a + 2 pp, and m >= 2 m_c.
std::optional<std::array<long long, 3>> extrapolation_counts(const config::Scenario& s);

// The whole-number totals of the run with `count` micro-batches per replica,
// always listed in the same order; none when that run cannot stand for the
// scenario (refused, or a total that is not a whole number).
using TotalsAt = std::function<std::optional<std::vector<long long>>(long long count)>;

// The totals for the scenario's m micro-batches per replica, extrapolated along
// the line through the runs at `counts` (extrapolation_counts(s)); none when a
// run gives none or the totals do not grow linearly over them. When the growth
// differs only over the first step (a warm-up transient: with m_a = pp, 1F1B
// never reaches its steady state; the flow model's rates can differ over the
// first step), a fourth run with m_c + pp micro-batches is tried and the line
// taken through the last three when they are on one. std::invalid_argument
// from a run propagates.
std::optional<std::vector<long long>> extrapolate_totals(const config::Scenario& s,
                                                         const std::array<long long, 3>& counts,
                                                         const TotalsAt& run);

// `trainsim run`'s result from short runs: compute_metrics() of the scenario,
// byte for byte, with simulate(s, options) replaced by simulations of fewer
// micro-batches. None (simulate in full) when the scenario has no
// extrapolation_counts, when the three short runs together would simulate more
// than half of its micro-batches, in the asynchronous modes, or when the short
// runs disagree on anything that does not grow (the memory timeline's peak,
// the links that carry traffic, the gradient buckets, the calibration's
// fallback reasons) or their totals are not on a line. options.progress, when
// set, sees the short runs as one run.
std::optional<Metrics> extrapolated_metrics(const config::Scenario& s, const exec::SimulateOptions& options);

}  // namespace trainsim::report
