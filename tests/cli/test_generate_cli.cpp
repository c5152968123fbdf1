// `crucible generate` through the real binary against a fake OpenAI-compatible endpoint
// (tests/support/fake_openai_server.py): best-of-n over one correct, one incorrect and one
// cheating answer; refine with the verifier's findings in the next prompt; models this build does
// not have; an endpoint that is not there; Ctrl-C.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "core/proc/process.h"
#include "core/util/locations.h"
#include "tests/support/cli_run.h"
#include "tests/support/fake_endpoint.h"
#include "tests/support/interrupted_run.h"

namespace crucible {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct GenerateRun {
  int exitCode;
  std::string out, err;
};

const std::string kSource = CRUCIBLE_TEST_SOURCE_DIR;
const std::string kReference = kSource + "/resources/examples/row_softmax/reference.py";

std::string answer(const std::string& name) {
  return *readFile(kSource + "/tests/cli/generate/" + name + ".md");
}

std::vector<std::string> fastVerification() {
  return {"--backend", "interpret", "--trials", "1", "--reps", "1", "--no-compile-baseline"};
}

GenerateRun generate(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
  args.insert(args.begin(), "generate");
  env["CRUCIBLE_API_KEY"] = "sk-crucible-test";
  auto r = testing::runProgram(CRUCIBLE_TEST_CLI, args, env);
  return {r.exitCode, r.out, r.err};
}

json storedSession(const std::string& db, std::int64_t id) {
  const auto r = testing::runProgram(
      CRUCIBLE_TEST_CLI, {"sessions", "show", std::to_string(id), "--db", db, "--json"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  return json::parse(r.out)["session"];
}

/// The flags about the kernel: a parallel test run may contend the CPU or stretch the outside
/// check, which the verifier rightly says about its own measurement.
json kernelFlags(const json& flags) {
  json out = json::array();
  for (const auto& f : flags) {
    if (f != "contended_timing" && f != "unconfirmed_timing") out.push_back(f);
  }
  return out;
}

/// The stored evaluation of a session's candidate `i`.
const json& evaluationOf(const json& session, int i) {
  return session["candidates"][i]["evaluations"][0]["evaluation"];
}

/// Whether the evaluation's `stage_seconds` names `stage`.
bool ranStageNamed(const json& evaluation, const std::string& stage) {
  for (const json& t : evaluation["stage_seconds"])
    if (t["stage"] == stage) return true;
  return false;
}

std::unique_ptr<testing::FakeEndpoint> startEndpoint(const json& responses, const fs::path& dir) {
  return std::make_unique<testing::FakeEndpoint>(
      CRUCIBLE_TEST_PYTHON, kSource + "/tests/support/fake_openai_server.py",
      json{{"model", "fake-kernel-model"}, {"responses", responses}}, dir);
}

class GenerateCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("crucible-generate-cli-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static inline fs::path dir_;
};

TEST_F(GenerateCli, BestOfNVerifiesEveryAnswerAndKeepsTheFastestVerified) {
  auto server = startEndpoint(
      json::array({{{"choices", {answer("incorrect"), answer("correct"), answer("cheating")}},
                    {"chunk", 40}}}),
      dir_ / "best-of-n");
  const std::string db = (dir_ / "best-of-n.db").string();
  const fs::path out = dir_ / "best-of-n-out";
  std::vector<std::string> args = {
      kReference,      "--model",       server->url(), "-n",   "3",
      "--temperature", "0.3",           "--top-p",     "0.9",  "--max-tokens",
      "4096",          "--sample-seed", "5",           "--db", db,
      "--out",         out.string(),    "--json"};
  for (const auto& a : fastVerification()) args.push_back(a);
  const GenerateRun run = generate(args);
  ASSERT_EQ(run.exitCode, 0) << run.err << run.out;

  const json result = json::parse(run.out);
  const json& candidates = result["candidates"];
  ASSERT_EQ(candidates.size(), 3u) << run.out;
  // The answers arrive in the order the stream finishes them: by choice index here.
  EXPECT_EQ(candidates[0]["verdict"], "incorrect");
  EXPECT_EQ(candidates[1]["verdict"], "verified");
  EXPECT_EQ(candidates[2]["verdict"], "cheating");
  EXPECT_EQ(kernelFlags(candidates[2]["flags"]), json::array({"torch_compute_in_forward"}));
  for (const json& c : candidates) {
    for (const char* key :
         {"id", "origin", "model", "verdict", "correct", "speedup", "reward", "flags"}) {
      EXPECT_TRUE(c.contains(key)) << key;
    }
    EXPECT_EQ(c["origin"], "endpoint");
    EXPECT_EQ(c["model"], "fake-kernel-model");
    EXPECT_TRUE(c["parent"].is_null());
  }
  EXPECT_EQ(candidates[1]["correct"], true);
  EXPECT_TRUE(candidates[1]["speedup"].is_number());
  EXPECT_TRUE(candidates[1]["reward"].is_number());
  EXPECT_EQ(candidates[0]["correct"], false);
  EXPECT_EQ(result["best"], candidates[1]["id"]);

  // What was asked of the endpoint.
  const auto sent = server->requests();
  const auto bodies = server->chatRequests();
  ASSERT_EQ(bodies.size(), 1u);
  EXPECT_EQ(bodies[0]["n"], 3);
  EXPECT_EQ(bodies[0]["temperature"], 0.3);
  EXPECT_EQ(bodies[0]["top_p"], 0.9);
  EXPECT_EQ(bodies[0]["max_tokens"], 4096);
  EXPECT_EQ(bodies[0]["seed"], 5);
  EXPECT_EQ(bodies[0]["model"], "fake-kernel-model");  // as the server listed it
  EXPECT_EQ(sent.back()["authorization"], "Bearer sk-crucible-test");
  const std::string user = bodies[0]["messages"].back()["content"];
  EXPECT_NE(user.find("return torch.softmax(x, dim=1)"), std::string::npos);  // the reference

  // What was stored: one generate session, every candidate with its answer and evaluation.
  const json session = storedSession(db, result["session"]);
  EXPECT_EQ(session["kind"], "generate");
  EXPECT_EQ(session["task"]["name"], "row_softmax");
  ASSERT_EQ(session["candidates"].size(), 3u);
  const json& stored = session["candidates"];
  EXPECT_EQ(stored[0]["raw_response"], answer("incorrect"));
  EXPECT_EQ(stored[0]["plan"],
            "Normalise each row by its sum. (Wrong: this forgets the exponential.)");
  EXPECT_EQ(stored[1]["plan"],
            "One program per row: load the row, subtract its maximum for stability, "
            "exponentiate, divide by the sum.");
  EXPECT_NE(stored[1]["prompt"].get<std::string>().find("<|user|>"), std::string::npos);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(stored[i]["id"], candidates[i]["id"]);
    EXPECT_EQ(stored[i]["origin"], "endpoint");
    ASSERT_EQ(stored[i]["evaluations"].size(), 1u);
    EXPECT_EQ(stored[i]["evaluations"][0]["evaluation"]["verdict"], candidates[i]["verdict"]);
  }

  // The best verified candidate was written out.
  const auto kernel = readFile((out / "kernel.py").string());
  ASSERT_TRUE(kernel.has_value());
  EXPECT_EQ(*kernel, stored[1]["code"].get<std::string>());
  const json report = json::parse(*readFile((out / "report.json").string()));
  EXPECT_EQ(report["candidate"]["id"], result["best"]);
  EXPECT_EQ(report["evaluation"]["verdict"], "verified");
}

TEST_F(GenerateCli, RefineShowsTheFindingsInTheNextPromptAndStoresTheLineage) {
  auto server = startEndpoint(
      json::array({{{"choices", {answer("incorrect")}}}, {{"choices", {answer("correct")}}}}),
      dir_ / "refine");
  const std::string db = (dir_ / "refine.db").string();
  std::vector<std::string> args = {kReference, "--model",  server->url(), "--endpoint-model",
                                   "my-model", "--search", "refine",      "--rounds",
                                   "2",        "-n",       "1",           "--db",
                                   db,         "--json"};
  for (const auto& a : fastVerification()) args.push_back(a);
  const GenerateRun run = generate(args);
  ASSERT_EQ(run.exitCode, 0) << run.err << run.out;
  const json result = json::parse(run.out);
  const json& candidates = result["candidates"];
  ASSERT_EQ(candidates.size(), 2u) << run.out;
  EXPECT_EQ(candidates[0]["verdict"], "incorrect");
  EXPECT_EQ(candidates[0]["round"], 1);
  EXPECT_EQ(candidates[1]["verdict"], "verified");
  EXPECT_EQ(candidates[1]["round"], 2);
  EXPECT_EQ(candidates[1]["parent"], candidates[0]["id"]);
  EXPECT_EQ(result["best"], candidates[1]["id"]);

  const auto bodies = server->chatRequests();
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_EQ(bodies[0]["model"], "my-model");
  const std::string first = bodies[0]["messages"].back()["content"];
  const std::string second = bodies[1]["messages"].back()["content"];
  EXPECT_EQ(first.find("Verdict:"), std::string::npos);
  // The second prompt carries round one's findings and its code, and asks for a fix.
  EXPECT_NE(second.find("Verdict: incorrect (the outputs do not match the reference)."),
            std::string::npos)
      << second;
  EXPECT_NE(second.find("Correctness: 0 of 1 trials"), std::string::npos) << second;
  EXPECT_NE(second.find("elements differ (max abs error"), std::string::npos) << second;
  EXPECT_NE(second.find("Timing on interpret"), std::string::npos) << second;
  EXPECT_NE(second.find("def normalise_kernel"), std::string::npos);
  EXPECT_NE(second.find("Fix it"), std::string::npos);

  const json session = storedSession(db, result["session"]);
  ASSERT_EQ(session["candidates"].size(), 2u);
  EXPECT_TRUE(session["candidates"][0]["parent_id"].is_null());
  EXPECT_EQ(session["candidates"][1]["parent_id"], candidates[0]["id"]);
  EXPECT_EQ(session["candidates"][1]["model"], "my-model");
  EXPECT_NE(session["candidates"][1]["prompt"].get<std::string>().find("Verdict: incorrect"),
            std::string::npos);
}

TEST_F(GenerateCli, TheBuiltInSynthesizerIsTheDefaultAndItsBestKernelIsVerified) {
  const std::string db = (dir_ / "synth.db").string();
  const fs::path out = dir_ / "synth-out";
  std::vector<std::string> args = {kReference, "-n",    "2",          "--db",
                                   db,         "--out", out.string(), "--json"};
  for (const auto& a : fastVerification()) args.push_back(a);
  const GenerateRun run = generate(args);  // no --model: the synthesizer
  ASSERT_EQ(run.exitCode, 0) << run.err << run.out;
  const json result = json::parse(run.out);
  const json& candidates = result["candidates"];
  ASSERT_EQ(candidates.size(), 2u) << run.out;
  for (const json& c : candidates) {
    EXPECT_EQ(c["origin"], "synth");
    EXPECT_EQ(c["model"], "synth");
    EXPECT_EQ(c["verdict"], "verified") << run.out;
    EXPECT_EQ(kernelFlags(c["flags"]), json::array()) << run.out;
  }
  ASSERT_FALSE(result["best"].is_null());
  EXPECT_TRUE(fs::exists(out / "kernel.py"));

  const json session = storedSession(db, result["session"]);
  ASSERT_EQ(session["candidates"].size(), 2u);
  EXPECT_NE(session["candidates"][0]["code"].get<std::string>().find("@triton.jit"),
            std::string::npos);
  EXPECT_FALSE(session["candidates"][0]["plan"].get<std::string>().empty());
  // The reference ran once and the second candidate reused its run; its time is measured again
  // beside each candidate, in turns, so each evaluation carries its own.
  const auto evaluation = [&](int i) -> const json& { return evaluationOf(session, i); };
  const auto ranStage = [&](int i, const std::string& stage) {
    return ranStageNamed(evaluation(i), stage);
  };
  EXPECT_TRUE(ranStage(0, "reference")) << evaluation(0).dump();
  EXPECT_TRUE(ranStage(1, "reference (reused)")) << evaluation(1).dump();
  EXPECT_FALSE(ranStage(1, "reference")) << evaluation(1).dump();
  // The comparison says where its time went too.
  for (const char* phase : {"compare", "compare/trials", "compare/checks", "compare/timed"}) {
    EXPECT_TRUE(ranStage(0, phase)) << phase << evaluation(0).dump();
  }
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(evaluation(i)["timing"]["reference_ms"].is_number()) << evaluation(i).dump();
    EXPECT_TRUE(evaluation(i)["timing"]["interleaved"].get<bool>()) << evaluation(i).dump();
  }

  // It does not refine and reads no prompt: both are usage errors, not silent no-ops.
  EXPECT_EQ(generate({kReference, "--search", "refine", "--rounds", "2", "--no-db"}).exitCode, 2);
}

TEST_F(GenerateCli, LaterCandidatesAreTimedByTheReferenceTimerOfTheFirst) {
  // A correct answer, one that raises before anything is timed, and a correct one again.
  auto server = startEndpoint(
      json::array(
          {{{"choices", {answer("correct"), answer("raises"), answer("correct")}}, {"chunk", 40}}}),
      dir_ / "kept");
  const std::string db = (dir_ / "kept.db").string();
  // Two timed calls, so that the rounds are two turns a side.
  const std::vector<std::string> args = {
      kReference, "--model", server->url(), "-n",        "3",
      "--db",     db,        "--json",      "--backend", "interpret",
      "--trials", "1",       "--reps",      "2",         "--no-compile-baseline"};
  const GenerateRun run = generate(args);
  ASSERT_EQ(run.exitCode, 0) << run.err << run.out;
  const json result = json::parse(run.out);
  ASSERT_EQ(result["candidates"].size(), 3u) << run.out;
  EXPECT_EQ(result["candidates"][0]["verdict"], "verified") << run.out;
  EXPECT_NE(result["candidates"][1]["verdict"], "verified") << run.out;
  EXPECT_EQ(result["candidates"][2]["verdict"], "verified") << run.out;

  const json session = storedSession(db, result["session"]);
  const auto evaluation = [&](int i) -> const json& { return evaluationOf(session, i); };
  const auto ranStage = [&](int i, const std::string& stage) {
    return ranStageNamed(evaluation(i), stage);
  };
  // The first candidate started the reference's timer; the others had sessions on it. The one
  // that raised never asked for a turn, so its session timed nothing, and the timer lived on.
  EXPECT_TRUE(ranStage(0, "baseline")) << evaluation(0).dump();
  for (int i : {1, 2}) {
    EXPECT_TRUE(ranStage(i, "baseline (kept)")) << evaluation(i).dump();
    EXPECT_FALSE(ranStage(i, "baseline")) << evaluation(i).dump();
  }
  const json& kept = evaluation(2)["facts"]["baseline"];
  EXPECT_EQ(kept["session"], 2) << kept.dump();
  EXPECT_EQ(kept["abandoned"], false);
  EXPECT_TRUE(kept["error"].is_null()) << kept.dump();
  EXPECT_EQ(kept["turns"]["granted"], kept["turns"]["asked"]) << kept.dump();
  EXPECT_TRUE(kept["turns"]["unpaired"].is_null()) << kept.dump();
  // Both verified candidates were timed in turns against the reference, each in its own.
  for (int i : {0, 2}) {
    EXPECT_TRUE(evaluation(i)["timing"]["reference_ms"].is_number()) << evaluation(i).dump();
    EXPECT_TRUE(evaluation(i)["timing"]["interleaved"].get<bool>()) << evaluation(i).dump();
  }
  EXPECT_NE(evaluation(0)["timing"]["reference_ms"], evaluation(2)["timing"]["reference_ms"]);
}

TEST_F(GenerateCli, ModelsThisBuildDoesNotHaveAreClearUsageErrors) {
  const fs::path weights = dir_ / "weights";
  fs::create_directories(weights);
  // A build without crucible-model (no torch): what to do instead is in the message.
  const GenerateRun embedded =
      generate({kReference, "--model", weights.string(), "--no-db"},
               {{"CRUCIBLE_MODEL_BIN", (dir_ / "no-such-engine").string()}});
  EXPECT_EQ(embedded.exitCode, 2);
  EXPECT_NE(embedded.err.find("the embedded model engine (crucible-model) is not in"),
            std::string::npos)
      << embedded.err;
  EXPECT_NE(embedded.err.find("pass its URL instead"), std::string::npos) << embedded.err;
  const GenerateRun unknown = generate({kReference, "--model", "gpt5", "--no-db"});
  EXPECT_EQ(unknown.exitCode, 2);
  EXPECT_NE(unknown.err.find("expected synth, an endpoint URL"), std::string::npos);
  EXPECT_EQ(generate({kReference, "--search", "beam"}).exitCode, 2);
  EXPECT_EQ(generate({kReference, "--rounds", "2"}).exitCode, 2);  // refine only
  EXPECT_EQ(generate({}).exitCode, 2);

  const fs::path badPrompt = dir_ / "bad.prompt";
  std::ofstream(badPrompt) << "<|user|>\n{{reference}}\n{{oops}}\n";
  const GenerateRun prompt = generate(
      {kReference, "--model", "http://127.0.0.1:9/v1", "--prompt", badPrompt.string(), "--no-db"});
  EXPECT_EQ(prompt.exitCode, 2);
  EXPECT_NE(prompt.err.find(badPrompt.string() + ":3: unknown variable {{oops}}"),
            std::string::npos)
      << prompt.err;
}

TEST_F(GenerateCli, AnEndpointThatIsNotThereIsAnError) {
  // Port 9 (discard) has no HTTP server on a test machine.
  const GenerateRun run =
      generate({kReference, "--model", "http://127.0.0.1:9/v1", "--endpoint-model", "m", "--no-db",
                "--json", "--backend", "interpret"});
  EXPECT_EQ(run.exitCode, 3) << run.err;
  const json result = json::parse(run.out);
  EXPECT_TRUE(result["candidates"].empty());
  EXPECT_NE(result["error"].get<std::string>().find("cannot connect to http://127.0.0.1:9/v1"),
            std::string::npos)
      << run.out;
}

TEST_F(GenerateCli, WhatTheSynthesizerCannotLowerIsNamedWithItsLineAndAModelOffered) {
  // A reference that only rearranges its input: nothing for a kernel to compute.
  const fs::path reference = dir_ / "view_only.py";
  std::ofstream(reference)
      << ("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
          "    def forward(self, x):\n"
          "        return x.transpose(1, 2).reshape(2, 8, 6)\n\n\n"
          "def get_inputs():\n    return [torch.randn(2, 6, 8)]\n\n\n"
          "def get_init_inputs():\n    return []\n");
  const GenerateRun run = generate({reference.string(), "--no-db", "--backend", "interpret"});
  EXPECT_EQ(run.exitCode, 3) << run.err;
  EXPECT_NE(run.err.find("line 7: the reference only takes views of its inputs"), std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("--model http://host:port/v1"), std::string::npos) << run.err;
}

TEST_F(GenerateCli, CtrlCStopsCleanlyAndKeepsWhatWasStored) {
  auto server = startEndpoint(json::array({{{"choices", {answer("correct"), answer("correct")}}}}),
                              dir_ / "interrupt");
  const std::string db = (dir_ / "interrupt.db").string();
  std::vector<std::string> args = {
      CRUCIBLE_TEST_CLI, "generate", kReference, "--model", server->url(), "-n", "2", "--db", db};
  for (const auto& a : fastVerification()) args.push_back(a);
  // Interrupt while the first candidate is being verified: it is stored, its evaluation is not.
  const auto run = testing::interruptWhenSeen(args, "[candidate 1] [reference]");
  ASSERT_TRUE(run.sawMarker) << run.err;
  const std::string& progress = run.err;
  const std::string& table = run.out;
  ASSERT_TRUE(run.exited) << progress;
  EXPECT_EQ(run.exitCode, 3) << progress;
  EXPECT_NE(progress.find("interrupted; what was stored is kept"), std::string::npos) << progress;
  EXPECT_NE(table.find("(not verified)"), std::string::npos) << table;

  const json session = storedSession(db, 1);
  EXPECT_EQ(session["kind"], "generate");
  ASSERT_GE(session["candidates"].size(), 1u);
  EXPECT_NE(session["candidates"][0]["code"].get<std::string>().find("softmax_kernel"),
            std::string::npos);
  EXPECT_TRUE(session["candidates"][0]["evaluations"].empty());
}

}  // namespace
}  // namespace crucible
