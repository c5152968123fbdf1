#pragma once
// The journey's actions: open a reference or a candidate, verify with the chosen backend, stop,
// keep everything in the store, reopen a saved session, export a bundle. Panes call these and
// listen to the signals; the work itself runs in the services, off the UI thread.

#include <QFileSystemWatcher>
#include <QHash>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>
#include <QThreadPool>
#include <memory>
#include <optional>

#include "ui/services/device_service.h"
#include "ui/services/store_service.h"
#include "ui/services/verify_service.h"
#include "ui/settings/resources_dir.h"
#include "ui/settings/settings.h"
#include "ui/workbench/generation_controller.h"
#include "ui/workbench/workbench.h"

namespace crucible::ui {

class WorkbenchController : public QObject {
  Q_OBJECT
 public:
  WorkbenchController(Workbench* workbench, StoreService* store, VerifyService* verifier,
                      QObject* parent = nullptr);
  ~WorkbenchController() override;

  Workbench* workbench() const { return workbench_; }
  StoreService* store() const { return store_; }
  const AppSettings& settings() const { return settings_; }
  void setSettings(const AppSettings& settings);

  /// A reference, or a candidate (a file that defines ModelNew) beside the reference.py of its
  /// folder, or beside the open reference.
  void openFile(const QString& path);
  void openReference(const QString& path);
  void openExample(const BundledExample& example);
  /// Adds a candidate (plain code or a model response) and selects it. Returns its key.
  int addCandidateText(const QString& text, const QString& origin, const QString& path = {},
                       std::optional<int> parentKey = std::nullopt);
  int addCandidateFile(const QString& path, const QString& origin = "file");

  int currentKey() const { return currentKey_; }
  void select(int key);

  /// Verifies `editorText` for the current candidate: when it differs from the candidate's code,
  /// the edit becomes a new candidate (origin "edit", parent the current one) first.
  void verifyText(const QString& editorText, const BackendChoice& backend);
  /// Verifies a candidate now, or after the ones before it when a verification is running.
  void verify(int key, const BackendChoice& backend);
  /// Stops the running verification and drops the waiting ones.
  void stop();
  int waiting() const { return static_cast<int>(queue_.size()); }
  bool verifying() const { return verifier_->busy(); }
  int verifyingKey() const { return verifier_->runningCandidate(); }

  /// Generation: a new 'generate' session on the open reference (the candidates shown are
  /// dropped), then each candidate as the run reports it, stored as it arrives, and its
  /// evaluation (the pipeline verified it: it is not verified again here).
  void beginGeneratedSession(const QString& note);
  int addGenerated(const GeneratedEntry& generated);
  void setGeneratedEvaluation(int generatedId, const Evaluation& evaluation);

  /// Uses another database from now on (Settings), without a restart: the store reopens off the
  /// UI thread, and what the workbench shows is saved into the new one as a new session.
  void setDatabase(const QString& path);

  void reopenSession(std::int64_t sessionId);
  /// The last session this workbench saved to (0 before the first save completes).
  std::int64_t savedSessionId() const { return savedSessionId_; }

  /// Writes the bundle off the UI thread; `exported` or `errorOccurred` follows.
  void exportCandidate(int key, const QString& dir, bool allowUnverified);

  QString referenceProblem() const { return referenceProblem_; }

  /// The files a job on candidate `key` reads, written into `dir`: the reference under its own
  /// file name (its stem is the module's name) and the candidate as it is now. nullopt (and
  /// `errorOccurred`) when they cannot be written.
  struct JobSources {
    QString referencePath, candidatePath;
  };
  std::optional<JobSources> writeSources(int key, const QTemporaryDir& dir);
  /// The current candidate's job files in a scratch folder of their own, which lives as long as
  /// the returned pointer (an inspection keeps it); nullopt without a reference or candidate.
  struct ScratchSources {
    std::shared_ptr<QTemporaryDir> dir;
    JobSources sources;
    int key = -1;
  };
  std::optional<ScratchSources> writeCurrentSources();
  /// Opens the reference's file again (after it changed on disk); a new session.
  void reloadReference();

 signals:
  void currentChanged(int key);
  void verifyingChanged(bool running);
  void progress(const QString& stage, const QString& message);
  void errorOccurred(const QString& message);
  void referenceProblemChanged(const QString& message, int line);  // line 0 when unknown
  // The open reference's file now holds other text than the workbench shows (and verifies).
  void referenceChangedOnDisk(const QString& path);
  void sessionSaved(qint64 sessionId);
  void sessionReopened(qint64 sessionId);
  void exported(const QStringList& files, bool unverified);
  void databaseChanged(const QString& path);
  void settingsChanged();

 private:
  void saveCandidate(int key);
  void saveEvaluation(int key, const Evaluation& evaluation);
  store::TaskInput taskInput() const;
  QString referenceFileName() const;
  void runNext();

  Workbench* workbench_;
  StoreService* store_;
  VerifyService* verifier_;
  AppSettings settings_;
  int currentKey_ = -1;
  std::int64_t savedSessionId_ = 0;
  QString referenceProblem_;
  QFileSystemWatcher referenceWatcher_;      // the open reference's file
  std::unique_ptr<QTemporaryDir> jobFiles_;  // the files of the running verification
  QThreadPool pool_;                         // exports
  QList<QPair<int, BackendChoice>> queue_;   // candidates waiting to be verified
  QHash<int, int> generatedKeys_;            // the generation run's ids -> candidate keys
};

/// The line in a "file:LINE: message" problem, or 0.
int lineOfProblem(const QString& message);

}  // namespace crucible::ui
