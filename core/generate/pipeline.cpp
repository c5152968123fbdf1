#include "core/generate/pipeline.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "core/generate/feedback.h"
#include "core/generate/selection.h"
#include "core/verify/judge.h"

namespace crucible::generate {

namespace {

using nlohmann::json;

/// Candidates travel from the generator's thread to the verifying one.
class CandidateQueue {
 public:
  void push(GeneratedCandidate candidate) {
    {
      std::lock_guard lock(mutex_);
      items_.push_back(std::move(candidate));
    }
    ready_.notify_one();
  }
  void close(std::exception_ptr failure) {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
      failure_ = std::move(failure);
    }
    ready_.notify_one();
  }
  /// The next candidate; nullopt when the generator is done or `stop` was requested.
  std::optional<GeneratedCandidate> pop(std::stop_token stop) {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, stop, [&] { return !items_.empty() || closed_; });
    if (items_.empty() || stop.stop_requested()) return std::nullopt;
    GeneratedCandidate next = std::move(items_.front());
    items_.pop_front();
    return next;
  }
  std::exception_ptr failure() {
    std::lock_guard lock(mutex_);
    return failure_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable_any ready_;
  std::deque<GeneratedCandidate> items_;
  bool closed_ = false;
  std::exception_ptr failure_;
};

/// An answer without code is judged like a file without ModelNew, by the judge itself (no worker
/// needed), and says why in its error.
Evaluation judgeWithoutCode(const GeneratedCandidate& c, const VerifyRequest& verify) {
  Evaluation e = judge(Observations{}, JudgeOptions{verify.rewardPreset, verify.speedupCeiling});
  e.backend = verify.backend;
  e.error = EvalError{"extract", c.error, "candidate", std::nullopt};
  e.plan = c.plan;
  return e;
}

Evaluation infrastructureFailure(const VerifyRequest& verify, const std::string& why) {
  Evaluation e;
  e.verdict = Verdict::Error;
  e.backend = verify.backend;
  e.error = EvalError{"infrastructure", why, "infrastructure", std::nullopt};
  e.reward.preset = verify.rewardPreset;
  return e;
}

class Search {
 public:
  Search(Generator& generator, const GenerationRequest& request, std::stop_token stop,
         const std::function<void(const GenerationEvent&)>& progress, const TokenCallback& onToken)
      : generator_(generator),
        request_(request),
        stop_(std::move(stop)),
        progress_(progress),
        onToken_(onToken) {}

  GenerationResult run() {
    verify_ = request_.verify;
    verify_.backend = resolveBackend(verify_.backend);  // BadInput before anything is generated
    // Every candidate is checked against the same reference: run it once, not once per candidate.
    if (!verify_.referenceCache) verify_.referenceCache = std::make_shared<ReferenceCache>(2);
    // ... and time it against one torch.compile of it, compiled once (baseline_keeper.h).
    if (!verify_.baselineKeeper) verify_.baselineKeeper = std::make_shared<BaselineKeeper>();
    if (!findRewardPreset(verify_.rewardPreset)) {
      throw BadInput("unknown reward preset '" + verify_.rewardPreset + "'");
    }
    if (request_.n < 1) throw BadInput("-n must be at least 1");
    const int rounds = request_.mode == SearchMode::Refine ? request_.rounds : 1;
    if (rounds < 1) throw BadInput("--rounds must be at least 1");
    if (request_.databasePath) {
      store_.emplace(*request_.databasePath);
      result_.database = store_->path();
      const std::string note =
          "search " + std::string(toString(request_.mode)) + ", n=" + std::to_string(request_.n) +
          (request_.mode == SearchMode::Refine ? ", rounds=" + std::to_string(rounds) : "");
      result_.sessionId =
          store_->startSession(request_.task, store::kSessionKindGenerate, note).sessionId;
    }
    for (int round = 1; round <= rounds && !stopped(); ++round) {
      if (!runRound(round)) break;
    }
    result_.interrupted = stop_.stop_requested();
    result_.best = fastestVerified(result_.candidates);
    return std::move(result_);
  }

 private:
  bool stopped() const { return stop_.stop_requested() || !result_.generatorError.empty(); }

  void report(GenerationEvent::Kind kind, int round, std::string message,
              const CandidateResult* candidate = nullptr) {
    if (progress_) progress_({kind, round, std::move(message), candidate});
  }

  /// One round; false when the run must end (stopped, or the generator failed).
  bool runRound(int round) {
    GenerateRequest ask = request_.generate;
    ask.n = request_.n;
    ask.round = round;
    std::optional<std::int64_t> parent;
    std::string what = "asking " + generator_.origin() + " for " + std::to_string(ask.n) +
                       " candidate" + (ask.n == 1 ? "" : "s");
    if (round > 1) {
      if (const auto base = candidateToRefine(result_.candidates)) {
        const CandidateResult& previous = result_.candidates[*base];
        ask.refinement = Refinement{previous.candidate.code, describeFindings(*previous.evaluation),
                                    previous.evaluation->verdict == Verdict::Verified};
        parent = previous.id;
        what += std::string(ask.refinement->verified ? " faster than" : " fixing") + " candidate " +
                std::to_string(previous.id);
      }
    }
    report(GenerationEvent::Kind::Round, round, "round " + std::to_string(round) + ": " + what);

    CandidateQueue queue;
    std::jthread worker([&](std::stop_token workerStop) {
      try {
        generator_.generate(ask, workerStop, onToken_,
                            [&](GeneratedCandidate c) { queue.push(std::move(c)); });
        queue.close(nullptr);
      } catch (...) {
        queue.close(std::current_exception());
      }
    });
    std::stop_callback forward(stop_, [&] { worker.request_stop(); });
    while (auto candidate = queue.pop(stop_)) {
      if (!take(std::move(*candidate), round, parent)) break;
    }
    worker.request_stop();
    worker.join();
    if (auto failure = queue.failure()) {
      try {
        std::rethrow_exception(failure);
      } catch (const GenerateError& e) {
        result_.generatorError = e.what();
      }
    }
    return !stopped();
  }

  /// Stores, verifies and stores the evaluation of one candidate; false when stopped.
  bool take(GeneratedCandidate generated, int round, std::optional<std::int64_t> parent) {
    CandidateResult r;
    r.round = round;
    r.parentId = parent;
    r.candidate = std::move(generated);
    const GeneratedCandidate& c = r.candidate;
    if (store_) {
      store::CandidateInput input;
      input.origin = c.origin;
      input.model = c.model;
      input.prompt = c.prompt;
      input.rawResponse = c.rawResponse;
      input.plan = c.plan;
      input.code = c.code;
      input.parentId = parent;
      r.id = store_->addCandidateTo(*result_.sessionId, input);
    } else {
      r.id = static_cast<std::int64_t>(result_.candidates.size()) + 1;
    }
    result_.candidates.push_back(std::move(r));
    const std::size_t at = result_.candidates.size() - 1;
    report(GenerationEvent::Kind::Arrived, round, "", &result_.candidates[at]);

    Evaluation evaluation = evaluate(result_.candidates[at]);
    if (stop_.stop_requested()) return false;  // a cut-short verification is not a verdict
    if (store_) store_->addEvaluationTo(result_.candidates[at].id, evaluation);
    result_.candidates[at].evaluation = std::move(evaluation);
    report(GenerationEvent::Kind::Verified, round, "", &result_.candidates[at]);
    return true;
  }

  Evaluation evaluate(const CandidateResult& r) {
    const GeneratedCandidate& c = r.candidate;
    if (c.code.empty()) {
      return judgeWithoutCode(c, verify_);
    }
    VerifyRequest v = verify_;
    v.candidatePath = "candidate " + std::to_string(r.id);
    v.candidateText = c.code;
    try {
      if (request_.verifier) {
        Evaluation evaluation = request_.verifier(v, stop_);
        evaluation.plan = c.plan;
        return evaluation;
      }
      VerifyOutcome outcome = crucible::verify(
          v,
          [&](const VerifyProgress& p) {
            report(GenerationEvent::Kind::Verify, r.round, "[" + p.stage + "] " + p.message, &r);
          },
          stop_);
      outcome.evaluation.plan = c.plan;
      return outcome.evaluation;
    } catch (const BadInput&) {
      throw;  // the reference or the settings: the same for every candidate
    } catch (const std::exception& e) {
      return infrastructureFailure(verify_, e.what());
    }
  }

  Generator& generator_;
  const GenerationRequest& request_;
  std::stop_token stop_;
  const std::function<void(const GenerationEvent&)>& progress_;
  const TokenCallback& onToken_;
  VerifyRequest verify_;
  std::optional<store::Store> store_;
  GenerationResult result_;
};

}  // namespace

std::string_view toString(SearchMode mode) {
  return mode == SearchMode::Refine ? "refine" : "best-of-n";
}

std::optional<SearchMode> searchModeFromString(std::string_view text) {
  if (text == "best-of-n") return SearchMode::BestOfN;
  if (text == "refine") return SearchMode::Refine;
  return std::nullopt;
}

void to_json(json& j, const GenerationResult& result) {
  json candidates = json::array();
  for (const auto& c : result.candidates) candidates.push_back(summaryJson(c));
  j = json{{"candidates", candidates},
           {"best", result.best ? json(result.candidates[*result.best].id) : json(nullptr)},
           {"session", result.sessionId ? json(*result.sessionId) : json(nullptr)},
           {"database", result.database.empty() ? json(nullptr) : json(result.database)},
           {"interrupted", result.interrupted},
           {"error", result.generatorError.empty() ? json(nullptr) : json(result.generatorError)}};
}

GenerationResult runGeneration(Generator& generator, const GenerationRequest& request,
                               std::stop_token stop,
                               const std::function<void(const GenerationEvent&)>& progress,
                               const TokenCallback& onToken) {
  return Search(generator, request, std::move(stop), progress, onToken).run();
}

}  // namespace crucible::generate
