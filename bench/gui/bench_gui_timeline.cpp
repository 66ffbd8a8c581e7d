// trainsim-gui's speed targets (issue #7): loading a 1,000,000-span timeline in
// under 3 s, and a full repaint at any zoom in under 30 ms. The timeline is
// synthetic but shaped like the simulator's: 32 GPUs on 4 nodes, a compute and
// a tp_comm lane each (64 lanes of 15,625 spans), kernels of 20-200 us back to
// back, collectives with gaps, two link-utilization counters of 50,000 points.
// Loading is also timed from the gzip-compressed file.
// The repaint paints 1920x1080 pixels (ruler, labels, lanes, counters, span
// names, critical path) with the same function the window and --render use.
#include <benchmark/benchmark.h>

#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>

#include "core/rng.h"
#include "io/timeline_format.h"
#include "model/critical_path.h"
#include "model/lane_layout.h"
#include "model/timeline_reader.h"
#include "report/gzip_stream.h"
#include "view/timeline_painter.h"

namespace trainsim::gui {
namespace {

constexpr int kRanks = 32;
constexpr int kGpusPerNode = 8;
constexpr int kSpansPerLane = 15'625;  // x 64 lanes = 1,000,000 spans

std::filesystem::path timeline_file() {
  static const std::filesystem::path path = [] {
    const auto p = std::filesystem::temp_directory_path() / "trainsim_bench_1m.timeline.json";
    std::ofstream os(p);
    static constexpr const char* kOps[] = {"input_norm", "qkv_proj", "attention", "attn_out_proj", "attn_residual",
                                           "post_attn_norm", "mlp_up", "mlp_act", "mlp_down", "mlp_residual"};
    core::Rng rng(1);
    io::timeline::Header header;
    header.scenario = "synthetic 1M spans";
    header.num_gpus = kRanks;
    header.gpus_per_node = kGpusPerNode;
    for (int r = 0; r < kRanks; ++r) header.node_of_rank.push_back(r / kGpusPerNode);
    io::timeline::Writer w(os, header);
    for (int r = 0; r < kRanks; ++r)
      for (const char* stream : {"compute", "tp_comm"}) {
        w.lane(r, stream);
        const bool compute = std::string(stream) == "compute";
        std::int64_t t = 0;  // ns
        for (int i = 0; i < kSpansPerLane; ++i) {
          const auto d = static_cast<std::int64_t>(20'000 + rng.below(180'000));
          const auto gap = compute ? 0 : static_cast<std::int64_t>(rng.below(200'000));
          t += gap;
          const int layer = (i / 10) % 48;
          const std::string name = "layer" + std::to_string(layer) + "." + (compute ? kOps[i % 10] : "tp_all_reduce");
          io::timeline::Span span;
          span.rank = r;
          span.stream = stream;
          span.category = compute ? (i % 3000 < 1500 ? "forward" : "backward") : "all_reduce";
          span.name = name;
          span.start_ns = t;
          span.end_ns = t + d;
          span.flops = compute ? static_cast<double>(d) * 4e8 : 0.0;
          span.bytes = static_cast<double>(d) * 3e3;
          span.iteration = 0;
          span.microbatch = (i / 480) % 8;
          span.layer = layer;
          w.span(span);
          t += d;
        }
      }
    for (int c = 0; c < 2; ++c) {
      std::vector<std::pair<std::int64_t, double>> points;
      for (int i = 0; i < 50'000; ++i)
        points.emplace_back(std::int64_t{30'000} * i, static_cast<double>(rng.below(1000)) / 1000.0);
      w.counter("utilization link" + std::to_string(c), "fraction", points);
    }
    w.finish();
    return p;
  }();
  return path;
}

const TimelineData& loaded() {
  static const TimelineData t = read_timeline_file(timeline_file());
  return t;
}

// Reads the whole timeline file at `path` once per iteration.
void load_file(benchmark::State& state, const std::filesystem::path& path) {
  std::size_t spans = 0;
  for (auto _ : state) {
    const TimelineData t = read_timeline_file(path);
    spans = t.span_count();
    benchmark::DoNotOptimize(spans);
  }
  state.counters["spans"] = static_cast<double>(spans);
  state.counters["MB"] = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
}

void BM_LoadTimeline1M(benchmark::State& state) { load_file(state, timeline_file()); }
BENCHMARK(BM_LoadTimeline1M)->Unit(benchmark::kMillisecond)->Iterations(3);

// The same timeline gzip-compressed (RESULT.timeline.json.gz, written by the
// simulator's writer at zlib's default level): inflating adds to the parse.
std::filesystem::path gzip_timeline_file() {
  static const std::filesystem::path path = [] {
    const auto p = std::filesystem::temp_directory_path() / "trainsim_bench_1m.timeline.json.gz";
    std::ifstream in(timeline_file(), std::ios::binary);
    report::write_atomically_gz(p, [&](std::ostream& os) { os << in.rdbuf(); });
    return p;
  }();
  return path;
}

void BM_LoadTimeline1MGzip(benchmark::State& state) { load_file(state, gzip_timeline_file()); }
BENCHMARK(BM_LoadTimeline1MGzip)->Unit(benchmark::kMillisecond)->Iterations(3);

// Zoom: state.range(0) times the fit-all zoom, centred on the middle.
void BM_Repaint1M(benchmark::State& state) {
  const TimelineData& t = loaded();
  static const std::vector<SpanRef> path = critical_path(t).spans;
  QImage image(1920, 1080, QImage::Format_ARGB32_Premultiplied);
  const QRect area(0, 0, image.width(), image.height());
  PaintGeometry g;
  const LaneLayout layout = layout_lanes(t, {});
  const double width = image.width() - g.label_width;
  const TimeMapping fit = TimeMapping::fit(t.t_begin, t.t_end, g.label_width, width);
  const TimeMapping m = fit.zoomed(static_cast<double>(state.range(0)), g.label_width + width / 2);
  ViewState v;
  v.critical_path = path;
  for (auto _ : state) {
    QPainter p(&image);
    paint_timeline(p, area, t, layout, m, v, g);
    p.end();
    benchmark::ClobberMemory();
  }
  state.counters["spans"] = static_cast<double>(t.span_count());
  state.counters["visible_s"] = width * m.seconds_per_px;
}
BENCHMARK(BM_Repaint1M)->RangeMultiplier(10)->Range(1, 1'000'000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace trainsim::gui

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QGuiApplication app(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::filesystem::remove(trainsim::gui::timeline_file());
  return 0;
}
