#include "scenario/job_trace.h"

#include <charconv>
#include <fmt/format.h>
#include <map>

#include "scenario/errors.h"

namespace trainsim::scenario {

namespace {

std::vector<std::string_view> split(std::string_view line, char sep) {
  std::vector<std::string_view> out;
  std::size_t from = 0;
  for (;;) {
    const std::size_t at = line.find(sep, from);
    out.push_back(line.substr(from, at == std::string_view::npos ? std::string_view::npos : at - from));
    if (at == std::string_view::npos) return out;
    from = at + 1;
  }
}

template <typename T>
std::optional<T> number(std::string_view text) {
  T v{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
long long days_from_civil(long long y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned shifted = m > 2 ? m - 3 : m + 9;  // months from March
  const unsigned doy = (153 * shifted + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

}  // namespace

std::optional<double> parse_trace_time(std::string_view text) {
  // YYYY-MM-DD HH:MM:SS
  if (text.size() != 19 || text[4] != '-' || text[7] != '-' || text[10] != ' ' || text[13] != ':' || text[16] != ':')
    return std::nullopt;
  const auto y = number<int>(text.substr(0, 4));
  const auto mo = number<unsigned>(text.substr(5, 2));
  const auto d = number<unsigned>(text.substr(8, 2));
  const auto h = number<int>(text.substr(11, 2));
  const auto mi = number<int>(text.substr(14, 2));
  const auto s = number<int>(text.substr(17, 2));
  if (!y || !mo || !d || !h || !mi || !s || *mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 || *mi > 59 ||
      *s > 60)
    return std::nullopt;
  return static_cast<double>(days_from_civil(*y, *mo, *d)) * 86400.0 + *h * 3600.0 + *mi * 60.0 + *s;
}

std::vector<TraceJob> parse_helios_log(std::string_view text, const std::string& file) {
  std::vector<std::string_view> lines = split(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  for (std::string_view& l : lines)
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  if (lines.empty()) throw ScenarioError(file, "", "a Helios cluster_log.csv with a header line, found an empty file");
  std::map<std::string_view, std::size_t> column;
  const std::vector<std::string_view> header = split(lines[0], ',');
  for (std::size_t i = 0; i < header.size(); ++i) column[header[i]] = i;
  for (std::string_view need : {"job_id", "gpu_num", "node_num", "state", "submit_time", "start_time", "end_time"})
    if (!column.contains(need))
      throw ScenarioError(file, "line 1", fmt::format("a header with the column \"{}\" (Helios cluster_log.csv: "
                                                      "job_id, user, vc, gpu_num, cpu_num, node_num, state, "
                                                      "submit_time, start_time, end_time, duration, queue)",
                                                      need),
                          fmt::format("\"{}\"", lines[0].substr(0, 200)));
  std::vector<TraceJob> jobs;
  for (std::size_t n = 1; n < lines.size(); ++n) {
    if (lines[n].empty()) continue;
    const std::vector<std::string_view> f = split(lines[n], ',');
    const std::string where = fmt::format("line {}", n + 1);
    const auto field = [&](std::string_view name) {
      const std::size_t i = column.at(name);
      if (i >= f.size())
        throw ScenarioError(file, where, fmt::format("{} columns as the header has", header.size()),
                            fmt::format("{}", f.size()));
      return f[i];
    };
    const auto time = [&](std::string_view name) {
      const auto t = parse_trace_time(field(name));
      if (!t)
        throw ScenarioError(file, where + ", " + std::string(name), "a time \"YYYY-MM-DD HH:MM:SS\"",
                            fmt::format("\"{}\"", field(name)));
      return *t;
    };
    const auto count = [&](std::string_view name) {
      const auto v = number<int>(field(name));
      if (!v || *v < 0)
        throw ScenarioError(file, where + ", " + std::string(name), "a count >= 0", fmt::format("\"{}\"", field(name)));
      return *v;
    };
    TraceJob j;
    j.id = std::string(field("job_id"));
    j.gpus = count("gpu_num");
    j.nodes = count("node_num");
    j.state = std::string(field("state"));
    j.submit_s = time("submit_time");
    const double start = time("start_time");
    const double end = time("end_time");
    if (end < start)
      throw ScenarioError(file, where, "an end_time not before the start_time",
                          fmt::format("\"{}\" before \"{}\"", field("end_time"), field("start_time")));
    j.duration_s = end - start;
    jobs.push_back(std::move(j));
  }
  return jobs;
}

}  // namespace trainsim::scenario
