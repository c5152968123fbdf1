#pragma once
// Running a function on the thread of a QObject, later: how work done off the UI thread hands its
// result back. The target must outlive the posting thread (services wait for their workers in
// their destructors); events still queued when it is destroyed are discarded by Qt.

#include <QMetaObject>
#include <QObject>
#include <utility>

namespace crucible::ui {

template <typename F>
void postTo(QObject* target, F&& function) {
  QMetaObject::invokeMethod(target, std::forward<F>(function), Qt::QueuedConnection);
}

}  // namespace crucible::ui
