#pragma once
// The main window: a tab per opened run, File > Open, Simulate scenario,
// Compare, and a progress bar for simulations running in the background.
#include <QMainWindow>
#include <QStringList>

class QProgressBar;
class QTabWidget;

namespace trainsim::gui {

class SimulationRunner;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);

  // Opens RESULT.json or a timeline in a new tab; false (with a message box
  // unless quiet) when it cannot be read.
  bool open_path(const QString& path, bool quiet = false);
  // Opens a window comparing the first two tabs (or the two given paths).
  void compare(int a, int b);
  void simulate(const QString& scenario_path);

 private:
  void open_dialog();
  void simulate_dialog();

  QTabWidget* tabs_ = nullptr;
  QProgressBar* progress_ = nullptr;
  SimulationRunner* runner_ = nullptr;
};

}  // namespace trainsim::gui
