#include "ui/panes/code_editor.h"

#include <Qsci/qscilexerpython.h>

#include <QAction>
#include <QFontDatabase>
#include <QKeyEvent>
#include <QToolTip>

namespace crucible::ui {

CodeEditor::CodeEditor(QWidget* parent) : QsciScintilla(parent) {
  const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  auto* lexer = new QsciLexerPython(this);
  lexer->setDefaultFont(mono);
  lexer->setFont(mono);
  setLexer(lexer);
  setUtf8(true);
  setMarginType(0, QsciScintilla::NumberMargin);
  setMarginWidth(0, QStringLiteral("0000"));
  setMarginsFont(mono);
  setIndentationsUseTabs(false);
  setIndentationWidth(4);
  setAutoIndent(true);
  setTabWidth(4);
  setCaretLineVisible(true);
  setCaretLineBackgroundColor(QColor(0xf3, 0xf6, 0xfa));
  setBraceMatching(QsciScintilla::SloppyBraceMatch);

  indicatorDefine(QsciScintilla::SquiggleIndicator, cheatIndicator_);
  setIndicatorForegroundColor(QColor(0xd0, 0x21, 0x21), cheatIndicator_);
  indicatorDefine(QsciScintilla::SquiggleIndicator, warningIndicator_);
  setIndicatorForegroundColor(QColor(0xd9, 0x8a, 0x00), warningIndicator_);
  indicatorDefine(QsciScintilla::FullBoxIndicator, changedWordIndicator_);
  setIndicatorForegroundColor(QColor(0xf0, 0xa0, 0x30, 110), changedWordIndicator_);
  markerDefine(QsciScintilla::Background, changedMarker_);
  setMarkerBackgroundColor(QColor(0xff, 0xf1, 0xc2), changedMarker_);
  // The gutter beside the line numbers: a dot on every flagged line, visible while scrolling.
  setMarginType(1, QsciScintilla::SymbolMargin);
  setMarginWidth(1, 14);
  setMarginMarkerMask(1, (1 << cheatMarker_) | (1 << warningMarker_));
  setMarginSensitivity(1, true);
  markerDefine(QsciScintilla::Circle, cheatMarker_);
  setMarkerBackgroundColor(QColor(0xd0, 0x21, 0x21), cheatMarker_);
  setMarkerForegroundColor(QColor(0xd0, 0x21, 0x21), cheatMarker_);
  markerDefine(QsciScintilla::Circle, warningMarker_);
  setMarkerBackgroundColor(QColor(0xd9, 0x8a, 0x00), warningMarker_);
  setMarkerForegroundColor(QColor(0xd9, 0x8a, 0x00), warningMarker_);

  const auto clicked = [this](int line) {
    if (flagLines_.contains(line + 1)) emit flagLineClicked(line + 1);
  };
  connect(this, &QsciScintilla::indicatorClicked, this,
          [clicked](int line, int, Qt::KeyboardModifiers) { clicked(line); });
  connect(this, &QsciScintilla::marginClicked, this,
          [clicked](int margin, int line, Qt::KeyboardModifiers) {
            if (margin == 1) clicked(line);
          });
  // Hovering a flagged line (its code or its gutter mark) says what the flag means.
  SendScintilla(SCI_SETMOUSEDWELLTIME, 400);
  connect(this, &QsciScintillaBase::SCN_DWELLSTART, this,
          [this](int, int x, int y) { showNoteAt(x, y); });
  connect(this, &QsciScintillaBase::SCN_DWELLEND, this, [] { QToolTip::hideText(); });
}

bool CodeEditor::event(QEvent* event) {
  if (event->type() == QEvent::ShortcutOverride) {
    const QKeySequence pressed(static_cast<QKeyEvent*>(event)->keyCombination());
    for (const QAction* action : window()->findChildren<QAction*>()) {
      if (action->isEnabled() && action->shortcuts().contains(pressed)) {
        event->ignore();  // not the editor's: the shortcut runs
        return true;
      }
    }
  }
  return QsciScintilla::event(event);
}

void CodeEditor::setFlagLines(const QVector<int>& cheatLines, const QVector<int>& warningLines) {
  const int last = lines() - 1;
  clearIndicatorRange(0, 0, last, lineLength(last), cheatIndicator_);
  clearIndicatorRange(0, 0, last, lineLength(last), warningIndicator_);
  flagLines_.clear();
  markerDeleteAll(cheatMarker_);
  markerDeleteAll(warningMarker_);
  auto mark = [&](const QVector<int>& list, int indicator) {
    for (int line : list) {
      const int l = line - 1;
      if (l < 0 || l > last) continue;
      const QString textOfLine = text(l);
      int start = 0;  // under the code, not its indentation
      while (start < textOfLine.size() && textOfLine[start].isSpace()) ++start;
      fillIndicatorRange(l, start, l, qMax(start + 1, lineLength(l) - 1), indicator);
      markerAdd(l, indicator == cheatIndicator_ ? cheatMarker_ : warningMarker_);
      flagLines_ << line;
    }
  };
  mark(cheatLines, cheatIndicator_);
  mark(warningLines, warningIndicator_);
}

bool CodeEditor::hasGutterMark(int line) const {
  const unsigned mask = markersAtLine(line - 1);
  return (mask & ((1U << cheatMarker_) | (1U << warningMarker_))) != 0;
}

void CodeEditor::showNoteAt(int x, int y) {
  // The nearest position, not the exact one: the gutter holds no text position of its own.
  const long position = SendScintilla(SCI_POSITIONFROMPOINT, x, y);
  const int line = static_cast<int>(SendScintilla(SCI_LINEFROMPOSITION, position)) + 1;
  const QString note = notes_.value(line);
  if (!note.isEmpty()) QToolTip::showText(viewport()->mapToGlobal(QPoint(x, y)), note, this);
}

void CodeEditor::setChangedLines(const QVector<int>& changed) {
  markerDeleteAll(changedMarker_);
  for (int line : changed) markerAdd(line, changedMarker_);
}

void CodeEditor::setChangedWords(const QVector<Span>& spans) {
  const int last = lines() - 1;
  if (last >= 0) clearIndicatorRange(0, 0, last, lineLength(last), changedWordIndicator_);
  changedWords_ = spans;
  for (const Span& s : spans) {
    if (s.line < 0 || s.line > last) continue;
    fillIndicatorRange(s.line, s.offset, s.line, s.offset + s.length, changedWordIndicator_);
  }
}

int CodeEditor::visibleColumns() const {
  int used = 0;  // the margins are drawn inside the viewport
  for (int m = 0; m < margins(); ++m) used += marginWidth(m);
  const int charWidth = static_cast<int>(
      const_cast<CodeEditor*>(this)->SendScintilla(SCI_TEXTWIDTH, STYLE_DEFAULT, "0"));
  return charWidth > 0 ? (viewport()->width() - used) / charWidth : 0;
}

void CodeEditor::showLine(int line) {
  if (line < 1) return;
  setCursorPosition(line - 1, 0);
  ensureLineVisible(line - 1);
  setSelection(line - 1, 0, line - 1, qMax(0, lineLength(line - 1) - 1));
}

}  // namespace crucible::ui
