#include "report/trace_timeline.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "core/median.h"
#include "io/timeline_format.h"

namespace trainsim::report {

std::string_view trace_kernel_category(const scenario::TraceKernel& k) {
  if (k.communication()) {
    const std::string& n = k.name;
    if (n.find("AllGather") != std::string::npos) return "all_gather";
    if (n.find("ReduceScatter") != std::string::npos) return "reduce_scatter";
    if (n.find("AllToAll") != std::string::npos) return "all_to_all";
    if (n.find("Send") != std::string::npos) return "send";  // SendRecv too
    if (n.find("Recv") != std::string::npos) return "recv";
    return "all_reduce";
  }
  if (config::kKernelClasses[k.kernel_class] == "optimizer") return "optimizer";
  return k.pass == scenario::TracePass::kForward    ? "forward"
         : k.pass == scenario::TracePass::kBackward ? "backward"
                                                     : "other";
}

std::string trace_rank_line(const scenario::TorchTrace& t) {
  std::vector<double> times;
  double comm = 0.0;
  double exposed = 0.0;
  double idle = 0.0;
  double host = 0.0;
  double total = 0.0;
  for (const scenario::TraceStep& s : t.steps)
    if (s.timed) {
      times.push_back(s.time_s);
      comm += s.communication_s;
      exposed += s.exposed_communication_s;
      idle += s.gpu_idle_s;
      host += s.host_ops_s;
      total += s.time_s;
    }
  const std::size_t n = times.size();
  const double median = core::median(times);
  const double per = n == 0 ? 0.0 : 1.0 / static_cast<double>(n);
  std::string line = fmt::format("rank {:<4} {} steps ({} timed), median {:.3f} ms; NCCL {:.3f} ms a step, {:.3f} ms "
                                 "exposed; GPU idle {:.3f} ms a step ({:.1f}%); host operators {:.3f} ms a step  ({})",
                                 t.rank, t.steps.size(), n, median * 1e3, comm * per * 1e3, exposed * per * 1e3,
                                 idle * per * 1e3, total > 0.0 ? 100.0 * idle / total : 0.0, host * per * 1e3, t.file);
  if (t.kernels_outside_steps > 0)
    line += fmt::format("; {} kernels outside every ProfilerStep#N left out", t.kernels_outside_steps);
  return line + "\n";
}

long long last_common_timed_step(const std::vector<scenario::TorchTrace>& traces) {
  std::map<long long, std::size_t> count;
  for (const scenario::TorchTrace& t : traces)
    for (const scenario::TraceStep& s : t.steps)
      if (s.timed) ++count[s.number];
  long long last = -1;
  for (const auto& [number, n] : count)
    if (n == traces.size()) last = number;
  if (last < 0) throw std::invalid_argument("last_common_timed_step: no step timed on every trace");
  return last;
}

void write_trace_timeline(std::ostream& os, const std::vector<scenario::TorchTrace>& traces, long long step,
                          const std::string& scenario_name) {
  io::timeline::Header header;
  header.scenario = scenario_name;
  header.num_gpus = static_cast<std::int64_t>(traces.size());
  io::timeline::Writer writer(os, header);
  for (const scenario::TorchTrace& t : traces) {
    const auto s = std::find_if(t.steps.begin(), t.steps.end(),
                                [step](const scenario::TraceStep& x) { return x.number == step; });
    if (s == t.steps.end()) throw std::invalid_argument("write_trace_timeline: a trace lacks the step");
    const std::int64_t origin = s->kernels.front().start_ns;
    std::set<std::int64_t> streams;
    for (const scenario::TraceKernel& k : s->kernels) streams.insert(k.stream);
    for (const std::int64_t stream : streams) {
      const std::string lane = "stream " + std::to_string(stream);
      writer.lane(t.rank, lane);
      for (const scenario::TraceKernel& k : s->kernels) {
        if (k.stream != stream) continue;
        io::timeline::Span span;
        span.rank = t.rank;
        span.stream = lane;
        span.category = trace_kernel_category(k);
        span.name = k.name;
        span.start_ns = k.start_ns - origin;
        span.end_ns = k.end_ns - origin;
        span.iteration = step;
        writer.span(span);
      }
    }
  }
  writer.finish();
}

}  // namespace trainsim::report
