// The window's paths end to end, offscreen: simulate a scenario on the worker
// thread and open its result; open two runs and compare them.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include <QApplication>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>

#include "view/compare_window.h"
#include "view/main_window.h"
#include "view/run_page.h"
#include "view/simulation_runner.h"

namespace trainsim::gui {
namespace {

const QString kScenario = QStringLiteral(TRAINSIM_SOURCE_DIR "/scenarios/gpt2-124m-1xh100.json");

TEST(SimulationRunner, SimulatesOnAWorkerThreadAndWritesTheResult) {
  SimulationRunner runner;
  QSignalSpy done(&runner, &SimulationRunner::finished);
  QSignalSpy steps(&runner, &SimulationRunner::progress);
  QSignalSpy failed(&runner, &SimulationRunner::failed);
  ASSERT_TRUE(runner.start(kScenario));
  EXPECT_FALSE(runner.start(kScenario));  // one at a time
  ASSERT_TRUE(done.wait(60000)) << (failed.isEmpty() ? "" : failed.first().first().toString().toStdString());
  // 0 read, the simulation's progress from kSimulateBegin to kSimulateEnd as its
  // tasks finish, kWrite, kScale done; never decreasing.
  std::vector<int> values;
  for (const QList<QVariant>& signal : steps) values.push_back(signal.first().toInt());
  ASSERT_GE(values.size(), 4u);
  EXPECT_EQ(values.front(), 0);
  EXPECT_EQ(values[1], SimulationRunner::kSimulateBegin);
  EXPECT_EQ(values.back(), SimulationRunner::kScale);
  EXPECT_EQ(values[values.size() - 2], SimulationRunner::kWrite);
  EXPECT_EQ(values[values.size() - 3], SimulationRunner::kSimulateEnd);  // the last task finished
  for (std::size_t i = 1; i < values.size(); ++i) EXPECT_GT(values[i], values[i - 1]) << "signal " << i;
  // The bar moved during the simulation, not just between the steps.
  const auto during = std::count_if(values.begin(), values.end(), [](int v) {
    return v > SimulationRunner::kSimulateBegin && v < SimulationRunner::kSimulateEnd;
  });
  EXPECT_GT(during, 50);
  const gui::Run run = load_run(done.first().first().toString().toStdString());
  ASSERT_TRUE(run.result.has_value());
  EXPECT_EQ(run.result->num_gpus, 1);
  EXPECT_GT(run.timeline->span_count(), 100u);
}

TEST(SimulationRunner, WithFailuresTheReplaysTrialsMoveTheBar) {
  // 8 trials: the simulation ends at kReplayBegin, then each finished trial
  // moves the bar 400 / 8 = 50 on, to kSimulateEnd.
  SimulationRunner runner;
  QSignalSpy done(&runner, &SimulationRunner::finished);
  QSignalSpy steps(&runner, &SimulationRunner::progress);
  QSignalSpy failed(&runner, &SimulationRunner::failed);
  ASSERT_TRUE(runner.start(QStringLiteral(TRAINSIM_SOURCE_DIR "/scenarios/gpt2-124m-64xh100-failures.json")));
  ASSERT_TRUE(done.wait(60000)) << (failed.isEmpty() ? "" : failed.first().first().toString().toStdString());
  std::vector<int> replay;
  for (const QList<QVariant>& signal : steps)
    if (signal.at(1).toString() == QStringLiteral("replaying the full run with failures (8 trials)"))
      replay.push_back(signal.first().toInt());
  ASSERT_EQ(replay.size(), 9u);
  for (std::size_t i = 0; i < replay.size(); ++i)
    EXPECT_EQ(replay[i], SimulationRunner::kReplayBegin + 50 * static_cast<int>(i)) << i;
}

TEST(SimulationRunner, ReportsAScenarioError) {
  SimulationRunner runner;
  QSignalSpy failed(&runner, &SimulationRunner::failed);
  ASSERT_TRUE(runner.start(QStringLiteral("/nonexistent/scenario.json")));
  ASSERT_TRUE(failed.wait(60000));
  EXPECT_TRUE(failed.first().first().toString().contains(QStringLiteral("/nonexistent/scenario.json")));
}

TEST(MainWindow, SimulatesOpensAndCompares) {
  MainWindow window;
  auto* tabs = window.findChild<QTabWidget*>();
  ASSERT_NE(tabs, nullptr);
  auto* runner = window.findChild<SimulationRunner*>();
  ASSERT_NE(runner, nullptr);
  QSignalSpy done(runner, &SimulationRunner::finished);
  window.simulate(kScenario);
  ASSERT_TRUE(done.wait(60000));
  ASSERT_EQ(tabs->count(), 1);  // opened by the finished signal
  const QString result = done.first().first().toString();
  EXPECT_TRUE(window.open_path(result, true));
  EXPECT_FALSE(window.open_path(QStringLiteral("/nonexistent/r.json"), true));
  ASSERT_EQ(tabs->count(), 2);
  window.compare(0, 1);
  CompareWindow* compare = nullptr;
  for (QWidget* w : QApplication::topLevelWidgets())
    if (auto* c = qobject_cast<CompareWindow*>(w)) compare = c;
  ASSERT_NE(compare, nullptr);
  auto* table = compare->findChild<QTableView*>();
  ASSERT_NE(table, nullptr);
  // The same run twice: every category differs by nothing.
  for (int r = 0; r < table->model()->rowCount(); ++r)
    EXPECT_DOUBLE_EQ(table->model()->index(r, 3).data(Qt::UserRole + 1).toDouble(), 0.0);
  compare->close();
}

}  // namespace
}  // namespace trainsim::gui
