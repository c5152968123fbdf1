#pragma once
// A Python editor (QScintilla): line numbers, the Python lexer, flags as squiggles under their
// lines, and whole-line highlights for a diff. Clicking a squiggle reports its line.

#include <Qsci/qsciscintilla.h>

#include <QVector>

namespace crucible::ui {

class CodeEditor : public QsciScintilla {
  Q_OBJECT
 public:
  explicit CodeEditor(QWidget* parent = nullptr);

  /// Squiggles under these 1-based lines (cheat flags red, warnings amber); replaces the old.
  void setFlagLines(const QVector<int>& cheatLines, const QVector<int>& warningLines);
  /// Lines (1-based) with a squiggle now.
  QVector<int> flagLines() const { return flagLines_; }
  /// Whole-line background on these 0-based lines; replaces the old.
  void setChangedLines(const QVector<int>& lines);
  /// Moves the cursor to a 1-based line and shows it.
  void showLine(int line);

 signals:
  void flagLineClicked(int line);  // 1-based

 protected:
  /// The window's shortcuts win over the editor's own key bindings (Scintilla takes Ctrl+D,
  /// Ctrl+Up/Down and others), so the journey's keys work with the cursor in the code.
  bool event(QEvent* event) override;

 private:
  QVector<int> flagLines_;
  int cheatIndicator_ = 8, warningIndicator_ = 9, changedMarker_ = 1;
};

}  // namespace crucible::ui
