#pragma once
// Authenticating the worker's result channel: each line is {"body": "<json>", "mac": "<hex>"},
// the MAC being HMAC-SHA256 of the body under a key sent on the worker's stdin (closed before
// user code runs). Lines a candidate forges cannot carry a valid MAC.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace crucible {

/// A fresh random key (hex), from the kernel's random source.
std::string makeChannelKey();

/// Lower-case hex HMAC-SHA256 (RFC 2104) of `message` under `key`.
std::string hmacSha256Hex(std::string_view key, std::string_view message);

/// The inner message of a channel line when its MAC is valid under `key`; nullopt otherwise.
std::optional<nlohmann::json> openChannelLine(std::string_view line, std::string_view key);

}  // namespace crucible
