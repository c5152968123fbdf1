// A session built one piece at a time (the workbench's way): start, add candidates, add
// evaluations, record exports; and the session list's model and date filters.
#include <gtest/gtest.h>

#include "core/store/store.h"
#include "temp_dir.h"

namespace crucible::store {
namespace {

class StoreSessionsTest : public ::testing::Test {
 protected:
  std::string db() const { return (dir_.path() / "crucible.db").string(); }
  test::TempDir dir_{"crucible-sessions"};
};

Evaluation verified(double speedup) {
  Evaluation e;
  e.verdict = Verdict::Verified;
  e.correct = true;
  e.speedup = speedup;
  e.backend = "interpret";
  e.reward.preset = "tritonrl";
  e.reward.total = 1;
  e.reward.components = {{"valid", 1, ""}, {"r_correct", 1, "code"}};
  return e;
}

TEST_F(StoreSessionsTest, CandidatesAndEvaluationsJoinOneSessionInOrder) {
  Store store(db());
  const SavedIds ids = store.startSession({"row_softmax", "/x/reference.py", "ref"},
                                          kSessionKindWorkbench, "a note");
  CandidateInput first;
  first.origin = "example";
  first.code = "class ModelNew: pass\n";
  const auto a = store.addCandidateTo(ids.sessionId, first);
  CandidateInput edit = first;
  edit.origin = "edit";
  edit.code += "# edited\n";
  edit.parentId = a;
  const auto b = store.addCandidateTo(ids.sessionId, edit);
  store.addEvaluationTo(a, verified(1.5));
  store.addEvaluationTo(b, verified(2.0));
  store.addEvaluationTo(b, verified(2.5));
  store.recordExport(b, "/tmp/bundle");

  const auto session = store.session(ids.sessionId);
  ASSERT_TRUE(session);
  EXPECT_EQ(session->kind, "workbench");
  EXPECT_EQ(session->note, "a note");
  EXPECT_EQ(session->task.id, ids.taskId);
  ASSERT_EQ(session->candidates.size(), 2u);
  EXPECT_EQ(session->candidates[0].id, a);
  EXPECT_EQ(session->candidates[1].parentId, a);
  EXPECT_EQ(session->candidates[1].origin, "edit");
  ASSERT_EQ(session->candidates[1].evaluations.size(), 2u);
  EXPECT_EQ(session->candidates[1].evaluations[1].evaluation, verified(2.5));

  const auto list = store.listSessions();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].candidateCount, 2);
  EXPECT_EQ(list[0].speedup, 2.5);  // the best evaluation of the session

  // The same task again is the same task, in a new session.
  EXPECT_EQ(store.startSession({"other name", "", "ref"}, kSessionKindWorkbench).taskId,
            ids.taskId);
  EXPECT_THROW(store.addCandidateTo(9999, first), StoreError);
}

TEST_F(StoreSessionsTest, ListFiltersByModelAndDate) {
  Store store(db());
  const auto one = store.startSession({"t1", "", "one"}, kSessionKindWorkbench).sessionId;
  CandidateInput generated;
  generated.origin = "synthesizer";
  generated.model = "Qwen3-8B";
  generated.code = "x";
  store.addCandidateTo(one, generated);
  const auto two = store.startSession({"t2", "", "two"}, kSessionKindWorkbench).sessionId;
  CandidateInput file;
  file.code = "y";
  store.addCandidateTo(two, file);

  SessionFilter byModel;
  byModel.modelText = "qwen3";
  auto list = store.listSessions(byModel);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].id, one);
  byModel.modelText = "FILE";  // the origin counts too
  list = store.listSessions(byModel);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].id, two);

  const std::string today = utcTimestamp().substr(0, 10);
  SessionFilter dates;
  dates.since = today;
  EXPECT_EQ(store.listSessions(dates).size(), 2u);
  dates.since = "2999-01-01";
  EXPECT_TRUE(store.listSessions(dates).empty());
  dates.since.clear();
  dates.until = today;  // before today's first moment
  EXPECT_TRUE(store.listSessions(dates).empty());
  dates.until = "2999-01-01";
  EXPECT_EQ(store.listSessions(dates).size(), 2u);
}

}  // namespace
}  // namespace crucible::store
