#pragma once
// The store, off the UI thread: one thread owns one crucible::store::Store (one SQLite
// connection, never shared), and jobs run on it in the order they were posted, so a candidate
// saved before its evaluation is in the database first. Results come back on the UI thread.

#include <QObject>
#include <QPointer>
#include <QString>
#include <QThread>
#include <functional>
#include <memory>
#include <optional>

#include "core/store/store.h"
#include "ui/services/post.h"

namespace crucible::ui {

class StoreService : public QObject {
  Q_OBJECT
 public:
  /// `databasePath` "" means core's default path.
  explicit StoreService(QString databasePath, QObject* parent = nullptr);
  /// Runs every job already posted, then stops the thread.
  ~StoreService() override;

  QString databasePath() const { return path_; }
  /// Closes the database after the jobs already posted and opens `databasePath` ("" = core's
  /// default) on the store's thread; `reopened` or `failed` follows. Later jobs use the new one.
  void reopen(const QString& databasePath);

  /// Runs `job(store)` on the store's thread; `done(result)` then runs on the UI thread unless
  /// `receiver` is gone. A StoreError (or any exception) becomes `failed(message)` instead.
  template <typename Result>
  void run(std::function<Result(store::Store&)> job, QObject* receiver,
           std::function<void(Result)> done) {
    QPointer<QObject> guard(receiver);
    submit([this, job = std::move(job), guard, done = std::move(done)](store::Store& s) {
      Result result = job(s);
      postTo(this, [guard, done, result = std::move(result)] {
        if (guard && done) done(result);
      });
    });
  }
  /// Runs a job whose result nobody waits for (a write).
  void write(std::function<void(store::Store&)> job) { submit(std::move(job)); }

 signals:
  void failed(const QString& message);
  void reopened(const QString& databasePath);

 private:
  void submit(std::function<void(store::Store&)> job);
  void open();  // on thread_: opens openPath_

  QString path_;      // what the UI asked for last
  QString openPath_;  // what the store thread opens: read and written on thread_ only
  QThread thread_;
  QObject* worker_ = nullptr;            // lives on thread_
  std::unique_ptr<store::Store> store_;  // opened and used on thread_ only
};

}  // namespace crucible::ui
