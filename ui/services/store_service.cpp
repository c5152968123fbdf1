#include "ui/services/store_service.h"

namespace crucible::ui {

StoreService::StoreService(QString databasePath, QObject* parent)
    : QObject(parent), path_(std::move(databasePath)), openPath_(path_) {
  thread_.setObjectName("crucible-store");
  worker_ = new QObject;
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
  thread_.start();
}

StoreService::~StoreService() {
  // Queued after every job already posted, so pending writes land before the thread stops.
  postTo(worker_, [this] {
    store_.reset();
    thread_.quit();
  });
  thread_.wait();
}

void StoreService::submit(std::function<void(store::Store&)> job) {
  postTo(worker_, [this, job = std::move(job)] {
    try {
      if (!store_) open();
      job(*store_);
    } catch (const std::exception& error) {
      const QString message = QString::fromStdString(error.what());
      postTo(this, [this, message] { emit failed(message); });
    }
  });
}

void StoreService::reopen(const QString& databasePath) {
  path_ = databasePath;
  postTo(worker_, [this, databasePath] {
    store_.reset();
    openPath_ = databasePath;
    try {
      open();  // now, so that a path that cannot be opened is reported at once
      postTo(this, [this, databasePath] { emit reopened(databasePath); });
    } catch (const std::exception& error) {
      const QString message = QString::fromStdString(error.what());
      postTo(this, [this, message] { emit failed(message); });
    }
  });
}

void StoreService::open() {
  const std::string path =
      openPath_.isEmpty() ? store::Store::defaultDatabasePath() : openPath_.toStdString();
  store_ = std::make_unique<store::Store>(path);
}

}  // namespace crucible::ui
