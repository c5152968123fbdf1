// Generation with an OpenAI-compatible endpoint through the real window, offscreen, against
// tests/support/fake_openai_server.py: the endpoint is picked in the model picker, its tokens
// stream into the live view, each candidate is verified and stored as it arrives, and a refine
// round's candidate is the child of the one it improves, in the window and in the database. An
// endpoint that refuses the connection is an error in the pane, and the app goes on.
#include <QStandardItemModel>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>
#include <memory>

#include "tests/support/fake_endpoint.h"
#include "tests/ui/ui_test_support.h"
#include "ui/main_window.h"
#include "ui/panes/generation_pane.h"
#include "ui/panes/sessions_pane.h"
#include "ui/panes/verification_pane.h"
#include "ui/workbench/pipeline_generation_controller.h"

using namespace crucible;
using namespace crucible::ui;
using namespace crucible::ui::testing;

namespace {
QString answer(const QString& name) {
  return readText(QStringLiteral(CRUCIBLE_TEST_SOURCE_DIR "/tests/cli/generate/%1.md").arg(name));
}
}  // namespace

class EndpointGenerationTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase();
  void refineStreamsVerifiesAndStoresTheLineage();
  void aRefusedEndpointIsAnErrorAndTheAppGoesOn();
  void cleanupTestCase();

 private:
  const CandidateEntry& entry(int row) const {
    return window_->controller()->workbench()->candidates()[row];
  }

  QTemporaryDir dir_;
  std::unique_ptr<crucible::testing::FakeEndpoint> server_;
  QString url_;
  const QString refused_ = "http://127.0.0.1:9/v1";  // discard: nothing listens
  PipelineGenerationController generator_;
  std::unique_ptr<MainWindow> window_;
};

void EndpointGenerationTest::initTestCase() {
  QVERIFY(dir_.isValid());
  // Round one's answer is wrong, round two's right; small chunks, so the answer streams.
  const nlohmann::json responses =
      nlohmann::json::array({{{"choices", {answer("incorrect").toStdString()}}, {"chunk", 24}},
                             {{"choices", {answer("correct").toStdString()}}, {"chunk", 24}}});
  server_ = std::make_unique<crucible::testing::FakeEndpoint>(
      CRUCIBLE_TEST_PYTHON, CRUCIBLE_TEST_SOURCE_DIR "/tests/support/fake_openai_server.py",
      nlohmann::json{{"model", "fake-kernel-model"}, {"responses", responses}},
      dir_.filePath("server").toStdString());
  url_ = QString::fromStdString(server_->url());
  useScratchSettings(dir_, "crucible-gui-endpoint-test", {url_, refused_});
  window_ =
      std::make_unique<MainWindow>(MainWindowOptions{dir_.filePath("crucible.db"), &generator_});
  window_->show();
  QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
  window_->controller()->openExample(rowSoftmaxExample());
  QCOMPARE(window_->controller()->workbench()->reference().name, QString("row_softmax"));
}

void EndpointGenerationTest::refineStreamsVerifiesAndStoresTheLineage() {
  GenerationPane* pane = window_->generationPane();
  const int endpoint = pane->modelBox()->findData(url_);
  QVERIFY2(endpoint >= 0, "the endpoint from Settings is in the model picker");
  pane->modelBox()->setCurrentIndex(endpoint);
  const int refine = pane->modeBox()->findText("refine");
  QVERIFY(qobject_cast<QStandardItemModel*>(pane->modeBox()->model())->item(refine)->isEnabled());
  pane->modeBox()->setCurrentIndex(refine);
  QVERIFY(pane->roundsBox()->isEnabled());
  pane->roundsBox()->setValue(2);
  pane->countBox()->setValue(1);
  pane->backendBox()->selectBackend("interpret");

  QSignalSpy tokens(&generator_, &GenerationController::tokens);
  QSignalSpy verified(&generator_, &GenerationController::candidateVerified);
  QSignalSpy saves(window_->controller(), &WorkbenchController::sessionSaved);
  pane->generate();
  // Round one's answer streams into the live view while the run goes on.
  QTRY_VERIFY_WITH_TIMEOUT(pane->liveText().contains("def normalise_kernel"), 60000);
  QVERIFY(generator_.running());
  QVERIFY2(tokens.size() > 10, "the answer came in pieces, as streamed");
  QTRY_VERIFY_WITH_TIMEOUT(pane->generateButton()->isEnabled(), 2 * kVerifyTimeoutMs);
  QVERIFY2(pane->statusText().startsWith("Done"), qPrintable(pane->statusText()));
  QCOMPARE(verified.size(), 2);

  const auto& candidates = window_->controller()->workbench()->candidates();
  QCOMPARE(candidates.size(), 2);
  for (int row = 0; row < 2; ++row) {
    QCOMPARE(entry(row).origin, QString("endpoint"));
    QCOMPARE(entry(row).model, QString("fake-kernel-model"));
    QVERIFY(entry(row).rawResponse.contains("```python"));
  }
  QCOMPARE(verdictText(entry(0).evaluation), QString("incorrect"));
  QCOMPARE(verdictText(entry(1).evaluation), QString("verified"));
  QVERIFY(!entry(0).parentKey);
  QCOMPARE(entry(1).parentKey, std::optional<int>(entry(0).key));  // round two refines round one
  QVERIFY2(entry(1).prompt.contains("Verdict: incorrect"), "round one's findings were sent");
  QVERIFY(entry(0).plan.contains("Normalise each row by its sum"));
  QCOMPARE(server_->chatRequests().size(), 2u);
  QVERIFY(window_->verificationPane()->bannerText().startsWith("INCORRECT"));  // the first shown

  // Stored as it arrived: a second window reopens the session with the same lineage.
  const StoreCell session = window_->controller()->workbench()->sessionCell();
  QTRY_VERIFY(*session > 0 && window_->controller()->savedSessionId() == *session);
  // Each candidate and each evaluation is one write on the store's thread: wait for all four,
  // or the listing below may be read before the second candidate's verdict is in.
  QTRY_VERIFY_WITH_TIMEOUT(saves.size() >= 4, 10000);
  MainWindow again(MainWindowOptions{dir_.filePath("crucible.db"), nullptr});
  again.sessionsPane()->refresh();
  // The example's own session, then the generate session, newest first.
  QTRY_COMPARE(again.sessionsPane()->table()->rowCount(), 2);
  QCOMPARE(again.sessionsPane()->table()->item(0, 0)->text().toLongLong(), *session);
  QCOMPARE(again.sessionsPane()->table()->item(0, 3)->text(), QString("generate"));
  QCOMPARE(again.sessionsPane()->table()->item(0, 5)->text(), QString("verified"));
  again.controller()->reopenSession(*session);
  const auto& stored = again.controller()->workbench()->candidates();
  QTRY_COMPARE(stored.size(), 2);
  QCOMPARE(again.controller()->workbench()->sessionKind(), QString("generate"));
  QCOMPARE(stored[1].parentKey, std::optional<int>(stored[0].key));
  for (int row = 0; row < 2; ++row) {
    QCOMPARE(stored[row].code, entry(row).code);
    QCOMPARE(stored[row].prompt, entry(row).prompt);
    QCOMPARE(stored[row].rawResponse, entry(row).rawResponse);
    QVERIFY(stored[row].evaluation && *stored[row].evaluation == *entry(row).evaluation);
  }
}

void EndpointGenerationTest::aRefusedEndpointIsAnErrorAndTheAppGoesOn() {
  GenerationPane* pane = window_->generationPane();
  pane->modelBox()->setCurrentIndex(pane->modelBox()->findData(refused_));
  pane->modeBox()->setCurrentText("best-of-n");
  pane->generate();
  QTRY_VERIFY_WITH_TIMEOUT(pane->generateButton()->isEnabled(), 60000);
  QVERIFY2(pane->statusText().startsWith("Generation failed"), qPrintable(pane->statusText()));
  QVERIFY(pane->statusText().contains("127.0.0.1:9"));
  // The window still works: the synthesizer is there to pick, and the model box answers.
  pane->modelBox()->setCurrentIndex(pane->modelBox()->findData("synth"));
  QCOMPARE(pane->modelBox()->currentData().toString(), QString("synth"));
  QVERIFY(window_->isVisible());
}

void EndpointGenerationTest::cleanupTestCase() {
  window_.reset();
  server_.reset();
}

QTEST_MAIN(EndpointGenerationTest)
#include "test_endpoint_generation.moc"
