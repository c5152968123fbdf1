#pragma once
// Schema versions of the store, kept in `PRAGMA user_version`. Each migration takes the database
// from version N-1 to N in one transaction; a new schema version is one more entry in
// schemaMigrations() (migrations.cpp), never an edit of an old one.

#include <cstdint>
#include <span>
#include <string_view>

namespace crucible::store {

class Connection;

struct Migration {
  int version;               // the user_version after it ran: 1, 2, 3, ... without gaps
  std::string_view summary;  // for error messages
  std::string_view sql;      // schema statements only; never values
};

/// `PRAGMA application_id` of a Crucible database ("Cruc"), set by migration 1. A file with
/// another application id, or with tables but no id, is some other program's and is refused.
inline constexpr std::int64_t kApplicationId = 0x43727563;

/// Crucible's migrations, in order.
std::span<const Migration> schemaMigrations();
/// The newest schema version this build knows.
int latestSchemaVersion();

/// Refuses (StoreError, nothing written) a file that is not a database, belongs to another
/// program, or has a schema version newer than the last of `migrations`. Run before anything
/// that writes, the journal mode included.
void checkSchemaCompatible(Connection& connection, std::span<const Migration> migrations);

/// Applies every migration newer than the file's user_version, each in its own immediate
/// transaction that also sets user_version; a failing migration rolls back completely. Safe when
/// several connections migrate the same file at once: the version is re-read under the lock.
void migrate(Connection& connection, std::span<const Migration> migrations);

}  // namespace crucible::store
