#include "view/main_window.h"

#include <QApplication>
#include <QFileDialog>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QStatusBar>
#include <QTabWidget>

#include "model/timeline_reader.h"
#include "view/compare_window.h"
#include "view/run_page.h"
#include "view/simulation_runner.h"

namespace trainsim::gui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle(tr("trainsim-gui"));
  tabs_ = new QTabWidget(this);
  tabs_->setTabsClosable(true);
  tabs_->setDocumentMode(true);
  connect(tabs_, &QTabWidget::tabCloseRequested, this, [this](int i) {
    QWidget* w = tabs_->widget(i);
    tabs_->removeTab(i);
    w->deleteLater();
  });
  setCentralWidget(tabs_);

  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open result or timeline..."), QKeySequence::Open, this, &MainWindow::open_dialog);
  file->addAction(tr("&Simulate scenario..."), QKeySequence(tr("Ctrl+R")), this, &MainWindow::simulate_dialog);
  file->addAction(tr("&Compare the first two tabs"), QKeySequence(tr("Ctrl+D")), this, [this] {
    if (tabs_->count() < 2) {
      QMessageBox::information(this, tr("Compare"), tr("Open two runs first (A in the first tab, B in the second)."));
      return;
    }
    compare(0, 1);
  });
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, qApp, &QApplication::quit);

  progress_ = new QProgressBar(this);
  progress_->setRange(0, SimulationRunner::kScale);
  progress_->setVisible(false);
  statusBar()->addPermanentWidget(progress_);
  runner_ = new SimulationRunner(this);
  connect(runner_, &SimulationRunner::progress, this, [this](int step, const QString& what) {
    progress_->setVisible(true);
    progress_->setValue(step);
    statusBar()->showMessage(what);
  });
  connect(runner_, &SimulationRunner::finished, this, [this](const QString& path) {
    progress_->setVisible(false);
    statusBar()->showMessage(tr("simulated: %1").arg(path), 10000);
    open_path(path);
  });
  connect(runner_, &SimulationRunner::failed, this, [this](const QString& message) {
    progress_->setVisible(false);
    statusBar()->clearMessage();
    QMessageBox::warning(this, tr("Simulation failed"), message);
  });
  resize(1500, 900);
}

bool MainWindow::open_path(const QString& path, bool quiet) {
  try {
    QApplication::setOverrideCursor(Qt::WaitCursor);
    Run run = load_run(path.toStdString());
    QApplication::restoreOverrideCursor();
    const QString label = QString::fromStdString(run.label);
    auto* page = new RunPage(std::move(run), tabs_);
    tabs_->setCurrentIndex(tabs_->addTab(page, label));
    return true;
  } catch (const std::exception& e) {
    QApplication::restoreOverrideCursor();
    if (!quiet) QMessageBox::warning(this, tr("Cannot open"), QString::fromUtf8(e.what()));
    statusBar()->showMessage(QString::fromUtf8(e.what()));
    return false;
  }
}

void MainWindow::compare(int a, int b) {
  const auto* pa = qobject_cast<RunPage*>(tabs_->widget(a));
  const auto* pb = qobject_cast<RunPage*>(tabs_->widget(b));
  if (!pa || !pb) return;
  auto* w = new CompareWindow(pa->run(), pb->run());
  w->setAttribute(Qt::WA_DeleteOnClose);
  w->show();
}

void MainWindow::simulate(const QString& scenario_path) {
  if (!runner_->start(scenario_path))
    QMessageBox::information(this, tr("Simulate"), tr("A simulation is already running."));
}

void MainWindow::open_dialog() {
  const QString filter = tr("trainsim results and timelines (*.json *.json.gz);;All files (*)");
  for (const QString& path : QFileDialog::getOpenFileNames(this, tr("Open result or timeline"), QString(), filter))
    open_path(path);
}

void MainWindow::simulate_dialog() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Simulate scenario"), QStringLiteral("scenarios"),
                                                    tr("Scenarios (*.json)"));
  if (!path.isEmpty()) simulate(path);
}

}  // namespace trainsim::gui
