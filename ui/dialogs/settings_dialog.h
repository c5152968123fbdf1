#pragma once
// Settings: Python environment, default backend, reward preset, tolerances, timeouts, trials,
// endpoints and the database. OK saves them (QSettings) and applies them.

#include <QDialog>

#include "ui/settings/settings.h"

class QLineEdit;
class QComboBox;
class QDoubleSpinBox;
class QSpinBox;
class QCheckBox;
class QPlainTextEdit;

namespace crucible::ui {

class SettingsDialog : public QDialog {
  Q_OBJECT
 public:
  explicit SettingsDialog(const AppSettings& settings, QWidget* parent = nullptr);
  AppSettings settings() const;

 private:
  QLineEdit* python_;
  QComboBox* backend_;
  QComboBox* reward_;
  QDoubleSpinBox *fp32Atol_, *fp32Rtol_, *fp16Atol_, *fp16Rtol_, *timeout_;
  QSpinBox* trials_;
  QCheckBox* compile_;
  QPlainTextEdit* endpoints_;
  QLineEdit* database_;
};

}  // namespace crucible::ui
