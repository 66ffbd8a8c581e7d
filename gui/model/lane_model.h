#pragma once
// Qt item models over a timeline, for views and tests without a window
// (KDAB hotspot's habit: one row per lane, custom roles).
#include <QAbstractListModel>
#include <QAbstractTableModel>
#include <memory>
#include <vector>

#include "model/run_comparison.h"
#include "model/timeline_data.h"

namespace trainsim::gui {

// One row per lane: "GPU 3 / tp_comm" with its rank, node, stream, span count
// and busy time.
class LaneModel : public QAbstractListModel {
  Q_OBJECT
 public:
  enum Role { kRankRole = Qt::UserRole + 1, kNodeRole, kStreamRole, kSpanCountRole, kBusyTimeRole };

  explicit LaneModel(QObject* parent = nullptr);
  void set_timeline(std::shared_ptr<const TimelineData> timeline);

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QHash<int, QByteArray> roleNames() const override;

 private:
  std::shared_ptr<const TimelineData> timeline_;
};

// The per-category comparison table: category, A, B, B - A, change.
class CategoryDiffModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kCategory, kA, kB, kDiff, kRelative, kColumns };
  enum Role { kSecondsRole = Qt::UserRole + 1 };

  explicit CategoryDiffModel(QObject* parent = nullptr);
  void set_rows(std::vector<CategoryDifference> rows, QString a_label, QString b_label);

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::vector<CategoryDifference> rows_;
  QString a_label_ = QStringLiteral("A");
  QString b_label_ = QStringLiteral("B");
};

}  // namespace trainsim::gui
