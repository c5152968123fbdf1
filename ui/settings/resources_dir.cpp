#include "ui/settings/resources_dir.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include "core/util/locations.h"

namespace crucible::ui {

QString resourcesDir() {
  const QString fromEnv = qEnvironmentVariable("CRUCIBLE_RESOURCES_DIR");
  if (!fromEnv.isEmpty() && QFileInfo(fromEnv).isDir()) return QDir(fromEnv).absolutePath();
  const QDir bin(QString::fromStdString(executableDir()));
  for (const QString& relative :
       {QStringLiteral("../../resources"), QStringLiteral("../share/crucible/resources")}) {
    const QString dir = bin.absoluteFilePath(relative);
    if (QFileInfo(dir + "/examples").isDir()) return QDir(dir).canonicalPath();
  }
  return {};
}

QVector<BundledExample> bundledExamples() {
  QVector<BundledExample> examples;
  const QString root = resourcesDir();
  if (root.isEmpty()) return examples;
  const QDir examplesDir(root + "/examples");
  for (const QString& name : examplesDir.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
    const QString reference = examplesDir.absoluteFilePath(name + "/reference.py");
    if (!QFileInfo::exists(reference)) continue;
    const QString candidate = examplesDir.absoluteFilePath(name + "/candidate.py");
    examples.push_back({name, reference, QFileInfo::exists(candidate) ? candidate : QString(), 0});
  }
  QFile index(root + "/tasks/index.json");
  if (index.open(QIODevice::ReadOnly)) {
    for (const auto& value : QJsonDocument::fromJson(index.readAll()).array()) {
      const QJsonObject task = value.toObject();
      const QString file = task.value("file").toString();
      if (file.isEmpty()) continue;
      examples.push_back({QFileInfo(file).completeBaseName(), root + "/tasks/" + file, QString(),
                          task.value("level").toInt()});
    }
  }
  return examples;
}

}  // namespace crucible::ui
