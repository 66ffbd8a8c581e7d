#pragma once
// The run's figures: iteration time, MFU, tokens/s, the breakdown as bars,
// memory (over time when the timeline has a memory counter, else peak against
// capacity), time-to-train, cost, goodput and the critical path.
#include <QWidget>

#include "model/critical_path.h"
#include "model/run.h"

class QLabel;

namespace trainsim::gui {

// Horizontal bars, one per (name, seconds, colour); shares of the total.
class BreakdownBars : public QWidget {
  Q_OBJECT
 public:
  struct Bar {
    QString name;
    double seconds = 0.0;
    QColor color;
  };
  explicit BreakdownBars(QWidget* parent = nullptr);
  void set_bars(std::vector<Bar> bars);
  QSize sizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  std::vector<Bar> bars_;
};

// A value over time (step plot), or a single level against a capacity.
class MemoryChart : public QWidget {
  Q_OBJECT
 public:
  explicit MemoryChart(QWidget* parent = nullptr);
  void set_series(const CounterSeries* series, double peak_bytes, double capacity_bytes);
  QSize sizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  CounterSeries series_;
  double peak_ = 0.0;
  double capacity_ = 0.0;
};

class SummaryPanel : public QWidget {
  Q_OBJECT
 public:
  explicit SummaryPanel(QWidget* parent = nullptr);
  void set_run(const Run& run, const CriticalPath& path);

 private:
  QLabel* figures_ = nullptr;
  QLabel* breakdown_title_ = nullptr;
  BreakdownBars* breakdown_ = nullptr;
  BreakdownBars* categories_ = nullptr;
  MemoryChart* memory_ = nullptr;
  QLabel* memory_note_ = nullptr;
};

}  // namespace trainsim::gui
