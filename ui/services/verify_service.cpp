#include "ui/services/verify_service.h"

#include "ui/services/post.h"

namespace crucible::ui {

VerifyService::VerifyService(QObject* parent)
    : QObject(parent),
      referenceCache_(std::make_shared<ReferenceCache>(4)),
      baselineKeeper_(std::make_shared<BaselineKeeper>()) {
  pool_.setMaxThreadCount(2);  // a verification and a reference check side by side
}

VerifyService::~VerifyService() {
  if (stop_) stop_->request_stop();
  pool_.waitForDone();
}

quint64 VerifyService::start(const VerifyRequest& given, int candidateKey) {
  if (busy()) stop();
  VerifyRequest request = given;
  // Candidates of the same reference (and settings) share one reference run.
  if (!request.referenceCache) request.referenceCache = referenceCache_;
  if (!request.baselineKeeper) request.baselineKeeper = baselineKeeper_;
  const quint64 token = ++nextToken_;
  running_ = token;
  runningKey_ = candidateKey;
  auto source = std::make_shared<std::stop_source>();
  stop_ = source;
  pool_.start([this, request, candidateKey, token, source] {
    const auto current = [this, token] { return running_ == token; };
    auto finish = [this, token] {
      if (running_ == token) {
        running_ = 0;
        runningKey_ = -1;
      }
    };
    try {
      auto outcome = verify(
          request,
          [this, candidateKey, current](const VerifyProgress& p) {
            postTo(this, [this, candidateKey, current, stage = QString::fromStdString(p.stage),
                          message = QString::fromStdString(p.message)] {
              if (current()) emit progress(candidateKey, stage, message);
            });
          },
          source->get_token());
      postTo(this, [this, candidateKey, current, finish, outcome = std::move(outcome)] {
        if (!current()) return;  // stale: stopped or replaced
        finish();
        emit finished(candidateKey, outcome);
      });
    } catch (const std::exception& error) {
      postTo(this, [this, candidateKey, current, finish, message = QString(error.what())] {
        if (!current()) return;
        finish();
        emit failed(candidateKey, message);
      });
    }
  });
  return token;
}

void VerifyService::stop() {
  if (!busy()) return;
  if (stop_) stop_->request_stop();
  const int key = runningKey_;
  running_ = 0;
  runningKey_ = -1;
  emit stopped(key);
}

void VerifyService::checkReference(const QString& path) {
  const quint64 token = ++referenceToken_;
  pool_.start([this, path, token] {
    QString problem;
    try {
      crucible::checkReference(path.toStdString());
    } catch (const std::exception& error) {
      problem = QString::fromStdString(error.what());
    }
    postTo(this, [this, path, problem, token] {
      if (token == referenceToken_) emit referenceChecked(path, problem);
    });
  });
}

}  // namespace crucible::ui
