// The workbench's journey through the real window, offscreen: open a bundled example, verify its
// candidate (interpret backend, one trial), stop a run, edit into a new, incorrect candidate and
// see where it is wrong, select and compare candidates, export, and reopen the session from the
// database in a second window; then generate with the built-in synthesizer (two candidates,
// verified by the pipeline as they arrive), compare them, export the best, and reopen the
// generate session. Waits with QTRY_*, never sleeps.
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMessageBox>
#include <QRegularExpression>
#include <QSettings>
#include <QStandardItemModel>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QTreeWidget>
#include <QtTest>

#include "tests/ui/ui_test_support.h"
#include "ui/main_window.h"
#include "ui/panes/candidate_pane.h"
#include "ui/panes/candidates_pane.h"
#include "ui/panes/compare_pane.h"
#include "ui/panes/generation_pane.h"
#include "ui/panes/ir_pane.h"
#include "ui/panes/profile_pane.h"
#include "ui/panes/reference_pane.h"
#include "ui/panes/run_bar.h"
#include "ui/panes/sessions_pane.h"
#include "ui/panes/verification_pane.h"
#include "ui/settings/resources_dir.h"
#include "ui/settings/settings.h"
#include "ui/workbench/pipeline_generation_controller.h"

using namespace crucible;
using namespace crucible::ui;
using namespace crucible::ui::testing;

class WorkbenchTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase();
  void invalidReferenceNamesTheLine();
  void opensBundledExample();
  void verifiesTheCandidate();
  void stopEndsARun();
  void editMakesANewCandidateAndShowsTheError();
  void queuedVerificationsRunInTurn();
  void selectsCandidates();
  void comparesTwoCandidates();
  void compareScrollsBothSidesTogether();
  void exportsVerifiedAndDeliberatelyUnverified();
  void shortcutsReachTheJourneyFromTheEditor();
  void reopensTheSessionFromTheDatabase();
  void flagLineAndSquiggleShowEachOther();
  void settingsShowTheDatabaseInUseAndKeepTheSavedOne();
  void aNewDatabaseAppliesWithoutRestart();
  void aCrashingCandidateShowsAnErrorAndTheAppGoesOn();
  void theLayoutSurvivesARestart();
  void generatesWithTheSynthesizer();
  void comparesAndExportsGeneratedCandidates();
  void reopensTheGenerateSession();
  void showsWhatRunsAndWhereTheTimeGoes();
  void aReferenceFailingAtRunTimeSaysWhyInOneLine();
  void cleanupTestCase();

 private:
  const CandidateEntry& entry(int row) const {
    return window_->controller()->workbench()->candidates()[row];
  }

  QTemporaryDir dir_;
  QString database_;
  PipelineGenerationController generator_;
  std::unique_ptr<MainWindow> window_;
  std::unique_ptr<MainWindow> reopened_;
};

void WorkbenchTest::initTestCase() {
  QVERIFY(dir_.isValid());
  useScratchSettings(dir_, "crucible-gui-test");  // first run: defaults, made quick
  database_ = dir_.filePath("crucible.db");
  window_ = std::make_unique<MainWindow>(MainWindowOptions{database_, &generator_});
  window_->show();
  QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
}

void WorkbenchTest::invalidReferenceNamesTheLine() {
  const QString path = dir_.filePath("broken.py");
  QFile file(path);
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write("import torch\nclass Model(:\n    pass\n");
  file.close();
  window_->openFile(path);
  QTRY_VERIFY_WITH_TIMEOUT(!window_->referencePane()->problemText().isEmpty(), 60000);
  QVERIFY2(window_->referencePane()->problemText().contains("broken.py:2:"),
           qPrintable(window_->referencePane()->problemText()));
  QCOMPARE(window_->referencePane()->editor()->flagLines(), QVector<int>{2});
  // Mended in another editor: the pane offers to reload, and Reload reads the file again.
  ReferencePane* pane = window_->referencePane();
  QVERIFY(!pane->changedBar()->isVisible());
  const QByteArray mended = "import torch\nclass Model(torch.nn.Module):\n    pass\n";
  QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
  file.write(mended);
  file.close();
  QTRY_VERIFY_WITH_TIMEOUT(pane->changedBar()->isVisible(), 10000);
  QCOMPARE(pane->editor()->text(), QString("import torch\nclass Model(:\n    pass\n"));
  QTest::mouseClick(pane->reloadButton(), Qt::LeftButton);
  QCOMPARE(pane->editor()->text(), QString::fromUtf8(mended));
  QVERIFY(!pane->changedBar()->isVisible());
}

void WorkbenchTest::opensBundledExample() {
  const BundledExample softmax = rowSoftmaxExample();
  QVERIFY2(!softmax.candidatePath.isEmpty(), "resources/examples/row_softmax not found");
  window_->controller()->openExample(softmax);
  QVERIFY(window_->referencePane()->problemText().isEmpty());
  QVERIFY(window_->referencePane()->editor()->text().contains("class Model"));
  QCOMPARE(window_->controller()->workbench()->candidates().size(), 1);
  QVERIFY(window_->candidatePane()->editorText().contains("softmax_kernel"));
  // At the first-run layout, in a window of 1600x1000 (what a first run takes on a 1920x1080
  // screen), both editors show lines of a usual length, not 30 columns.
  const QSize size = window_->size();
  window_->resize(1600, 1000);
  QTest::qWait(0);
  for (CodeEditor* editor :
       {window_->referencePane()->editor(), window_->candidatePane()->editor()}) {
    QVERIFY2(editor->visibleColumns() >= 50, qPrintable(QString::number(editor->visibleColumns())));
  }
  window_->resize(size);
  QCOMPARE(window_->controller()->currentKey(), entry(0).key);
  // The check of the bundled reference finds nothing wrong.
  QTest::qWait(0);
  QVERIFY(window_->controller()->referenceProblem().isEmpty());
}

void WorkbenchTest::verifiesTheCandidate() {
  window_->runBar()->selectBackend("interpret");
  QCOMPARE(window_->runBar()->backend().backend, QString("interpret"));
  window_->verifyEditor();
  QVERIFY(window_->controller()->verifying());
  // The status says what runs now, and the candidate's banner that it is being verified.
  RunBar* bar = window_->runBar();
  QVERIFY2(bar->stageText().startsWith("Verifying candidate #1"), qPrintable(bar->stageText()));
  QVERIFY2(window_->verificationPane()->bannerText().startsWith("VERIFYING"),
           qPrintable(window_->verificationPane()->bannerText()));
  QCOMPARE(bar->progressBar()->maximum(), 4);
  QVERIFY(bar->progressBar()->format().contains("stage"));
  QTRY_VERIFY_WITH_TIMEOUT(entry(0).evaluation.has_value(), kVerifyTimeoutMs);
  QVERIFY2(window_->lastError().isEmpty(), qPrintable(window_->lastError()));
  QVERIFY2(bar->stageText().startsWith("Done: candidate #1 verified (after "),
           qPrintable(bar->stageText()));
  QCOMPARE(bar->progressBar()->value(), 4);
  QCOMPARE(window_->controller()->workbench()->candidates().size(), 1);  // no edit, no new one
  const Evaluation& e = *entry(0).evaluation;
  QCOMPARE(verdictText(e), QString("verified"));
  QCOMPARE(e.backend, std::string("interpret"));
  QVERIFY(window_->verificationPane()->bannerText().startsWith("VERIFIED"));
  QVERIFY(window_->verificationPane()->timingText().contains("Speedup"));
  const auto bars = window_->verificationPane()->rewardChart()->bars();
  QCOMPARE(bars.size(), static_cast<int>(e.reward.components.size()));
  QCOMPARE(bars.first().first, QString("valid"));
  QVERIFY(!window_->verificationPane()->errorPicture()->isVisible());
  const QModelIndex verdict =
      window_->candidatesPane()->model()->index(0, CandidatesModel::Verdict);
  QCOMPARE(verdict.data().toString(), QString("verified"));
  QTRY_VERIFY(window_->controller()->savedSessionId() > 0);
  // The reward shows its formula with this candidate's numbers.
  const QString formula = window_->verificationPane()->rewardFormulaText();
  QVERIFY2(
      formula.contains("scored with <b>tritonrl</b>: total = alpha * r_speed + r_correct = 0.1 * "),
      qPrintable(formula));
  QVERIFY2(formula.contains("valid = syntax * functionality = 1 * 1 = <b>1</b>"),
           qPrintable(formula));
  QVERIFY(formula.contains("(credits the plan tokens)"));

  // Another preset in Settings scores every stored candidate again, and the column says which.
  CandidatesModel* model = window_->candidatesPane()->model();
  AppSettings settings = window_->controller()->settings();
  const QString before = settings.rewardPreset;
  settings.rewardPreset = "kevin";
  window_->controller()->setSettings(settings);
  QCOMPARE(model->headerData(CandidatesModel::Reward, Qt::Horizontal, Qt::DisplayRole).toString(),
           QString("Reward (kevin)"));
  QVERIFY(e.reward.inputs.has_value());
  const double kevin = 0.3 + e.reward.inputs->speedup;
  QCOMPARE(model->index(0, CandidatesModel::Reward).data().toString(),
           QString::number(kevin, 'g', 3));
  const QString rescored = window_->verificationPane()->rewardFormulaText();
  QVERIFY2(rescored.contains("scored with <b>kevin</b>") &&
               rescored.contains("verified under tritonrl; scored again from its inputs"),
           qPrintable(rescored));
  settings.rewardPreset = before;
  window_->controller()->setSettings(settings);
  QCOMPARE(model->headerData(CandidatesModel::Reward, Qt::Horizontal, Qt::DisplayRole).toString(),
           QString("Reward (tritonrl)"));
}

void WorkbenchTest::stopEndsARun() {
  window_->verifyEditor();
  QVERIFY(window_->controller()->verifying());
  window_->runBar()->stopButton()->click();
  QTRY_VERIFY(!window_->controller()->verifying());
  QVERIFY(window_->runBar()->verifyButton()->isEnabled());
  QVERIFY(window_->runBar()->stageText().contains("stopped"));
  QCOMPARE(verdictText(entry(0).evaluation),
           QString("verified"));  // the stopped run changed nothing
}

void WorkbenchTest::editMakesANewCandidateAndShowsTheError() {
  CodeEditor* editor = window_->candidatePane()->editor();
  QString code = editor->text();
  const QString exact = "e / tl.sum(e, axis=0)";
  QVERIFY(code.contains(exact));
  code.replace(exact, "e / tl.sum(e, axis=0) * 1.5");
  editor->setText(code);
  QVERIFY(window_->candidatePane()->edited());
  window_->verifyEditor();
  QCOMPARE(window_->controller()->workbench()->candidates().size(), 2);
  QCOMPARE(entry(1).origin, QString("edit"));
  QCOMPARE(entry(1).parentKey, std::optional<int>(entry(0).key));
  QCOMPARE(window_->controller()->currentKey(), entry(1).key);
  QTRY_VERIFY_WITH_TIMEOUT(entry(1).evaluation.has_value(), kVerifyTimeoutMs);
  QCOMPARE(verdictText(entry(1).evaluation), QString("incorrect"));
  QVERIFY(window_->verificationPane()->bannerText().startsWith("INCORRECT"));
  ErrorPicture* picture = window_->verificationPane()->errorPicture();
  QVERIFY(picture->isVisible());
  QVERIFY2(picture->statisticsText().contains("elements mismatch"),
           qPrintable(picture->statisticsText()));
  QVERIFY(picture->hasMap());
  // Errors with the digits a reader compares; the histogram's decades readable in full; the
  // map says what its axes and colours mean.
  QVERIFY2(!picture->statisticsText().contains(QRegularExpression("\\d\\.\\d{5,}")),
           qPrintable(picture->statisticsText()));
  QTRY_VERIFY(picture->isVisible() && picture->width() > 200);
  QVERIFY(!picture->labelsTruncated());
  QVERIFY2(picture->scaleText().contains("share of its elements that mismatch"),
           qPrintable(picture->scaleText()));
  const FailingOutput failing = firstFailingOutput(*entry(1).evaluation);
  QCOMPARE(failing.trial, 0);
  QVERIFY(failing.tensor.contains("error_histogram"));
  std::uint64_t counted = 0;
  for (const auto& c : failing.tensor["error_histogram"]["counts"])
    counted += c.get<std::uint64_t>();
  QCOMPARE(counted, failing.tensor["elements"].get<std::uint64_t>());
}

void WorkbenchTest::queuedVerificationsRunInTurn() {
  WorkbenchController* controller = window_->controller();
  const QString before0 = entry(0).verifiedAt, before1 = entry(1).verifiedAt;
  const BackendChoice backend = window_->runBar()->backend();
  controller->verify(entry(0).key, backend);
  controller->verify(entry(1).key, backend);  // waits for the first
  QCOMPARE(controller->waiting(), 1);
  QCOMPARE(controller->verifyingKey(), entry(0).key);
  QTRY_VERIFY_WITH_TIMEOUT(entry(0).verifiedAt != before0, kVerifyTimeoutMs);
  QTRY_VERIFY_WITH_TIMEOUT(entry(1).verifiedAt != before1, kVerifyTimeoutMs);
  QCOMPARE(controller->waiting(), 0);
  QCOMPARE(verdictText(entry(0).evaluation), QString("verified"));
  QCOMPARE(verdictText(entry(1).evaluation), QString("incorrect"));
}

void WorkbenchTest::selectsCandidates() {
  QTableView* view = window_->candidatesPane()->view();
  view->selectRow(0);
  QCOMPARE(window_->controller()->currentKey(), entry(0).key);
  QCOMPARE(window_->candidatePane()->editorText(), entry(0).code);
  QVERIFY(window_->verificationPane()->bannerText().startsWith("VERIFIED"));
  view->selectRow(1);
  QCOMPARE(window_->controller()->currentKey(), entry(1).key);
  QCOMPARE(window_->candidatePane()->editorText(), entry(1).code);
  QVERIFY(window_->verificationPane()->bannerText().startsWith("INCORRECT"));
}

void WorkbenchTest::comparesTwoCandidates() {
  window_->showCompare();  // the current (#2) against the one before it (#1)
  ComparePane* compare = window_->comparePane();
  QCOMPARE(compare->left()->text(), entry(0).code);
  QCOMPARE(compare->right()->text(), entry(1).code);
  QCOMPARE(compare->changedLeft().size(), 1);
  QCOMPARE(compare->changedRight().size(), 1);
  QVERIFY(compare->right()->text(compare->changedRight().first()).contains("* 1.5"));
  QCOMPARE(compare->metrics()->item(1, 0)->text(), QString("verified"));
  QCOMPARE(compare->metrics()->item(1, 1)->text(), QString("incorrect"));
  QVERIFY(compare->metrics()->item(1, 0)->background() != QBrush());  // they differ
  // Within the changed line, the words that changed: " * 1.5" was added.
  const auto words = compare->right()->changedWords();
  QCOMPARE(words.size(), 1);
  QCOMPARE(compare->right()->text(words[0].line).mid(words[0].offset, words[0].length),
           QString(" * 1.5"));
  QVERIFY(compare->left()->changedWords().isEmpty());
  // Full height in the sources' place, with the candidates still in view.
  QTRY_VERIFY(compare->isVisible());
  QVERIFY(!window_->candidatePane()->isVisible());
  QVERIFY(window_->findChild<QDockWidget*>("candidates")->isVisible());
  QVERIFY(compare->left()->height() > window_->height() / 3);
  // Verify brings the sources back.
  QTest::keyClick(window_.get(), Qt::Key_1, Qt::ControlModifier);
  QTRY_VERIFY(window_->candidatePane()->isVisible());
}

void WorkbenchTest::compareScrollsBothSidesTogether() {
  // Two long candidates, the second with ten lines more near the top: scrolling either side
  // brings the other to the line that stands in the same place.
  MainWindow window(MainWindowOptions{dir_.filePath("compare.db"), nullptr});
  window.resize(1200, 800);
  window.show();
  QVERIFY(QTest::qWaitForWindowExposed(&window));
  window.controller()->openExample(rowSoftmaxExample());
  QString body;
  for (int i = 0; i < 300; ++i) body += QStringLiteral("# line %1\n").arg(i);
  QString extra;
  for (int i = 0; i < 10; ++i) extra += QStringLiteral("# added %1\n").arg(i);
  const int a = window.controller()->addCandidateText(body, "paste");
  const int b = window.controller()->addCandidateText(
      body.left(body.indexOf("# line 5\n")) + extra + body.mid(body.indexOf("# line 5\n")),
      "paste");
  window.showCompare();
  ComparePane* compare = window.comparePane();
  compare->compare(a, b);
  QTRY_VERIFY(compare->isVisible());
  compare->left()->setFirstVisibleLine(100);
  QTRY_COMPARE(compare->right()->firstVisibleLine(), 110);
  compare->right()->setFirstVisibleLine(40);
  QTRY_COMPARE(compare->left()->firstVisibleLine(), 30);
}

void WorkbenchTest::exportsVerifiedAndDeliberatelyUnverified() {
  WorkbenchController* controller = window_->controller();
  QSignalSpy exported(controller, &WorkbenchController::exported);
  const QString verified = dir_.filePath("export-verified");
  controller->exportCandidate(entry(0).key, verified, false);
  QTRY_COMPARE(exported.size(), 1);
  QCOMPARE(readJson(verified + "/report.json").value("unverified").toBool(), false);
  QCOMPARE(readText(verified + "/row_softmax_kernel.py"), entry(0).code);
  QVERIFY(readText(verified + "/row_softmax_reference.py").contains("class Model"));
  QVERIFY(readText(verified + "/report.md").contains("VERIFIED"));

  QSignalSpy errors(controller, &WorkbenchController::errorOccurred);
  const QString refused = dir_.filePath("export-refused");
  controller->exportCandidate(entry(1).key, refused, false);
  QTRY_COMPARE(errors.size(), 1);
  QVERIFY(errors.first().first().toString().contains("deliberate"));
  QVERIFY(!QFile::exists(refused + "/report.json"));

  const QString unverified = dir_.filePath("export-unverified");
  controller->exportCandidate(entry(1).key, unverified, true);
  QTRY_COMPARE(exported.size(), 2);
  QCOMPARE(exported.last().at(1).toBool(), true);
  QCOMPARE(readJson(unverified + "/report.json").value("unverified").toBool(), true);
  QVERIFY(readText(unverified + "/row_softmax_kernel.py").startsWith("# UNVERIFIED"));
  QVERIFY(readText(unverified + "/report.md").contains("UNVERIFIED"));
}

void WorkbenchTest::shortcutsReachTheJourneyFromTheEditor() {
  // With the keyboard in the candidate's editor, which has key bindings of its own.
  window_->activateWindow();
  QVERIFY(QTest::qWaitForWindowActive(window_.get()));
  CodeEditor* editor = window_->candidatePane()->editor();
  editor->setFocus();
  QTRY_VERIFY(editor->hasFocus());
  WorkbenchController* controller = window_->controller();
  QCOMPARE(controller->currentKey(), entry(1).key);
  QTest::keyClick(editor, Qt::Key_Up, Qt::ControlModifier);
  QCOMPARE(controller->currentKey(), entry(0).key);
  QTest::keyClick(editor, Qt::Key_Down, Qt::ControlModifier);
  QCOMPARE(controller->currentKey(), entry(1).key);
  ComparePane* compare = window_->comparePane();
  QVERIFY(!compare->isVisible());
  QTest::keyClick(editor, Qt::Key_D, Qt::ControlModifier);
  QVERIFY(compare->isVisible());
  QCOMPARE(window_->comparePane()->right()->text(), entry(1).code);
  QCOMPARE(editor->text(), entry(1).code);  // the editor did not take the key for itself
  QTest::keyClick(window_.get(), Qt::Key_1, Qt::ControlModifier);  // back to the sources
  QVERIFY(editor->isVisible());
  editor->setFocus();
  QDockWidget* sessions = window_->findChild<QDockWidget*>("sessions");
  QTest::keyClick(editor, Qt::Key_S, Qt::ControlModifier | Qt::ShiftModifier);
  QVERIFY(sessions->isVisible());
  QVERIFY(window_->sessionsPane()->taskSearch()->hasFocus());
  // Tab leaves the day pickers (their own Tab stepped through year, month and day, and
  // keyboard users got stuck there).
  SessionsPane* browser = window_->sessionsPane();
  for (QDateEdit* day : {browser->sinceFilter(), browser->untilFilter()}) {
    day->setFocus(Qt::TabFocusReason);
    QVERIFY(day->hasFocus());
    QTest::keyClick(day, Qt::Key_Tab);
    QVERIFY(!day->hasFocus());
  }
  sessions->hide();
}

void WorkbenchTest::reopensTheSessionFromTheDatabase() {
  const qint64 session = window_->controller()->savedSessionId();
  QVERIFY(session > 0);
  reopened_ = std::make_unique<MainWindow>(MainWindowOptions{database_, nullptr});
  SessionsPane* sessions = reopened_->sessionsPane();
  sessions->taskSearch()->setText("row_soft");
  sessions->refresh();
  QTRY_COMPARE(sessions->table()->rowCount(), 1);
  QCOMPARE(sessions->table()->item(0, 0)->text().toLongLong(), session);
  QCOMPARE(sessions->table()->item(0, 5)->text(), QString("verified"));  // its best candidate
  // Enter in the search field opens its single match.
  QSignalSpy reopenedSession(reopened_->controller(), &WorkbenchController::sessionReopened);
  QTest::keyClick(sessions->taskSearch(), Qt::Key_Return);
  QTRY_COMPARE(reopenedSession.size(), 1);
  QCOMPARE(reopenedSession.at(0).at(0).toLongLong(), session);
  WorkbenchController* controller = reopened_->controller();
  QTRY_COMPARE(controller->workbench()->candidates().size(), 2);
  QCOMPARE(controller->workbench()->reference().source,
           window_->controller()->workbench()->reference().source);
  for (int row = 0; row < 2; ++row) {
    const CandidateEntry& saved = controller->workbench()->candidates()[row];
    QCOMPARE(saved.code, entry(row).code);
    QCOMPARE(saved.origin, entry(row).origin);
    QVERIFY(saved.evaluation && *saved.evaluation == *entry(row).evaluation);
  }
  QCOMPARE(controller->workbench()->candidates()[1].parentKey,
           std::optional<int>(controller->workbench()->candidates()[0].key));
  sessions->verdictFilter()->setCurrentIndex(sessions->verdictFilter()->findData("cheating"));
  QTRY_COMPARE(sessions->table()->rowCount(), 0);
  sessions->verdictFilter()->setCurrentIndex(0);
  QTRY_COMPARE(sessions->table()->rowCount(), 1);

  // Days are picked, both ends included, in UTC like the table.
  const QDate today = QDateTime::currentDateTimeUtc().date();
  QCOMPARE(sessions->sinceFilter()->text(), QString("from any date"));
  sessions->sinceFilter()->setDate(today);
  sessions->untilFilter()->setDate(today);
  sessions->refresh();
  QTRY_COMPARE(sessions->table()->rowCount(), 1);
  sessions->untilFilter()->setDate(today.addDays(-1));
  QTRY_COMPARE(sessions->table()->rowCount(), 0);
  sessions->untilFilter()->setDate(sessions->untilFilter()->minimumDate());  // any again
  sessions->sinceFilter()->setDate(today.addDays(1));
  QTRY_COMPARE(sessions->table()->rowCount(), 0);
  sessions->sinceFilter()->setDate(sessions->sinceFilter()->minimumDate());
  QTRY_COMPARE(sessions->table()->rowCount(), 1);
}

void WorkbenchTest::flagLineAndSquiggleShowEachOther() {
  // The linking of flags and squiggles, on a candidate of the reopened window whose evaluation
  // carries a flag with a line (the judge's flags are tested in tests/unit and tests/corpus).
  WorkbenchController* controller = reopened_->controller();
  const int key = controller->addCandidateText(entry(0).code, "paste");
  Evaluation e = *entry(0).evaluation;
  e.verdict = Verdict::Cheating;
  e.flags.push_back(makeFlag("torch_compute_in_forward", "forward calls torch.softmax", 10,
                             {{"aten_ops", {{"aten::_softmax.default", 2}}}, {"mode", "forward"}}));
  controller->workbench()->setEvaluation(key, e, "now");
  CandidatePane* pane = reopened_->candidatePane();
  QVERIFY(pane->editor()->flagLines().contains(10));
  // A cheat's measured speedup is not shown as its speed.
  const int row = controller->workbench()->rowOf(key);
  QCOMPARE(
      reopened_->candidatesPane()->model()->index(row, CandidatesModel::Speedup).data().toString(),
      QString("not credited"));
  QVERIFY(reopened_->verificationPane()->timingText().contains("not credited (cheating; measured"));
  // A mark in the gutter, and hovering the line says in words what was flagged.
  QVERIFY(pane->editor()->hasGutterMark(10));
  QVERIFY(!pane->editor()->hasGutterMark(9));
  const QString note = pane->editor()->flagNote(10);
  QVERIFY2(note.startsWith("Cheating: torch_compute_in_forward (") &&
               note.contains("PyTorch ops (x times): aten::_softmax.default x2"),
           qPrintable(note));
  QTreeWidget* flags = reopened_->verificationPane()->flagsList();
  QTreeWidgetItem* item = flags->topLevelItem(flags->topLevelItemCount() - 1);
  QCOMPARE(item->text(2), QString("10"));
  // The evidence reads as lines of words, not JSON.
  QCOMPARE(item->childCount(), 2);
  QCOMPARE(item->child(0)->text(3), QString("PyTorch ops (x times): aten::_softmax.default x2"));
  QCOMPARE(item->child(1)->text(3), QString("mode: forward"));
  // The severity column is wide enough for "warning", not cut to "warn...".
  const QFontMetrics metrics(flags->font());
  QVERIFY(flags->columnWidth(0) >= metrics.horizontalAdvance("warning"));
  emit flags->itemClicked(item, 0);
  int line = -1, index = -1;
  pane->editor()->getCursorPosition(&line, &index);
  QCOMPARE(line, 9);  // 0-based in QScintilla
  flags->setCurrentItem(nullptr);
  emit pane->editor()->flagLineClicked(10);
  QCOMPARE(flags->currentItem(), item);
}

void WorkbenchTest::settingsShowTheDatabaseInUseAndKeepTheSavedOne() {
  // Started with --db, Settings names that file, not the saved default; accepting the dialog
  // with the database untouched keeps the saved default, and a changed one is taken.
  const QString oneOff = dir_.filePath("one-off.db");
  MainWindow window(MainWindowOptions{oneOff, nullptr});
  const AppSettings saved = window.controller()->settings();
  QVERIFY(saved.databasePath != oneOff);
  const AppSettings shown = shownSettings(saved, window.controller()->store()->databasePath());
  QCOMPARE(shown.databasePath, oneOff);
  QCOMPARE(settingsToSave(shown, shown, saved).databasePath, saved.databasePath);
  AppSettings changed = shown;
  changed.databasePath = dir_.filePath("chosen.db");
  changed.trials = 7;
  const AppSettings kept = settingsToSave(changed, shown, saved);
  QCOMPARE(kept.databasePath, dir_.filePath("chosen.db"));
  QCOMPARE(kept.trials, 7);
}

void WorkbenchTest::aNewDatabaseAppliesWithoutRestart() {
  // Settings' database, changed while the app runs: the store reopens off the UI thread and what
  // the window shows is kept in the new database as a session of its own.
  WorkbenchController* controller = reopened_->controller();
  const auto& shown = controller->workbench()->candidates();
  const QString other = dir_.filePath("other.db");
  QSignalSpy changed(controller, &WorkbenchController::databaseChanged);
  controller->setDatabase(other);
  QTRY_COMPARE(changed.size(), 1);
  QCOMPARE(controller->store()->databasePath(), other);
  QTRY_VERIFY(controller->savedSessionId() > 0);
  SessionsPane* sessions = reopened_->sessionsPane();
  sessions->taskSearch()->clear();
  sessions->refresh();
  // Only what was copied into the new one, once every candidate is in.
  QTRY_VERIFY(sessions->table()->rowCount() == 1 &&
              sessions->table()->item(0, 4)->text().toInt() == static_cast<int>(shown.size()));

  MainWindow fresh(MainWindowOptions{other, nullptr});
  fresh.controller()->reopenSession(controller->savedSessionId());
  const auto& copied = fresh.controller()->workbench()->candidates();
  QTRY_COMPARE(copied.size(), shown.size());
  for (int row = 0; row < copied.size(); ++row) {
    QCOMPARE(copied[row].code, shown[row].code);
    QCOMPARE(copied[row].evaluation, shown[row].evaluation);
    QCOMPARE(copied[row].parentKey.has_value(), shown[row].parentKey.has_value());
  }

  // A database that cannot be opened is an error on the window, not a crash.
  QSignalSpy errors(controller, &WorkbenchController::errorOccurred);
  controller->setDatabase(database_ + "/not-a-folder.db");  // under a file
  QTRY_VERIFY(errors.size() >= 1);
  QVERIFY2(errors.first().first().toString().startsWith("Database: "),
           qPrintable(errors.first().first().toString()));
}

void WorkbenchTest::aCrashingCandidateShowsAnErrorAndTheAppGoesOn() {
  // A candidate that kills its own worker process (os.abort: the sandbox refuses os.kill): the
  // evaluation says so, and the window stays responsive all along (a timer on the UI thread keeps
  // ticking while the worker runs).
  window_->candidatesPane()->view()->selectRow(0);
  QString code = entry(0).code;
  const QString body = "x = x.contiguous()";
  QVERIFY(code.contains(body));
  code.replace(body, "import os; os.abort()  # the worker dies by SIGABRT\n        " + body);
  window_->candidatePane()->editor()->setText(code);
  QElapsedTimer sinceTick;
  qint64 longestGap = 0;
  QTimer ticker;
  connect(&ticker, &QTimer::timeout,
          [&] { longestGap = std::max(longestGap, sinceTick.restart()); });
  sinceTick.start();
  ticker.start(20);
  window_->verifyEditor();
  const int row = static_cast<int>(window_->controller()->workbench()->candidates().size()) - 1;
  QCOMPARE(entry(row).origin, QString("edit"));
  QTRY_VERIFY_WITH_TIMEOUT(entry(row).evaluation.has_value(), kVerifyTimeoutMs);
  ticker.stop();
  const Evaluation& e = *entry(row).evaluation;
  QVERIFY2(e.error.has_value(), qPrintable(verdictText(e)));
  QVERIFY2(e.error->stage == "crash", e.error->stage.c_str());
  QCOMPARE(verdictText(e), QString("error"));
  QVERIFY2(window_->verificationPane()->bannerText().startsWith("ERROR"),
           qPrintable(window_->verificationPane()->bannerText()));
  QVERIFY2(window_->verificationPane()->timingText().contains("crash"),
           qPrintable(window_->verificationPane()->timingText()));
  QVERIFY2(longestGap < 2000, qPrintable(QString("the UI thread stalled %1 ms").arg(longestGap)));
  // And it goes on: nothing runs, Verify is back, the other candidates are still there.
  QVERIFY(!window_->controller()->verifying());
  QVERIFY(window_->runBar()->verifyButton()->isEnabled());
  window_->candidatesPane()->view()->selectRow(0);
  QVERIFY(window_->verificationPane()->bannerText().startsWith("VERIFIED"));
}

void WorkbenchTest::theLayoutSurvivesARestart() {
  // A window changed from the first-run layout (one dock closed, another opened), closed, and
  // opened again: it comes back as it was left.
  int verificationWidth = 0;
  {
    MainWindow first(MainWindowOptions{database_, nullptr});
    // The window fits a 1280x800 screen: no pane's long text sets a minimum beyond it.
    QVERIFY2(first.minimumSizeHint().width() <= 1280,
             qPrintable(QString::number(first.minimumSizeHint().width())));
    first.resize(1240, 760);
    first.show();
    QVERIFY(QTest::qWaitForWindowExposed(&first));
    QCOMPARE(first.size(), QSize(1240, 760));
    first.findChild<QDockWidget*>("generate")->hide();
    first.findChild<QDockWidget*>("sessions")->show();
    QTest::qWait(0);
    verificationWidth = first.findChild<QDockWidget*>("verification")->width();
    first.close();  // saves the layout
  }
  MainWindow second(MainWindowOptions{database_, nullptr});
  second.show();
  QVERIFY(QTest::qWaitForWindowExposed(&second));
  QCOMPARE(second.size(), QSize(1240, 760));
  QVERIFY(!second.findChild<QDockWidget*>("generate")->isVisible());
  QVERIFY(second.findChild<QDockWidget*>("sessions")->isVisible());
  QTRY_COMPARE(second.findChild<QDockWidget*>("verification")->width(), verificationWidth);
  second.findChild<QDockWidget*>("generate")->show();
  second.findChild<QDockWidget*>("sessions")->hide();
  second.close();
}

void WorkbenchTest::generatesWithTheSynthesizer() {
  window_->controller()->openExample(rowSoftmaxExample());
  QCOMPARE(window_->controller()->workbench()->reference().name, QString("row_softmax"));
  // The last run's outcome was about another session: the status forgets it.
  QCOMPARE(window_->runBar()->stageText(), QString("Ready"));
  QVERIFY(!window_->runBar()->progressBar()->isVisible());
  GenerationPane* pane = window_->generationPane();
  QCOMPARE(pane->modelBox()->currentData().toString(), QString("synth"));
  // The synthesizer cannot refine: the mode is there but not selectable.
  const int refine = pane->modeBox()->findText("refine");
  QVERIFY(refine >= 0);
  QVERIFY(!qobject_cast<QStandardItemModel*>(pane->modeBox()->model())->item(refine)->isEnabled());
  QVERIFY(pane->addModelButton()->isEnabled());  // embedded models are added there
  pane->countBox()->setValue(2);
  pane->backendBox()->selectBackend("interpret");
  // A run stopped at once: Generate is back, and whatever it still reports is dropped (the run
  // below would otherwise end with more than its two candidates).
  // Through the keyboard this time: Ctrl+G generates, Shift+F5 stops (generation too).
  window_->activateWindow();
  QVERIFY(QTest::qWaitForWindowActive(window_.get()));
  // The generation dock behind another tab (the sessions browser raised over it): Ctrl+G
  // raises it with the run, which never runs out of sight.
  auto* generateDock = window_->findChild<QDockWidget*>("generate");
  auto* sessionsDock = window_->findChild<QDockWidget*>("sessions");
  sessionsDock->show();
  sessionsDock->raise();
  QTRY_VERIFY(generateDock->visibleRegion().isEmpty());
  QTest::keyClick(window_.get(), Qt::Key_G, Qt::ControlModifier);
  QVERIFY(generator_.running());
  QTRY_VERIFY(!generateDock->visibleRegion().isEmpty());
  QTest::keyClick(window_.get(), Qt::Key_F5, Qt::ShiftModifier);
  QVERIFY(!generator_.running());
  sessionsDock->hide();
  // The generation dock closed: Ctrl+G brings it back with the run.
  generateDock->hide();
  QTest::keyClick(window_.get(), Qt::Key_G, Qt::ControlModifier);
  QVERIFY(generator_.running());
  QTRY_VERIFY(generateDock->isVisible());
  // Ctrl+Q during the run asks first; Cancel keeps the window and the run.
  QString asked;
  QTimer::singleShot(0, this, [&asked] {
    auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
    if (box == nullptr) return;
    asked = box->text();
    box->button(QMessageBox::Cancel)->click();
  });
  QTest::keyClick(window_.get(), Qt::Key_Q, Qt::ControlModifier);
  QVERIFY2(asked.contains("generation is running"), qPrintable(asked));
  QVERIFY(window_->isVisible());
  QVERIFY(generator_.running());
  window_->activateWindow();  // back from the question
  QVERIFY(QTest::qWaitForWindowActive(window_.get()));
  QTest::keyClick(window_.get(), Qt::Key_F5, Qt::ShiftModifier);
  QVERIFY(!generator_.running());
  QVERIFY(pane->generateButton()->isEnabled());
  QVERIFY(pane->statusText().startsWith("Stopped"));

  QSignalSpy verified(&generator_, &GenerationController::candidateVerified);
  QTest::mouseClick(pane->generateButton(), Qt::LeftButton);
  QVERIFY(pane->stopButton()->isEnabled());
  QCOMPARE(window_->controller()->workbench()->candidates().size(), 0);  // a new session
  // A generation run is counted in candidates verified, not in one verification's stages.
  RunBar* bar = window_->runBar();
  QVERIFY2(bar->stageText().startsWith("Generating with synth"), qPrintable(bar->stageText()));
  QVERIFY(bar->progressBar()->format().contains("verified"));
  QTRY_VERIFY_WITH_TIMEOUT(pane->generateButton()->isEnabled(), kVerifyTimeoutMs);
  QVERIFY2(pane->statusText().startsWith("Done"), qPrintable(pane->statusText()));
  QVERIFY2(bar->stageText().startsWith("Done") && bar->stageText().contains("(after "),
           qPrintable(bar->stageText()));
  QCOMPARE(bar->progressBar()->maximum(), 2);
  QCOMPARE(bar->progressBar()->value(), 2);
  // Selecting one of the run's candidates keeps the run's outcome in view.
  window_->controller()->select(entry(1).key);
  window_->controller()->select(entry(0).key);
  QVERIFY2(bar->stageText().startsWith("Done"), qPrintable(bar->stageText()));
  QCOMPARE(verified.size(), 2);  // each verified once, by the pipeline
  QCOMPARE(window_->controller()->workbench()->candidates().size(), 2);
  for (int row = 0; row < 2; ++row) {
    QCOMPARE(entry(row).origin, QString("synth"));
    QVERIFY(entry(row).evaluation.has_value());
    QCOMPARE(entry(row).evaluation->backend, std::string("interpret"));
    QVERIFY(!entry(row).plan.isEmpty());
  }
  QVERIFY(!pane->liveText().isEmpty());          // the synthesizer's progress streamed
  QVERIFY(!window_->controller()->verifying());  // the verification queue was not used
  QTRY_VERIFY(window_->controller()->savedSessionId() ==
              *window_->controller()->workbench()->sessionCell());
}

void WorkbenchTest::comparesAndExportsGeneratedCandidates() {
  QTableView* view = window_->candidatesPane()->view();
  view->selectRow(0);
  QCOMPARE(window_->candidatePane()->editorText(), entry(0).code);
  view->selectRow(1);
  QCOMPARE(window_->candidatePane()->editorText(), entry(1).code);
  window_->showCompare();
  ComparePane* compare = window_->comparePane();
  QCOMPARE(compare->left()->text(), entry(0).code);
  QCOMPARE(compare->right()->text(), entry(1).code);
  QVERIFY(!compare->changedRight().isEmpty());  // two tilings differ somewhere

  // The best: the fastest verified one.
  int best = -1;
  for (int row = 0; row < 2; ++row) {
    const auto& e = entry(row).evaluation;
    if (e->verdict == Verdict::Verified &&
        (best < 0 || e->speedup.value_or(0) > entry(best).evaluation->speedup.value_or(0))) {
      best = row;
    }
  }
  QVERIFY2(best >= 0, "the synthesizer's candidates for row_softmax verify");
  QSignalSpy exported(window_->controller(), &WorkbenchController::exported);
  const QString bundle = dir_.filePath("export-generated");
  window_->controller()->exportCandidate(entry(best).key, bundle, false);
  QTRY_COMPARE(exported.size(), 1);
  QCOMPARE(readJson(bundle + "/report.json").value("unverified").toBool(), false);
  QCOMPARE(readText(bundle + "/row_softmax_kernel.py"), entry(best).code);
}

void WorkbenchTest::reopensTheGenerateSession() {
  const qint64 session = window_->controller()->savedSessionId();
  MainWindow again(MainWindowOptions{database_, nullptr});
  SessionsPane* sessions = again.sessionsPane();
  sessions->refresh();
  QTRY_VERIFY(sessions->table()->rowCount() > 0);
  QCOMPARE(sessions->table()->item(0, 0)->text().toLongLong(), session);  // newest first
  sessions->table()->selectRow(0);
  sessions->openSelected();
  const auto& candidates = again.controller()->workbench()->candidates();
  QTRY_COMPARE(candidates.size(), 2);
  QCOMPARE(again.controller()->workbench()->sessionKind(), QString("generate"));
  for (int row = 0; row < 2; ++row) {
    QCOMPARE(candidates[row].code, entry(row).code);
    QCOMPARE(candidates[row].origin, entry(row).origin);
    QCOMPARE(candidates[row].model, entry(row).model);
    QCOMPARE(candidates[row].plan, entry(row).plan);
    QVERIFY(candidates[row].evaluation && *candidates[row].evaluation == *entry(row).evaluation);
  }
}

void WorkbenchTest::showsWhatRunsAndWhereTheTimeGoes() {
  // On opencl: the OpenCL C the compiler makes of the selected candidate's kernel, linked to
  // its Python lines; then its launches timed and counted, on the roofline.
  window_->runBar()->selectBackend("opencl");
  if (window_->runBar()->backend().backend != "opencl") QSKIP("no OpenCL device on this machine");
  window_->activateWindow();
  QVERIFY(QTest::qWaitForWindowActive(window_.get()));
  QTest::keyClick(window_.get(), Qt::Key_F6);
  IrPane* ir = window_->irPane();
  QTRY_VERIFY_WITH_TIMEOUT(ir->report().has_value(), kVerifyTimeoutMs);
  QVERIFY(ir->isVisible());
  const auto& report = *ir->report();
  QVERIFY2(!report.error, report.error ? report.error->message.c_str() : "");
  QVERIFY(!report.kernels.empty());
  QCOMPARE(ir->levelTabs()->tabText(ir->levelTabs()->currentIndex()), QString("OpenCL C"));
  QVERIFY(ir->irEditor()->text().contains("__kernel"));
  // An IR line with a Python line: the margin names it, and the cursor on that Python line
  // highlights the IR lines that came from it.
  const inspect::IrLevel& level = report.kernels.front().levels.front();
  int irLine = -1;
  for (std::size_t i = 0; i < level.lineMap.size() && irLine < 0; ++i) {
    if (level.lineMap[i]) irLine = static_cast<int>(i);
  }
  QVERIFY(irLine >= 0);
  const int python = *level.lineMap[irLine];
  QVERIFY(python > 0 && python <= ir->pythonEditor()->lines());
  QCOMPARE(ir->marginLabel(irLine), QString("py %1").arg(python));
  QVERIFY(ir->irLinesOf(python).contains(irLine));
  ir->pythonEditor()->setCursorPosition(python == 1 ? 1 : 0, 0);  // from another line
  ir->pythonEditor()->setCursorPosition(python - 1, 0);
  QTRY_VERIFY(ir->irEditor()->markersAtLine(irLine) != 0);  // highlighted

  QTest::keyClick(window_.get(), Qt::Key_F7);
  ProfilePane* profile = window_->profilePane();
  QTRY_VERIFY_WITH_TIMEOUT(profile->shown().has_value(), kVerifyTimeoutMs);
  const KernelProfile& p = *profile->shown();
  QVERIFY2(!p.error, p.error ? p.error->message.c_str() : "");
  QVERIFY(!p.launches.empty());
  QCOMPARE(profile->table()->rowCount(), static_cast<int>(p.launches.size()));
  QVERIFY(p.launches.front().time.has_value());
  QVERIFY(p.launches.front().counted && p.launches.front().flops.value_or(0) > 0);
  QVERIFY(profile->plottedLaunches() >= 1);
  // A launch's row leads to its line in the candidate.
  QSignalSpy activated(profile, &ProfilePane::lineActivated);
  emit profile->table()->cellDoubleClicked(0, 0);
  QCOMPARE(activated.size(), 1);
  QTRY_VERIFY(window_->candidatePane()->isVisible());
  window_->runBar()->selectBackend("interpret");
}

void WorkbenchTest::aReferenceFailingAtRunTimeSaysWhyInOneLine() {
  // Generating for a reference whose forward fails on its inputs: the reason in one line with
  // the reference's line, not a tracer's dump with escaped newlines.
  const QString path = dir_.filePath("fails_in_forward.py");
  QFile file(path);
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write(
      "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
      "    def forward(self, x):\n        return x @ torch.ones(3, 3)\n\n\n"
      "def get_inputs():\n    return [torch.randn(4, 16)]\n\n\n"
      "def get_init_inputs():\n    return []\n");
  file.close();
  window_->openFile(path);
  GenerationPane* pane = window_->generationPane();
  QVERIFY2(pane->statusText().isEmpty(), qPrintable(pane->statusText()));  // the last run's
  pane->backendBox()->selectBackend("interpret");
  QTest::mouseClick(pane->generateButton(), Qt::LeftButton);
  QTRY_VERIFY_WITH_TIMEOUT(pane->generateButton()->isEnabled(), kVerifyTimeoutMs);
  const QString status = pane->statusText();
  QVERIFY2(status.startsWith("Generation failed: ") &&
               status.contains("fails_in_forward.py:7: the reference fails on its inputs: "
                               "RuntimeError: ") &&
               !status.contains("\\n") && !status.contains('\n') && !status.contains("node="),
           qPrintable(status));
  QVERIFY2(window_->runBar()->stageText().startsWith("Generation failed: "),
           qPrintable(window_->runBar()->stageText()));
}

void WorkbenchTest::cleanupTestCase() {
  reopened_.reset();
  window_.reset();
}

QTEST_MAIN(WorkbenchTest)
#include "test_workbench.moc"
