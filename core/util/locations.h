#pragma once
// Where Crucible's helper programs are: the Python worker and the interpreter it runs in.
// Resolved to absolute paths before anything runs (KTextEditor's habit).

#include <optional>
#include <string>

namespace crucible {

struct WorkerLocation {
  std::string python;        // absolute path of the interpreter
  std::string workerScript;  // absolute path of core/worker/worker.py
  std::string problem;       // non-empty when either could not be found
};

/// CRUCIBLE_PYTHON and CRUCIBLE_WORKER_DIR override; otherwise the build tree (bin/../../)
/// or an installed tree (bin/../share/crucible/worker) next to the running executable, and
/// the project's .venv.
WorkerLocation locateWorker();

/// The Triton-to-OpenCL library (libcrucible_tcl.so) the opencl backend's `triton` shim loads:
/// CRUCIBLE_TCL_LIB overrides; otherwise bin/../lib/ next to the running executable (the build
/// tree's build/lib/ or an installed prefix's lib/). Empty when none exists.
std::string locateTclLibrary();

/// The embedded model engine (crucible-model): CRUCIBLE_MODEL_BIN overrides; otherwise the
/// program next to the running executable (build/bin, or an installed prefix's bin). Empty when
/// none exists (a build without libtorch has none).
std::string locateModelEngine();

/// Whether an OpenCL driver is registered with the ICD loader: a `.icd` file in
/// $OCL_ICD_VENDORS (a folder, or the file itself) or else in /etc/OpenCL/vendors. Cheap: no
/// driver is loaded (PoCL, the default driver, always offers its CPU device).
bool openclDriverRegistered();

/// The directory of the running executable.
std::string executableDir();

/// Where Crucible's scratch folders go: $TMPDIR when set and not empty, else /tmp.
std::string temporaryRoot();

/// Crucible's own cache folder: $XDG_CACHE_HOME/crucible, else $HOME/.cache/crucible, else
/// under the temporary root. Not created here.
std::string userCacheDir();

/// A directory only this user can change: made if missing, refused (false) if anyone else owns
/// it or it is a link (another user could otherwise hand us their files).
bool privateDirectory(const std::string& dir);

/// Reads a whole file; nullopt when it cannot be read.
std::optional<std::string> readFile(const std::string& path);

}  // namespace crucible
