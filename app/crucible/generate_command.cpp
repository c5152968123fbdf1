// `crucible generate REFERENCE.py`: asks a model for candidates, verifies and stores each as it
// arrives, keeps the fastest verified one (core/generate/pipeline.h), and prints a table or one
// JSON object.

#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "app/crucible/cli_support.h"
#include "app/crucible/commands.h"
#include "app/crucible/interrupt.h"
#include "app/crucible/text_table.h"
#include "core/generate/generator_factory.h"
#include "core/generate/pipeline.h"
#include "core/util/locations.h"
#include "core/verify/report_text.h"

namespace crucible::cli {

namespace {

namespace fs = std::filesystem;
using generate::GenerationEvent;
using generate::GenerationResult;
using nlohmann::json;

const std::string kGenerateUsage =
    std::string(
        "usage: crucible generate REFERENCE.py [options]\n"
        "\n"
        "  Asks a model for Triton candidates for REFERENCE.py, verifies and stores each one as\n"
        "  it arrives, and keeps the fastest verified one.\n"
        "\n"
        "model:\n"
        "  --model synth|URL|PATH     synth: the built-in synthesizer (default); URL: an\n"
        "                             OpenAI-compatible endpoint (http://host:port/v1: vLLM,\n"
        "                             SGLang, llama.cpp server, Ollama); PATH: a model folder or\n"
        "                             .gguf file for the embedded engine (crucible-model)\n"
        "  --device cpu|cuda|cuda:N   where the embedded model runs (default cpu)\n"
        "  --dtype auto|float32|float16|bfloat16|int8|int4   the embedded model's weights\n"
        "                             (int8/int4: weight-only quantised, CPU only; default auto:\n"
        "                             float32 on the CPU, int4/int8 for a quantised GGUF, the\n"
        "                             checkpoint's dtype on CUDA)\n"
        "  --endpoint-model NAME      the served model's name (default: the first the endpoint\n"
        "                             lists); the API key comes from $CRUCIBLE_API_KEY or\n"
        "                             $OPENAI_API_KEY\n"
        "  --prompt FILE              a prompt template instead of the built-in one for the model\n"
        "                             (format: resources/prompts/README.md)\n"
        "\n"
        "search:\n"
        "  -n N                       candidates per round (default 4)\n"
        "  --search best-of-n|refine  best-of-n: one round, the fastest verified wins; refine:\n"
        "                             each later round shows the model the verifier's findings\n"
        "                             on the best candidate so far (default best-of-n)\n"
        "  --rounds R                 refine: rounds, the first included (default 3)\n"
        "\n"
        "sampling (the model's defaults when not given; for the embedded model temperature\n"
        "0.7, top-p 0.95, 2048 tokens):\n"
        "  --temperature T  --top-p P  --max-tokens M\n"
        "  --stop TEXT                a stop sequence (repeatable)\n"
        "  --sample-seed N            sampling seed (the embedded model always honours it;\n"
        "                             without one it draws a fresh seed per run)\n"
        "\n"
        "verification (as crucible verify):\n") +
    kVerifyOptionsHelp +
    "\n"
    "output:\n"
    "  --out DIR                  write the best verified candidate there (kernel.py,\n"
    "                             report.json)\n"
    "  --db FILE                  database to store the session in (default: the user's data\n"
    "                             folder)\n"
    "  --no-db                    do not store anything\n"
    "  --json                     print one JSON object: candidates and best\n"
    "\n"
    "exit codes: 0 a verified candidate was found; 1 none was; 2 bad usage, bad reference or a\n"
    "model this build does not have; 3 error (the model failed, infrastructure) or interrupted\n";

struct GenerateOptions {
  generate::GenerationRequest request;
  generate::GeneratorOptions generator;
  std::string out;
  std::string db;
  bool store = true;
  bool json = false;
};

GenerateOptions parse(const std::vector<std::string>& args) {
  GenerateOptions o;
  std::vector<std::string> positional;
  std::string search = "best-of-n";
  bool roundsGiven = false;
  auto& sampling = o.request.generate;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (parseVerifyOption(args, i, o.request.verify)) continue;
    if (a == "-n") {
      o.request.n = static_cast<int>(numberOption(args, i, 1));
    } else if (a == "--model") {
      o.generator.model = optionValue(args, i);
    } else if (a == "--device") {
      o.generator.device = optionValue(args, i);
    } else if (a == "--dtype") {
      o.generator.dtype = optionValue(args, i);
    } else if (a == "--endpoint-model") {
      o.generator.endpointModel = optionValue(args, i);
    } else if (a == "--prompt") {
      o.generator.promptFile = optionValue(args, i);
    } else if (a == "--search") {
      search = optionValue(args, i);
    } else if (a == "--rounds") {
      o.request.rounds = static_cast<int>(numberOption(args, i, 1));
      roundsGiven = true;
    } else if (a == "--temperature") {
      sampling.temperature = numberOption(args, i, 0);
    } else if (a == "--top-p") {
      sampling.topP = numberOption(args, i, 0);
    } else if (a == "--max-tokens") {
      sampling.maxTokens = static_cast<int>(numberOption(args, i, 1));
    } else if (a == "--stop") {
      sampling.stop.push_back(optionValue(args, i));
    } else if (a == "--sample-seed") {
      sampling.seed = static_cast<std::int64_t>(numberOption(args, i, 0));
    } else if (a == "--out") {
      o.out = optionValue(args, i);
    } else if (a == "--db") {
      o.db = optionValue(args, i);
    } else if (a == "--no-db") {
      o.store = false;
    } else if (a == "--json") {
      o.json = true;
    } else if (!a.empty() && a[0] == '-') {
      throw BadInput("unknown option " + a);
    } else {
      positional.push_back(a);
    }
  }
  if (positional.size() != 1) throw BadInput("expected one REFERENCE.py");
  const auto mode = generate::searchModeFromString(search);
  if (!mode) throw BadInput("--search: '" + search + "' is not best-of-n or refine");
  o.request.mode = *mode;
  if (roundsGiven && *mode != generate::SearchMode::Refine) {
    throw BadInput("--rounds is for --search refine");
  }
  if (sampling.topP && *sampling.topP > 1) throw BadInput("--top-p must be at most 1");
  o.generator.needsFindings = *mode == generate::SearchMode::Refine;
  o.request.verify.referencePath = positional[0];
  return o;
}

std::string rewardText(const std::optional<Evaluation>& e) {
  return e && e->reward.total ? formatNumber("%.3g", *e->reward.total) : "-";
}

std::string flagsText(const std::optional<Evaluation>& e) {
  if (!e || e->flags.empty()) return "-";
  std::string text;
  for (const Flag& f : e->flags) text += (text.empty() ? "" : ",") + f.id;
  return text;
}

// stderr is written from the calling thread and from the generator's.
std::mutex errMutex;

void printProgress(std::ostream& err, const GenerationEvent& event) {
  std::lock_guard lock(errMutex);
  const auto* c = event.candidate;
  const std::string who = c ? "[candidate " + std::to_string(c->id) + "] " : "";
  switch (event.kind) {
    case GenerationEvent::Kind::Round:
      err << event.message << "\n";
      break;
    case GenerationEvent::Kind::Arrived:
      err << who << "from " << c->candidate.origin
          << (c->candidate.model.empty() ? "" : " (" + c->candidate.model + ")")
          << (c->parentId ? ", refining candidate " + std::to_string(*c->parentId) : "") << ": "
          << (c->candidate.error.empty()
                  ? std::to_string(c->candidate.code.size()) + " bytes of code; verifying"
                  : c->candidate.error)
          << "\n";
      break;
    case GenerationEvent::Kind::Verify:
      err << who << event.message << "\n";
      break;
    case GenerationEvent::Kind::Verified:
      err << who << toString(c->evaluation->verdict) << ", speedup "
          << speedupText(c->evaluation->speedup) << ", reward " << rewardText(c->evaluation)
          << "\n";
      break;
  }
  err.flush();
}

/// Called on the generator's thread, while progress is printed on the calling one.
void printGeneratorLine(std::ostream& err, const std::string& text) {
  std::lock_guard lock(errMutex);
  err << text << (text.ends_with('\n') ? "" : "\n");
  err.flush();
}

void printTableOf(std::ostream& out, const GenerationResult& result) {
  if (result.candidates.empty()) {
    out << "No candidates.\n";
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : result.candidates) {
    const auto& e = c.evaluation;
    rows.push_back({std::to_string(c.id), std::to_string(c.round),
                    c.parentId ? std::to_string(*c.parentId) : "-", c.candidate.origin,
                    e ? std::string(toString(e->verdict)) : "(not verified)",
                    e ? speedupText(e->speedup) : "-", rewardText(e), flagsText(e)});
  }
  printTable(out, {"ID", "ROUND", "PARENT", "ORIGIN", "VERDICT", "SPEEDUP", "REWARD", "FLAGS"},
             rows, {true, true, true, false, false, true, true, false});
  if (result.best) {
    const auto& best = result.candidates[*result.best];
    out << "best: candidate " << best.id << " (" << speedupSummary(*best.evaluation) << ")\n";
  } else {
    out << "best: none verified\n";
  }
}

/// Writes the best candidate's kernel and its report; returns the folder.
std::string writeBest(const GenerateOptions& o, const GenerationResult& result) {
  const auto& best = result.candidates.at(*result.best);
  const fs::path dir(o.out);
  fs::create_directories(dir);
  std::ofstream(dir / "kernel.py", std::ios::binary) << best.candidate.code;
  json report = {{"reference", fs::absolute(o.request.verify.referencePath).string()},
                 {"candidate", generate::summaryJson(best)},
                 {"plan", best.candidate.plan},
                 {"evaluation", *best.evaluation},
                 {"session", result.sessionId ? json(*result.sessionId) : json(nullptr)},
                 {"database", result.database.empty() ? json(nullptr) : json(result.database)}};
  std::ofstream file(dir / "report.json", std::ios::binary);
  file << report.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  if (!file) throw std::runtime_error("cannot write " + (dir / "report.json").string());
  return dir.string();
}

int failWith(std::ostream& out, std::ostream& err, bool asJson, const std::string& message,
             int code) {
  err << "crucible generate: " << message << "\n";
  if (asJson) {
    out << json{{"candidates", json::array()}, {"best", nullptr}, {"error", message}}.dump(2)
        << "\n";
  }
  return code;
}

}  // namespace

int runGenerate(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  GenerateOptions o;
  if (auto exit = parseCommandLine(args, "generate", kGenerateUsage, parse, o, out, err))
    return *exit;

  const std::string& referencePath = o.request.verify.referencePath;
  const auto source = readFile(referencePath);
  if (!source) return failWith(out, err, o.json, referencePath + ": cannot read the file", 2);
  o.request.task = taskFor(referencePath, *source);
  o.request.generate.referencePath = referencePath;
  o.request.generate.referenceSource = *source;
  o.request.generate.referenceName = o.request.task.name;

  std::unique_ptr<generate::Generator> generator;
  try {
    generator = generate::makeGenerator(o.generator);
    o.request.generate.backend = resolveBackend(o.request.verify.backend);
    if (o.store) o.request.databasePath = o.db.empty() ? store::Store::defaultDatabasePath() : o.db;
  } catch (const BadInput& e) {
    return failWith(out, err, o.json, e.what(), 2);
  } catch (const generate::GeneratorUnavailable& e) {
    return failWith(out, err, o.json, e.what(), 2);
  } catch (const std::exception& e) {
    return failWith(out, err, o.json, e.what(), 3);
  }

  watchForInterrupt();
  GenerationResult result;
  try {
    result = generate::runGeneration(
        *generator, o.request, interruptSource().get_token(),
        [&](const GenerationEvent& event) {
          if (!o.json) printProgress(err, event);
        },
        [&](int index, const std::string& text) {
          // Lines about the generator's own work (loading a
          // model); tokens are many and interleaved, so not shown.
          if (index < 0 && !o.json) printGeneratorLine(err, text);
        });
  } catch (const BadInput& e) {
    return failWith(out, err, o.json, e.what(), 2);
  } catch (const std::exception& e) {
    return failWith(out, err, o.json, e.what(), 3);
  }

  if (result.sessionId) {
    err << "stored as session " << *result.sessionId << " in " << result.database << "\n";
  }
  if (!result.generatorError.empty()) err << "crucible generate: " << result.generatorError << "\n";
  if (result.interrupted) err << "crucible generate: interrupted; what was stored is kept\n";
  if (result.best && !o.out.empty()) {
    try {
      err << "best candidate written to " << writeBest(o, result) << "\n";
    } catch (const std::exception& e) {
      err << "crucible generate: the best candidate was NOT written: " << e.what() << "\n";
    }
  }
  if (o.json) {
    out << json(result).dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  } else {
    printTableOf(out, result);
  }
  if (result.best) return 0;
  if (result.interrupted || (result.candidates.empty() && !result.generatorError.empty())) return 3;
  return 1;
}

}  // namespace crucible::cli
