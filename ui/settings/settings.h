#pragma once
// What the user chose in Settings, kept with QSettings. A first run has no stored values and
// gets the defaults below, which work on any machine the setup script prepared.

#include <QString>
#include <QStringList>

#include "core/verify/verifier.h"

namespace crucible::ui {

struct AppSettings {
  QString pythonPath;               // "" = the project's .venv, found by core (locateWorker)
  QString defaultBackend = "auto";  // auto | interpret | opencl | cuda
  QString rewardPreset = "tritonrl";
  double fp32Atol = 1e-4, fp32Rtol = 1e-4, fp16Atol = 1e-2, fp16Rtol = 1e-2;
  double candidateTimeoutSeconds = 300;
  int trials = 5;
  bool compileBaseline = true;
  QStringList endpoints;  // OpenAI-compatible base URLs, for generation
  QString databasePath;   // "" = core's default (XDG data folder)

  bool operator==(const AppSettings&) const = default;
  static AppSettings load();
  void save() const;

  /// A verification request for these settings (paths and backend filled in by the caller).
  VerifyRequest verifyRequest() const;
};

/// What Settings shows: `saved`, with the database this window uses (a `--db` file included), so
/// the dialog never names a file other than the one in use.
AppSettings shownSettings(AppSettings saved, const QString& databaseInUse);
/// What to save once the dialog is accepted: `accepted`, except that a database left as it was
/// shown keeps `saved`'s, so saving other settings does not make a one-off `--db` the default.
AppSettings settingsToSave(AppSettings accepted, const AppSettings& shown,
                           const AppSettings& saved);

/// Recent files, most recent first, at most `kMaxRecent`.
inline constexpr int kMaxRecent = 8;
QStringList recentFiles();
void addRecentFile(const QString& path);

/// Embedded models (a Hugging Face folder or a .gguf file) used or added lately, most recent
/// first, at most `kMaxRecent`: the generation pane's picker lists them.
QStringList recentModels();
void addRecentModel(const QString& path);

}  // namespace crucible::ui
