// nccl-tests output (text table or -J JSON) to the profile's collective rows, and
// the alpha-beta fit of each series. See nccl_tests_import.h.
//
// The layouts read here follow NVIDIA/nccl-tests' printf formats:
//  - newer versions (src/common.cu, later src/util.cu writeBenchmarkLinePreamble /
//    writeBenchmarkLineBody): rows "%12li  %12li  %8s  %6s  %6s" (size count type
//    redop root; redop "none" and root -1 where they do not apply) then, per
//    out-of-place and in-place group, "  %7s  %6s  %6s  %6g" (time algbw busbw
//    #wrong) or "    N/A" for #wrong without validation (-c 0, in-place alltoall);
//    -M/per-iteration, bitwise and -S timestamp columns may follow;
//  - older versions (one print_header per test): all_gather, sendrecv "size count
//    type", broadcast "size count type root", all_reduce, alltoall (whose redop is
//    printed as a blank) "size count type redop", reduce "size count type redop
//    root", then "  %7s  %6.2f  %6.2f  %5.0le" (time algbw busbw error) where
//    "error" is the largest deviation, not a count;
//  - "#  Rank %2d Group %2d Pid %6d on %10s device ..." lines (older: "#   Rank %2d
//    Pid %6d on %10s device ...");
//  - -J: {"config": {"nthreads", "ngpus", "devices": [{"hostname", "group"...}, one
//    per process: util.cu parses the first rank line of each process]}, "args": [program, ...], "results": [{"size", "out_of_place":
//    {"time" | "cpu_time", "alg_bw", "bus_bw", "nwrong" (null without validation)},
//    "in_place": {...}}, ...]}.
#include "nccl_tests_import.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <system_error>
#include <tuple>
#include <utility>

#include "network/collective_kind.h"

namespace trainsim::calibrate {
namespace {

constexpr std::string_view kKnownOps =
    "all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, send_recv";

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c == '-') c = '_';
  }
  return out;
}

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

std::string_view basename_of(std::string_view path) {
  const auto slash = path.find_last_of("/\\");
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// The op a file or program name mentions as a word ("all_reduce_perf",
// "logs/8xh100-allreduce.txt"); "alltoallv" or "reduced" mention none.
std::optional<std::string> op_in_name(std::string_view path) {
  const std::string name = lower(basename_of(path));
  // net::kCollectives lists the most specific names first ("all_reduce" before "reduce").
  for (const net::CollectiveDescriptor& d : net::kCollectives) {
    for (std::string_view spelling : {d.name, d.spellings[0], d.spellings[1]}) {
      if (spelling.empty()) continue;
      std::size_t pos = name.find(spelling);
      while (pos != std::string::npos) {
        const std::size_t end = pos + spelling.size();
        const bool starts = pos == 0 || !is_letter(name[pos - 1]);
        const bool ends = end == name.size() || !is_letter(name[end]);
        if (starts && ends) return std::string(d.name);
        pos = name.find(spelling, pos + 1);
      }
    }
  }
  return std::nullopt;
}

std::string trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(first, last - first + 1));
}

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) ++i;
    const std::size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t' && s[i] != '\r') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::optional<double> parse_number(std::string_view tok) {
  double v = 0.0;
  const char* end = tok.data() + tok.size();
  const auto [ptr, ec] = std::from_chars(tok.data(), end, v);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

std::optional<long long> parse_integer(std::string_view tok) {
  long long v = 0;
  const char* end = tok.data() + tok.size();
  const auto [ptr, ec] = std::from_chars(tok.data(), end, v);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

bool all_digits(std::string_view tok) {
  return !tok.empty() && std::all_of(tok.begin(), tok.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A value column's token: a number, or "N/A" for an unchecked #wrong.
bool is_value_token(std::string_view tok) { return tok == "N/A" || parse_number(tok).has_value(); }

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw std::runtime_error(where + ": " + what);
}

std::string where_line(const std::string& source, std::size_t line) { return source + ":" + std::to_string(line); }

// ---------------------------------------------------------------------------
// Text output

// The leading columns of the table, from its header line.
struct Layout {
  bool from_header = false;
  bool redop = true;           // a redop column (printed blank by old alltoall)
  bool root = true;            // a root column
  bool wrong_is_count = true;  // "#wrong"; false: old "error" (largest deviation)

  [[nodiscard]] std::string columns() const {
    if (!from_header) return "size count type [redop] [root] time algbw busbw #wrong";
    std::string s = "size count type";
    if (redop) s += " redop";
    if (root) s += " root";
    s += wrong_is_count ? " time algbw busbw #wrong" : " time algbw busbw error";
    return s;
  }
  [[nodiscard]] std::size_t column_count() const {
    if (!from_header) return 7;
    return 7 + (redop ? 1U : 0U) + (root ? 1U : 0U);
  }
};

struct RankLine {
  std::optional<long long> rank;
  std::optional<long long> group;
  std::string host;
};

struct Section {
  std::optional<std::string> program_op;  // "# Collective test starting: all_reduce_perf"
  std::optional<long long> nthread;
  std::optional<long long> ngpus;
  std::vector<RankLine> ranks;
  std::vector<CollectiveRow> rows;  // op, scope and ranks filled in at the end
  std::size_t first_row_line = 0;

  [[nodiscard]] bool has_anything() const {
    return program_op || nthread || !ranks.empty() || !rows.empty();
  }
};

Layout parse_header(const std::vector<std::string_view>& names, const std::string& where,
                    const std::string& line) {
  // names[0] == "size"
  auto bad = [&]() {
    fail(where, "unrecognized nccl-tests table header: expected 'size count type [redop] [root] time algbw "
                "busbw #wrong|error ...', got '" + line + "'");
  };
  if (names.size() < 7 || names[1] != "count" || names[2] != "type") bad();
  Layout layout;
  layout.from_header = true;
  std::size_t i = 3;
  layout.redop = names[i] == "redop";
  if (layout.redop) ++i;
  layout.root = i < names.size() && names[i] == "root";
  if (layout.root) ++i;
  if (i + 3 >= names.size()) bad();
  if (names[i] == "cputime") {
    fail(where, "the table reports CPU time (nccl-tests -C 1), the time to launch the collectives and not "
                "their duration; rerun nccl-tests without -C");
  }
  if (names[i] != "time" || names[i + 1] != "algbw" || names[i + 2] != "busbw") bad();
  if (names[i + 3] == "#wrong") {
    layout.wrong_is_count = true;
  } else if (names[i + 3] == "error") {
    layout.wrong_is_count = false;
  } else {
    bad();
  }
  return layout;
}

RankLine parse_rank_line(const std::vector<std::string_view>& toks) {
  // toks[0] == "Rank": "Rank %2d [Group %2d] Pid %6d on %10s device %2d [..] name"
  RankLine r;
  if (toks.size() > 1) r.rank = parse_integer(toks[1]);
  for (std::size_t i = 1; i + 1 < toks.size(); ++i) {
    if (toks[i] == "Group" && !r.group) r.group = parse_integer(toks[i + 1]);
    if (toks[i] == "on" && r.host.empty()) r.host = std::string(toks[i + 1]);
  }
  return r;
}

void parse_nthread_line(const std::vector<std::string_view>& toks, Section& s) {
  // "nThread %d nGpus %d minBytes ..."
  for (std::size_t i = 0; i + 1 < toks.size(); ++i) {
    if (toks[i] == "nThread") s.nthread = parse_integer(toks[i + 1]);
    if (toks[i] == "nGpus") s.ngpus = parse_integer(toks[i + 1]);
  }
}

// One table row into `section` (rows of 0 bytes are dropped).
void parse_row(const std::vector<std::string_view>& toks, const Layout& layout, const std::string& where,
               const std::string& line, Section& section) {
  const std::string columns = layout.columns();
  auto too_few = [&]() {
    fail(where, "expected " + std::to_string(layout.column_count()) + " or more columns (" + columns + "), got " +
                    std::to_string(toks.size()) + ": '" + line + "'");
  };
  auto need = [&](std::size_t k) -> std::string_view {
    if (k >= toks.size()) too_few();
    return toks[k];
  };
  auto bad = [&](std::string_view column, std::string_view expected, std::string_view got) {
    fail(where, "expected " + std::string(expected) + " in column '" + std::string(column) + "' (" + columns +
                    "), got '" + std::string(got) + "'");
  };

  const auto bytes = parse_integer(toks[0]);
  if (!bytes || *bytes < 0) bad("size", "a byte count", toks[0]);
  if (!parse_integer(need(1))) bad("count", "an element count", toks[1]);
  if (is_value_token(need(2))) bad("type", "a data type name", toks[2]);
  std::size_t i = 3;
  if (layout.from_header) {
    if (layout.redop && i < toks.size() && !is_value_token(toks[i])) ++i;  // blank in old alltoall
    if (layout.root) {
      if (!parse_integer(need(i))) bad("root", "an integer", toks[i]);
      ++i;
    }
  } else {
    if (i < toks.size() && !is_value_token(toks[i])) ++i;  // redop
    // The value columns come in groups of four (plus the per-iteration and
    // bitwise columns, also in pairs of groups): an odd count means a root column.
    std::size_t values = 0;
    while (i + values < toks.size() && is_value_token(toks[i + values])) ++values;
    if (values % 2 == 1) {
      if (!parse_integer(toks[i])) bad("root", "an integer", toks[i]);
      ++i;
    }
  }
  const std::string_view time_tok = need(i);
  const std::string_view algbw_tok = need(i + 1);
  const std::string_view busbw_tok = need(i + 2);
  const std::string_view wrong_tok = need(i + 3);
  if (*bytes == 0) return;  // nothing moved: the collective was a no-op

  auto value = [&](std::string_view column, std::string_view tok) {
    const auto v = parse_number(tok);
    if (!v || !std::isfinite(*v) || *v < 0.0) bad(column, "a non-negative number", tok);
    return *v;
  };
  CollectiveRow row;
  row.bytes = static_cast<double>(*bytes);
  row.seconds = value("time", time_tok) * 1e-6;
  row.algbw_gbps = value("algbw", algbw_tok);
  row.busbw_gbps = value("busbw", busbw_tok);
  const std::string_view wrong_column = layout.from_header && !layout.wrong_is_count ? "error" : "#wrong";
  if (wrong_tok == "N/A") {
    row.wrong = -1;
  } else {
    const double w = value(wrong_column, wrong_tok);
    const bool count = layout.from_header ? layout.wrong_is_count : w == std::floor(w);
    if (count) {
      row.wrong = std::llround(w);
    } else {
      row.wrong = w == 0.0 ? 0 : -1;  // a deviation, not a count of wrong elements
    }
  }
  section.rows.push_back(row);
}

// How a collective's ranks were spread: how many, on how many hosts, the scope.
struct Spread {
  int ranks = 0;
  int nodes = 0;  // 0: not known
  std::string scope;
};

// The spread of ranks over hosts, given the ranks each host ran (host -> ranks):
// `nodes` only when they add up to `ranks` and every host ran as many.
Spread spread_over_hosts(long long ranks, const std::map<std::string, long long>& per_host, bool all_named) {
  Spread out{static_cast<int>(ranks), 0, per_host.size() > 1 ? "inter_node" : "intra_node"};
  if (per_host.size() <= 1)
    out.nodes = 1;
  else if (all_named)
    out.nodes = even_spread_nodes(ranks, per_host);
  return out;
}

// ranks, nodes and scope of a section from its Rank lines (or nThread x nGpus).
Spread section_ranks(const Section& s, const std::string& source) {
  if (!s.ranks.empty()) {
    // With NCCL_TESTS_SPLIT_MASK the processes form several communicators (the
    // Group column); each collective spans one group.
    const auto group = s.ranks.front().group;
    std::size_t lines = 0;
    long long max_rank = -1;
    std::set<long long> groups;
    std::map<std::string, long long> per_host;
    bool all_named = true;
    for (const auto& r : s.ranks) {
      if (r.group) groups.insert(*r.group);
      if (r.group != group) continue;
      ++lines;
      if (r.rank) max_rank = std::max(max_rank, *r.rank);
      if (r.host.empty()) all_named = false;
      else ++per_host[r.host];
    }
    // Ranks are numbered across all groups; one group alone counts its lines.
    const long long count =
        groups.size() > 1 ? static_cast<long long>(lines) : std::max(static_cast<long long>(lines), max_rank + 1);
    return spread_over_hosts(count, per_host, all_named);
  }
  if (s.nthread && s.ngpus && *s.nthread > 0 && *s.ngpus > 0) {
    return {static_cast<int>(*s.nthread * *s.ngpus), 1, "intra_node"};
  }
  fail(where_line(source, s.first_row_line),
       "cannot tell the number of ranks: no '#  Rank' lines (nor a '# nThread .. nGpus ..' line) before the "
       "table; import the whole nccl-tests output");
}

std::vector<CollectiveRow> parse_text(const std::string& text, const std::string& source,
                                      const std::optional<std::string>& op_from_caller) {
  std::vector<Section> sections(1);
  Layout layout;
  auto fresh_section = [&](bool when) {
    if (when) {
      sections.emplace_back();
      layout = Layout{};
    }
  };

  std::size_t line_no = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t nl = text.find('\n', pos);
    const std::string_view raw =
        std::string_view(text).substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() + 1 : nl + 1;
    ++line_no;
    const std::string line = trim(raw);
    if (line.empty()) continue;
    const std::string where = where_line(source, line_no);

    if (line[0] == '#') {
      const auto toks = split_ws(std::string_view(line).substr(1));
      if (toks.empty()) continue;
      Section& cur = sections.back();
      if (toks[0] == "nccl-tests" && toks.size() > 1 && toks[1] == "version") {
        fresh_section(cur.has_anything());
      } else if (toks.size() >= 4 && toks[0] == "Collective" && toks[1] == "test" && toks[2] == "starting:") {
        fresh_section(cur.has_anything());
        sections.back().program_op = op_in_name(toks[3]);
        if (!sections.back().program_op) sections.back().program_op = std::string();  // seen, unknown
      } else if (toks[0] == "nThread") {
        fresh_section(!cur.rows.empty() || !cur.ranks.empty() || cur.nthread.has_value());
        parse_nthread_line(toks, sections.back());
      } else if (toks[0] == "Rank") {
        fresh_section(!cur.rows.empty());
        sections.back().ranks.push_back(parse_rank_line(toks));
      } else if (toks[0] == "size") {
        layout = parse_header(toks, where, line);
      }
      continue;
    }

    const auto toks = split_ws(line);
    if (!all_digits(toks[0])) continue;  // NCCL INFO/WARN, MPI chatter, ...
    Section& cur = sections.back();
    if (cur.rows.empty() && cur.first_row_line == 0) cur.first_row_line = line_no;
    parse_row(toks, layout, where, line, cur);
  }

  std::vector<CollectiveRow> out;
  bool any_table = false;
  for (auto& s : sections) {
    if (s.first_row_line != 0) any_table = true;
    if (s.rows.empty()) continue;
    std::optional<std::string> op = op_from_caller;
    if (!op && s.program_op && !s.program_op->empty()) op = s.program_op;
    if (!op) {
      fail(where_line(source, s.first_row_line),
           "cannot tell which collective this table measured: the file name does not name one" +
               std::string(s.program_op ? " (nor does the 'Collective test starting' line)" : "") +
               "; pass --op (one of " + std::string(kKnownOps) + ")");
    }
    const Spread spread = section_ranks(s, source);
    for (auto& r : s.rows) {
      r.op = *op;
      r.scope = spread.scope;
      r.ranks = spread.ranks;
      r.nodes = spread.nodes;
      out.push_back(std::move(r));
    }
  }
  if (out.empty()) {
    fail(source, any_table ? "the nccl-tests table has only rows of 0 bytes"
                           : "no nccl-tests result rows found (expected a table of 'size count type ... time "
                             "algbw busbw #wrong' rows)");
  }
  return out;
}

// ---------------------------------------------------------------------------
// JSON output (-J FILE.json)

double json_number(const nlohmann::json& obj, const char* key, const std::string& where) {
  const auto it = obj.find(key);
  if (it == obj.end()) fail(where, std::string("expected a \"") + key + "\" field");
  if (!it->is_number()) fail(where, std::string("expected a number in \"") + key + "\", got " + it->dump());
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < 0.0) fail(where, std::string("expected a non-negative number in \"") + key + "\"");
  return v;
}

std::vector<CollectiveRow> parse_json(const std::string& text, const std::string& source,
                                      std::optional<std::string> op) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    fail(source, std::string("not valid JSON (an interrupted nccl-tests run leaves the -J file unclosed): ") +
                     e.what());
  } catch (const nlohmann::json::out_of_range& e) {
    // A number beyond a double's range (found by fuzz/fuzz_nccl_tests).
    fail(source, std::string("not valid JSON: ") + e.what());
  }
  if (!doc.is_object() || !doc.contains("results") || !doc["results"].is_array()) {
    fail(source, "expected nccl-tests -J output: an object with a \"results\" list");
  }
  if (!op) {
    const auto args = doc.find("args");
    if (args != doc.end() && args->is_array() && !args->empty() && args->front().is_string()) {
      op = op_in_name(args->front().get<std::string>());
    }
  }
  if (!op) {
    fail(source, "cannot tell which collective this file measured: neither the file name nor the program in "
                 "\"args\" names one; pass --op (one of " + std::string(kKnownOps) + ")");
  }

  const nlohmann::json config = doc.contains("config") && doc["config"].is_object() ? doc["config"]
                                                                                      : nlohmann::json::object();
  long long per_process = 1;
  for (const char* key : {"nthreads", "ngpus"}) {
    const auto it = config.find(key);
    if (it == config.end() || !it->is_number_integer() || it->get<long long>() < 1) {
      fail(source, std::string("expected a positive integer \"config\": {\"") + key + "\"}");
    }
    per_process *= it->get<long long>();
  }
  // One "devices" entry per process (the first rank line of each).
  const nlohmann::json* devices = nullptr;
  if (config.contains("devices") && config["devices"].is_array()) {
    devices = &config["devices"];
  } else if (doc.contains("devices") && doc["devices"].is_array()) {
    devices = &doc["devices"];
  }
  // One process, one host, when the file names none.
  Spread spread{static_cast<int>(per_process), 1, "intra_node"};
  if (devices != nullptr && !devices->empty()) {
    auto group_of = [](const nlohmann::json& d) {
      return d.is_object() && d.contains("group") && d["group"].is_number_integer() ? d["group"].get<long long>()
                                                                                    : 0LL;
    };
    const long long group = group_of(devices->front());
    std::map<std::string, long long> per_host;  // host -> ranks (its processes x per_process)
    bool all_named = true;
    long long processes = 0;
    for (const auto& d : *devices) {
      if (group_of(d) != group) continue;
      ++processes;
      if (d.is_object() && d.contains("hostname") && d["hostname"].is_string()) {
        per_host[d["hostname"].get<std::string>()] += per_process;
      } else {
        all_named = false;
      }
    }
    spread = spread_over_hosts(per_process * processes, per_host, all_named);
  }

  std::vector<CollectiveRow> out;
  const auto& results = doc["results"];
  for (std::size_t i = 0; i < results.size(); ++i) {
    const std::string where = source + ": results[" + std::to_string(i) + "]";
    const auto& r = results[i];
    if (!r.is_object()) fail(where, "expected an object");
    const double bytes = json_number(r, "size", where);
    // out_of_place is null where nccl-tests ran in place only.
    const char* group_key = r.contains("out_of_place") && r["out_of_place"].is_object() ? "out_of_place" : "in_place";
    if (!r.contains(group_key) || !r[group_key].is_object()) {
      fail(where, "expected an \"out_of_place\" (or \"in_place\") object");
    }
    const auto& g = r[group_key];
    const std::string gwhere = where + "." + group_key;
    if (g.contains("cpu_time")) {
      fail(gwhere, "the file reports CPU time (nccl-tests -C 1), the time to launch the collectives and not their "
                   "duration; rerun nccl-tests without -C");
    }
    if (bytes == 0.0) continue;
    CollectiveRow row;
    row.op = *op;
    row.scope = spread.scope;
    row.ranks = spread.ranks;
    row.nodes = spread.nodes;
    row.bytes = bytes;
    row.seconds = json_number(g, "time", gwhere) * 1e-6;
    row.algbw_gbps = json_number(g, "alg_bw", gwhere);
    row.busbw_gbps = json_number(g, "bus_bw", gwhere);
    const auto nwrong = g.find("nwrong");
    if (nwrong == g.end() || nwrong->is_null()) {
      row.wrong = -1;
    } else {
      row.wrong = std::llround(json_number(g, "nwrong", gwhere));
    }
    out.push_back(std::move(row));
  }
  if (out.empty()) fail(source, "no nccl-tests results (the \"results\" list has no rows of more than 0 bytes)");
  return out;
}

}  // namespace

int even_spread_nodes(long long ranks, const std::map<std::string, long long>& per_host) {
  if (per_host.empty()) return 0;
  long long total = 0;
  for (const auto& [host, n] : per_host) {
    if (n != per_host.begin()->second) return 0;
    total += n;
  }
  return total == ranks ? static_cast<int>(per_host.size()) : 0;
}

std::optional<std::string> normalize_collective_op(std::string_view name) {
  std::string s = lower(trim(name));
  constexpr std::string_view kPerf = "_perf";
  if (s.size() > kPerf.size() && s.compare(s.size() - kPerf.size(), kPerf.size(), kPerf) == 0) {
    s.resize(s.size() - kPerf.size());
  }
  if (const auto kind = net::collective_from_name(s)) return std::string(net::to_string(*kind));
  return std::nullopt;
}

std::vector<CollectiveRow> parse_nccl_tests(const std::string& text, const std::string& source_name,
                                            std::optional<std::string> op_override) {
  std::optional<std::string> op;
  if (op_override) {
    op = normalize_collective_op(*op_override);
    if (!op) {
      throw std::runtime_error("unknown collective '" + *op_override + "' (--op takes one of " +
                               std::string(kKnownOps) + ")");
    }
  } else {
    op = op_in_name(source_name);
  }
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) fail(source_name, "empty file: no nccl-tests output");
  if (text[first] == '{') return parse_json(text, source_name, op);
  return parse_text(text, source_name, op);
}

double bus_factor(const std::string& op, int ranks) {
  const auto name = normalize_collective_op(op);
  if (!name) throw std::runtime_error("unknown collective '" + op + "' (one of " + std::string(kKnownOps) + ")");
  if (ranks < 1) throw std::runtime_error("a collective needs at least 1 rank, got " + std::to_string(ranks));
  return net::bus_factor(*net::collective_from_name(*name), ranks);
}

std::vector<CollectiveFit> fit_alpha_beta(const std::vector<CollectiveRow>& rows) {
  using Key = std::tuple<std::string, std::string, int, int>;
  std::vector<Key> order;
  std::map<Key, std::vector<const CollectiveRow*>> series;
  for (const auto& r : rows) {
    Key key{r.op, r.scope, r.ranks, r.nodes};
    auto [it, inserted] = series.try_emplace(key);
    if (inserted) order.push_back(key);
    it->second.push_back(&r);
  }

  std::vector<CollectiveFit> fits;
  for (const auto& key : order) {
    const auto& [op, scope, ranks, nodes] = key;
    const std::string name = op + " " + scope + " " + std::to_string(ranks) + " ranks" +
                             (nodes > 1 ? " on " + std::to_string(nodes) + " nodes" : "");
    // Relative error: minimize sum (alpha u_i + beta v_i - 1)^2, u = 1/t, v = bytes/t.
    std::vector<double> u;
    std::vector<double> v;
    std::set<double> sizes;
    for (const auto* r : series.at(key)) {
      if (!(r->bytes > 0.0) || !(r->seconds > 0.0) || r->wrong > 0) continue;
      u.push_back(1.0 / r->seconds);
      v.push_back(r->bytes / r->seconds);
      sizes.insert(r->bytes);
    }
    if (sizes.size() < 2) {
      throw std::runtime_error(name + ": fitting alpha and busbw needs at least two message sizes, got " +
                               std::to_string(sizes.size()) + " (run nccl-tests over a range: -b 8 -e 8G -f 2)");
    }
    const double f = bus_factor(op, ranks);
    if (!(f > 0.0)) {
      throw std::runtime_error(name + ": the bus factor is 0 (one rank moves no data); nothing to fit");
    }

    // Modified Gram-Schmidt QR of the columns [u v] (scaled to unit norm first).
    auto dot = [](const std::vector<double>& a, const std::vector<double>& b) {
      double s = 0.0;
      for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
      return s;
    };
    const std::size_t m = u.size();
    const double nu = std::sqrt(dot(u, u));
    const double nv = std::sqrt(dot(v, v));
    std::vector<double> q1(m);
    std::vector<double> q2(m);
    for (std::size_t i = 0; i < m; ++i) {
      q1[i] = u[i] / nu;
      q2[i] = v[i] / nv;
    }
    const double r12 = dot(q1, q2);
    for (std::size_t i = 0; i < m; ++i) q2[i] -= r12 * q1[i];
    const double r22 = std::sqrt(dot(q2, q2));
    double alpha = 0.0;
    double beta = 0.0;
    if (r22 > 1e-12) {
      double z1 = 0.0;
      double z2 = 0.0;
      for (std::size_t i = 0; i < m; ++i) {
        z1 += q1[i];
        z2 += q2[i] / r22;
      }
      const double b_scaled = z2 / r22;  // R = [1 r12; 0 r22] (the u column has unit norm)
      const double a_scaled = z1 - r12 * b_scaled;
      alpha = a_scaled / nu;
      beta = b_scaled / nv;
    } else {
      alpha = -1.0;  // sizes too close to separate latency from bandwidth: bandwidth only
    }
    if (alpha < 0.0) {
      alpha = 0.0;
      double sv = 0.0;
      for (const double x : v) sv += x;
      beta = sv / dot(v, v);
    }
    if (!(beta > 0.0) || !std::isfinite(beta)) {
      throw std::runtime_error(name + ": the time does not grow with the message size; no bandwidth to fit");
    }
    fits.push_back(CollectiveFit{op, scope, ranks, nodes, alpha, f / beta / 1e9});
  }
  return fits;
}

nlohmann::json to_json(const CollectiveRow& row) {
  nlohmann::json j;
  j["op"] = row.op;
  j["scope"] = row.scope;
  j["ranks"] = row.ranks;
  if (row.nodes > 0) j["nodes"] = row.nodes;
  if (row.bytes >= 0.0 && row.bytes < 9007199254740992.0 && row.bytes == std::floor(row.bytes)) {
    j["bytes"] = static_cast<std::int64_t>(row.bytes);
  } else {
    j["bytes"] = row.bytes;
  }
  j["seconds"] = row.seconds;
  j["algbw_gbps"] = row.algbw_gbps;
  j["busbw_gbps"] = row.busbw_gbps;
  j["wrong"] = row.wrong;
  return j;
}

nlohmann::json to_json(const CollectiveFit& fit) {
  nlohmann::json j;
  j["op"] = fit.op;
  j["scope"] = fit.scope;
  j["ranks"] = fit.ranks;
  if (fit.nodes > 0) j["nodes"] = fit.nodes;
  j["alpha_s"] = fit.alpha_s;
  j["busbw_gbps"] = fit.busbw_gbps;
  return j;
}

}  // namespace trainsim::calibrate
