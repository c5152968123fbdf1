#pragma once
// The one error type of the store: every message names the database file and, where SQLite said
// something, SQLite's own message.

#include <stdexcept>

namespace crucible::store {

class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace crucible::store
