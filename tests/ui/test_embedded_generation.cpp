// Generation with the embedded model through the real window, offscreen, on tiny random-weight
// models made at test time (tests/llm/make_embedded_fixtures.py): add a model folder to the
// picker, generate (tokens stream into the live view, the garbage answers arrive and are judged
// invalid), Stop in the middle of a generation (the engine stays loaded and serves the next run),
// and an engine killed mid-generation (an error in the pane, the app goes on, the next run starts
// the engine again). Label model (crucible-model and transformers). Waits with QTRY_*.
#include <QSettings>
#include <QStandardItemModel>
#include <QTemporaryDir>
#include <QtTest>
#include <csignal>

#include "tests/support/child_processes.h"
#include "ui/main_window.h"
#include "ui/panes/generation_pane.h"
#include "ui/settings/resources_dir.h"
#include "ui/settings/settings.h"
#include "ui/workbench/pipeline_generation_controller.h"

using namespace crucible;
using namespace crucible::ui;

namespace {
constexpr int kRunTimeoutMs = 240000;

QString fixture(const QString& name) {
  return QDir(qEnvironmentVariable("CRUCIBLE_EMBEDDED_FIXTURES")).filePath(name);
}

std::vector<pid_t> engines() {
  return testing::childrenNamed("crucible-model");
}
}  // namespace

class EmbeddedGenerationTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase();
  void picksTheModelAndGenerates();
  void stopCancelsAndTheModelStaysLoaded();
  void aKilledEngineIsAnErrorAndTheAppGoesOn();
  void cleanupTestCase();

 private:
  GenerationPane* pane() const { return window_->generationPane(); }
  int candidates() const { return window_->controller()->workbench()->candidates().size(); }
  void choose(const QString& model) {
    pane()->addModel(model);
    QCOMPARE(pane()->modelBox()->currentData().toString(), model);
  }

  QTemporaryDir dir_;
  PipelineGenerationController generator_;
  std::unique_ptr<MainWindow> window_;
};

void EmbeddedGenerationTest::initTestCase() {
  QVERIFY(dir_.isValid());
  QVERIFY2(QFileInfo::exists(fixture("qwen2") + "/config.json"),
           "no tiny model in $CRUCIBLE_EMBEDDED_FIXTURES (run through ctest)");
  QSettings::setDefaultFormat(QSettings::IniFormat);
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, dir_.filePath("config"));
  QCoreApplication::setOrganizationName("CrucibleTest");
  QCoreApplication::setApplicationName("crucible-gui-embedded-test");
  AppSettings settings;
  settings.defaultBackend = "interpret";
  settings.trials = 1;
  settings.compileBaseline = false;
  settings.save();
  window_ =
      std::make_unique<MainWindow>(MainWindowOptions{dir_.filePath("db.sqlite"), &generator_});
  window_->show();
  QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
  for (const auto& example : bundledExamples()) {
    if (example.title == "row_softmax") window_->controller()->openExample(example);
  }
  QCOMPARE(window_->controller()->workbench()->reference().name, QString("row_softmax"));
  pane()->backendBox()->selectBackend("interpret");
}

void EmbeddedGenerationTest::picksTheModelAndGenerates() {
  QVERIFY(engines().empty());  // nothing starts before it is needed
  choose(fixture("qwen2"));
  QCOMPARE(recentModels().value(0), fixture("qwen2"));  // remembered for the next start
  // A language model can refine, unlike the synthesizer.
  const int refine = pane()->modeBox()->findText("refine");
  QVERIFY(qobject_cast<QStandardItemModel*>(pane()->modeBox()->model())->item(refine)->isEnabled());
  pane()->countBox()->setValue(2);
  QTest::mouseClick(pane()->generateButton(), Qt::LeftButton);
  QTRY_VERIFY_WITH_TIMEOUT(pane()->generateButton()->isEnabled(), kRunTimeoutMs);
  QVERIFY2(pane()->statusText().startsWith("Done: 2 candidate"), qPrintable(pane()->statusText()));
  QVERIFY2(pane()->liveText().contains("loaded Qwen2ForCausalLM"), qPrintable(pane()->liveText()));
  QCOMPARE(candidates(), 2);  // a generate session of its own
  for (int i = 0; i < candidates(); ++i) {
    const CandidateEntry& c = window_->controller()->workbench()->candidates()[i];
    QCOMPARE(c.origin, QString("embedded"));
    QCOMPARE(c.model, fixture("qwen2"));
    QVERIFY(!c.rawResponse.isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(c.evaluation.has_value(), kRunTimeoutMs);
    QVERIFY(c.evaluation->verdict == Verdict::Invalid);  // garbage: no code block
  }
  // The picker says which model the engine holds; the engine stays for the next run.
  QVERIFY2(pane()->modelBox()->currentText().contains("(embedded, loaded)"),
           qPrintable(pane()->modelBox()->currentText()));
  QCOMPARE(engines().size(), 1u);
}

void EmbeddedGenerationTest::stopCancelsAndTheModelStaysLoaded() {
  const auto engine = engines();
  QCOMPARE(engine.size(), 1u);
  choose(fixture("qwen2-endless"));  // no stop ids: it generates until stopped or the limit
  pane()->countBox()->setValue(1);
  QTest::mouseClick(pane()->generateButton(), Qt::LeftButton);
  QTRY_VERIFY_WITH_TIMEOUT(
      pane()->liveText().contains("loaded Qwen2ForCausalLM") && pane()->liveText().size() > 400,
      kRunTimeoutMs);
  QTest::mouseClick(pane()->stopButton(), Qt::LeftButton);
  QVERIFY(pane()->generateButton()->isEnabled());
  QVERIFY2(pane()->statusText().startsWith("Stopped"), qPrintable(pane()->statusText()));
  QCOMPARE(candidates(), 0);  // a stopped run's partial answer is dropped
  // Cancelled, not killed: the same engine process serves the next run, with the model it had.
  choose(fixture("qwen2"));
  QTest::mouseClick(pane()->generateButton(), Qt::LeftButton);
  QTRY_VERIFY_WITH_TIMEOUT(pane()->generateButton()->isEnabled(), kRunTimeoutMs);
  QVERIFY2(pane()->statusText().startsWith("Done: 1 candidate"), qPrintable(pane()->statusText()));
  QCOMPARE(engines(), engine);
  QCOMPARE(candidates(), 1);
  // One candidate: the live view holds its tokens as they streamed, in order. Garbage holds
  // bytes that are not UTF-8 (each streamed piece and the whole answer replace them on their own)
  // and spaces the text view changes (no-break, CR), so letters and digits are compared.
  const auto letters = [](const QString& text) {
    QString kept;
    for (QChar c : text)
      if (c.isLetterOrNumber()) kept += c;
    return kept;
  };
  const QString answer =
      letters(window_->controller()->workbench()->candidates().back().rawResponse);
  QVERIFY(answer.size() > 10);
  QVERIFY2(letters(pane()->liveText()).contains(answer), qPrintable(pane()->liveText()));
}

void EmbeddedGenerationTest::aKilledEngineIsAnErrorAndTheAppGoesOn() {
  choose(fixture("qwen2-endless"));
  QTest::mouseClick(pane()->generateButton(), Qt::LeftButton);
  QTRY_VERIFY_WITH_TIMEOUT(
      pane()->liveText().contains("loaded Qwen2ForCausalLM") && pane()->liveText().size() > 400,
      kRunTimeoutMs);
  const auto engine = engines();
  QCOMPARE(engine.size(), 1u);
  ::kill(engine[0], SIGKILL);  // as the out-of-memory killer would
  QTRY_VERIFY_WITH_TIMEOUT(pane()->generateButton()->isEnabled(), kRunTimeoutMs);
  QVERIFY2(pane()->statusText().contains("Generation failed") &&
               pane()->statusText().contains("was killed (SIGKILL)"),
           qPrintable(pane()->statusText()));
  QVERIFY(window_->isVisible());
  // The next run starts the engine again.
  choose(fixture("qwen2"));
  QTest::mouseClick(pane()->generateButton(), Qt::LeftButton);
  QTRY_VERIFY_WITH_TIMEOUT(pane()->generateButton()->isEnabled(), kRunTimeoutMs);
  QVERIFY2(pane()->statusText().startsWith("Done: 1 candidate"), qPrintable(pane()->statusText()));
  QVERIFY2(pane()->liveText().contains("starting it again"), qPrintable(pane()->liveText()));
  QCOMPARE(engines().size(), 1u);
  QVERIFY(engines() != engine);
}

void EmbeddedGenerationTest::cleanupTestCase() {
  window_.reset();
}

QTEST_MAIN(EmbeddedGenerationTest)
#include "test_embedded_generation.moc"
