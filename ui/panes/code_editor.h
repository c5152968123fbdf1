#pragma once
// A Python editor (QScintilla): line numbers, the Python lexer, flags as squiggles under their
// lines with a mark in the gutter and, on hover, what the flag means, and whole-line highlights
// for a diff. Clicking a squiggle or a gutter mark reports its line.

#include <Qsci/qsciscintilla.h>

#include <QMap>
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
  /// What hovering a flagged 1-based line shows (plain words); replaces the old notes.
  void setFlagNotes(const QMap<int, QString>& notes) { notes_ = notes; }
  QString flagNote(int line) const { return notes_.value(line); }
  /// Whether the gutter marks this 1-based line as flagged (cheat or warning).
  bool hasGutterMark(int line) const;
  /// Whole-line background on these 0-based lines; replaces the old.
  void setChangedLines(const QVector<int>& lines);
  /// A stronger box over these spans (0-based line, byte offset, length): the words that
  /// changed within changed lines; replaces the old.
  struct Span {
    int line = 0, offset = 0, length = 0;
  };
  void setChangedWords(const QVector<Span>& spans);
  QVector<Span> changedWords() const { return changedWords_; }
  /// How many characters of a line the editor shows at its width.
  int visibleColumns() const;
  /// Moves the cursor to a 1-based line and shows it.
  void showLine(int line);

 signals:
  void flagLineClicked(int line);  // 1-based

 protected:
  /// The window's shortcuts win over the editor's own key bindings (Scintilla takes Ctrl+D,
  /// Ctrl+Up/Down and others), so the journey's keys work with the cursor in the code.
  bool event(QEvent* event) override;

 private:
  void showNoteAt(int x, int y);

  QVector<int> flagLines_;
  QMap<int, QString> notes_;
  QVector<Span> changedWords_;
  int changedWordIndicator_ = 10;
  int cheatIndicator_ = 8, warningIndicator_ = 9, changedMarker_ = 1;
  int cheatMarker_ = 2, warningMarker_ = 3;
};

}  // namespace crucible::ui
