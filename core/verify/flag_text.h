#pragma once
// A flag in plain words for people: its evidence as readable lines instead of JSON, and the
// text shown when hovering its mark in the editor.

#include <nlohmann/json.hpp>
#include <string>

#include "core/verify/flag.h"

namespace crucible {

/// One line per evidence entry, "name: value": counts as "a x3, b x1" (largest first), numbers
/// with the digits they carry, nested objects indented beneath their name; empty for none.
std::string evidenceText(const nlohmann::json& evidence);

/// What a flag's editor mark says: severity and id, the catalogue's summary, the message and
/// the evidence.
std::string flagHoverText(const Flag& flag);

}  // namespace crucible
