#include "run_file.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>
#include <stdexcept>

#include "io/atomic_file.h"

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

void write_timeline(const std::filesystem::path& path, const MeasuredRun& run) {
  using nlohmann::ordered_json;
  // Lanes per (rank, stream), spans in start order, as the simulator writes them.
  std::map<std::pair<int, std::string>, std::vector<const TimelineSpan*>> lanes;
  for (const TimelineSpan& s : run.spans) lanes[{s.rank, s.stream}].push_back(&s);
  ordered_json j;
  j["format"] = "trainsim-timeline";
  j["version"] = 1;
  j["scenario"] = "measured: " + run.options.command;
  j["num_gpus"] = run.data_parallel;
  j["gpus_per_node"] = run.gpus_per_node;
  j["time_unit"] = "s";
  std::vector<int> node_of_rank;
  for (int r = 0; r < run.data_parallel; ++r) node_of_rank.push_back(r / std::max(run.gpus_per_node, 1));
  j["node_of_rank"] = node_of_rank;
  j["replicas"] = ordered_json::array();
  j["lanes"] = ordered_json::array();
  for (auto& [key, spans] : lanes) {
    std::stable_sort(spans.begin(), spans.end(), [](auto* a, auto* b) { return a->start < b->start; });
    ordered_json lane;
    lane["rank"] = key.first;
    lane["stream"] = key.second;
    lane["spans"] = ordered_json::array();
    for (const TimelineSpan* s : spans)
      lane["spans"].push_back({{"rank", s->rank},
                               {"stream", s->stream},
                               {"category", s->category},
                               {"name", s->name},
                               {"start", s->start},
                               {"end", s->end},
                               {"iteration", s->iteration},
                               {"microbatch", s->microbatch},
                               {"layer", s->layer}});
    j["lanes"].push_back(std::move(lane));
  }
  j["counters"] = ordered_json::array();
  io::write_atomically(path, [&](std::ostream& os) { os << j.dump(1) << '\n'; });
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
