#pragma once
// Thin RAII over the SQLite C API, for the store's own use: a connection, prepared statements with
// bound parameters, and transactions. Values are always bound, never spliced into SQL text.
// Every failure throws StoreError naming the database file and carrying SQLite's message.
//
// A Connection is not to be shared between threads: open one per thread (STYLE.md, pitfalls).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/store/error.h"

struct sqlite3;
struct sqlite3_stmt;

namespace crucible::store {

class Connection {
 public:
  /// Opens (creating when missing) the database file read-write; sets the busy timeout.
  /// Does not create folders, set the journal mode or migrate: Store does that.
  Connection(std::string path, int busyTimeoutMs);
  ~Connection();
  Connection(Connection&& other) noexcept;
  Connection& operator=(Connection&& other) noexcept;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }

  /// Runs SQL text that takes no values (schema, pragmas, BEGIN/COMMIT).
  void exec(std::string_view sql, std::string_view what);
  /// The single integer a pragma or query without parameters returns.
  std::int64_t queryInt(std::string_view sql, std::string_view what);
  /// The text a pragma or query without parameters returns. Unlike other statements it retries
  /// on SQLITE_BUSY until the busy timeout: changing the journal mode can be refused at once
  /// (without SQLite's busy handler) while another connection holds a lock.
  std::string queryTextRetryingBusy(std::string_view sql, std::string_view what);
  std::int64_t lastInsertRowid() const;

  /// Throws StoreError: "database 'PATH': WHAT: SQLite's message".
  [[noreturn]] void fail(std::string_view what) const;
  /// The same without SQLite's message.
  [[noreturn]] void failPlain(std::string_view what) const;

 private:
  std::string path_;
  int busyTimeoutMs_ = 0;
  sqlite3* db_ = nullptr;
};

class Statement {
 public:
  Statement(Connection& connection, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are 1-based, as in SQLite.
  void bind(int index, std::int64_t value);
  void bind(int index, int value) { bind(index, static_cast<std::int64_t>(value)); }
  void bind(int index, bool value) { bind(index, static_cast<std::int64_t>(value ? 1 : 0)); }
  void bind(int index, double value);
  void bind(int index, std::string_view value);
  void bind(int index, const std::string& value) { bind(index, std::string_view(value)); }
  void bind(int index, const char* value) { bind(index, std::string_view(value)); }
  void bind(int index, std::nullptr_t);
  template <typename T>
  void bind(int index, const std::optional<T>& value) {
    if (value) {
      bind(index, *value);
    } else {
      bind(index, nullptr);
    }
  }
  /// Binds the arguments to parameters 1..N.
  template <typename... Args>
  Statement& bindAll(const Args&... args) {
    int index = 0;
    (bind(++index, args), ...);
    return *this;
  }

  /// Advances; true when a row is ready to read, false when the statement is done.
  bool step();
  /// Steps a statement that returns no rows.
  void run();
  /// Makes the statement ready to run again and clears its bindings.
  void reset();

  // Columns are 0-based, as in SQLite.
  bool isNull(int column) const;
  std::int64_t int64At(int column) const;
  double doubleAt(int column) const;
  std::string textAt(int column) const;  // "" for NULL
  std::optional<std::int64_t> optionalInt64At(int column) const;
  std::optional<double> optionalDoubleAt(int column) const;
  std::optional<std::string> optionalTextAt(int column) const;

 private:
  Connection& connection_;
  std::string what_;  // the start of the SQL, for error messages
  sqlite3_stmt* stmt_ = nullptr;
};

/// BEGIN on construction, ROLLBACK on destruction unless commit() ran. Immediate transactions take
/// the write lock at once, so a writer waits (busy timeout) instead of failing half-way; Deferred
/// is for reads that need one consistent snapshot.
class Transaction {
 public:
  enum class Kind { Deferred, Immediate };
  explicit Transaction(Connection& connection, Kind kind = Kind::Immediate);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  void commit();

 private:
  Connection& connection_;
  bool active_ = false;
};

}  // namespace crucible::store
