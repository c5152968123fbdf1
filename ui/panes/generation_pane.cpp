#include "ui/panes/generation_pane.h"

#include <QFormLayout>
#include <QHBoxLayout>
#include <QVBoxLayout>

namespace crucible::ui {

GenerationPane::GenerationPane(WorkbenchController* controller, GenerationController* generator,
                               QWidget* parent)
    : QWidget(parent), controller_(controller), generator_(generator) {
  model_ = new QComboBox;
  count_ = new QSpinBox;
  count_->setRange(1, 64);
  count_->setValue(4);
  temperature_ = new QDoubleSpinBox;
  temperature_->setRange(0, 2);
  temperature_->setSingleStep(0.1);
  temperature_->setValue(0.7);
  mode_ = new QComboBox;
  generate_ = new QPushButton(tr("Generate"));
  stop_ = new QPushButton(tr("Stop"));
  stop_->setEnabled(false);
  status_ = new QLabel;
  status_->setWordWrap(true);
  live_ = new QPlainTextEdit;
  live_->setReadOnly(true);
  live_->setPlaceholderText(tr("A language model's tokens stream here"));

  auto* form = new QFormLayout;
  form->addRow(tr("Model"), model_);
  form->addRow(tr("Candidates"), count_);
  form->addRow(tr("Temperature"), temperature_);
  form->addRow(tr("Search"), mode_);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(generate_);
  buttons->addWidget(stop_);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addLayout(buttons);
  layout->addWidget(status_);
  layout->addWidget(live_, 1);

  if (!generator_) {
    for (const QString& endpoint : controller_->settings().endpoints) model_->addItem(endpoint);
    status_->setText(
        tr("Generation is not part of this build yet: open or paste candidates and "
           "verify them. Endpoints from Settings are listed for when it lands."));
    for (QWidget* w :
         std::initializer_list<QWidget*>{model_, count_, temperature_, mode_, generate_}) {
      w->setEnabled(false);
    }
    return;
  }
  model_->addItems(generator_->models());
  mode_->addItems(generator_->searchModes());
  connect(generate_, &QPushButton::clicked, this, [this] {
    const auto& r = controller_->workbench()->reference();
    if (r.source.isEmpty()) {
      status_->setText(tr("Open a reference first"));
      return;
    }
    live_->clear();
    generate_->setEnabled(false);
    stop_->setEnabled(true);
    generator_->start({r.path, r.source, model_->currentText(), count_->value(),
                       temperature_->value(), mode_->currentText(),
                       backend_ ? backend_().backend : QStringLiteral("auto")});
  });
  connect(stop_, &QPushButton::clicked, generator_, &GenerationController::stop);
  connect(generator_, &GenerationController::tokens, this, [this](const QString& text) {
    live_->moveCursor(QTextCursor::End);
    live_->insertPlainText(text);
  });
  connect(generator_, &GenerationController::candidateReady, this,
          [this](const QString& text, const QString& origin, const QString&) {
            const int key = controller_->addCandidateText(text, origin);
            if (key >= 0 && backend_) controller_->verify(key, backend_());
          });
  connect(generator_, &GenerationController::progress, status_, &QLabel::setText);
  auto done = [this] {
    generate_->setEnabled(true);
    stop_->setEnabled(false);
  };
  connect(generator_, &GenerationController::finished, this, done);
  connect(generator_, &GenerationController::failed, this, [this, done](const QString& message) {
    status_->setText(tr("Generation failed: %1").arg(message));
    done();
  });
}

}  // namespace crucible::ui
