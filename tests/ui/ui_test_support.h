#pragma once
// What the workbench's UI tests share: settings of the run only (never the user's) set for quick
// verification, and reading back the files a test made.

#include <QCoreApplication>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSettings>
#include <QTemporaryDir>

#include "ui/settings/resources_dir.h"
#include "ui/settings/settings.h"

namespace crucible::ui::testing {

inline constexpr int kVerifyTimeoutMs = 180000;

/// Points QSettings into `dir` and saves the first-run defaults, changed for a quick test: the
/// interpret backend, one trial, no torch.compile baseline; plus `endpoints`.
inline void useScratchSettings(const QTemporaryDir& dir, const QString& application,
                               const QStringList& endpoints = {}) {
  QSettings::setDefaultFormat(QSettings::IniFormat);
  QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, dir.filePath("config"));
  QCoreApplication::setOrganizationName("CrucibleTest");
  QCoreApplication::setApplicationName(application);
  AppSettings settings;
  settings.defaultBackend = "interpret";
  settings.trials = 1;
  settings.compileBaseline = false;
  settings.endpoints = endpoints;
  settings.save();
}

inline BundledExample rowSoftmaxExample() {
  for (const auto& example : bundledExamples()) {
    if (example.title == "row_softmax") return example;
  }
  return {};
}

inline QString readText(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

inline QJsonObject readJson(const QString& path) {
  return QJsonDocument::fromJson(readText(path).toUtf8()).object();
}

}  // namespace crucible::ui::testing
