#pragma once
// The document of the workbench: one reference and the candidates written for it, each with its
// latest evaluation. Panes read it and listen to its signals; only WorkbenchController changes
// it. Store ids live in cells shared with the store thread (written there, in job order), so a
// candidate can be saved and then evaluated without the UI thread waiting for either.

#include <QObject>
#include <QString>
#include <QVector>
#include <memory>
#include <optional>

#include "core/store/store.h"
#include "core/verify/evaluation.h"

namespace crucible::ui {

/// A row id in the database, filled in by the store thread; 0 until saved.
using StoreCell = std::shared_ptr<std::int64_t>;

struct CandidateEntry {
  int key = 0;     // stable within the workbench
  QString origin;  // file | paste | edit | example | a generator's name
  QString model;   // the model that wrote it, when generated
  QString path;    // the file it was read from
  QString plan;    // text before the code in a model response
  QString code;    // what is verified
  QString rawResponse;
  QString prompt;                        // what the model was asked, when generated
  std::optional<int> parentKey;          // the candidate it was edited from
  std::optional<Evaluation> evaluation;  // the latest
  QString verifiedAt;                    // when it was verified ("" never)
  StoreCell storeId = std::make_shared<std::int64_t>(0);
};

struct ReferenceDoc {
  QString path;
  QString name;  // the file's stem: the task's name
  QString source;
};

class Workbench : public QObject {
  Q_OBJECT
 public:
  using QObject::QObject;

  const ReferenceDoc& reference() const { return reference_; }
  bool hasReference() const { return !reference_.source.isEmpty(); }
  const QVector<CandidateEntry>& candidates() const { return candidates_; }
  const CandidateEntry* candidate(int key) const;
  int rowOf(int key) const;  // -1 when unknown

  /// The store's session for this workbench; 0 in the cell until saved. A new one per reference.
  const StoreCell& sessionCell() const { return session_; }
  std::int64_t loadedSessionId() const { return loadedSessionId_; }
  /// The kind and note the session is saved with (store.h's kSessionKind*).
  const QString& sessionKind() const { return sessionKind_; }
  const QString& sessionNote() const { return sessionNote_; }

  void setReference(ReferenceDoc reference);  // drops the candidates: a new session
  /// Drops the candidates and starts a new session of `kind` on the same reference (generation).
  void beginSession(const QString& kind, const QString& note);
  int addCandidate(CandidateEntry entry);  // assigns and returns the key
  void setEvaluation(int key, const Evaluation& evaluation, const QString& when);
  /// Forgets where the session and its candidates are stored (another database): they are
  /// unsaved again, with fresh cells, while the jobs already posted fill the old ones.
  void detachFromStore();
  /// Replaces everything with a saved session, exactly as it was stored.
  void loadSession(const store::SessionDetail& session);

 signals:
  void referenceChanged();
  void candidatesReset();
  void candidateAdded(int row);
  void candidateChanged(int row);

 private:
  ReferenceDoc reference_;
  QVector<CandidateEntry> candidates_;
  int nextKey_ = 1;
  StoreCell session_ = std::make_shared<std::int64_t>(0);
  std::int64_t loadedSessionId_ = 0;
  QString sessionKind_ = QString::fromUtf8(store::kSessionKindWorkbench);
  QString sessionNote_;
};

/// "verified" ... for display; "not verified" when nullopt.
QString verdictText(const std::optional<Evaluation>& evaluation);

}  // namespace crucible::ui
