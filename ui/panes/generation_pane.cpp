#include "ui/panes/generation_pane.h"

#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QMenu>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include "ui/settings/settings.h"

namespace crucible::ui {

GenerationPane::GenerationPane(WorkbenchController* controller, DeviceService* devices,
                               GenerationController* generator, QWidget* parent)
    : QWidget(parent), controller_(controller), generator_(generator) {
  model_ = new QComboBox;
  model_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);  // long URLs
  model_->setMinimumContentsLength(16);
  addModel_ = new QToolButton;
  addModel_->setText(tr("Add…"));
  addModel_->setToolTip(tr("Add an embedded model: a Hugging Face folder or a .gguf file"));
  addModel_->setPopupMode(QToolButton::InstantPopup);
  auto* addMenu = new QMenu(addModel_);
  addMenu->addAction(tr("Model folder…"), this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(
        this, tr("Hugging Face model folder (config.json, tokenizer.json, *.safetensors)"));
    if (!dir.isEmpty()) addModel(dir);
  });
  addMenu->addAction(tr("GGUF file…"), this, [this] {
    const QString file = QFileDialog::getOpenFileName(this, tr("GGUF model file"), QString(),
                                                      tr("GGUF models (*.gguf)"));
    if (!file.isEmpty()) addModel(file);
  });
  addModel_->setMenu(addMenu);
  count_ = new QSpinBox;
  count_->setRange(1, 64);
  count_->setValue(4);
  temperature_ = new QDoubleSpinBox;
  temperature_->setRange(0, 2);
  temperature_->setSingleStep(0.1);
  temperature_->setValue(0.7);
  mode_ = new QComboBox;
  rounds_ = new QSpinBox;
  rounds_->setRange(1, 16);
  rounds_->setValue(3);
  rounds_->setToolTip(tr("Refine: rounds, each fed the verifier's findings on the best so far"));
  backend_ = new BackendBox(devices, controller_->settings().defaultBackend);
  generate_ = new QPushButton(tr("Generate"));
  generate_->setToolTip(tr("Generate candidates and verify each as it arrives (Ctrl+G)"));
  stop_ = new QPushButton(tr("Stop"));
  stop_->setEnabled(false);
  status_ = new QLabel;
  status_->setWordWrap(true);
  live_ = new QPlainTextEdit;
  live_->setReadOnly(true);
  live_->setMaximumBlockCount(5000);
  live_->setPlaceholderText(
      tr("A language model's tokens and the verification stages stream here"));

  auto* form = new QFormLayout;
  auto* modelRow = new QHBoxLayout;
  modelRow->addWidget(model_, 1);
  modelRow->addWidget(addModel_);
  form->addRow(tr("Model"), modelRow);
  form->addRow(tr("Candidates"), count_);
  form->addRow(tr("Temperature"), temperature_);
  form->addRow(tr("Search"), mode_);
  form->addRow(tr("Rounds"), rounds_);
  form->addRow(tr("Backend"), backend_);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(generate_);
  buttons->addWidget(stop_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addLayout(buttons);
  layout->addWidget(status_);
  layout->addWidget(live_, 1);

  if (!generator_) {
    status_->setText(
        tr("Generation is not part of this build: open or paste candidates and "
           "verify them."));
    for (QWidget* w : std::initializer_list<QWidget*>{model_, addModel_, count_, temperature_,
                                                      mode_, rounds_, backend_, generate_}) {
      w->setEnabled(false);
    }
    return;
  }
  mode_->addItems(generator_->searchModes());
  refreshModels();
  connect(model_, &QComboBox::currentIndexChanged, this, &GenerationPane::modelChosen);
  connect(mode_, &QComboBox::currentTextChanged, this,
          [this](const QString& mode) { rounds_->setEnabled(mode == "refine"); });
  rounds_->setEnabled(mode_->currentText() == "refine");
  connect(generate_, &QPushButton::clicked, this, &GenerationPane::generate);
  connect(stop_, &QPushButton::clicked, generator_, &GenerationController::stop);
  connect(generator_, &GenerationController::tokens, this, &GenerationPane::appendLive);
  connect(generator_, &GenerationController::progress, this, [this](const QString& message) {
    status_->setText(message);
    appendLive(message + '\n');
  });
  connect(generator_, &GenerationController::candidateArrived, controller_,
          &WorkbenchController::addGenerated);
  connect(generator_, &GenerationController::candidateVerified, controller_,
          &WorkbenchController::setGeneratedEvaluation);
  // After a run the picker says which embedded model is loaded now.
  connect(generator_, &GenerationController::finished, this, [this](const QString& summary) {
    status_->setText(summary);
    setRunning(false);
    refreshModels();
  });
  connect(generator_, &GenerationController::failed, this, [this](const QString& message) {
    status_->setText(tr("Generation failed: %1").arg(message));
    setRunning(false);
    refreshModels();
  });
  // Another reference or a reopened session: the run's candidates have nowhere to go, and the
  // last run's summary is about something no longer on screen.
  connect(controller_->workbench(), &Workbench::referenceChanged, generator_,
          &GenerationController::stop);
  connect(controller_->workbench(), &Workbench::referenceChanged, this, [this] {
    if (!generator_->running()) status_->clear();
  });
}

void GenerationPane::refreshModels() {
  if (!generator_) return;
  const QString previous = model_->currentData().toString();
  const QSignalBlocker quiet(model_);
  model_->clear();
  models_ = generator_->models();
  auto* items = qobject_cast<QStandardItemModel*>(model_->model());
  for (int i = 0; i < models_.size(); ++i) {
    model_->addItem(models_[i].label, models_[i].spec);
    if (!models_[i].available) {
      items->item(i)->setEnabled(false);
      items->item(i)->setToolTip(models_[i].note);
    }
  }
  const int found = model_->findData(previous);
  model_->setCurrentIndex(found >= 0 ? found : 0);
  modelChosen();
}

void GenerationPane::addModel(const QString& path) {
  addRecentModel(path);
  refreshModels();
  const int found = model_->findData(path);
  if (found >= 0) model_->setCurrentIndex(found);
}

void GenerationPane::modelChosen() {
  const int i = model_->currentIndex();
  const bool refines = i >= 0 && i < models_.size() && models_[i].refines;
  // The synthesizer writes one candidate per tiling and cannot act on findings.
  auto* items = qobject_cast<QStandardItemModel*>(mode_->model());
  const int refine = mode_->findText("refine");
  if (refine >= 0) {
    items->item(refine)->setEnabled(refines);
    items->item(refine)->setToolTip(refines ? QString() : tr("This model cannot refine"));
    if (!refines && mode_->currentIndex() == refine) mode_->setCurrentText("best-of-n");
  }
}

void GenerationPane::generate() {
  if (!generator_ || generator_->running()) return;
  const auto& r = controller_->workbench()->reference();
  if (r.source.isEmpty()) {
    status_->setText(tr("Open a reference first"));
    return;
  }
  const BackendChoice backend = backend_->choice();
  if (!backend.available) {
    status_->setText(tr("Backend %1 is not available here: %2").arg(backend.backend, backend.note));
    return;
  }
  GenerationRequest request{r.path,
                            r.source,
                            r.name,
                            model_->currentData().toString(),
                            count_->value(),
                            temperature_->value(),
                            mode_->currentText(),
                            rounds_->value(),
                            controller_->settings().verifyRequest()};
  request.verify.backend = backend.backend.toStdString();
  request.verify.openclDevice = backend.openclDevice.toStdString();
  const QString note =
      tr("%1, %2, n=%3").arg(model_->currentText(), request.searchMode).arg(request.candidates);
  controller_->beginGeneratedSession(note);
  live_->clear();
  setRunning(true);
  status_->setText(tr("Generating with %1").arg(model_->currentText()));
  generator_->start(request);
}

void GenerationPane::stop() {
  if (generator_ && generator_->running()) generator_->stop();
}

void GenerationPane::setRunning(bool running) {
  generate_->setEnabled(!running);
  stop_->setEnabled(running);
}

void GenerationPane::appendLive(const QString& text) {
  live_->moveCursor(QTextCursor::End);
  live_->insertPlainText(text);
  live_->ensureCursorVisible();
}

}  // namespace crucible::ui
