#pragma once
// Test hooks for the choice sha256.cpp makes between its portable code and the x86-64 SHA
// extensions; production code never calls these.

namespace crucible::util::detail {

/// Whether this CPU has the SHA extensions that Sha256 uses when it may.
bool sha256HasShaExtensions();
/// true: every Sha256 uses the portable code from now on; false: the fastest this CPU has.
void sha256ForcePortable(bool portable);

}  // namespace crucible::util::detail
