#pragma once
// Where the bundled examples and tasks are: CRUCIBLE_RESOURCES_DIR, else the source tree next to
// a build tree (bin/../../resources), else an installed tree (bin/../share/crucible/resources).

#include <QString>
#include <QVector>

namespace crucible::ui {

QString resourcesDir();  // "" when none is found

/// A bundled reference to open from the Examples menu.
struct BundledExample {
  QString title;          // "row_softmax", "level 1 / 23_Softmax"
  QString referencePath;  // absolute
  QString candidatePath;  // absolute, or "" when the example has no candidate
  int level = 0;          // 0 for resources/examples, else the task level
};

/// resources/examples/*/reference.py (with candidate.py when present), then resources/tasks
/// from its index.json.
QVector<BundledExample> bundledExamples();

}  // namespace crucible::ui
