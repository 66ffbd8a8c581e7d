#pragma once
// "Simulate scenario...": reads the scenario and simulates it on a worker
// thread with the library calls `trainsim run --out` makes (sim/cli/main.cpp),
// writes RESULT.json and its timeline into a temporary folder, and reports
// the steps so the window can show progress.
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
  static constexpr int kSteps = 3;  // read, simulate, write

 signals:
  void progress(int step, const QString& what);
  void finished(const QString& result_path);
  void failed(const QString& message);

 private:
  QThread* thread_ = nullptr;
  QTemporaryDir dir_;
  int runs_ = 0;
};

}  // namespace trainsim::gui
