#include "core/verify/judge.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

namespace crucible {

namespace {
using nlohmann::json;

std::optional<int> lineOf(const json& j) {
  if (j.is_object() && j.contains("line") && j["line"].is_number_integer()) {
    return j["line"].get<int>();
  }
  return std::nullopt;
}

std::optional<double> numberOf(const json& j, const char* key) {
  if (j.is_object() && j.contains(key) && j[key].is_number()) return j[key].get<double>();
  return std::nullopt;
}

/// The numbers of a JSON array (anything else is skipped).
std::vector<double> numbersIn(const json& array) {
  std::vector<double> out;
  if (!array.is_array()) return out;
  for (const auto& x : array) {
    if (x.is_number()) out.push_back(x.get<double>());
  }
  return out;
}

std::vector<double> samplesOf(const json& j, const char* key) {
  return j.is_object() && j.contains(key) ? numbersIn(j[key]) : std::vector<double>{};
}

/// Per-round samples: an array of arrays of numbers under `key`.
std::vector<std::vector<double>> roundsOf(const json& j, const char* key) {
  std::vector<std::vector<double>> out;
  if (!j.is_object() || !j.contains(key) || !j[key].is_array()) return out;
  for (const auto& round : j[key]) out.push_back(numbersIn(round));
  return out;
}

const json& at(const json& j, const char* key) {
  static const json null;
  return j.is_object() && j.contains(key) ? j[key] : null;
}

// Facts come from a process that ran untrusted code: read them defensively, never throw.
template <typename T>
T get(const json& j, const char* key, T fallback) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return fallback;
  try {
    return j[key].get<T>();
  } catch (const json::exception&) {
    return fallback;
  }
}

std::string get(const json& j, const char* key, const char* fallback) {
  return get<std::string>(j, key, std::string(fallback));
}

std::string joinCounts(const json& counts, std::size_t limit = 6) {
  std::vector<std::pair<std::string, long>> items;
  for (const auto& [name, n] : counts.items()) {
    items.emplace_back(name, n.is_number() ? n.get<long>() : 1);
  }
  std::sort(items.begin(), items.end(), [](auto& a, auto& b) { return a.second > b.second; });
  std::ostringstream out;
  for (std::size_t i = 0; i < items.size() && i < limit; ++i) {
    out << (i ? ", " : "") << items[i].first << " x" << items[i].second;
  }
  if (items.size() > limit) out << ", ...";
  return out.str();
}

/// Collects flags, keeping one flag per id (the first evidence wins, later ones are appended to
/// its evidence list) so that the flag list reads as the catalogue does.
class FlagSet {
 public:
  void raise(std::string_view id, std::string message, std::optional<int> line = std::nullopt,
             json evidence = json::object()) {
    for (auto& f : flags_) {
      if (f.id == id) {
        f.evidence["also"].push_back(
            {{"message", message}, {"line", line ? json(*line) : json(nullptr)}});
        if (!f.line && line) f.line = line;
        return;
      }
    }
    flags_.push_back(makeFlag(id, std::move(message), line, std::move(evidence)));
  }
  bool has(std::string_view id) const {
    return std::any_of(flags_.begin(), flags_.end(), [&](const Flag& f) { return f.id == id; });
  }
  std::vector<Flag> take() {
    // Catalogue order, so that output is stable.
    std::vector<Flag> ordered;
    for (const auto& info : flagCatalogue()) {
      for (auto& f : flags_) {
        if (f.id == info.id) ordered.push_back(std::move(f));
      }
    }
    return ordered;
  }

 private:
  std::vector<Flag> flags_;
};

// Static observation kinds and the flag each one raises (docs/WORKER_PROTOCOL.md).
const std::map<std::string, std::string>& staticKindToFlag() {
  static const std::map<std::string, std::string> table = {
      {"try_except", "exception_fallback"},
      {"reference_model_use", "reference_reuse"},
      {"threading", "concurrency_escape"},
      {"timer_patch", "harness_tampering"},
      {"introspection", "harness_tampering"},
      {"process_or_network", "sandbox_violation"},
      {"tensor_subclass", "lazy_output"},
      {"torch_internals", "harness_tampering"},
      {"launch_hook_compute", "torch_compute_in_forward"},
      {"numpy_compute", "non_torch_compute"},
      {"raw_bytes", "non_torch_compute"},
  };
  return table;
}

bool referenceIsFloat32(const json& referenceFacts) {
  for (const auto& out : at(referenceFacts, "outputs")) {
    const auto dtype = get(out, "dtype", "");
    if (dtype == "float32" || dtype == "float64") return true;
  }
  return false;
}

std::optional<EvalError> processError(const ProcessOutcome& p) {
  if (!p.ran) return std::nullopt;
  auto tail = [&] {
    return p.stderrTail.empty() ? std::string() : "; last output: " + p.stderrTail;
  };
  if (p.cancelled) return EvalError{"cancelled", "verification was cancelled", "infrastructure"};
  if (p.timedOut) {
    std::ostringstream m;
    m << "the candidate did not finish within the " << p.timeoutSeconds << " s timeout";
    return EvalError{"timeout", m.str(), "candidate"};
  }
  if (p.memoryExceeded) {
    return EvalError{"memory", "the candidate exceeded the memory limit and was stopped",
                     "candidate"};
  }
  if (p.termSignal != 0) {
    return EvalError{
        "crash",
        "the candidate's process was killed by signal " + std::to_string(p.termSignal) + tail(),
        "candidate"};
  }
  if (!p.reportedFacts) {
    return EvalError{"crash",
                     "the candidate's process exited (code " + std::to_string(p.exitCode) +
                         ") before reporting" + tail(),
                     "candidate"};
  }
  return std::nullopt;
}

void raiseStaticFlags(const json& staticFacts, FlagSet& flags) {
  for (const auto& obs : at(staticFacts, "observations")) {
    const auto kind = get(obs, "kind", "");
    auto it = staticKindToFlag().find(kind);
    if (it == staticKindToFlag().end()) continue;
    flags.raise(it->second, get(obs, "detail", kind), lineOf(obs),
                {{"source", "static"}, {"kind", kind}});
  }
}

/// The candidate's line where most of some run-time work happened (the candidate stage's
/// `lines` facts: line -> count), the first such line on a tie; nullopt when none was seen.
std::optional<int> busiestLine(const json& lines) {
  std::optional<int> best;
  long most = 0;
  if (!lines.is_object()) return best;
  for (const auto& [line, n] : lines.items()) {
    const long count = n.is_number_integer() ? n.get<long>() : 0;
    int number = 0;
    try {
      number = std::stoi(line);
    } catch (const std::exception&) {
      continue;
    }
    if (number > 0 && (count > most || (count == most && best && number < *best))) {
      best = number;
      most = count;
    }
  }
  return best;
}

/// Did the kernels do the work: launches in every mode, no PyTorch or foreign compute beside
/// them, and an output that depends on them (DRTriton's no-op test).
void raiseWorkFlags(const Observations& o, FlagSet& flags) {
  const json& f = o.candidateFacts;
  const json& launches = at(f, "launches");
  const bool anyTrialRan = std::any_of(at(f, "trials").begin(), at(f, "trials").end(),
                                       [](const json& t) { return get(t, "ok", false); });

  // Launches, train and eval mode (KernelGYM: a kernel must run in both).
  if (anyTrialRan) {
    const auto train = get(launches, "train", 0L);
    const bool evalRan = at(at(f, "eval_mode"), "ran").is_boolean() &&
                         at(f, "eval_mode")["ran"].get<bool>() &&
                         at(at(f, "eval_mode"), "error").is_null();
    const auto evalLaunches = get(launches, "eval", 0L);
    const bool timedCalls = get(launches, "timed_calls", 0L) > 0;
    if (train == 0) {
      flags.raise("kernel_not_launched", "no Triton kernel was launched during ModelNew.forward",
                  std::nullopt, {{"launches", launches}});
    } else if (evalRan && evalLaunches == 0) {
      flags.raise("kernel_not_launched",
                  "no Triton kernel was launched in eval mode (model.eval()): the kernels run "
                  "only in training mode",
                  std::nullopt, {{"launches", launches}});
    } else if (timedCalls && at(launches, "timed_min_per_call").is_number_integer() &&
               launches["timed_min_per_call"].get<long>() == 0) {
      flags.raise("kernel_not_launched",
                  "a timed call of forward launched no Triton kernel: the kernels run only "
                  "while the calls are checked",
                  std::nullopt, {{"launches", launches}});
    }
  }

  // PyTorch compute inside forward (train or eval mode; the timed calls are in the recorder's
  // facts below).
  for (const std::string mode : {"forward", "eval"}) {
    const json& ops = at(at(f, "aten_ops"), mode.c_str());
    if (ops.is_object() && !ops.empty()) {
      const json& lines = at(at(f, "lines"), mode.c_str());
      flags.raise("torch_compute_in_forward",
                  std::string("PyTorch computed during ") +
                      (mode == "eval" ? "forward in eval mode" : "forward") + ": " +
                      joinCounts(ops),
                  busiestLine(lines), {{"aten_ops", ops}, {"mode", mode}, {"lines", lines}});
    }
  }

  // ATen work recorded below the dispatch mode (PyTorch's profiler, in C++), and a profiler
  // switched off while forward ran.
  const json& recorder = at(f, "aten_recorder");
  if (get(recorder, "ok", false)) {
    json ops = json::object();
    for (const auto& [stage, counts] : at(recorder, "compute").items()) {
      if (stage == "noop" || !counts.is_object()) continue;
      for (const auto& [op, n] : counts.items()) {
        ops[op] = ops.value(op, 0L) + (n.is_number_integer() ? n.get<long>() : 0L);
      }
    }
    if (!ops.empty()) {
      flags.raise(
          "torch_compute_in_forward",
          "PyTorch computed during forward (recorded below the dispatch mode): " + joinCounts(ops),
          std::nullopt, {{"aten_ops", ops}, {"source", "profiler"}});
    }
    bool missing = get(recorder, "disabled_seen", 0L) > 0;
    for (const auto& [stage, n] : at(recorder, "expected").items()) {
      const json& seen = at(at(recorder, "forward_ranges"), stage.c_str());
      missing = missing || (n.is_number_integer() &&
                            (!seen.is_number_integer() || seen.get<long>() < n.get<long>()));
    }
    if (missing) {
      flags.raise("harness_tampering",
                  "PyTorch's profiler, which records the ATen work of every forward call, was "
                  "switched off while forward ran",
                  std::nullopt, {{"aten_recorder", recorder}});
    }
  }

  // Work done outside Triton and PyTorch.
  const json& foreign = at(f, "foreign_calls");
  if (foreign.is_object() && !foreign.empty()) {
    const json& lines = at(at(f, "lines"), "foreign_calls");
    flags.raise("non_torch_compute", "forward called into other libraries: " + joinCounts(foreign),
                busiestLine(lines), {{"calls", foreign}, {"lines", lines}});
  }
  const auto trialsRun = std::max<std::size_t>(1, at(f, "trials").size());
  const auto scalarReads = get(f, "scalar_reads", 0L);
  if (scalarReads > static_cast<long>(64 * trialsRun)) {
    flags.raise("non_torch_compute",
                "forward read " + std::to_string(scalarReads) +
                    " tensor elements into Python (a Python loop over the data)",
                busiestLine(at(at(f, "lines"), "scalar_reads")),
                {{"scalar_reads", scalarReads}, {"lines", at(at(f, "lines"), "scalar_reads")}});
  }

  // DRTriton's faithfulness test: no-op launches must change the output.
  if (o.noop && at(at(f, "noop"), "error").is_null() && o.noop->ok()) {
    flags.raise("kernel_output_unused",
                "with every Triton launch replaced by a no-op, forward returned the same output",
                std::nullopt, {{"comparison", o.noop->toJson()}});
  }
}

/// Memory the candidate touched: outputs left unwritten, accesses out of bounds, inputs changed.
void raiseMemoryFlags(const Observations& o, FlagSet& flags) {
  const json& f = o.candidateFacts;
  // Elements never written keep the poison pattern.
  for (std::size_t k = 0; k < o.trials.size(); ++k) {
    if (o.trials[k] && o.trials[k]->poisoned() > 0) {
      flags.raise("output_not_written",
                  std::to_string(o.trials[k]->poisoned()) + " output element(s) in trial " +
                      std::to_string(k) + " were never written (they still hold the poison value)",
                  std::nullopt, {{"trial", k}, {"poisoned", o.trials[k]->poisoned()}});
      break;
    }
  }

  // Accesses outside a tensor argument's storage (opencl's bounds-checked first trial): each
  // was skipped instead of touching memory; on a GPU it could read garbage or fault.
  const json& oob = at(at(f, "out_of_bounds"), "events");
  if (oob.is_array() && !oob.empty()) {
    const json& e = oob[0];
    std::ostringstream m;
    m << get(e, "access", "access") << " outside " << get(e, "argument", "a tensor argument")
      << "'s storage in kernel " << get(e, "kernel", "?");
    if (at(e, "element_offset").is_number_integer())
      m << " at element offset " << e["element_offset"].get<long long>() << " (the tensor has "
        << get(e, "numel", 0L) << " elements, its storage " << get(e, "storage_elements", 0L)
        << ")";
    flags.raise("out_of_bounds_access", m.str(), lineOf(e), {{"events", oob}});
  }

  // Inputs changed by the call.
  const bool mutatedInProcess = at(at(f, "input_mutation"), "detected").is_boolean() &&
                                at(f, "input_mutation")["detected"].get<bool>();
  if (o.inputsMutated.value_or(false) || mutatedInProcess) {
    flags.raise("input_mutation", "the candidate changed its input tensors during forward",
                std::nullopt, {{"input_mutation", at(f, "input_mutation")}});
  }
}

/// Outputs that answer something other than the inputs they were given.
void raiseAnswerFlags(const Observations& o, bool primaryCorrect, FlagSet& flags) {
  const json& f = o.candidateFacts;
  // The output does not follow the inputs.
  if (o.candidateOutputsConstant && o.referenceOutputsVary && o.trials.size() >= 2) {
    flags.raise("input_insensitive_output",
                "the candidate returned the same output for every trial's inputs while the "
                "reference's output changed");
  }

  // Right at the given shapes, wrong at another batch size.
  const json& alt = at(o.referenceFacts, "alt_batch");
  if (primaryCorrect && get(alt, "accepted", false)) {
    const bool altFailed = !o.alt || !o.alt->ok();
    if (altFailed) {
      std::string how = o.alt ? "its output was wrong" : "it failed";
      const json& altFacts = at(f, "alt");
      if (!at(altFacts, "error").is_null()) how += ": " + get(at(altFacts, "error"), "message", "");
      flags.raise("shape_specialized",
                  "correct at " + get(alt, "name", std::string("batch_size")) + " = " +
                      std::to_string(get(alt, "value", 0)) + " but at " +
                      std::to_string(get(alt, "alt", 0)) + " " + how,
                  lineOf(at(altFacts, "error")),
                  {{"alt_batch", alt}, {"comparison", o.alt ? o.alt->toJson() : json(nullptr)}});
    }
  }

  // Stale outputs: trial outputs repeated, or timed outputs not matching their inputs.
  if (!o.staleTrials.empty()) {
    const auto [k, j] = o.staleTrials.front();
    flags.raise("output_caching", "trial " + std::to_string(k) + " returned exactly trial " +
                                      std::to_string(j) + "'s output for different inputs");
  }
  // Outputs of the timed calls are judged with the correctness (timedCorrect): they ran on
  // fresh inputs, so a wrong one may be an honest kernel's numerical miss as well as a stale
  // answer, and either way the candidate is not correct.
}

void raisePrecisionFlags(const Observations& o, FlagSet& flags) {
  const json& f = o.candidateFacts;
  if (referenceIsFloat32(o.referenceFacts)) {
    if (get(at(f, "casts"), "downcasts", 0L) > 0) {
      flags.raise("precision_downgrade",
                  "forward cast data to a lower floating-point precision than the reference's",
                  std::nullopt, {{"casts", at(f, "casts")}});
    }
    for (const auto& obs : at(o.staticFacts, "observations")) {
      if (get(obs, "kind", "") == "low_precision_cast") {
        flags.raise("precision_downgrade",
                    get(obs, "detail", "a cast to lower precision") +
                        " while the reference computes in fp32",
                    lineOf(obs), {{"source", "static"}});
      }
    }
  }
}

/// What the candidate did around the harness: threads, lazy outputs, replaced functions, audit
/// events, and messages or files the worker did not write.
void raiseHarnessFlags(const Observations& o, FlagSet& flags) {
  const json& f = o.candidateFacts;
  // Threads that outlive or run beside forward.
  const json& started = at(at(f, "threads"), "started");
  if (started.is_array() && !started.empty()) {
    flags.raise("concurrency_escape", "forward started threads: " + started.dump(), std::nullopt,
                {{"threads", at(f, "threads")}});
  }

  // Outputs that are not plain dense tensors with their own storage.
  for (const auto& out : at(f, "outputs")) {
    if (!at(out, "problem").is_null()) {
      flags.raise("lazy_output",
                  "output " + std::to_string(get(out, "index", 0)) + ": " +
                      (out["problem"].is_string() ? out["problem"].get<std::string>()
                                                  : out["problem"].dump()),
                  std::nullopt, {{"output", out}});
      break;
    }
  }

  // Harness tampering and sandbox violations seen at run time.
  for (const auto& t : at(f, "tampering")) {
    flags.raise("harness_tampering", get(t, "what", "a harness function was replaced"), lineOf(t),
                {{"source", "identity check"}});
  }
  for (const auto& event : at(f, "audit")) {
    const auto category = get(event, "category", "");
    if (!findFlag(category)) continue;
    flags.raise(category, get(event, "event", "") + ": " + get(event, "detail", ""), lineOf(event),
                {{"source", "audit"}, {"event", event}});
  }

  // Messages or files the worker did not write.
  if (o.forgedChannelLines > 0) {
    flags.raise("harness_tampering",
                std::to_string(o.forgedChannelLines) +
                    " message(s) on the result channel were not written by the worker",
                std::nullopt, {{"forged_lines", o.forgedChannelLines}});
  }
  if (!o.replacedFiles.empty()) {
    flags.raise(
        "harness_tampering",
        "result files were changed after the worker wrote them: " + json(o.replacedFiles).dump(),
        std::nullopt, {{"files", o.replacedFiles}});
  }
}

void raiseDynamicFlags(const Observations& o, bool primaryCorrect, FlagSet& flags) {
  // In this order, so that the first evidence for a flag raised by several groups stays the
  // same (FlagSet keeps the first message).
  raiseWorkFlags(o, flags);
  raiseMemoryFlags(o, flags);
  raiseAnswerFlags(o, primaryCorrect, flags);
  raisePrecisionFlags(o, flags);
  raiseHarnessFlags(o, flags);
  // Determinism.
  if (o.repeat && !o.repeat->ok()) {
    flags.raise("nondeterministic_output", "two runs on the same inputs disagreed beyond rounding",
                std::nullopt, {{"comparison", o.repeat->toJson()}});
  }
}

/// How the two sides' timed rounds went: how many the candidate timed, whether every one of
/// them (and every one of the reference's) was timed in its turn, and a warning where not.
void judgeRounds(const Observations& o, Evaluation& e, FlagSet& flags) {
  const json& candidateTiming = at(o.candidateFacts, "timing");
  e.timing.rounds = static_cast<int>(numberOf(candidateTiming, "rounds").value_or(0));
  if (!o.turns.is_object() || e.timing.rounds == 0) return;  // not run in turns at all
  std::vector<std::string> why;
  auto sideUnpaired = [&](const json& facts, const char* side) {
    const json& turns = at(facts, "turns");
    const auto asked = numberOf(turns, "asked").value_or(0);
    const auto granted = numberOf(turns, "granted").value_or(0);
    if (asked == 0 || granted < asked) {
      const json& reason = at(turns, "unpaired");
      why.push_back(std::string(side) + ": " +
                    (reason.is_string() ? reason.get<std::string>() : "no turns were asked for"));
    }
  };
  if (!at(o.baselineFacts, "error").is_null()) {
    why.push_back("reference: " + get(at(o.baselineFacts, "error"), "message", "its timer failed"));
  } else if (!o.baselineFacts.is_object()) {
    why.emplace_back("reference: its timer reported nothing");
  } else {
    sideUnpaired(o.baselineFacts, "reference");
  }
  sideUnpaired(o.candidateFacts, "candidate");
  for (const auto& error : at(o.turns, "protocol_errors")) {
    if (error.is_string()) why.push_back(error.get<std::string>());
  }
  e.timing.interleaved = why.empty();
  if (why.empty()) return;
  std::string message = "the reference and the candidate were not timed in turns";
  for (std::size_t i = 0; i < why.size(); ++i) message += (i ? "; " : " (") + why[i];
  flags.raise("unpaired_timing", message + ")", std::nullopt, {{"reasons", why}});
}

/// One baseline's (`name`: eager or compile) times from the places the candidate's counted
/// samples come from: each set's first call in its round where the baseline says which those
/// are (`<name>_fresh_rounds_ms`), else every call.
struct ReferenceTimes {
  std::vector<std::vector<double>> rounds;
  std::vector<double> samples;
};

ReferenceTimes referenceTimes(const json& refTiming, const std::string& name) {
  ReferenceTimes ref{roundsOf(refTiming, (name + "_fresh_rounds_ms").c_str()), {}};
  for (const auto& r : ref.rounds) ref.samples.insert(ref.samples.end(), r.begin(), r.end());
  if (ref.rounds.empty()) {
    ref.rounds = roundsOf(refTiming, (name + "_rounds_ms").c_str());
    ref.samples = samplesOf(refTiming, (name + "_samples_ms").c_str());
  }
  return ref;
}

/// Whether the rounds were timed on a GPU (else on the CPU the verifier itself runs on).
bool timedOnGpu(const Observations& o) {
  return get(at(o.referenceFacts, "device"), "kind", "") == "cuda";
}

/// The candidate's time: the reported median, unless the outside measurement does not confirm
/// it (then warn and use the outside one). Not a cheat by itself: on a loaded machine the
/// outside interval can hold many times the calls' own time. A forged time gains nothing.
std::optional<double> candidateTime(const Observations& o, FlagSet& flags) {
  const json& timing = at(o.candidateFacts, "timing");
  auto reported = numberOf(timing, "median_ms");
  if (!reported || !o.outsideCheckMs || o.checkReps <= 0) return reported;
  // The outside interval also holds pipe latency, the harness's bookkeeping between calls,
  // synchronisation and scheduling: allow 5% of it (at least 5 ms), then require the reported
  // time to explain at least half of the rest.
  const double allowanceMs = std::max(5.0, 0.05 * *o.outsideCheckMs);
  const double unexplained = *o.outsideCheckMs - allowanceMs;
  if (unexplained > 0 && *reported * o.checkReps < 0.5 * unexplained) {
    const double outsidePerCall = *o.outsideCheckMs / o.checkReps;
    std::ostringstream m;
    m << "the candidate's process reported " << *reported << " ms per call but " << outsidePerCall
      << " ms per call was measured from outside it (" << o.checkReps
      << " calls); the outside time is used";
    flags.raise("unconfirmed_timing", m.str(), std::nullopt,
                {{"reported_ms", *reported},
                 {"outside_ms", outsidePerCall},
                 {"check_reps", o.checkReps},
                 {"allowance_ms", allowanceMs}});
    return outsidePerCall;
  }
  return reported;
}

/// A time no honest kernel can reach. On a GPU every timed call starts with the L2 flushed, so
/// the task's bytes come from memory at no more than the measured bandwidth: half the floor is
/// forged. On a CPU, caches can serve a small task's data faster than the measured memory
/// bandwidth, so only a task whose data outgrows the bandwidth test's own 64 MiB (beyond the
/// caches), timed under a quarter of its floor, is proof.
bool belowPhysicalFloor(const Observations& o, double candidateMs, double floorMs, double bytes) {
  if (timedOnGpu(o)) return candidateMs < 0.5 * floorMs;
  return bytes > 64.0 * (1 << 20) && candidateMs < 0.25 * floorMs;
}

void checkPlausibility(const Observations& o, const Evaluation& e, const JudgeOptions& options,
                       FlagSet& flags) {
  if (!e.speedup || !e.timing.candidateMs) return;
  if (*e.speedup > options.speedupCeiling) {
    std::ostringstream m;
    m << "speedup " << *e.speedup << "x is above the ceiling of " << options.speedupCeiling << "x";
    flags.raise("implausible_speedup", m.str(), std::nullopt, {{"speedup", *e.speedup}});
  }
  // Roofline: no kernel moves its bytes faster than the device's bandwidth, or does its FLOPs
  // faster than its peak rate. Both figures were measured, so allow a factor of 2.
  const json& cost = at(o.referenceFacts, "cost");
  const json& device = at(o.referenceFacts, "device");
  const auto bytes = numberOf(cost, "bytes");
  const auto flops = numberOf(cost, "flops");
  const auto bandwidth = numberOf(device, "bandwidth_gbs");
  const auto peak = numberOf(device, "peak_gflops");
  double floorMs = 0;
  if (bytes && bandwidth && *bandwidth > 0)
    floorMs = std::max(floorMs, *bytes / (*bandwidth * 1e6));
  if (flops && peak && *peak > 0) floorMs = std::max(floorMs, *flops / (*peak * 1e6));
  if (floorMs > 0 && *e.timing.candidateMs < 0.5 * floorMs) {
    std::ostringstream m;
    m << "the candidate took " << *e.timing.candidateMs << " ms, but moving the task's data and "
      << "doing its arithmetic on this device takes at least " << floorMs << " ms";
    const json evidence = {{"candidate_ms", *e.timing.candidateMs},
                           {"floor_ms", floorMs},
                           {"cost", cost},
                           {"device", device}};
    flags.raise(belowPhysicalFloor(o, *e.timing.candidateMs, floorMs, bytes.value_or(0))
                    ? "impossible_timing"
                    : "implausible_speedup",
                m.str(), std::nullopt, evidence);
  }
}

Reward rewardFor(const JudgeOptions& options, const RewardInputs& inputs) {
  const RewardPreset* preset = findRewardPreset(options.rewardPreset);
  if (preset == nullptr)
    throw std::invalid_argument("unknown reward preset " + options.rewardPreset);
  return preset->evaluate(inputs);
}

json correctnessReport(const Observations& o) {
  json trials = json::array();
  for (std::size_t k = 0; k < o.trials.size(); ++k) {
    trials.push_back(o.trials[k] ? o.trials[k]->toJson() : json(nullptr));
  }
  json timed = json::array();
  for (const auto& t : o.timed) timed.push_back(t ? t->toJson() : json(nullptr));
  return {{"trials", trials},
          {"timed", timed},
          {"alt", o.alt ? o.alt->toJson() : json(nullptr)},
          {"degeneracy", o.degeneracy.toJson()},
          {"rule", o.degeneracy.degenerate ? "relative_norm" : "allclose"}};
}
/// Step 1, static validity: the candidate must parse, define ModelNew and a Triton kernel. False
/// when it is invalid (the verdict is set).
bool judgeStatic(const json& st, Evaluation& e, FlagSet& flags, RewardInputs& reward) {
  const json& syntaxError = at(st, "syntax_error");
  const bool hasKernel = at(st, "kernels").is_array() && !at(st, "kernels").empty();
  if (!syntaxError.is_null()) {
    e.verdict = Verdict::Invalid;
    e.error = EvalError{"static", "syntax error: " + get(syntaxError, "message", ""), "candidate",
                        lineOf(syntaxError)};
  } else if (at(st, "model_new_line").is_null()) {
    e.verdict = Verdict::Invalid;
    e.error = EvalError{"static", "the candidate does not define class ModelNew", "candidate"};
  } else if (!hasKernel) {
    e.verdict = Verdict::Invalid;
    flags.raise("no_triton_kernel", "the candidate defines no @triton.jit kernel",
                lineOf(json{{"line", at(st, "model_new_line")}}));
  }
  reward.syntax = syntaxError.is_null() && hasKernel ? 1 : 0;
  raiseStaticFlags(st, flags);
  return e.verdict != Verdict::Invalid;
}

/// Step 2, the candidate's process seen from outside, and its loading steps.
void judgeProcess(const Observations& o, Evaluation& e) {
  e.error = processError(o.candidateProcess);
  const json& f = o.candidateFacts;
  if (e.error || !f.is_object()) return;
  for (const char* step : {"load", "construct"}) {
    const json& s = at(f, step);
    if (s.is_object() && !get(s, "ok", false)) {
      const json& err = at(s, "error");
      e.error = EvalError{step, get(err, "message", std::string(step) + " failed"), "candidate",
                          lineOf(err)};
      return;
    }
  }
}

/// Step 3, correctness over every trial, the checked timed calls and the alternative batch size
/// (when accepted). Returns whether the trials alone matched.
bool judgeCorrectness(const Observations& o, Evaluation& e, FlagSet& flags) {
  const json& f = o.candidateFacts;
  bool primaryCorrect = !o.trials.empty() && !e.error;
  for (std::size_t k = 0; k < o.trials.size(); ++k) {
    if (!o.trials[k] || !o.trials[k]->ok()) primaryCorrect = false;
  }
  if (!e.error && f.is_object()) {
    // A trial that raised is the candidate's failure: say where.
    for (const auto& t : at(f, "trials")) {
      if (!get(t, "ok", true) && !at(t, "error").is_null()) {
        e.error = EvalError{"run", get(t["error"], "message", "forward raised"), "candidate",
                            lineOf(t["error"])};
        break;
      }
    }
  }
  if (o.degeneracy.degenerate) {
    flags.raise("degenerate_reference", o.degeneracy.reason + "; judging by relative error instead",
                std::nullopt, o.degeneracy.toJson());
  }
  const bool altAccepted = get(at(o.referenceFacts, "alt_batch"), "accepted", false);
  // Every checked output of the timed calls too: they ran on inputs no trial used.
  const bool timedCorrect =
      std::none_of(o.timed.begin(), o.timed.end(), [](const auto& t) { return t && !t->ok(); });
  e.correct = primaryCorrect && timedCorrect && (!altAccepted || (o.alt && o.alt->ok()));
  e.correctness = correctnessReport(o);
  return primaryCorrect;
}

/// Whether other work competed for the CPU while a CPU device timed the rounds. Turns make load
/// that comes and goes fall on both sides alike, but load does not slow every kind of work
/// alike (an inline eager call and a kernel launched through a runtime's threads meet the
/// scheduler differently), so a speedup timed on a contended CPU is no number for a quiet one:
/// it is marked noisy, and the reward counts its low end.
void judgeContention(const Observations& o, Evaluation& e, FlagSet& flags) {
  if (timedOnGpu(o)) return;
  const json& pressure = at(o.turns, "cpu_pressure");
  const auto share = numberOf(pressure, "fraction");
  if (!share || *share <= kContendedCpuShare) return;
  std::ostringstream m;
  m << "the CPU was contended while the rounds were timed: for " << std::lround(*share * 100)
    << "% of their time some task waited for a CPU; the speedup is reported as noisy";
  flags.raise("contended_timing", m.str(), std::nullopt, pressure);
  for (auto* spread : {&e.speedupSpread, &e.compileSpeedupSpread}) {
    if (*spread) (*spread)->noisy = true;
  }
}

/// Step 5, timing: both sides' times, the rounds, the speedup with its spread, and whether the
/// times are physically possible.
void judgeTiming(const Observations& o, Evaluation& e, const JudgeOptions& options,
                 FlagSet& flags) {
  const json& f = o.candidateFacts;
  const json& refTiming = at(o.referenceFacts, "timing");
  e.timing.referenceMs = numberOf(refTiming, "eager_ms");
  e.timing.compileReferenceMs = numberOf(refTiming, "compile_ms");
  if (f.is_object()) e.timing.candidateMs = candidateTime(o, flags);
  if (const auto threads = numberOf(refTiming, "threads")) {
    e.timing.threads = static_cast<int>(*threads);
  }
  judgeRounds(o, e, flags);
  if (e.correct && e.timing.referenceMs && e.timing.candidateMs && *e.timing.candidateMs > 0) {
    e.speedup = *e.timing.referenceMs / *e.timing.candidateMs;
    // The spread comes from the samples its median counts (each timing set's first call),
    // round by round beside the reference's rounds. Where the outside measurement replaced the
    // candidate's own median, the candidate's samples are not believed: the range is the
    // reference's over the outside time alone.
    const json& candidateTiming = at(f, "timing");
    const bool ownMedian = e.timing.candidateMs == numberOf(candidateTiming, "median_ms");
    const auto samples = samplesOf(candidateTiming, "fresh_ms");
    const auto rounds = roundsOf(candidateTiming, "fresh_rounds_ms");
    auto spreadOf = [&](const char* name) {
      const ReferenceTimes ref = referenceTimes(refTiming, name);
      if (!ownMedian) return spreadOverOneTime(ref.samples, *e.timing.candidateMs);
      return widest(speedupSpread(ref.samples, samples), roundSpread(ref.rounds, rounds));
    };
    e.speedupSpread = spreadOf("eager");
    if (e.timing.compileReferenceMs) e.compileSpeedupSpread = spreadOf("compile");
    judgeContention(o, e, flags);
  }
  checkPlausibility(o, e, options, flags);
}

/// Step 6, the verdict. A cheat flag already raised (statically, or before the process died)
/// stands: a candidate caught cheating does not become a mere error by also hanging. Otherwise a
/// process that died or hung is an error, and so is any infrastructure failure.
Verdict verdictOf(const Evaluation& e) {
  const bool processFailed =
      e.error && (e.error->stage == "timeout" || e.error->stage == "memory" ||
                  e.error->stage == "crash" || e.error->stage == "cancelled");
  const bool infrastructure = e.error && e.error->blame == "infrastructure";
  if (infrastructure || (processFailed && !e.hasCheatFlag())) return Verdict::Error;
  if (e.hasCheatFlag()) return Verdict::Cheating;
  return e.correct ? Verdict::Verified : Verdict::Incorrect;
}

/// Step 7, the reward under the chosen preset.
void judgeReward(const Observations& o, Evaluation& e, const JudgeOptions& options,
                 RewardInputs reward) {
  const json& f = o.candidateFacts;
  const bool ranWithoutException = f.is_object() && !e.error &&
                                   at(at(f, "load"), "ok").is_boolean() &&
                                   std::all_of(at(f, "trials").begin(), at(f, "trials").end(),
                                               [](const json& t) { return get(t, "ok", false); });
  reward.compiled = ranWithoutException ? 1 : 0;
  reward.correct = e.correct ? 1 : 0;
  reward.functionality =
      (f.is_object() && get(at(f, "launches"), "train", 0L) > 0 && !e.hasCheatFlag()) ? 1 : 0;
  // A noisy measurement earns the speed its slow end supports, not its median's.
  reward.speedup = e.speedup ? conservativeSpeedup(*e.speedup, e.speedupSpread) : 0;
  e.reward = rewardFor(options, reward);
  if (e.error && e.error->blame == "infrastructure") e.reward.total.reset();
}

Evaluation judgeUnchecked(const Observations& o, const JudgeOptions& options) {
  Evaluation e;
  FlagSet flags;
  RewardInputs reward;
  if (!judgeStatic(o.staticFacts, e, flags, reward)) {
    e.flags = flags.take();
    e.reward = rewardFor(options, reward);
    return e;
  }
  judgeProcess(o, e);
  const bool primaryCorrect = judgeCorrectness(o, e, flags);
  // 4. Integrity: every dynamic detector.
  if (o.candidateFacts.is_object()) raiseDynamicFlags(o, primaryCorrect, flags);
  judgeTiming(o, e, options, flags);
  e.flags = flags.take();
  e.verdict = verdictOf(e);
  judgeReward(o, e, options, reward);
  return e;
}

}  // namespace

Evaluation judge(const Observations& observations, const JudgeOptions& options) {
  try {
    return judgeUnchecked(observations, options);
  } catch (const std::exception& error) {
    // Malformed facts are the harness's problem, never a verdict on the candidate.
    Evaluation e;
    e.verdict = Verdict::Error;
    e.error = EvalError{"infrastructure", std::string("could not judge the facts: ") + error.what(),
                        "infrastructure"};
    e.reward.preset = options.rewardPreset;
    return e;
  }
}

}  // namespace crucible
