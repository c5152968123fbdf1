#include "ui/workbench/workbench.h"

#include <map>

namespace crucible::ui {

const CandidateEntry* Workbench::candidate(int key) const {
  const int row = rowOf(key);
  return row < 0 ? nullptr : &candidates_[row];
}

int Workbench::rowOf(int key) const {
  for (int row = 0; row < candidates_.size(); ++row) {
    if (candidates_[row].key == key) return row;
  }
  return -1;
}

void Workbench::setReference(ReferenceDoc reference) {
  reference_ = std::move(reference);
  candidates_.clear();  // before referenceChanged: listeners see no stale candidates
  emit referenceChanged();
  beginSession(QString::fromUtf8(store::kSessionKindWorkbench), {});
}

void Workbench::beginSession(const QString& kind, const QString& note) {
  candidates_.clear();
  session_ = std::make_shared<std::int64_t>(0);
  loadedSessionId_ = 0;
  sessionKind_ = kind;
  sessionNote_ = note;
  emit candidatesReset();
}

int Workbench::addCandidate(CandidateEntry entry) {
  entry.key = nextKey_++;
  candidates_.push_back(std::move(entry));
  emit candidateAdded(static_cast<int>(candidates_.size()) - 1);
  return candidates_.back().key;
}

void Workbench::setEvaluation(int key, const Evaluation& evaluation, const QString& when) {
  const int row = rowOf(key);
  if (row < 0) return;
  candidates_[row].evaluation = evaluation;
  candidates_[row].verifiedAt = when;
  emit candidateChanged(row);
}

void Workbench::detachFromStore() {
  session_ = std::make_shared<std::int64_t>(0);
  loadedSessionId_ = 0;
  for (CandidateEntry& c : candidates_) c.storeId = std::make_shared<std::int64_t>(0);
}

void Workbench::loadSession(const store::SessionDetail& session) {
  reference_ = {QString::fromStdString(session.task.path),
                QString::fromStdString(session.task.name),
                QString::fromStdString(session.task.source)};
  candidates_.clear();
  session_ = std::make_shared<std::int64_t>(session.id);
  loadedSessionId_ = session.id;
  sessionKind_ = QString::fromStdString(session.kind);
  sessionNote_ = QString::fromStdString(session.note);
  std::map<std::int64_t, int> keyOfStoreId;
  for (const auto& c : session.candidates) {
    CandidateEntry e;
    e.key = nextKey_++;
    e.origin = QString::fromStdString(c.origin);
    e.model = QString::fromStdString(c.model);
    e.path = QString::fromStdString(c.path);
    e.plan = QString::fromStdString(c.plan);
    e.code = QString::fromStdString(c.code);
    e.rawResponse = QString::fromStdString(c.rawResponse);
    e.prompt = QString::fromStdString(c.prompt);
    if (c.parentId && keyOfStoreId.count(*c.parentId)) e.parentKey = keyOfStoreId[*c.parentId];
    if (!c.evaluations.empty()) {
      e.evaluation = c.evaluations.back().evaluation;
      e.verifiedAt = QString::fromStdString(c.evaluations.back().createdAt);
    }
    e.storeId = std::make_shared<std::int64_t>(c.id);
    keyOfStoreId[c.id] = e.key;
    candidates_.push_back(std::move(e));
  }
  emit referenceChanged();
  emit candidatesReset();
}

QString verdictText(const std::optional<Evaluation>& evaluation) {
  return evaluation ? QString::fromStdString(std::string(toString(evaluation->verdict)))
                    : QStringLiteral("not verified");
}

}  // namespace crucible::ui
