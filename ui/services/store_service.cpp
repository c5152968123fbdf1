#include "ui/services/store_service.h"

namespace crucible::ui {

StoreService::StoreService(QString databasePath, QObject* parent)
    : QObject(parent), path_(std::move(databasePath)) {
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
      if (!store_) {
        const std::string path =
            path_.isEmpty() ? store::Store::defaultDatabasePath() : path_.toStdString();
        store_ = std::make_unique<store::Store>(path);
      }
      job(*store_);
    } catch (const std::exception& error) {
      const QString message = QString::fromStdString(error.what());
      postTo(this, [this, message] { emit failed(message); });
    }
  });
}

}  // namespace crucible::ui
