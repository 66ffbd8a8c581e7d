// Reads PyTorch profiler traces (docs/pytorch-traces.md).
#include "scenario/torch_trace.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/intervals.h"
#include "core/median.h"
#include "scenario/errors.h"
#include "scenario/gzip_file.h"
#include "scenario/json_document.h"

namespace trainsim::scenario {

namespace {

constexpr std::string_view kStepPrefix = "ProfilerStep#";
constexpr std::size_t kMaxTraceBytes = std::size_t{2} << 30;  // torch.profiler's traces run to hundreds of MiB
constexpr std::string_view kWhat = "PyTorch profiler trace";

struct HostRange {
  long long number = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::optional<std::int64_t> thread;  // the host thread that ran it (the training loop's)
};

struct Launch {
  std::int64_t ns = 0;
  std::optional<std::int64_t> thread;
};

std::optional<std::int64_t> thread_of(const nlohmann::json& ev) {
  const auto tid = ev.find("tid");
  if (tid == ev.end() || !tid->is_number_integer()) return std::nullopt;
  return tid->get<std::int64_t>();
}

std::string pointer(std::size_t i, std::string_view key = "") {
  std::string p = fmt::format("/traceEvents/{}", i);
  if (!key.empty()) p += "/" + std::string(key);
  return p;
}

std::string shown(const nlohmann::json& v) {
  std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

// A time in the trace's microseconds as integer nanoseconds.
std::int64_t to_ns(const nlohmann::json& v, const std::string& file, const std::string& where, bool duration) {
  if (!v.is_number() || !std::isfinite(v.get<double>()) || (duration && v.get<double>() < 0.0) ||
      std::abs(v.get<double>()) > 9.0e12)
    throw ScenarioError(file, where,
                        duration ? "a duration in microseconds, >= 0" : "a time in microseconds (a finite number)",
                        shown(v));
  return std::llround(v.get<double>() * 1000.0);
}

std::optional<long long> step_number(std::string_view name) {
  if (name.substr(0, kStepPrefix.size()) != kStepPrefix) return std::nullopt;
  const std::string_view digits = name.substr(kStepPrefix.size());
  if (digits.empty() || digits.size() > 12 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return std::stoll(std::string(digits));
}

std::optional<std::int64_t> integer_arg(const nlohmann::json& ev, std::string_view key) {
  const auto args = ev.find("args");
  if (args == ev.end() || !args->is_object()) return std::nullopt;
  const auto v = args->find(std::string(key));
  if (v == args->end() || !v->is_number_integer()) return std::nullopt;
  return v->get<std::int64_t>();
}

// The figures of one step from its kernels.
void measure_step(TraceStep& step) {
  std::sort(step.kernels.begin(), step.kernels.end(),
            [](const TraceKernel& a, const TraceKernel& b) { return a.start_ns < b.start_ns; });
  // Exposed communication as the simulation counts it: |compute U comm| - |compute|.
  std::vector<core::Interval> compute, both;
  for (const TraceKernel& k : step.kernels) {
    const double seconds = static_cast<double>(k.end_ns - k.start_ns) * 1e-9;
    both.emplace_back(k.start_ns, k.end_ns);
    if (k.communication()) {
      step.communication_s += seconds;
    } else {
      step.class_s[k.kernel_class] += seconds;
      compute.emplace_back(k.start_ns, k.end_ns);
    }
  }
  step.exposed_communication_s =
      static_cast<double>(core::union_length(std::move(both)) - core::union_length(std::move(compute))) * 1e-9;
}

// Steps by number, each with its kernels; the kernels found outside every step counted.
struct Events {
  std::vector<HostRange> host_steps;  // ProfilerStep#N on the host, by start
  std::vector<HostRange> gpu_steps;   // their GPU-side ranges (gpu_user_annotation)
  std::unordered_map<std::int64_t, Launch> launches;  // correlation -> the host launch
  std::vector<std::pair<TraceKernel, std::optional<std::int64_t>>> kernels;  // with their correlation
  std::vector<core::Interval> host_ops;  // CPU operators and CUDA runtime calls
};

Events read_events(const nlohmann::json& events, const std::string& file) {
  Events out;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const nlohmann::json& ev = events[i];
    if (!ev.is_object()) throw ScenarioError(file, pointer(i), "a trace event (a JSON object)", shown(ev));
    const auto cat_it = ev.find("cat");
    const auto name_it = ev.find("name");
    if (cat_it == ev.end() || !cat_it->is_string() || ev.value("ph", "") != "X") continue;
    const std::string& cat = cat_it->get_ref<const std::string&>();
    const std::string name = name_it != ev.end() && name_it->is_string() ? name_it->get<std::string>() : "";
    const bool kernel = cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset";
    const bool runtime = cat == "cuda_runtime" || cat == "cuda_driver";
    const std::optional<long long> number = step_number(name);
    const bool host_step = number && (cat == "user_annotation" || cat == "cpu_op");
    const bool gpu_step = number && cat == "gpu_user_annotation";
    const bool host_op = !number && cat == "cpu_op";
    if (!kernel && !runtime && !host_step && !gpu_step && !host_op) continue;
    const std::int64_t start = to_ns(ev.contains("ts") ? ev["ts"] : nlohmann::json(), file, pointer(i, "ts"), false);
    const std::int64_t end =
        start + to_ns(ev.contains("dur") ? ev["dur"] : nlohmann::json(), file, pointer(i, "dur"), true);
    if (runtime || host_op) out.host_ops.emplace_back(start, end);
    if (host_op) continue;
    if (runtime) {
      if (const auto c = integer_arg(ev, "correlation")) out.launches[*c] = {start, thread_of(ev)};
      continue;
    }
    if (host_step || gpu_step) {
      (host_step ? out.host_steps : out.gpu_steps).push_back({*number, start, end, thread_of(ev)});
      continue;
    }
    TraceKernel k;
    k.name = name;
    const std::optional<std::int64_t> stream = integer_arg(ev, "stream");
    const auto tid = ev.find("tid");
    k.stream = stream ? *stream : tid != ev.end() && tid->is_number_integer() ? tid->get<std::int64_t>() : 0;
    k.start_ns = start;
    k.end_ns = end;
    k.kernel_class = config::kernel_class_of_name(name);
    out.kernels.emplace_back(std::move(k), integer_arg(ev, "correlation"));
  }
  const auto by_start = [](const HostRange& a, const HostRange& b) { return a.start_ns < b.start_ns; };
  std::sort(out.host_steps.begin(), out.host_steps.end(), by_start);
  std::sort(out.gpu_steps.begin(), out.gpu_steps.end(), by_start);
  return out;
}

// The step whose range holds `t`, if any.
const HostRange* range_holding(const std::vector<HostRange>& ranges, std::int64_t t) {
  auto it = std::upper_bound(ranges.begin(), ranges.end(), t,
                             [](std::int64_t v, const HostRange& r) { return v < r.start_ns; });
  if (it == ranges.begin()) return nullptr;
  --it;
  return t <= it->end_ns ? &*it : nullptr;
}

// Each step's host operators: those that began inside its ProfilerStep#N range.
void add_host_ops(const Events& events, std::vector<TraceStep>& steps) {
  std::map<long long, std::vector<core::Interval>> by_step;
  for (const core::Interval& op : events.host_ops)
    if (const HostRange* step = range_holding(events.host_steps, op.first)) by_step[step->number].push_back(op);
  for (TraceStep& s : steps)
    if (auto it = by_step.find(s.number); it != by_step.end())
      s.host_ops_s = static_cast<double>(core::union_length(std::move(it->second))) * 1e-9;
}

}  // namespace

bool TraceKernel::communication() const { return kernel_class == config::kernel_class_index("all_reduce"); }

bool looks_like_torch_trace(std::string_view text) {
  const std::size_t head = std::min<std::size_t>(text.size(), 1u << 16);
  return text.substr(0, head).find("\"traceEvents\"") != std::string_view::npos ||
         text.substr(0, head).find("\"schemaVersion\"") != std::string_view::npos;
}

bool is_torch_trace_file(const std::filesystem::path& path) {
  constexpr std::size_t kHead = std::size_t{1} << 16;
  if (is_gzip_file(path)) {  // NAME.pt.trace.json.gz (tensorboard_trace_handler(use_gzip=True))
    try {
      return looks_like_torch_trace(read_gzip_head(path, kHead));
    } catch (const ScenarioError&) {
      return false;  // not a trace this reader can open: the measured-run reader names the fault
    }
  }
  std::ifstream in(path, std::ios::binary);
  std::string head(kHead, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  return looks_like_torch_trace(head);
}

TorchTrace parse_torch_trace(std::string_view text, const std::string& file, int fallback_rank) {
  const nlohmann::json doc = parse_document(text, file, kWhat);
  if (!doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array())
    throw ScenarioError(file, "/traceEvents", "an array of trace events (torch.profiler's export_chrome_trace)",
                        doc.is_object() && doc.contains("traceEvents") ? shown(doc["traceEvents"]) : "none");
  TorchTrace t;
  t.file = file;
  t.rank = fallback_rank;
  if (const auto d = doc.find("distributedInfo"); d != doc.end() && d->is_object() && d->contains("rank") &&
                                                   (*d)["rank"].is_number_integer())
    t.rank = (*d)["rank"].get<int>();
  if (const auto p = doc.find("deviceProperties"); p != doc.end() && p->is_array() && !p->empty() &&
                                                   (*p)[0].is_object() && (*p)[0].contains("name") &&
                                                   (*p)[0]["name"].is_string())
    t.device_name = (*p)[0]["name"].get<std::string>();

  Events events = read_events(doc["traceEvents"], file);
  if (events.host_steps.empty() && events.gpu_steps.empty())
    throw ScenarioError(file, "/traceEvents",
                        "ProfilerStep#N ranges (record with torch.profiler.profile and call prof.step() once per "
                        "training step)",
                        "none");
  std::map<long long, TraceStep> steps;
  for (auto& [kernel, correlation] : events.kernels) {
    const HostRange* step = nullptr;
    if (correlation)
      if (const auto launch = events.launches.find(*correlation); launch != events.launches.end()) {
        step = range_holding(events.host_steps, launch->second.ns);
        // Autograd runs the backward on threads of its own: a launch from a thread other
        // than the one that ran the step is the backward's.
        if (step != nullptr && step->thread && launch->second.thread)
          kernel.pass = *launch->second.thread == *step->thread ? TracePass::kForward : TracePass::kBackward;
      }
    if (step == nullptr && !events.gpu_steps.empty()) step = range_holding(events.gpu_steps, kernel.start_ns);
    if (step == nullptr) {
      ++t.kernels_outside_steps;
      continue;
    }
    TraceStep& s = steps[step->number];
    s.number = step->number;
    s.kernels.push_back(std::move(kernel));
  }
  for (auto& [number, step] : steps) {
    measure_step(step);
    t.steps.push_back(std::move(step));
  }
  for (std::size_t i = 0; i < t.steps.size(); ++i) {
    TraceStep& s = t.steps[i];
    const std::int64_t first = s.kernels.front().start_ns;
    const bool next = i + 1 < t.steps.size() && t.steps[i + 1].number == s.number + 1;
    std::int64_t last = 0;
    for (const TraceKernel& k : s.kernels) last = std::max(last, k.end_ns);
    const std::int64_t end = next ? t.steps[i + 1].kernels.front().start_ns : last;
    s.time_s = static_cast<double>(end - first) * 1e-9;
    s.timed = next || t.steps.size() == 1;
    std::vector<core::Interval> busy;
    for (const TraceKernel& k : s.kernels)
      if (k.start_ns < end) busy.emplace_back(k.start_ns, std::min(k.end_ns, end));
    s.gpu_idle_s = s.time_s - static_cast<double>(core::union_length(std::move(busy))) * 1e-9;
  }
  add_host_ops(events, t.steps);
  return t;
}

TorchTrace read_torch_trace(const std::filesystem::path& path, int fallback_rank) {
  return parse_torch_trace(read_document_file(path, kWhat, kMaxTraceBytes), path.string(), fallback_rank);
}

MeasuredRun measured_run_from_traces(const std::vector<TorchTrace>& traces, long long gpus, std::string framework) {
  if (traces.empty()) throw std::invalid_argument("measured_run_from_traces: no trace");
  // The step numbers every rank timed.
  std::map<long long, std::vector<const TraceStep*>> common;
  for (const TorchTrace& t : traces) {
    bool any = false;
    for (const TraceStep& s : t.steps)
      if (s.timed) {
        common[s.number].push_back(&s);
        any = true;
      }
    if (!any)
      throw ScenarioError(t.file, "/traceEvents",
                          "two or more consecutive ProfilerStep#N ranges with GPU kernels (a step's time runs to the "
                          "next step's first kernel)",
                          fmt::format("{} step(s) with kernels", t.steps.size()));
  }
  std::erase_if(common, [&](const auto& entry) { return entry.second.size() != traces.size(); });
  if (common.empty())
    throw ScenarioError(traces.front().file, "/traceEvents",
                        "the same ProfilerStep#N numbers timed on every rank's trace", "no step common to all");
  MeasuredRun r;
  r.file = traces.front().file + (traces.size() > 1 ? fmt::format(" and {} more", traces.size() - 1) : "");
  r.tool = "torch.profiler";
  r.device_name = traces.front().device_name;
  r.device_count = static_cast<int>(gpus);
  r.framework = std::move(framework);
  std::vector<double> slowest;
  const double samples = static_cast<double>(common.size() * traces.size());
  constexpr std::size_t comm = config::kernel_class_index("all_reduce");
  for (const auto& [number, ranks] : common) {
    double worst = 0.0;
    for (const TraceStep* s : ranks) {
      worst = std::max(worst, s->time_s);
      for (std::size_t c = 0; c < config::kKernelClasses.size(); ++c) r.kernel_class_s[c] += s->class_s[c] / samples;
      r.kernel_class_s[comm] += s->exposed_communication_s / samples;
    }
    slowest.push_back(worst);
  }
  r.step_median_s = core::median(slowest);
  r.step_min_s = *std::min_element(slowest.begin(), slowest.end());
  r.step_max_s = *std::max_element(slowest.begin(), slowest.end());
  r.steps_timed = static_cast<long long>(slowest.size());
  return r;
}

}  // namespace trainsim::scenario
