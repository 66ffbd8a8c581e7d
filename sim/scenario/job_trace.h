#pragma once
// Public GPU-cluster job traces (docs/cluster.md, "Traces"). One format so far:
// SenseTime Helios's cluster_log.csv (Hu et al., SC'21; github.com/S-Lab-System-Group/
// HeliosData), whose columns are Slurm's accounting fields: job_id, user, vc,
// gpu_num, cpu_num, node_num, state, submit_time, start_time, end_time, duration,
// queue, times as "YYYY-MM-DD HH:MM:SS".
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::scenario {

struct TraceJob {
  std::string id;
  int gpus = 0;
  int nodes = 0;
  std::string state;
  double submit_s = 0.0;    // seconds since 1970-01-01 00:00:00 (the trace's clock, no time zone)
  double duration_s = 0.0;  // end_time - start_time
};

// Every row, in the file's order. Throws ScenarioError naming the file, the line and
// the column for a missing column, a malformed number or time, or an end before
// the start.
std::vector<TraceJob> parse_helios_log(std::string_view text, const std::string& file);

// "2020-06-09 18:41:01" -> seconds since 1970-01-01 00:00:00; none when malformed.
std::optional<double> parse_trace_time(std::string_view text);

}  // namespace trainsim::scenario
