#pragma once
// One interface for everything that writes candidates: the built-in synthesizer, an
// OpenAI-compatible endpoint and the embedded model. The pipeline (pipeline.h) drives a Generator,
// verifies each candidate as it arrives and stores it; a generator only writes code.

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <vector>

namespace crucible::generate {

/// What a refinement round tells the model about the candidate it is to improve.
struct Refinement {
  std::string previousCode;  // the best previous candidate's code
  std::string findings;      // the verifier's findings on it, as text (feedback.h)
  bool verified = false;     // true: ask for a faster version; false: ask for a fix
};

struct GenerateRequest {
  std::string referencePath;    // the reference file (the synthesizer traces it)
  std::string referenceSource;  // its text (language models read it)
  std::string referenceName;    // a short name for prompts and logs
  std::string backend;          // where candidates will run (interpret, cuda, opencl)
  int n = 1;                    // candidates wanted
  // Sampling; unset means the generator's or the server's default.
  std::optional<double> temperature;
  std::optional<double> topP;
  std::optional<int> maxTokens;
  std::vector<std::string> stop;
  std::optional<std::int64_t> seed;
  int round = 1;                         // the search round, 1 for the first
  std::optional<Refinement> refinement;  // set in refinement rounds
};

/// One candidate as the generator produced it. A candidate whose response held no usable code
/// still arrives, with `error` saying why, so that it is stored and counted.
struct GeneratedCandidate {
  int index = 0;       // 0..n-1 within its request
  std::string origin;  // "synth" | "endpoint" | "embedded"
  std::string model;   // the model id ("synth", the endpoint's model name, a weights folder)
  std::string prompt;  // the rendered prompt (chat_prompt.h's text form); "" for synth
  std::string rawResponse;
  std::string plan;   // the reasoning before the code, or the synthesizer's plan
  std::string code;   // the candidate program ("" when none could be extracted)
  std::string label;  // a short description ("tile 64x64, 4 warps"); may be ""
  std::string error;  // why there is no code; "" when there is
  bool operator==(const GeneratedCandidate&) const = default;
};

void to_json(nlohmann::json& j, const GeneratedCandidate& candidate);
void from_json(const nlohmann::json& j, GeneratedCandidate& candidate);

/// A failure of the whole request (the server is down, the model cannot load). Its message is
/// for the user as it stands.
class GenerateError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

using TokenCallback = std::function<void(int candidateIndex, const std::string& text)>;
using CandidateCallback = std::function<void(GeneratedCandidate)>;

class Generator {
 public:
  virtual ~Generator() = default;
  /// The candidates' origin: "synth" | "endpoint" | "embedded".
  virtual std::string origin() const = 0;
  /// The model id stored with each candidate.
  virtual std::string modelId() const = 0;
  /// Produces up to request.n candidates, calling onCandidate for each as soon as it is complete
  /// (on the calling thread) and onToken for streamed text (candidateIndex -1: progress text from
  /// a generator that does not stream tokens, such as the synthesizer). Returns when all are done
  /// or `stop` is requested. Throws GenerateError when the request as a whole fails.
  virtual void generate(const GenerateRequest& request, std::stop_token stop,
                        const TokenCallback& onToken, const CandidateCallback& onCandidate) = 0;
};

}  // namespace crucible::generate
