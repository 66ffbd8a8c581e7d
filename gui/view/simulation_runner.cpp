#include "view/simulation_runner.h"

#include <QFileInfo>
#include <QMetaObject>
#include <exception>
#include <filesystem>

#include "execution/simulate.h"
#include "report/metrics.h"
#include "report/result_json.h"
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
      const scenario::Scenario s = scenario::read_scenario_file(scenario);
      emit progress(1, tr("simulating"));
      const exec::SimulationOutput out = exec::simulate(s);
      const report::Metrics m = report::compute_metrics(s, out);
      emit progress(2, tr("writing the result"));
      std::filesystem::path timeline = result;
      timeline.replace_extension();
      timeline += ".timeline.json";
      report::write_timeline(timeline, s, out);
      report::write_result(result, report::result_json(s, m, timeline.filename().string()));
      emit progress(3, tr("done"));
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
