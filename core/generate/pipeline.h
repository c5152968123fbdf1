#pragma once
// The generation pipeline: a Generator writes candidates, each is verified as it arrives and
// stored as it arrives, and a test-time search keeps the fastest verified one.
//
//   best-of-n  one round of n samples; the fastest verified wins.
//   refine     R rounds of n samples; from the second round on, the prompt carries the
//              verifier's findings on the best previous candidate (feedback.h), and the new
//              candidates are stored as its children.
//
// The generator runs on its own thread so that verification (seconds to minutes per candidate)
// overlaps with the model's streaming. Verification and the store stay on the calling thread.

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "core/generate/candidate_result.h"
#include "core/generate/generator.h"
#include "core/store/store.h"
#include "core/verify/verifier.h"

namespace crucible::generate {

enum class SearchMode { BestOfN, Refine };

std::string_view toString(SearchMode mode);
/// "best-of-n" | "refine"; nullopt otherwise.
std::optional<SearchMode> searchModeFromString(std::string_view text);

struct GenerationRequest {
  // The reference and the sampling parameters; n and round are set by the search.
  GenerateRequest generate;
  // How each candidate is verified; referencePath must be set. candidateText is set per candidate.
  VerifyRequest verify;
  SearchMode mode = SearchMode::BestOfN;
  int n = 4;                                // samples per round
  int rounds = 3;                           // refine only; best-of-n is one round
  std::optional<std::string> databasePath;  // nullopt: nothing is stored
  store::TaskInput task;                    // the session's task
  // Verifies elsewhere instead of here (`crucible bench --cluster`: lanes on a Ray cluster);
  // null: crucible::verify in this process. Throws BadInput as verify does.
  std::function<Evaluation(const VerifyRequest&, std::stop_token)> verifier;
};

struct GenerationResult {
  std::vector<CandidateResult> candidates;  // in the order they arrived
  std::optional<std::size_t> best;          // index of the fastest verified candidate
  std::optional<std::int64_t> sessionId;    // when stored
  std::string database;                     // when stored
  bool interrupted = false;                 // a stop request ended the run early
  std::string generatorError;               // a generator failure that ended the run early
};

/// `crucible generate --json`: candidates (summaryJson), best (an id or null), session,
/// database, interrupted, error.
void to_json(nlohmann::json& j, const GenerationResult& result);

struct GenerationEvent {
  enum class Kind {
    Round,     // a round starts (message says what it asks for)
    Arrived,   // `candidate` arrived and was stored; it is verified next
    Verify,    // a verification stage of `candidate` (message)
    Verified,  // `candidate` has its evaluation
  };
  Kind kind = Kind::Round;
  int round = 1;
  std::string message;
  const CandidateResult* candidate = nullptr;
};

/// Runs the search. Throws BadInput for a bad request (unknown backend or preset, a reference
/// the verifier refuses), store::StoreError when the database cannot be written. A generator's
/// failure ends the run with `generatorError` set; a stop request ends it with `interrupted`
/// set, keeping everything stored so far (a candidate being verified stays without evaluation).
/// `onToken` is called on the generator's thread; `progress` on the calling thread.
GenerationResult runGeneration(Generator& generator, const GenerationRequest& request,
                               std::stop_token stop,
                               const std::function<void(const GenerationEvent&)>& progress = {},
                               const TokenCallback& onToken = {});

}  // namespace crucible::generate
