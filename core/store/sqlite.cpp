#include "core/store/sqlite.h"

#include <sqlite3.h>

#include <chrono>
#include <thread>
#include <utility>

namespace crucible::store {

Connection::Connection(std::string path, int busyTimeoutMs)
    : path_(std::move(path)), busyTimeoutMs_(busyTimeoutMs) {
  // No SQLITE_OPEN_URI: a path that starts with "file:" is a file name like any other.
  int rc =
      sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw StoreError("database '" + path_ + "': cannot open: " + message);
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, busyTimeoutMs);
}

Connection::~Connection() {
  // Every Statement is finalized before its Connection goes (they are scoped inside its users),
  // so sqlite3_close cannot be refused for unfinalized statements.
  if (db_ != nullptr) sqlite3_close(db_);
}

Connection::Connection(Connection&& other) noexcept
    : path_(std::move(other.path_)),
      busyTimeoutMs_(other.busyTimeoutMs_),
      db_(std::exchange(other.db_, nullptr)) {}

Connection& Connection::operator=(Connection&& other) noexcept {
  if (this != &other) {
    if (db_ != nullptr) sqlite3_close(db_);
    path_ = std::move(other.path_);
    busyTimeoutMs_ = other.busyTimeoutMs_;
    db_ = std::exchange(other.db_, nullptr);
  }
  return *this;
}

void Connection::fail(std::string_view what) const {
  throw StoreError("database '" + path_ + "': " + std::string(what) + ": " +
                   (db_ != nullptr ? sqlite3_errmsg(db_) : "not open"));
}

void Connection::failPlain(std::string_view what) const {
  throw StoreError("database '" + path_ + "': " + std::string(what));
}

void Connection::exec(std::string_view sql, std::string_view what) {
  std::string text(sql);
  char* message = nullptr;
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    std::string detail = message != nullptr ? message : sqlite3_errmsg(db_);
    sqlite3_free(message);
    failPlain(std::string(what) + ": " + detail);
  }
}

std::int64_t Connection::queryInt(std::string_view sql, std::string_view what) {
  // By hand rather than through Statement, so that errors name `what` (the first read of a file
  // that is not a database fails here).
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr) !=
      SQLITE_OK) {
    fail(what);
  }
  const int rc = sqlite3_step(stmt);
  const std::int64_t value = rc == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : 0;
  sqlite3_finalize(stmt);  // keeps the step's error message
  if (rc == SQLITE_DONE) failPlain(std::string(what) + ": no result");
  if (rc != SQLITE_ROW) fail(what);
  return value;
}

std::string Connection::queryTextRetryingBusy(std::string_view sql, std::string_view what) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(busyTimeoutMs_);
  for (;;) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
    std::string value;
    if (rc == SQLITE_OK) {
      rc = sqlite3_step(stmt);
      if (rc == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr) {
        value = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
      }
      sqlite3_finalize(stmt);
    }
    if (rc == SQLITE_ROW || rc == SQLITE_DONE) return value;
    const int primary = rc & 0xff;
    if ((primary != SQLITE_BUSY && primary != SQLITE_LOCKED) ||
        std::chrono::steady_clock::now() >= deadline) {
      fail(what);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::int64_t Connection::lastInsertRowid() const {
  return sqlite3_last_insert_rowid(db_);
}

namespace {
// "running INSERT INTO candidates (session_id, ...": enough of the SQL to say what failed.
std::string describe(std::string_view sql) {
  std::string text;
  for (char c : sql) {
    const bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    if (space && (text.empty() || text.back() == ' ')) continue;
    text.push_back(space ? ' ' : c);
    if (text.size() >= 48) {
      text += "...";
      break;
    }
  }
  return "running " + text;
}
}  // namespace

Statement::Statement(Connection& connection, std::string_view sql)
    : connection_(connection), what_(describe(sql)) {
  if (sqlite3_prepare_v2(connection_.handle(), sql.data(), static_cast<int>(sql.size()), &stmt_,
                         nullptr) != SQLITE_OK) {
    connection_.fail(what_);
  }
}

Statement::~Statement() {
  sqlite3_finalize(stmt_);
}

void Statement::bind(int index, std::int64_t value) {
  if (sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) connection_.fail(what_);
}

void Statement::bind(int index, double value) {
  if (sqlite3_bind_double(stmt_, index, value) != SQLITE_OK) connection_.fail(what_);
}

void Statement::bind(int index, std::string_view value) {
  if (sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT,
                          SQLITE_UTF8) != SQLITE_OK) {
    connection_.fail(what_);
  }
}

void Statement::bind(int index, std::nullptr_t) {
  if (sqlite3_bind_null(stmt_, index) != SQLITE_OK) connection_.fail(what_);
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  connection_.fail(what_);
}

void Statement::run() {
  if (step()) connection_.failPlain("a statement that should return nothing returned a row");
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::isNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::int64_t Statement::int64At(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

double Statement::doubleAt(int column) const {
  return sqlite3_column_double(stmt_, column);
}

std::string Statement::textAt(int column) const {
  const auto* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::optional<std::int64_t> Statement::optionalInt64At(int column) const {
  if (isNull(column)) return std::nullopt;
  return int64At(column);
}

std::optional<double> Statement::optionalDoubleAt(int column) const {
  if (isNull(column)) return std::nullopt;
  return doubleAt(column);
}

std::optional<std::string> Statement::optionalTextAt(int column) const {
  if (isNull(column)) return std::nullopt;
  return textAt(column);
}

Transaction::Transaction(Connection& connection, Kind kind) : connection_(connection) {
  connection_.exec(kind == Kind::Immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED",
                   "starting a transaction");
  active_ = true;
}

Transaction::~Transaction() {
  if (active_) {
    // Best effort: after some errors SQLite has already rolled back, and ROLLBACK then fails
    // harmlessly. A destructor must not throw.
    sqlite3_exec(connection_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

void Transaction::commit() {
  connection_.exec("COMMIT", "committing a transaction");
  active_ = false;
}

}  // namespace crucible::store
