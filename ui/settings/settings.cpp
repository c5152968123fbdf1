#include "ui/settings/settings.h"

#include <QSettings>

namespace crucible::ui {

AppSettings AppSettings::load() {
  QSettings s;
  AppSettings a;
  a.pythonPath = s.value("python/path", a.pythonPath).toString();
  a.defaultBackend = s.value("verify/backend", a.defaultBackend).toString();
  a.rewardPreset = s.value("verify/reward", a.rewardPreset).toString();
  a.fp32Atol = s.value("verify/fp32_atol", a.fp32Atol).toDouble();
  a.fp32Rtol = s.value("verify/fp32_rtol", a.fp32Rtol).toDouble();
  a.fp16Atol = s.value("verify/fp16_atol", a.fp16Atol).toDouble();
  a.fp16Rtol = s.value("verify/fp16_rtol", a.fp16Rtol).toDouble();
  a.candidateTimeoutSeconds = s.value("verify/timeout_s", a.candidateTimeoutSeconds).toDouble();
  a.trials = s.value("verify/trials", a.trials).toInt();
  a.compileBaseline = s.value("verify/compile_baseline", a.compileBaseline).toBool();
  a.endpoints = s.value("generate/endpoints", a.endpoints).toStringList();
  a.databasePath = s.value("store/database", a.databasePath).toString();
  return a;
}

void AppSettings::save() const {
  QSettings s;
  s.setValue("python/path", pythonPath);
  s.setValue("verify/backend", defaultBackend);
  s.setValue("verify/reward", rewardPreset);
  s.setValue("verify/fp32_atol", fp32Atol);
  s.setValue("verify/fp32_rtol", fp32Rtol);
  s.setValue("verify/fp16_atol", fp16Atol);
  s.setValue("verify/fp16_rtol", fp16Rtol);
  s.setValue("verify/timeout_s", candidateTimeoutSeconds);
  s.setValue("verify/trials", trials);
  s.setValue("verify/compile_baseline", compileBaseline);
  s.setValue("generate/endpoints", endpoints);
  s.setValue("store/database", databasePath);
}

VerifyRequest AppSettings::verifyRequest() const {
  VerifyRequest r;
  r.backend = defaultBackend.toStdString();
  r.rewardPreset = rewardPreset.toStdString();
  r.tolerances.fp32 = {fp32Atol, fp32Rtol};
  r.tolerances.fp16 = {fp16Atol, fp16Rtol};
  r.timeoutSeconds = candidateTimeoutSeconds;
  r.trials = trials;
  r.compileBaseline = compileBaseline;
  return r;
}

namespace {
void addRecent(const QString& key, const QString& path) {
  QStringList paths = QSettings().value(key).toStringList();
  paths.removeAll(path);
  paths.prepend(path);
  while (paths.size() > kMaxRecent) paths.removeLast();
  QSettings().setValue(key, paths);
}
}  // namespace

QStringList recentFiles() {
  return QSettings().value("files/recent").toStringList();
}

void addRecentFile(const QString& path) {
  addRecent("files/recent", path);
}

QStringList recentModels() {
  return QSettings().value("generate/recent_models").toStringList();
}

void addRecentModel(const QString& path) {
  addRecent("generate/recent_models", path);
}

AppSettings shownSettings(AppSettings saved, const QString& databaseInUse) {
  saved.databasePath = databaseInUse;
  return saved;
}

AppSettings settingsToSave(AppSettings accepted, const AppSettings& shown,
                           const AppSettings& saved) {
  if (accepted.databasePath == shown.databasePath) accepted.databasePath = saved.databasePath;
  return accepted;
}

}  // namespace crucible::ui
