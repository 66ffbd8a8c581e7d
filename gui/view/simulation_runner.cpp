#include "view/simulation_runner.h"

#include <QFileInfo>
#include <QMetaObject>
#include <cmath>
#include <exception>
#include <filesystem>

#include "execution/full_run.h"
#include "execution/simulate.h"
#include "report/metrics.h"
#include "report/result_json.h"
#include "report/run_timeline.h"
#include "report/timeline_writer.h"
#include "scenario/reader.h"

namespace trainsim::gui {

SimulationRunner::SimulationRunner(QObject* parent) : QObject(parent) {}

SimulationRunner::~SimulationRunner() {
  if (thread_) thread_->wait();
}

bool SimulationRunner::start(const QString& scenario_path) {
  if (thread_ || !dir_.isValid()) return false;
  const std::filesystem::path scenario = scenario_path.toStdString();
  const std::filesystem::path result =
      (dir_.path() + QStringLiteral("/%1-%2.json").arg(QFileInfo(scenario_path).completeBaseName()).arg(++runs_)).toStdString();
  // Signals from the worker are queued to this object's thread.
  thread_ = QThread::create([this, scenario, result] {
    try {
      emit progress(0, tr("reading the scenario"));
      const config::Scenario s = scenario::read_scenario_file(scenario);
      const QString simulating = tr("simulating");
      emit progress(kSimulateBegin, simulating);
      // With failures the bar's second part is the full-run replay's trials.
      const int simulate_end = s.failures ? kReplayBegin : kSimulateEnd;
      int last = kSimulateBegin;
      // A phase's fraction onto [begin, end] of the bar; one signal per step of it.
      auto reporter = [this, &last](int begin, int end, QString what) {
        return [this, &last, begin, end, what](double fraction) {
          const int value = begin + static_cast<int>(std::lround(fraction * (end - begin)));
          if (value <= last) return;
          last = value;
          emit progress(value, what);
        };
      };
      exec::SimulateOptions options;
      options.progress = reporter(kSimulateBegin, simulate_end, simulating);
      const exec::SimulationOutput out = exec::simulate(s, options);
      report::Metrics m = report::compute_metrics(s, out);
      if (s.failures) {
        const QString replaying = tr("replaying the full run with failures (%1 trials)").arg(s.failures->trials);
        last = kReplayBegin;
        emit progress(kReplayBegin, replaying);  // where the simulation ended, under the replay's name
        report::add_reliability(m, exec::simulate_full_run(s, out, reporter(kReplayBegin, kSimulateEnd, replaying)));
      }
      emit progress(kWrite, tr("writing the result"));
      std::filesystem::path stem = result;
      stem.replace_extension();
      const std::filesystem::path timeline = stem.string() + ".timeline.json";
      report::write_timeline(timeline, s, out);
      std::filesystem::path run_timeline;
      if (m.reliability) {
        run_timeline = stem.string() + ".run_timeline.json";
        report::write_run_timeline(run_timeline, s, *m.reliability);
      }
      report::write_result(result, report::result_json(s, m, timeline.filename().string(),
                                                       run_timeline.empty() ? "" : run_timeline.filename().string()));
      emit progress(kScale, tr("done"));
      emit finished(QString::fromStdString(result.string()));
    } catch (const std::exception& e) {
      emit failed(QString::fromUtf8(e.what()));
    }
  });
  // Owned by this runner: deleted with it (after the wait in the destructor) if
  // it goes before the thread's finished signal arrives.
  thread_->setParent(this);
  connect(thread_, &QThread::finished, this, [this] {
    thread_->deleteLater();
    thread_ = nullptr;
  });
  thread_->start();
  return true;
}

}  // namespace trainsim::gui
