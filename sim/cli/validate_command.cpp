#include "cli/validate_command.h"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>

#include "execution/kernel_classes.h"
#include "execution/simulate.h"
#include "io/atomic_file.h"
#include "report/metrics.h"
#include "report/result_json.h"
#include "report/timeline_writer.h"
#include "report/validation_report.h"
#include "report/corpus_report.h"
#include "report/prediction_interval.h"
#include "scenario/corpus_reader.h"
#include "scenario/measured_run.h"
#include "scenario/reader.h"
#include "scenario/torch_trace.h"
#include "report/trace_timeline.h"

namespace trainsim::cli {

namespace {

namespace fs = std::filesystem;

// The measured timeline beside the predicted one, so both open together
// (trainsim-gui DIR/predicted.json DIR/measured.timeline.json).
void copy_timeline(const fs::path& from, const fs::path& to) {
  std::ifstream in(from, std::ios::binary);
  if (!in) throw io::OutputError(from.string() + ": cannot read the measured timeline the run file names");
  io::write_atomically(to, [&in](std::ostream& os) { os << in.rdbuf(); });
}

// The --out folder, made if it is not there.
fs::path output_folder(const std::string& out) {
  const fs::path dir(out);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw io::OutputError(dir.string() + ": cannot create the output folder: " + ec.message());
  return dir;
}

}  // namespace

ValidateCommand::ValidateCommand(CLI::App& app) {
  command_ = app.add_subcommand(
      "validate", "Simulate the run a measured-run file describes (or every run of a corpus) and print predicted "
                  "against measured");
  CLI::Option* measured = command_->add_option(
      "--measured", options_.measured,
      "The measured run (trainsim-train's RUN.json), or the PyTorch profiler traces of one job (torch.profiler's "
      "Chrome trace, one file per rank; with --scenario)");
  CLI::Option* corpus = command_->add_option(
      "--corpus", options_.corpus,
      "A validation corpus: a file of published runs, or a folder of them (tests/validation/corpus)");
  measured->excludes(corpus);
  command_->add_option("--scenario", options_.scenario,
                       "With profiler traces: the scenario of the job they were recorded from")
      ->needs(measured);
  command_->add_option("-j,--jobs", options_.jobs, "Threads for --corpus (default: every core)")
      ->check(CLI::Range(1, 1024))
      ->needs(corpus);
  command_->add_option("--only", options_.only, "With --corpus: only the cases whose id contains this text")
      ->needs(corpus);
  command_->add_option("--record", options_.record,
                       "With --corpus: write the figures by group here (what the corpus regression test compares "
                       "against: tests/validation/corpus/figures.json)")
      ->needs(corpus);
  command_->add_option("--record-model-error", options_.record_model_error,
                       "With --corpus: write the ratios measured / predicted of the cases not held out here, as "
                       "quantiles (the prediction interval's record: scenarios/accuracy/model_error.json)")
      ->needs(corpus);
  command_->callback([measured, corpus] {
    if (measured->count() == 0 && corpus->count() == 0)
      throw CLI::RequiredError("--measured or --corpus");
  });
  command_->add_option("--calibration", options_.calibration,
                       "Take kernel costs from this calibration profile (the machine the run was measured on)");
  command_->add_option("--gpu", options_.gpu,
                       "GPU preset of the simulated run (default: from the run's device name)");
  command_->add_option("--out", options_.out,
                       "Folder for validation.json, predicted.json, predicted.timeline.json and "
                       "measured.timeline.json (with --corpus: corpus.json)");
  command_->add_flag("--quiet,-q", options_.quiet, "Print nothing but errors");
}

bool ValidateCommand::parsed() const { return command_->parsed(); }

int ValidateCommand::run() const {
  if (!options_.corpus.empty()) return run_corpus();
  if (options_.measured.size() > 1 || !options_.scenario.empty() ||
      scenario::is_torch_trace_file(options_.measured.front()))
    return run_traces();
  const scenario::MeasuredRun measured = scenario::read_measured_run(options_.measured.front());
  scenario::MeasuredScenarioOptions so;
  if (!options_.gpu.empty()) so.gpu = options_.gpu;
  if (!options_.calibration.empty()) so.calibration = fs::path(options_.calibration);
  const config::Scenario s = scenario::scenario_for_measured_run(measured, so);
  if (s.calibration && !options_.quiet)
    for (const std::string& w : s.calibration->warnings) std::cerr << "warning: " << w << '\n';

  const exec::SimulationOutput out = exec::simulate(s);
  const report::Metrics m = report::compute_metrics(s, out);
  report::ValidationReport r = report::validation_report(measured, m, exec::kernel_class_seconds(s));
  r.compute_model = compute_model(s);
  if (!options_.quiet) std::cout << report::validation_text(r) << std::flush;
  if (!options_.out.empty())
    write_outputs(output_folder(options_.out), s, out, m, r, [&measured](const fs::path& dir) -> std::string {
      if (measured.timeline.empty()) return "";
      copy_timeline(measured.timeline, dir / "measured.timeline.json");
      return "measured.timeline.json";
    });
  return 0;
}

int ValidateCommand::run_traces() const {
  if (options_.scenario.empty())
    throw CLI::ValidationError("--scenario", "profiler traces carry no model or layout: give the job's scenario");
  scenario::ReadOptions read;
  if (!options_.calibration.empty()) read.calibration = fs::path(options_.calibration);
  const config::Scenario s = scenario::read_scenario_file(options_.scenario, read);
  std::vector<scenario::TorchTrace> traces;
  for (std::size_t i = 0; i < options_.measured.size(); ++i)
    traces.push_back(scenario::read_torch_trace(options_.measured[i], static_cast<int>(i)));
  const scenario::MeasuredRun measured = scenario::measured_run_from_traces(
      traces, s.cluster.num_gpus(),
      s.training.framework == workload::Framework::kPytorchEager    ? "pytorch_eager"
      : s.training.framework == workload::Framework::kTrainsimTrain ? "trainsim_train"
                                                                    : "fused");

  const exec::SimulationOutput out = exec::simulate(s);
  const report::Metrics m = report::compute_metrics(s, out);
  report::ValidationReport r = report::validation_report(measured, m, exec::kernel_class_seconds(s));
  r.compute_model = compute_model(s);
  if (!options_.quiet) {
    std::cout << report::validation_text(r);
    for (const scenario::TorchTrace& t : traces)
      std::cout << report::trace_rank_line(t);
    std::cout << std::flush;
  }
  if (!options_.out.empty())
    write_outputs(output_folder(options_.out), s, out, m, r, [&traces, &s](const fs::path& dir) -> std::string {
      const long long step = report::last_common_timed_step(traces);
      io::write_atomically(dir / "measured.timeline.json", [&](std::ostream& os) {
        report::write_trace_timeline(os, traces, step, s.name);
      });
      return "measured.timeline.json";
    });
  return 0;
}

std::string ValidateCommand::compute_model(const config::Scenario& s) {
  return s.calibration ? "calibration profile " + s.calibration->file + " (roofline where it has no entry)"
                       : "roofline of the " + s.cluster.gpu.name + " preset (no calibration profile)";
}

void ValidateCommand::write_outputs(const fs::path& dir, const config::Scenario& s, const exec::SimulationOutput& out,
                                    const report::Metrics& m, const report::ValidationReport& r,
                                    const std::function<std::string(const fs::path&)>& measured_timeline) const {
  report::write_timeline(dir / "predicted.timeline.json", s, out);
  report::write_result(dir / "predicted.json", report::result_json(s, m, "predicted.timeline.json", ""));
  const std::string timeline = measured_timeline(dir);
  const nlohmann::ordered_json j = report::validation_json(r, "predicted.json", "predicted.timeline.json", timeline);
  io::write_atomically(dir / "validation.json", [&j](std::ostream& os) { os << j.dump(1) << '\n'; });
  if (!options_.quiet) std::cout << fmt::format("\nwrote {}\n", (dir / "validation.json").string());
}

int ValidateCommand::run_corpus() const {
  const scenario::Corpus corpus = scenario::read_corpus(options_.corpus);
  const std::string only = options_.only;
  const auto select = [&only](const scenario::CorpusCase& c) { return c.id.find(only) != std::string::npos; };
  const report::CorpusReport r =
      report::corpus_report(report::evaluate_corpus(corpus, options_.jobs, select), corpus.held_out_rule);
  if (!options_.quiet) std::cout << report::corpus_text(r) << std::flush;
  if (!options_.out.empty()) {
    const fs::path dir = output_folder(options_.out);
    const nlohmann::ordered_json j = report::corpus_json(r);
    io::write_atomically(dir / "corpus.json", [&j](std::ostream& os) { os << j.dump(1) << '\n'; });
    if (!options_.quiet) std::cout << fmt::format("\nwrote {}\n", (dir / "corpus.json").string());
  }
  if (!options_.record.empty()) {
    const nlohmann::ordered_json j = report::corpus_figures_json(r);
    io::write_atomically(options_.record, [&j](std::ostream& os) { os << j.dump(1) << '\n'; });
    if (!options_.quiet) std::cout << fmt::format("wrote {}\n", options_.record);
  }
  if (!options_.record_model_error.empty()) {
    const nlohmann::ordered_json j = report::model_error_json(report::model_error_record(r));
    io::write_atomically(options_.record_model_error, [&j](std::ostream& os) { os << j.dump(1) << '\n'; });
    if (!options_.quiet) std::cout << fmt::format("wrote {}\n", options_.record_model_error);
  }
  return 0;
}

}  // namespace trainsim::cli
