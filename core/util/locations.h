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

/// The Python environment an installed Crucible uses (crucible-setup-python makes it):
/// $XDG_DATA_HOME/crucible/venv, else $HOME/.local/share/crucible/venv (each only when
/// absolute); "" when neither is set.
std::string userPythonEnvironment();

/// CRUCIBLE_PYTHON and CRUCIBLE_WORKER_DIR override. The worker: the build tree's
/// (bin/../../core/worker), else an installed tree's (bin/../share/crucible/worker). The
/// interpreter: the project's .venv (bin/../../.venv), else userPythonEnvironment(), else
/// python3 on PATH for a build tree; an installed tree without an environment gets a problem
/// that names crucible-setup-python.
WorkerLocation locateWorker();

/// locateWorker() for an executable in executableFolder (the tests' installed trees).
WorkerLocation locateWorkerFrom(const std::string& executableFolder);

/// The Triton-to-OpenCL library (libcrucible_tcl.so) the opencl backend's `triton` shim loads:
/// CRUCIBLE_TCL_LIB overrides; otherwise bin/../lib/ next to the running executable (the build
/// tree's build/lib/) or bin/../lib/crucible/ (an installed prefix's private libraries). Empty
/// when none exists.
std::string locateTclLibrary();

/// locateTclLibrary() for an executable in executableFolder (the tests' installed trees).
std::string locateTclLibraryFrom(const std::string& executableFolder);

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
