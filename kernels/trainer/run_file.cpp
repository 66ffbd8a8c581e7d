#include "run_file.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <numeric>
#include <stdexcept>

#include "io/atomic_file.h"
#include "io/timeline_format.h"

namespace trainsim::trainer {

std::size_t kernel_class_index(std::string_view name) {
  for (std::size_t i = 0; i < kKernelClasses.size(); ++i)
    if (kKernelClasses[i] == name) return i;
  throw std::invalid_argument("unknown kernel class \"" + std::string(name) + "\"");
}

StepStats step_stats(const std::vector<StepRecord>& steps, int warmup_steps) {
  std::vector<double> t;
  for (const StepRecord& s : steps)
    if (s.step >= warmup_steps) t.push_back(s.time_s);
  StepStats st;
  if (t.empty()) return st;
  std::sort(t.begin(), t.end());
  const std::size_t n = t.size();
  st.steps_timed = static_cast<int>(n);
  st.median = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
  st.mean = std::accumulate(t.begin(), t.end(), 0.0) / static_cast<double>(n);
  st.min = t.front();
  st.max = t.back();
  return st;
}

std::filesystem::path timeline_path_for(const std::filesystem::path& run_path) {
  return run_path.parent_path() / (run_path.stem().string() + ".timeline.json");
}

namespace {

// Lanes per (rank, stream), spans in start order, in the simulator's timeline
// format (io/timeline_format.h). Measured seconds are written to the nanosecond.
void write_timeline(const std::filesystem::path& path, const MeasuredRun& run) {
  std::map<std::pair<int, std::string>, std::vector<const TimelineSpan*>> lanes;
  for (const TimelineSpan& s : run.spans) lanes[{s.rank, s.stream}].push_back(&s);
  io::timeline::Header header;
  header.scenario = "measured: " + run.options.command;
  header.num_gpus = run.data_parallel;
  header.gpus_per_node = run.gpus_per_node;
  for (int r = 0; r < run.data_parallel; ++r) header.node_of_rank.push_back(r / std::max(run.gpus_per_node, 1));
  const auto ns = [](double seconds) { return static_cast<std::int64_t>(std::llround(seconds * 1e9)); };
  io::write_atomically(path, [&](std::ostream& os) {
    io::timeline::Writer w(os, header);
    for (auto& [key, spans] : lanes) {
      std::stable_sort(spans.begin(), spans.end(), [](auto* a, auto* b) { return a->start < b->start; });
      w.lane(key.first, key.second);
      for (const TimelineSpan* s : spans) {
        io::timeline::Span span;
        span.rank = s->rank;
        span.stream = s->stream;
        span.category = s->category;
        span.name = s->name;
        span.start_ns = ns(s->start);
        span.end_ns = ns(s->end);
        span.iteration = s->iteration;
        span.microbatch = s->microbatch;
        span.layer = s->layer;
        w.span(span);
      }
    }
    w.finish();
  });
}

}  // namespace

void write_measured_run(const std::filesystem::path& path, const MeasuredRun& run) {
  using nlohmann::ordered_json;
  const TrainOptions& o = run.options;
  const kernels::ref::GptConfig m = o.model();
  ordered_json j;
  j["format"] = "trainsim-measured-run";
  j["version"] = 1;
  j["tool"] = run.tool;
  j["date"] = run.date;
  j["command"] = o.command;
  j["device"] = {{"name", run.device.name},     {"count", run.device.count}, {"nodes", run.device.nodes},
                 {"driver", run.device.driver}, {"cuda", run.device.cuda},   {"cublas", run.device.cublas},
                 {"nccl", run.device.nccl}};
  // vocab_size is the padded vocabulary: the LM-head GEMM and wte have that many rows.
  j["model"] = {{"num_layers", m.layers},
                {"hidden_size", m.hidden},
                {"num_attention_heads", m.heads},
                {"ffn_hidden_size", m.ffn()},
                {"seq_length", m.seq},
                {"vocab_size", m.padded_vocab},
                {"max_position_embeddings", m.seq},
                {"tied_embeddings", true}};
  j["training"] = {{"micro_batch_size", o.micro_batch},
                   {"grad_accumulation_steps", o.grad_accum},
                   {"data_parallel_size", run.data_parallel},
                   {"gpus_per_node", run.gpus_per_node},
                   {"num_nodes", run.data_parallel / std::max(run.gpus_per_node, 1)},
                   {"precision", "bf16"},
                   {"optimizer", "adamw"},
                   {"attention", "flash"},
                   {"dropout", 0.0},
                   {"framework", "trainsim_train"}};
  j["warmup_steps"] = o.warmup_steps;
  j["steps"] = ordered_json::array();
  for (const StepRecord& s : run.steps)
    j["steps"].push_back({{"step", s.step}, {"time_s", s.time_s}, {"loss", s.loss}, {"tokens", s.tokens}});
  const StepStats st = step_stats(run.steps, o.warmup_steps);
  j["step_time_s"] = {
      {"median", st.median}, {"mean", st.mean}, {"min", st.min}, {"max", st.max}, {"steps_timed", st.steps_timed}};
  ordered_json classes;
  for (std::size_t i = 0; i < kKernelClasses.size(); ++i)
    classes[std::string(kKernelClasses[i])] = run.kernel_class_s[i];
  j["kernel_class_s"] = classes;
  j["peak_memory_bytes"] = run.peak_memory_bytes;
  j["peak_memory_source"] = run.peak_memory_source;
  j["loss"] = {{"initial", run.steps.empty() ? 0.0 : run.steps.front().loss},
               {"final", run.steps.empty() ? 0.0 : run.steps.back().loss},
               {"held_out", run.held_out_loss},
               {"held_out_tokens", run.held_out_tokens}};
  if (!run.spans.empty()) {
    const auto tl = timeline_path_for(path);
    write_timeline(tl, run);
    j["timeline"] = tl.filename().string();
  }
  io::write_atomically(path, [&](std::ostream& os) { os << j.dump(1) << '\n'; });
}

}  // namespace trainsim::trainer
