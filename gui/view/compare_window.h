#pragma once
// Two runs on aligned time axes (both from t = 0, zoom and pan linked) with the
// per-category differences of their lowest rank.
#include <QWidget>

#include "model/run.h"

namespace trainsim::gui {

class CategoryDiffModel;
class TimelineView;

class CompareWindow : public QWidget {
  Q_OBJECT
 public:
  CompareWindow(const Run& a, const Run& b, QWidget* parent = nullptr);

 private:
  TimelineView* a_ = nullptr;
  TimelineView* b_ = nullptr;
  CategoryDiffModel* diff_ = nullptr;
};

}  // namespace trainsim::gui
