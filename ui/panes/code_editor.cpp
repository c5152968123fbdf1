#include "ui/panes/code_editor.h"

#include <Qsci/qscilexerpython.h>

#include <QAction>
#include <QFontDatabase>
#include <QKeyEvent>

namespace crucible::ui {

CodeEditor::CodeEditor(QWidget* parent) : QsciScintilla(parent) {
  const QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  auto* lexer = new QsciLexerPython(this);
  lexer->setDefaultFont(mono);
  lexer->setFont(mono);
  setLexer(lexer);
  setUtf8(true);
  setMarginType(0, QsciScintilla::NumberMargin);
  setMarginWidth(0, QStringLiteral("00000"));
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
  markerDefine(QsciScintilla::Background, changedMarker_);
  setMarkerBackgroundColor(QColor(0xff, 0xf1, 0xc2), changedMarker_);

  connect(this, &QsciScintilla::indicatorClicked, this,
          [this](int line, int, Qt::KeyboardModifiers) {
            if (flagLines_.contains(line + 1)) emit flagLineClicked(line + 1);
          });
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
  auto mark = [&](const QVector<int>& list, int indicator) {
    for (int line : list) {
      const int l = line - 1;
      if (l < 0 || l > last) continue;
      const QString textOfLine = text(l);
      int start = 0;  // under the code, not its indentation
      while (start < textOfLine.size() && textOfLine[start].isSpace()) ++start;
      fillIndicatorRange(l, start, l, qMax(start + 1, lineLength(l) - 1), indicator);
      flagLines_ << line;
    }
  };
  mark(cheatLines, cheatIndicator_);
  mark(warningLines, warningIndicator_);
}

void CodeEditor::setChangedLines(const QVector<int>& changed) {
  markerDeleteAll(changedMarker_);
  for (int line : changed) markerAdd(line, changedMarker_);
}

void CodeEditor::showLine(int line) {
  if (line < 1) return;
  setCursorPosition(line - 1, 0);
  ensureLineVisible(line - 1);
  setSelection(line - 1, 0, line - 1, qMax(0, lineLength(line - 1) - 1));
}

}  // namespace crucible::ui
