#pragma once
// The selected candidate's evaluation: verdict banner, speedup and times, the reward breakdown,
// the flags with their evidence (a flag with a line shows it in the editor, and the editor's
// squiggle selects the flag), and for an incorrect candidate where it is wrong.

#include <QLabel>
#include <QTreeWidget>
#include <QWidget>

#include "ui/panes/error_picture.h"
#include "ui/panes/reward_chart.h"
#include "ui/workbench/run_status.h"
#include "ui/workbench/workbench_controller.h"

namespace crucible::ui {

class VerificationPane : public QWidget {
  Q_OBJECT
 public:
  VerificationPane(WorkbenchController* controller, RunStatus* status, QWidget* parent = nullptr);

  QString bannerText() const { return banner_->text(); }
  QString timingText() const { return timing_->text(); }
  RewardChart* rewardChart() const { return reward_; }
  QString rewardFormulaText() const { return rewardFormula_->text(); }
  QTreeWidget* flagsList() const { return flags_; }
  ErrorPicture* errorPicture() const { return error_; }

 public slots:
  /// Selects the first flag on this 1-based line of the candidate.
  void selectFlagAtLine(int line);

 signals:
  void flagLineActivated(int line);

 private:
  void showCurrent();
  void showBanner();
  void fitFlagsHeight();

  WorkbenchController* controller_;
  RunStatus* status_;
  QLabel* banner_;
  QLabel* timing_;
  RewardChart* reward_;
  QLabel* rewardFormula_;
  Reward shownReward_;
  QTreeWidget* flags_;
  ErrorPicture* error_;
};

}  // namespace crucible::ui
