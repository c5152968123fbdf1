#pragma once
// The verifier's compare step: every value pack the reference and candidate runs wrote into a
// job folder, read and compared into the judge's Observations. Outputs run to gigabytes, so the
// packs are read several at a time, and no more of them are held at once than the trials'
// expected and actual outputs.

#include <filesystem>
#include <vector>

#include "core/verify/compare.h"
#include "core/verify/evaluation.h"
#include "core/verify/judge.h"

namespace crucible {

/// Reads the packs under `job` (ref/, cand/, inputs/ as docs/WORKER_PROTOCOL.md names them)
/// and fills o's trials, timed, alt, repeat, noop, inputsMutated, candidateOutputsConstant,
/// referenceOutputsVary, staleTrials, degeneracy and replacedFiles. A candidate file counts
/// only when its digest is the one the worker reported in o.candidateFacts["files"]. Returns
/// how long each of its phases took ("compare/trials", "compare/checks": the alternative batch,
/// repeat, no-op and inputs, "compare/timed").
std::vector<StageTime> compareOutputs(const std::filesystem::path& job, int trials,
                                      const ToleranceTable& tolerances, Observations& o);

}  // namespace crucible
