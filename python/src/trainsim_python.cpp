// trainsim._core: the Python package's extension (docs/python.md). It calls what the
// CLI calls (sim/cli/main.cpp, sim/cli/sweep_command.cpp) and hands back what the
// CLI writes, as Python objects: the result file's JSON (report/result_json.h),
// sweep.json's points (sweep/outcome.h), the collective table. It reads no file the
// CLI would not and writes none; the simulation runs with the GIL released, so
// threads of one interpreter simulate on every core.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/parallel.h"
#include "core/version.h"
#include "execution/full_run.h"
#include "execution/simulate.h"
#include "network/algorithms.h"
#include "report/collective_table.h"
#include "report/metrics.h"
#include "report/microbatch_extrapolation.h"
#include "report/result_json.h"
#include "scenario/cluster_file.h"
#include "scenario/collective_options.h"
#include "scenario/errors.h"
#include "scenario/json_document.h"
#include "scenario/presets.h"
#include "scenario/reader.h"
#include "scenario/sweep_spec_reader.h"
#include "sweep/evaluate.h"
#include "sweep/outcome.h"
#include "sweep/reliability.h"
#include "sweep/space.h"

namespace nb = nanobind;
using namespace trainsim;

namespace {

using ojson = nlohmann::ordered_json;

// A scenario, sweep spec or cluster as the Python layer passes it: a file, or the
// JSON text of a dict with the name its messages give it ("<dict>").
struct Source {
  std::string path;  // a file to read; empty: `text`
  std::string text;
  std::string name;
};

// JSON to Python objects, keys in the file's order. NaN and infinities become None,
// as nlohmann's dump writes them (null), so a dict equals the parsed file.
nb::object to_python(const ojson& j) {
  switch (j.type()) {
    case ojson::value_t::null: return nb::none();
    case ojson::value_t::boolean: return nb::bool_(j.get<bool>());
    case ojson::value_t::number_integer: return nb::int_(j.get<std::int64_t>());
    case ojson::value_t::number_unsigned: return nb::int_(j.get<std::uint64_t>());
    case ojson::value_t::number_float: {
      const double v = j.get<double>();
      return std::isfinite(v) ? nb::object(nb::float_(v)) : nb::none();
    }
    case ojson::value_t::string: return nb::str(j.get_ref<const std::string&>().c_str());
    case ojson::value_t::array: {
      nb::list out;
      for (const ojson& v : j) out.append(to_python(v));
      return out;
    }
    case ojson::value_t::object: {
      nb::dict out;
      for (const auto& [key, value] : j.items()) out[nb::str(key.c_str())] = to_python(value);
      return out;
    }
    case ojson::value_t::binary:
    case ojson::value_t::discarded: break;
  }
  throw std::invalid_argument("a JSON value with no Python form");
}

// `trainsim run SCENARIO [--calibration FILE]`: the result file's JSON, without a
// timeline file ("timeline": null), and how long the C++ side took (reading,
// simulating, serializing), for the overhead benchmark (scripts/bench-python-overhead.py).
struct RunOutcome {
  ojson result;
  double seconds = 0.0;
  std::vector<std::string> warnings;
};

RunOutcome run_scenario(const Source& source, const std::optional<std::string>& calibration,
                        const std::optional<std::uint64_t>& seed, bool exact) {
  const auto start = std::chrono::steady_clock::now();
  scenario::ReadOptions read;
  if (calibration) read.calibration = *calibration;
  config::Scenario s = source.path.empty() ? scenario::parse_scenario_text(source.text, source.name, read)
                                           : scenario::read_scenario_file(source.path, read);
  if (seed) {
    s.simulation.seed = *seed;
    if (s.failures) s.failures->seed = *seed;
  }
  // As `trainsim run` without --out: a steady state extrapolated from short runs
  // where that gives the same result byte for byte (report/microbatch_extrapolation.h).
  std::optional<report::Metrics> extrapolated;
  if (!exact && !s.failures) extrapolated = report::extrapolated_metrics(s, {});
  exec::SimulationOutput out;
  if (!extrapolated) out = exec::simulate(s);
  report::Metrics m = extrapolated ? std::move(*extrapolated) : report::compute_metrics(s, out);
  if (s.failures) report::add_reliability(m, exec::simulate_full_run(s, out));
  RunOutcome r;
  r.result = report::result_json(s, m, "");
  if (s.calibration) r.warnings = s.calibration->warnings;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

nb::tuple run(const Source& source, const std::optional<std::string>& calibration,
              const std::optional<std::uint64_t>& seed, bool exact) {
  RunOutcome r;
  {
    const nb::gil_scoped_release released;
    r = run_scenario(source, calibration, seed, exact);
  }
  return nb::make_tuple(to_python(r.result), r.seconds, r.warnings);
}

// `trainsim sweep SPEC`: the points of sweep.json, evaluated a batch at a time as
// the CLI's threads evaluate them (sweep::evaluate_listed), in id order. Under
// failures the best points are replayed after every point is evaluated
// (sweep::replay_points), so the first batch is then the whole sweep.
class SweepRun {
 public:
  SweepRun(const Source& source, int jobs, const std::string& rank_by) {
    const nb::gil_scoped_release released;
    const std::string text =
        source.path.empty() ? source.text : scenario::read_document_file(source.path, "sweep spec");
    spec_ = scenario::parse_sweep_spec(text, source.path.empty() ? source.name : source.path);
    if (rank_by == "cost") spec_.objective = config::Objective::kCost;
    if (rank_by == "time") spec_.objective = config::Objective::kTimeToTrain;
    enumeration_ = sweep::enumerate(spec_);
    results_.resize(enumeration_.candidates.size());
    jobs_ = core::threads_or_every_core(jobs);
  }

  [[nodiscard]] std::size_t size() const { return enumeration_.candidates.size(); }

  // The next batch's listed points (possibly none), or None when every point is out.
  nb::object next_batch() {
    const std::size_t n = results_.size();
    if (yielded_ >= n) return nb::none();
    {
      const nb::gil_scoped_release released;
      const std::size_t batch = spec_.failures_modeled() ? n : static_cast<std::size_t>(jobs_) * 4;
      evaluate_up_to(std::min(n, done_ + batch));
    }
    nb::list out;
    for (const std::size_t done = done_; yielded_ < done; ++yielded_)
      if (sweep::listed(results_[yielded_]))
        out.append(to_python(sweep::point_json(spec_, enumeration_.candidates[yielded_], results_[yielded_])));
    return out;
  }

  // sweep.json whole: counts, ranking, Pareto front and every point (evaluating
  // those not evaluated yet).
  nb::object summary() {
    ojson j;
    {
      const nb::gil_scoped_release released;
      evaluate_up_to(results_.size());
      j = sweep::sweep_json(spec_, sweep::summarize(spec_, enumeration_, results_));
    }
    return to_python(j);
  }

 private:
  // Under the mutex: two Python threads may step one sweep at once.
  void evaluate_up_to(std::size_t end) {
    const std::lock_guard lock(mutex_);
    if (end <= done_) return;
    std::vector<std::size_t> todo;
    for (std::size_t i = done_; i < end; ++i) todo.push_back(i);
    sweep::evaluate_listed(spec_, enumeration_.candidates, todo, jobs_, results_, {});
    done_ = end;
    if (done_ == results_.size() && spec_.failures_modeled()) {
      const std::vector<std::size_t> selection = sweep::replay_selection(spec_, enumeration_.candidates, results_);
      sweep::replay_points(spec_, enumeration_.candidates, results_, selection, jobs_);
    }
  }

  config::SweepSpec spec_;
  sweep::Enumeration enumeration_;
  std::vector<sweep::PointResult> results_;
  int jobs_ = 1;
  std::atomic<std::size_t> done_ = 0;  // candidates evaluated
  std::size_t yielded_ = 0;  // candidates handed out (with the GIL held)
  std::mutex mutex_;
};

// `trainsim collective --cluster FILE ...`: the same options, checked with the same
// messages; the table's rows and its text as the CLI prints it.
nb::dict collective(const Source& cluster_source, const std::string& op, const std::string& min_bytes,
                    const std::string& max_bytes, std::uint64_t factor, int gpus, const std::string& algorithm,
                    const std::string& model) {
  const auto kind = scenario::collective_kind_from_string(op);
  if (!kind)
    throw std::invalid_argument(fmt::format("unknown operation \"{}\"; use all_reduce, all_gather, reduce_scatter, "
                                            "all_to_all, broadcast, reduce or send_recv (or nccl-tests' allreduce, "
                                            "allgather, ...)",
                                            op));
  const auto size = [](const std::string& text) {
    const auto bytes = scenario::parse_byte_size(text);
    if (!bytes)
      throw std::invalid_argument(
          fmt::format("\"{}\" is not a size in bytes; e.g. 8, 64K, 128M, 8G (powers of 1024)", text));
    return *bytes;
  };
  report::CollectiveTableOptions t;
  t.kind = *kind;
  t.min_bytes = size(min_bytes);
  t.max_bytes = size(max_bytes);
  if (t.min_bytes > t.max_bytes)
    throw std::invalid_argument(fmt::format("maxbytes {} is below minbytes {}", max_bytes, min_bytes));
  if (factor < 2 || factor > (std::uint64_t{1} << 20))
    throw std::invalid_argument(fmt::format("stepfactor {} is not in [2, 1048576]", factor));
  t.factor = factor;
  if (gpus < 0 || gpus > 1'000'000) throw std::invalid_argument(fmt::format("ngpus {} is not in [1, 1000000]", gpus));
  t.gpus = gpus;
  const auto algo = net::algorithm_from_string(algorithm);
  if (!algo)
    throw std::invalid_argument(fmt::format("unknown algo \"{}\"; use auto, ring, tree, halving_doubling, "
                                            "hierarchical, nvls, direct or pairwise",
                                            algorithm));
  t.algorithm = *algo;
  if (model != "analytic" && model != "flow")
    throw std::invalid_argument(fmt::format("unknown model \"{}\"; use analytic or flow", model));
  t.model = model == "analytic" ? report::CollectiveNetworkModel::kAnalytic : report::CollectiveNetworkModel::kFlow;

  hw::ClusterSpec cluster;
  report::CollectiveTable table;
  std::string text;
  {
    const nb::gil_scoped_release released;
    cluster = cluster_source.path.empty() ? scenario::parse_cluster_text(cluster_source.text, cluster_source.name)
                                          : scenario::read_cluster_file(cluster_source.path);
    table = report::collective_table(cluster, t);
    text = report::format_collective_table(cluster, t, table);
  }
  nb::list rows;
  for (const report::CollectiveRow& r : table.rows) {
    nb::dict row;
    row["bytes"] = r.bytes;
    row["count"] = r.count;
    row["time_s"] = static_cast<double>(r.time) * 1e-9;
    row["algbw_gb_per_s"] = r.algbw;
    row["busbw_gb_per_s"] = r.busbw;
    row["algorithm"] = std::string(net::to_string(r.algorithm));
    rows.append(row);
  }
  nb::dict out;
  out["op"] = op;
  nb::dict group;
  group["size"] = table.group.size;
  group["nodes"] = table.group.nodes;
  group["ranks_per_node"] = table.group.ranks_per_node;
  out["group"] = group;
  out["topology"] = table.topology;
  out["network_model"] = table.network_model;
  out["rows"] = rows;
  out["average_busbw_gb_per_s"] = table.average_busbw;
  out["table"] = text;
  return out;
}

nb::dict presets() {
  nb::dict out;
  out["gpu"] = scenario::preset_names(scenario::PresetKind::kHardware);
  out["model"] = scenario::preset_names(scenario::PresetKind::kModel);
  return out;
}

// A ScenarioError becomes trainsim.ScenarioError (python/trainsim/_errors.py) with
// its file, JSON pointer, expected and found (None where the message is given whole).
void translate_scenario_error(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const scenario::ScenarioError& e) {
    const auto or_none = [](const std::string& s) { return s.empty() ? nb::none() : nb::object(nb::str(s.c_str())); };
    const nb::object cls = nb::module_::import_("trainsim._errors").attr("ScenarioError");
    const nb::object error = cls(nb::str(e.what()), or_none(e.file()), nb::str(e.json_path().c_str()),
                                 or_none(e.expected()), or_none(e.found()));
    PyErr_SetObject(cls.ptr(), error.ptr());
  }
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "trainsim's simulator (C++): use the functions of the trainsim package";
  m.attr("__version__") = core::kVersion;
  nb::register_exception_translator(translate_scenario_error);

  nb::class_<Source>(m, "Source")
      .def(nb::init<>())
      .def_rw("path", &Source::path)
      .def_rw("text", &Source::text)
      .def_rw("name", &Source::name);

  m.def("run", &run, nb::arg("source"), nb::arg("calibration").none(), nb::arg("seed").none(), nb::arg("exact"),
        "(result dict, seconds in C++, calibration warnings)");
  nb::class_<SweepRun>(m, "SweepRun")
      .def(nb::init<const Source&, int, const std::string&>(), nb::arg("source"), nb::arg("jobs"), nb::arg("rank_by"))
      .def("__len__", &SweepRun::size)
      .def("next_batch", &SweepRun::next_batch)
      .def("summary", &SweepRun::summary);
  m.def("collective", &collective, nb::arg("cluster"), nb::arg("op"), nb::arg("minbytes"), nb::arg("maxbytes"),
        nb::arg("stepfactor"), nb::arg("ngpus"), nb::arg("algo"), nb::arg("model"));
  m.def("presets", &presets);
}
