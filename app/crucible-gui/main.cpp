// crucible-gui [FILE]: the desktop workbench. FILE is a reference, or a candidate beside the
// reference.py of its folder.
#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>

#include "ui/main_window.h"
#include "ui/workbench/pipeline_generation_controller.h"

int main(int argc, char* argv[]) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName("Crucible");
  QApplication::setApplicationName("crucible-gui");
  QApplication::setApplicationVersion(CRUCIBLE_VERSION);
  // The installed desktop entry (crucible.desktop) and its icon in the hicolor theme; a build
  // tree has neither, and the window keeps the platform's default icon.
  QApplication::setDesktopFileName("crucible");
  QApplication::setWindowIcon(QIcon::fromTheme("crucible"));

  QCommandLineParser parser;
  parser.setApplicationDescription("Crucible: verify Triton kernels against PyTorch references");
  parser.addHelpOption();
  parser.addVersionOption();
  QCommandLineOption database("db", "Database file (default: the user's data folder).", "FILE");
  parser.addOption(database);
  parser.addPositionalArgument("FILE", "A reference, or a candidate beside its reference.py.");
  parser.process(app);

  crucible::ui::PipelineGenerationController generator;
  crucible::ui::MainWindow window({parser.value(database), &generator});
  window.show();
  if (!parser.positionalArguments().isEmpty())
    window.openFile(parser.positionalArguments().first());
  return QApplication::exec();
}
