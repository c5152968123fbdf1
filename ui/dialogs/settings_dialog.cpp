#include "ui/dialogs/settings_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QSpinBox>

#include "core/verify/reward.h"

namespace crucible::ui {

namespace {
QDoubleSpinBox* toleranceBox(double value) {
  auto* box = new QDoubleSpinBox;
  box->setDecimals(8);
  box->setRange(0, 1);
  box->setSingleStep(1e-4);
  box->setValue(value);
  return box;
}
}  // namespace

SettingsDialog::SettingsDialog(const AppSettings& s, QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("Settings"));
  python_ = new QLineEdit(s.pythonPath);
  python_->setPlaceholderText(tr("default: the project's .venv/bin/python"));
  backend_ = new QComboBox;
  backend_->addItems({"auto", "interpret", "opencl", "cuda"});
  backend_->setCurrentText(s.defaultBackend);
  reward_ = new QComboBox;
  for (const auto& preset : builtinRewardPresets()) {
    reward_->addItem(QString::fromStdString(preset.name()));
  }
  reward_->setCurrentText(s.rewardPreset);
  fp32Atol_ = toleranceBox(s.fp32Atol);
  fp32Rtol_ = toleranceBox(s.fp32Rtol);
  fp16Atol_ = toleranceBox(s.fp16Atol);
  fp16Rtol_ = toleranceBox(s.fp16Rtol);
  timeout_ = new QDoubleSpinBox;
  timeout_->setRange(1, 24 * 3600);
  timeout_->setSuffix(" s");
  timeout_->setValue(s.candidateTimeoutSeconds);
  trials_ = new QSpinBox;
  trials_->setRange(1, 100);
  trials_->setValue(s.trials);
  compile_ = new QCheckBox(tr("also time torch.compile(reference)"));
  compile_->setChecked(s.compileBaseline);
  endpoints_ = new QPlainTextEdit(s.endpoints.join('\n'));
  endpoints_->setPlaceholderText(
      tr("one OpenAI-compatible base URL per line, e.g. "
         "http://localhost:8000/v1"));
  endpoints_->setMaximumHeight(80);
  database_ = new QLineEdit(s.databasePath);
  database_->setPlaceholderText(tr("default: ~/.local/share/crucible/crucible.db"));

  auto* form = new QFormLayout(this);
  form->addRow(tr("Python environment"), python_);
  form->addRow(tr("Default backend"), backend_);
  form->addRow(tr("Reward preset"), reward_);
  form->addRow(tr("fp32 atol / rtol"), fp32Atol_);
  form->addRow(QString(), fp32Rtol_);
  form->addRow(tr("fp16/bf16 atol / rtol"), fp16Atol_);
  form->addRow(QString(), fp16Rtol_);
  form->addRow(tr("Candidate timeout"), timeout_);
  form->addRow(tr("Correctness trials"), trials_);
  form->addRow(QString(), compile_);
  form->addRow(tr("Endpoints"), endpoints_);
  form->addRow(tr("Database"), database_);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  form->addRow(buttons);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

AppSettings SettingsDialog::settings() const {
  AppSettings s;
  s.pythonPath = python_->text().trimmed();
  s.defaultBackend = backend_->currentText();
  s.rewardPreset = reward_->currentText();
  s.fp32Atol = fp32Atol_->value();
  s.fp32Rtol = fp32Rtol_->value();
  s.fp16Atol = fp16Atol_->value();
  s.fp16Rtol = fp16Rtol_->value();
  s.candidateTimeoutSeconds = timeout_->value();
  s.trials = trials_->value();
  s.compileBaseline = compile_->isChecked();
  for (const QString& line : endpoints_->toPlainText().split('\n', Qt::SkipEmptyParts)) {
    if (!line.trimmed().isEmpty()) s.endpoints << line.trimmed();
  }
  s.databasePath = database_->text().trimmed();
  return s;
}

}  // namespace crucible::ui
