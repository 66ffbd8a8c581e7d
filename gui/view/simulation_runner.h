#pragma once
// "Simulate scenario...": reads the scenario and simulates it on a worker
// thread with the library calls `trainsim run --out` makes (sim/cli/main.cpp),
// writes RESULT.json and its timeline (and, with failures, its run timeline)
// into a temporary folder, and reports progress so the window can show it.
#include <QObject>
#include <QString>
#include <QTemporaryDir>
#include <QThread>
#include <memory>

namespace trainsim::gui {

class SimulationRunner : public QObject {
  Q_OBJECT
 public:
  explicit SimulationRunner(QObject* parent = nullptr);
  ~SimulationRunner() override;

  bool busy() const { return thread_ != nullptr; }
  // Starts the worker; false when one is already running.
  bool start(const QString& scenario_path);

  // progress() values, out of kScale: reading the scenario at 0; the iteration
  // simulation moves the value from kSimulateBegin to kSimulateEnd as its tasks
  // finish (exec::SimulateOptions::progress); with a failures section it stops at
  // kReplayBegin and the full-run replay's trials move it on to kSimulateEnd;
  // writing the files at kWrite; done at kScale.
  static constexpr int kScale = 1000;
  static constexpr int kSimulateBegin = 10;
  static constexpr int kSimulateEnd = 900;
  static constexpr int kReplayBegin = 500;  // with failures: the replay's trials from here to kSimulateEnd
  static constexpr int kWrite = 950;

 signals:
  // Values never decrease; the simulation step emits about 200 of them.
  void progress(int value, const QString& what);
  void finished(const QString& result_path);
  void failed(const QString& message);

 private:
  QThread* thread_ = nullptr;
  QTemporaryDir dir_;
  int runs_ = 0;
};

}  // namespace trainsim::gui
