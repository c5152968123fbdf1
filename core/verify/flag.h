#pragma once
// Cheating and warning flags: the catalogue of ids is a stable contract (JSON, database, GUI).

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace crucible {

enum class Severity { Cheat, Warning };

std::string_view toString(Severity severity);
std::optional<Severity> severityFromString(std::string_view text);

/// One entry of the cheating catalogue.
struct FlagInfo {
  std::string_view id;
  Severity severity;
  std::string_view summary;  // one line for humans
};

/// Every flag the judge can raise, in a stable order.
const std::vector<FlagInfo>& flagCatalogue();
/// The catalogue entry for `id`, or nullptr.
const FlagInfo* findFlag(std::string_view id);

/// A raised flag with its evidence.
struct Flag {
  std::string id;
  Severity severity = Severity::Cheat;
  std::string message;
  std::optional<int> line;  // line in the candidate file
  nlohmann::json evidence = nlohmann::json::object();

  bool operator==(const Flag&) const = default;
};

/// Makes a flag with the catalogue's severity; `id` must be in the catalogue.
Flag makeFlag(std::string_view id, std::string message, std::optional<int> line = std::nullopt,
              nlohmann::json evidence = nlohmann::json::object());

void to_json(nlohmann::json& j, const Flag& flag);
void from_json(const nlohmann::json& j, Flag& flag);

}  // namespace crucible
