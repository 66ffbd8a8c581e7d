#include "model/lane_model.h"

#include <QColor>

#include "model/time_mapping.h"

namespace trainsim::gui {

LaneModel::LaneModel(QObject* parent) : QAbstractListModel(parent) {}

void LaneModel::set_timeline(std::shared_ptr<const TimelineData> timeline) {
  beginResetModel();
  timeline_ = std::move(timeline);
  endResetModel();
}

int LaneModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !timeline_) return 0;
  return static_cast<int>(timeline_->lanes.size());
}

QVariant LaneModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const Lane& lane = timeline_->lanes[static_cast<std::size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole:
      if (lane.rank < 0) return QString::fromStdString(lane.stream);  // the whole job (run timeline)
      return QStringLiteral("GPU %1 / %2").arg(lane.rank).arg(QString::fromStdString(lane.stream));
    case kRankRole:
      return lane.rank;
    case kNodeRole:
      return lane.node;
    case kStreamRole:
      return QString::fromStdString(lane.stream);
    case kSpanCountRole:
      return static_cast<qulonglong>(lane.spans.size());
    case kBusyTimeRole: {
      double busy = 0.0;
      for (const Span& s : lane.spans) busy += s.end - s.start;
      return busy;
    }
    default:
      return {};
  }
}

QHash<int, QByteArray> LaneModel::roleNames() const {
  QHash<int, QByteArray> names = QAbstractListModel::roleNames();
  names[kRankRole] = "rank";
  names[kNodeRole] = "node";
  names[kStreamRole] = "stream";
  names[kSpanCountRole] = "spanCount";
  names[kBusyTimeRole] = "busyTime";
  return names;
}

CategoryDiffModel::CategoryDiffModel(QObject* parent) : QAbstractTableModel(parent) {}

void CategoryDiffModel::set_rows(std::vector<CategoryDifference> rows, QString a_label, QString b_label) {
  beginResetModel();
  rows_ = std::move(rows);
  a_label_ = std::move(a_label);
  b_label_ = std::move(b_label);
  endResetModel();
}

int CategoryDiffModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int CategoryDiffModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : kColumns; }

QVariant CategoryDiffModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const CategoryDifference& r = rows_[static_cast<std::size_t>(index.row())];
  const auto col = static_cast<Column>(index.column());
  if (role == kSecondsRole) {
    switch (col) {
      case kA: return r.a_s;
      case kB: return r.b_s;
      case kDiff: return r.diff_s();
      case kRelative: return r.relative();
      default: return {};
    }
  }
  if (role == Qt::DecorationRole && col == kCategory) {
    const Rgb c = category_color(r.category);
    return QColor(c.r, c.g, c.b);
  }
  if (role == Qt::TextAlignmentRole && col != kCategory)
    return QVariant::fromValue(Qt::Alignment(Qt::AlignRight | Qt::AlignVCenter));
  if (role != Qt::DisplayRole) return {};
  switch (col) {
    case kCategory: return QString::fromUtf8(category_name(r.category).data(), static_cast<qsizetype>(category_name(r.category).size()));
    case kA: return QString::fromStdString(format_duration(r.a_s));
    case kB: return QString::fromStdString(format_duration(r.b_s));
    case kDiff: return QString::fromStdString((r.diff_s() >= 0 ? "+" : "") + format_duration(r.diff_s()));
    case kRelative:
      return r.a_s != 0.0 ? QStringLiteral("%1%2%").arg(r.relative() >= 0 ? "+" : "").arg(100.0 * r.relative(), 0, 'f', 1)
                          : QStringLiteral("new");
    default: return {};
  }
}

QVariant CategoryDiffModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole || orientation != Qt::Horizontal) return QAbstractTableModel::headerData(section, orientation, role);
  switch (section) {
    case kCategory: return QStringLiteral("category");
    case kA: return a_label_;
    case kB: return b_label_;
    case kDiff: return QStringLiteral("B - A");
    case kRelative: return QStringLiteral("change");
    default: return {};
  }
}

}  // namespace trainsim::gui
