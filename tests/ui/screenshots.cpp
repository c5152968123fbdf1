// crucible_screenshots OUT_DIR: renders the workbench's main states into small PNGs
// (scripts/screenshots.sh runs it under Xvfb). The states are real: the bundled example is
// verified on the interpret backend, then an edit of it that is wrong, then candidates generated
// by the built-in synthesizer.
#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QSettings>
#include <QTemporaryDir>

#include "ui/app/resources_dir.h"
#include "ui/generate/pipeline_generation_controller.h"
#include "ui/main_window.h"
#include "ui/panes/candidate_pane.h"
#include "ui/panes/candidates_pane.h"
#include "ui/panes/generation_pane.h"
#include "ui/panes/run_bar.h"
#include "ui/panes/sessions_pane.h"

using namespace crucible::ui;

namespace {
// Processes events until `done` holds or `ms` pass; false on timeout.
template <typename Done>
bool waitFor(Done done, int ms) {
  QElapsedTimer timer;
  timer.start();
  while (!done()) {
    if (timer.elapsed() > ms) return false;
    QApplication::processEvents(QEventLoop::AllEvents, 50);
  }
  return true;
}

void settle() {
  waitFor([] { return false; }, 400);  // let charts and layouts finish painting
}

bool save(QWidget* window, const QString& dir, const QString& name) {
  settle();
  // Small files: a palette of 256 colours is plenty for a UI.
  const QImage image = window->grab()
                           .toImage()
                           .scaledToWidth(1000, Qt::SmoothTransformation)
                           .convertToFormat(QImage::Format_Indexed8, Qt::ThresholdDither);
  const bool ok = image.save(dir + "/" + name + ".png", "PNG", 80);
  qInfo("%s %s", ok ? "wrote" : "FAILED", qPrintable(dir + "/" + name + ".png"));
  return ok;
}
}  // namespace

int main(int argc, char* argv[]) {
  QApplication app(argc, argv);
  if (argc < 2) {
    qCritical("usage: crucible_screenshots OUT_DIR");
    return 2;
  }
  const QString out = QDir(argv[1]).absolutePath();
  QDir().mkpath(out);
  QTemporaryDir scratch;
  QSettings::setDefaultFormat(QSettings::IniFormat);
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, scratch.filePath("config"));
  QApplication::setOrganizationName("CrucibleScreenshots");
  AppSettings settings;
  settings.defaultBackend = "interpret";
  settings.trials = 1;
  settings.compileBaseline = false;
  settings.save();

  PipelineGenerationController generator;
  MainWindow window({scratch.filePath("crucible.db"), &generator});
  window.resize(1500, 950);
  window.show();
  BundledExample softmax;
  for (const auto& e : bundledExamples()) {
    if (e.title == "row_softmax") softmax = e;
  }
  if (softmax.candidatePath.isEmpty()) {
    qCritical("resources/examples/row_softmax not found (set CRUCIBLE_RESOURCES_DIR)");
    return 1;
  }
  WorkbenchController* controller = window.controller();
  const auto& candidates = controller->workbench()->candidates();
  controller->openExample(softmax);
  window.verifyEditor();
  if (!waitFor([&] { return candidates[0].evaluation.has_value(); }, 300000)) return 1;
  bool ok = save(&window, out, "verified");

  QString code = window.candidatePane()->editorText();
  code.replace("e / tl.sum(e, axis=0)", "e / tl.sum(e, axis=0) * 1.5");
  window.candidatePane()->editor()->setText(code);
  window.verifyEditor();
  if (!waitFor([&] { return candidates.size() == 2 && candidates[1].evaluation.has_value(); },
               300000)) {
    return 1;
  }
  ok &= save(&window, out, "incorrect");

  window.showCompare();
  ok &= save(&window, out, "compare");

  window.showSessions();
  waitFor([&] { return window.sessionsPane()->table()->rowCount() > 0; }, 10000);
  ok &= save(&window, out, "sessions");

  // Generate: two candidates from the synthesizer, each verified as it arrives.
  window.findChild<QDockWidget*>("compare")->hide();
  window.findChild<QDockWidget*>("candidates")->raise();
  window.findChild<QDockWidget*>("generate")->raise();
  GenerationPane* generation = window.generationPane();
  generation->countBox()->setValue(2);
  generation->backendBox()->selectBackend("interpret");
  generation->generate();
  if (!waitFor([&] { return generation->generateButton()->isEnabled(); }, 300000)) return 1;
  window.candidatesPane()->view()->selectRow(0);
  ok &= save(&window, out, "generated");
  return ok ? 0 : 1;
}
