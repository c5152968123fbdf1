#include "ui/panes/sessions_pane.h"

#include <QGridLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTimer>
#include <utility>

#include "ui/workbench/verdict_style.h"

namespace crucible::ui {

namespace {
// A date edit that Tab leaves: QDateTimeEdit's own Tab steps through its sections (year, month,
// day) and keyboard users got stuck in it; the arrow keys and typing still edit each section.
class DayEdit : public QDateEdit {
 protected:
  bool focusNextPrevChild(bool next) override { return QWidget::focusNextPrevChild(next); }
};

// A day picker with a calendar whose lowest value means "no bound" and says so.
QDateEdit* dayPicker(const QString& anyText, const QString& tip) {
  auto* edit = new DayEdit;
  edit->setCalendarPopup(true);
  edit->setDisplayFormat(QStringLiteral("yyyy-MM-dd"));
  edit->setMinimumDate(QDate(2000, 1, 1));
  edit->setSpecialValueText(anyText);
  edit->setDate(edit->minimumDate());
  edit->setToolTip(tip);
  return edit;
}

// The picker's day as the store's filter text; "" when it is at "any".
std::string dayText(const QDateEdit* edit, int addDays) {
  if (edit->date() == edit->minimumDate()) return {};
  return edit->date().addDays(addDays).toString(Qt::ISODate).toStdString();
}
}  // namespace

SessionsPane::SessionsPane(WorkbenchController* controller, QWidget* parent)
    : QWidget(parent), controller_(controller) {
  task_ = new QLineEdit;
  task_->setPlaceholderText(tr("task name or path"));
  model_ = new QLineEdit;
  model_->setPlaceholderText(tr("model or origin"));
  since_ = dayPicker(tr("from any date"), tr("Sessions created on or after this day (UTC)"));
  until_ = dayPicker(tr("to any date"), tr("Sessions created on or before this day (UTC)"));
  verdict_ = new QComboBox;
  verdict_->addItem(tr("any verdict"), QString());
  for (const char* v : {"verified", "incorrect", "cheating", "invalid", "error"}) {
    verdict_->addItem(QString::fromLatin1(v), QString::fromLatin1(v));
  }
  auto* open = new QPushButton(tr("Open"));
  table_ = new QTableWidget(0, 7);
  table_->setHorizontalHeaderLabels({tr("Id"), tr("Created (UTC)"), tr("Task"), tr("Kind"),
                                     tr("Candidates"), tr("Verdict"), tr("Speedup")});
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->hide();
  // The task takes the room left; the other columns are as wide as what they show.
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setSectionResizeMode(2, QHeaderView::Stretch);

  auto* layout = new QGridLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(task_, 0, 0);
  layout->addWidget(model_, 0, 1);
  layout->addWidget(verdict_, 0, 2);
  layout->addWidget(since_, 1, 0);
  layout->addWidget(until_, 1, 1);
  layout->addWidget(open, 1, 2);
  layout->addWidget(table_, 2, 0, 1, 3);

  // Typing waits a moment before querying, so a search is one query, not one per key.
  auto* debounce = new QTimer(this);
  debounce->setSingleShot(true);
  debounce->setInterval(250);
  connect(debounce, &QTimer::timeout, this, &SessionsPane::refresh);
  for (QLineEdit* edit : {task_, model_}) {
    connect(edit, &QLineEdit::textChanged, debounce, qOverload<>(&QTimer::start));
    connect(edit, &QLineEdit::returnPressed, this, [this, debounce] {
      debounce->stop();
      openSingleMatch_ = true;
      refresh();
    });
  }
  for (QDateEdit* edit : {since_, until_}) {
    connect(edit, &QDateEdit::dateChanged, debounce, qOverload<>(&QTimer::start));
  }
  connect(verdict_, &QComboBox::currentIndexChanged, this, &SessionsPane::refresh);
  connect(open, &QPushButton::clicked, this, &SessionsPane::openSelected);
  connect(table_, &QTableWidget::cellDoubleClicked, this, &SessionsPane::openSelected);
  connect(controller_, &WorkbenchController::sessionSaved, this, &SessionsPane::refresh);
  connect(controller_, &WorkbenchController::databaseChanged, this, &SessionsPane::refresh);
  refresh();
}

void SessionsPane::refresh() {
  store::SessionFilter filter;
  filter.taskText = task_->text().trimmed().toStdString();
  filter.modelText = model_->text().trimmed().toStdString();
  filter.since = dayText(since_, 0);
  filter.until = dayText(until_, 1);  // the store's bound excludes it: the day after
  const QString verdict = verdict_->currentData().toString();
  if (!verdict.isEmpty()) filter.verdict = verdictFromString(verdict.toStdString());
  filter.limit = 500;
  const quint64 query = ++query_;
  controller_->store()->run<std::vector<store::SessionSummary>>(
      [filter](store::Store& s) { return s.listSessions(filter); }, this,
      [this, query](std::vector<store::SessionSummary> sessions) {
        if (query != query_) return;  // a newer search is on its way
        table_->setRowCount(static_cast<int>(sessions.size()));
        for (int row = 0; row < static_cast<int>(sessions.size()); ++row) {
          const auto& s = sessions[row];
          const QStringList cells = {
              QString::number(s.id),
              QString::fromStdString(s.createdAt).left(19).replace('T', ' '),
              QString::fromStdString(s.taskName),
              QString::fromStdString(s.kind),
              QString::number(s.candidateCount),
              s.verdict ? QString::fromStdString(std::string(toString(*s.verdict))) : tr("—"),
              speedupText(s.speedup)};
          for (int col = 0; col < cells.size(); ++col) {
            auto* item = new QTableWidgetItem(cells[col]);
            item->setData(Qt::UserRole, static_cast<qlonglong>(s.id));
            table_->setItem(row, col, item);
          }
        }
        if (std::exchange(openSingleMatch_, false) && table_->rowCount() == 1) {
          table_->selectRow(0);
          openSelected();
        }
      });
}

void SessionsPane::openSelected() {
  const int row = table_->currentRow();
  if (row < 0 || !table_->item(row, 0)) return;
  controller_->reopenSession(table_->item(row, 0)->data(Qt::UserRole).toLongLong());
}

}  // namespace crucible::ui
