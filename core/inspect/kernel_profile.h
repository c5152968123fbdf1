#pragma once
// What `crucible profile` reports (docs/PROFILE.md): per launch of one
// forward call on the reference's inputs, in launch order, where it is in the candidate, its
// time over several calls, the bytes and FLOPs counted on Triton's interpreter, and where it
// stands against the device's measured peaks (the roofline). A value type with its JSON; the
// arithmetic is pure and lives here, the runs that gather the figures in profile_run.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace crucible {

/// The device's peaks, measured by the reference stage (the worker's timing.device_peak).
struct DevicePeaks {
  std::string name;     // the device's name as torch reports it (a CPU model, a GPU name)
  std::string backend;  // opencl | cuda | interpret: what the candidate ran on
  double bandwidthGBs = 0;
  double peakGflops = 0;
  std::string method;  // how the two figures were measured
};

/// A time's spread over the timed calls, in milliseconds (quartiles by linear interpolation).
struct TimeSpread {
  int samples = 0;
  double medianMs = 0;
  double minMs = 0;
  double maxMs = 0;
  double q1Ms = 0;
  double q3Ms = 0;
};

/// The spread of `samples`; nullopt when there are none.
std::optional<TimeSpread> spreadOf(std::vector<double> samples);

/// Where a kernel stands on the roofline: the attainable rate for its arithmetic intensity,
/// min(peak GFLOP/s, intensity * bandwidth), which roof bounds it, and the fraction achieved.
struct RoofPoint {
  double intensity = 0;         // FLOP per byte moved
  double attainableGflops = 0;  // the roof above that intensity
  bool memoryBound = false;     // the bandwidth's slope is the lower roof
  double fraction = 0;          // achieved / attainable (memory bound: achieved GB/s / peak)
};

/// The roof point of `bytes` moved and `flops` done in `ms` against `peaks`; nullopt when there
/// is nothing to place (no time, nothing moved or done, or no measured peak).
std::optional<RoofPoint> roofPoint(double bytes, double flops, double ms, const DevicePeaks& peaks);

struct LaunchProfile {
  int index = 0;  // in launch order, from 0
  std::string kernel;
  std::optional<int> launchLine;  // the candidate's line that launched it
  std::optional<int> defLine;     // the line of the kernel's def, when it is the candidate's
  std::vector<std::int64_t> grid;
  std::optional<TimeSpread> time;
  // Counted on Triton's interpreter (bytes the loads and stores request, FLOPs by the convention
  // in the worker's profile_counter.py); absent when not counted, with the reason.
  bool counted = false;
  std::string notCountedReason;
  std::optional<std::int64_t> bytesRead;
  std::optional<std::int64_t> bytesWritten;
  std::optional<std::int64_t> flops;
  // Derived (profileDerive): from the median time.
  std::optional<double> achievedGBs;
  std::optional<double> achievedGflops;
  std::optional<RoofPoint> roof;
  std::optional<double> share;  // of the forward call's median time

  std::optional<std::int64_t> bytes() const;
};

/// Why the profile has no launches: the candidate failed to load, build or run (the file and
/// line are the candidate's), or the harness failed.
struct ProfileError {
  std::string stage;  // load | construct | run | count | timeout | memory | infrastructure
  std::string message;
  std::string file;
  std::optional<int> line;
};

struct KernelProfile {
  std::string candidate;  // the file as given
  std::string reference;
  DevicePeaks device;
  std::string timer;  // how each launch was timed
  int calls = 0;      // timed forward calls
  int warmup = 0;
  int callsMatching = 0;  // calls whose launches matched the first's (only they are samples)
  std::optional<TimeSpread> forward;
  std::vector<LaunchProfile> launches;
  std::optional<double> launchesShare;  // all launches' medians over the forward's median
  std::string countNote;                // why nothing was counted, when nothing was
  std::optional<ProfileError> error;
};

/// Fills every launch's derived figures (achieved rates, roof point, share) and the launches'
/// total share from the measured ones.
void profileDerive(KernelProfile& profile);

/// The profile from the profile stage's two sets of facts (docs/WORKER_PROTOCOL.md, "profile"):
/// `timed` (mode time) and `counted` (mode count, null when it did not run). Launches are
/// paired by position; when the two runs launched different kernels the counts are left out and
/// countNote says why. Derived figures are filled.
KernelProfile profileFromFacts(const nlohmann::json& timed, const nlohmann::json& counted,
                               const DevicePeaks& device);

void to_json(nlohmann::json& j, const DevicePeaks& d);
void from_json(const nlohmann::json& j, DevicePeaks& d);
void to_json(nlohmann::json& j, const TimeSpread& t);
void from_json(const nlohmann::json& j, TimeSpread& t);
void to_json(nlohmann::json& j, const RoofPoint& r);
void from_json(const nlohmann::json& j, RoofPoint& r);
void to_json(nlohmann::json& j, const LaunchProfile& l);
void from_json(const nlohmann::json& j, LaunchProfile& l);
void to_json(nlohmann::json& j, const ProfileError& e);
void from_json(const nlohmann::json& j, ProfileError& e);
void to_json(nlohmann::json& j, const KernelProfile& p);
void from_json(const nlohmann::json& j, KernelProfile& p);

}  // namespace crucible
