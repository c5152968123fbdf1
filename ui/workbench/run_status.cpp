#include "ui/workbench/run_status.h"

namespace crucible::ui {

namespace {
// The stages crucible::verify reports, in order; the run bar counts them for one verification.
int stageNumber(const QString& stage) {
  static const QStringList stages = {"start", "static", "reference", "candidate", "judge"};
  return static_cast<int>(stages.indexOf(stage));
}
constexpr int kStages = 4;
}  // namespace

QString elapsedText(qint64 ms) {
  if (ms < 1000) return QObject::tr("%1 ms").arg(ms);
  const qint64 s = ms / 1000;
  if (s < 60) return QObject::tr("%1 s").arg(s);
  return QObject::tr("%1 min %2 s").arg(s / 60).arg(s % 60, 2, 10, QChar('0'));
}

RunStatus::RunStatus(WorkbenchController* controller, QObject* parent)
    : QObject(parent), controller_(controller) {
  tick_.setInterval(1000);
  connect(&tick_, &QTimer::timeout, this, &RunStatus::changed);
  connect(controller_, &WorkbenchController::verifyingChanged, this, [this](bool running) {
    if (running) beginVerification();
  });
  connect(controller_, &WorkbenchController::progress, this, &RunStatus::verificationProgress);
  // A verification that fails ends the run; other errors (a file that cannot be read) are the
  // error strip's alone.
  connect(controller_, &WorkbenchController::errorOccurred, this, [this](const QString& message) {
    if (activity_ == Activity::Verifying) finish(Activity::Failed, message.section('\n', 0, 0));
  });
  connect(controller_->workbench(), &Workbench::candidateChanged, this,
          &RunStatus::candidateChanged);
  // Another reference, session or candidate on screen: an old outcome no longer describes it.
  connect(controller_->workbench(), &Workbench::candidatesReset, this, &RunStatus::forgetOutcome);
  connect(controller_->workbench(), &Workbench::referenceChanged, this, &RunStatus::forgetOutcome);
  // A verification's outcome is about its candidate; a generation run's about the whole run,
  // whichever of its candidates is selected.
  connect(controller_, &WorkbenchController::currentChanged, this, [this](int key) {
    if (activity_ == Activity::Finished && !generationOutcome_ && key != verifyingKey_) {
      forgetOutcome();
    }
  });
  set(Activity::Idle, tr("Ready"), {});
}

void RunStatus::watchGeneration(GenerationController* generator) {
  generator_ = generator;
  if (!generator_) return;
  connect(generator_, &GenerationController::started, this, &RunStatus::beginGeneration);
  connect(generator_, &GenerationController::progress, this, &RunStatus::generationProgress);
  connect(generator_, &GenerationController::candidateArrived, this, [this] {
    ++generatedArrived_;
    generationCandidate();
  });
  connect(generator_, &GenerationController::candidateVerified, this, [this] {
    ++generatedVerified_;
    generationCandidate();
  });
  connect(generator_, &GenerationController::finished, this,
          [this](const QString& summary) { finish(Activity::Finished, summary); });
  connect(generator_, &GenerationController::failed, this, [this](const QString& message) {
    finish(Activity::Failed, tr("Generation failed: %1").arg(message.section('\n', 0, 0)));
  });
}

QString RunStatus::candidateName(int key) const {
  const int row = controller_->workbench()->rowOf(key);
  if (row < 0) return tr("the candidate");
  return tr("candidate #%1").arg(row + 1);
}

void RunStatus::beginVerification() {
  if (activity_ == Activity::Generating) return;  // the run's own verifications
  verifyingKey_ = controller_->verifyingKey();
  generationOutcome_ = false;
  clock_.start();
  finishedAfterMs_ = -1;
  value_ = 0;
  maximum_ = kStages;
  format_ = tr("stage %v/%m");
  set(Activity::Verifying, tr("Verifying %1").arg(candidateName(verifyingKey_)), {});
}

void RunStatus::verificationProgress(const QString& stage, const QString& message) {
  if (activity_ == Activity::Generating) return;
  if (stage == "stopped") {
    finish(Activity::Finished, message);
    return;
  }
  if (stage == "queued") {  // says how many wait behind the running one
    if (activity_ == Activity::Verifying) set(activity_, headline_, message);
    return;
  }
  if (activity_ != Activity::Verifying) beginVerification();
  const int n = stageNumber(stage);
  if (n >= 0) value_ = n;
  set(Activity::Verifying, headline_, message);
}

void RunStatus::candidateChanged(int row) {
  if (activity_ != Activity::Verifying) return;
  const auto& c = controller_->workbench()->candidates()[row];
  if (c.key != verifyingKey_ || !c.evaluation) return;
  value_ = maximum_;
  finish(Activity::Finished,
         tr("Done: %1 %2").arg(candidateName(c.key), verdictText(c.evaluation)));
}

void RunStatus::beginGeneration(const GenerationRequest& request) {
  generationOutcome_ = true;
  clock_.start();
  finishedAfterMs_ = -1;
  generatedExpected_ =
      request.candidates * (request.searchMode == QStringLiteral("refine") ? request.rounds : 1);
  generatedArrived_ = generatedVerified_ = 0;
  format_ = tr("%v/%m verified");
  set(Activity::Generating, tr("Generating with %1").arg(request.model), tr("starting"));
  generationCandidate();
}

void RunStatus::generationProgress(const QString& message) {
  if (activity_ == Activity::Generating) set(activity_, headline_, message.section('\n', 0, 0));
}

void RunStatus::generationCandidate() {
  if (activity_ != Activity::Generating) return;
  // The synthesizer writes one candidate per tiling, which may be more than asked for.
  maximum_ = std::max(generatedExpected_, generatedArrived_);
  value_ = generatedVerified_;
  emit changed();
}

void RunStatus::finish(Activity outcome, const QString& message) {
  if (activity_ == Activity::Idle && outcome == Activity::Finished) return;
  finishedAfterMs_ = clock_.isValid() ? clock_.elapsed() : -1;
  if (outcome == Activity::Failed) value_ = 0;
  set(outcome, message, {});
}

void RunStatus::forgetOutcome() {
  if (activity_ == Activity::Finished || activity_ == Activity::Failed) {
    value_ = maximum_ = 0;
    format_.clear();
    set(Activity::Idle, tr("Ready"), {});
  }
}

void RunStatus::set(Activity activity, const QString& headline, const QString& detail) {
  activity_ = activity;
  headline_ = headline;
  detail_ = detail;
  const bool running = activity == Activity::Verifying || activity == Activity::Generating;
  if (running && !tick_.isActive()) tick_.start();
  if (!running) tick_.stop();
  emit changed();
}

QString RunStatus::text() const {
  switch (activity_) {
    case Activity::Idle:
      return headline_;
    case Activity::Verifying:
    case Activity::Generating: {
      QString line = headline_;
      if (!detail_.isEmpty()) line += QStringLiteral(": ") + detail_;
      return line + QStringLiteral(" (%1)").arg(elapsedText(clock_.elapsed()));
    }
    case Activity::Finished:
    case Activity::Failed:
      return finishedAfterMs_ >= 0
                 ? headline_ + tr(" (after %1)").arg(elapsedText(finishedAfterMs_))
                 : headline_;
  }
  return headline_;
}

}  // namespace crucible::ui
