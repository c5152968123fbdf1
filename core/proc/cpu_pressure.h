#pragma once
// How long tasks on this machine have waited for a CPU, from the kernel's pressure stall
// information. The difference over an interval, divided by its length, says how contended the
// CPU was then: a time measured while other work waited (or made ours wait) is not the time the
// same work takes on a machine of its own.

#include <cstdint>
#include <filesystem>
#include <optional>

namespace crucible::proc {

/// The "some" total of the CPU pressure file (microseconds during which at least one runnable
/// task waited for a CPU), or nullopt where the kernel does not provide it.
std::optional<std::uint64_t> cpuStalledMicros(
    const std::filesystem::path& file = "/proc/pressure/cpu");

}  // namespace crucible::proc
