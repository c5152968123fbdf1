#pragma once
// Line maps of Triton's compiled levels, read from the locations each level carries: for every
// line of the text, the line of the candidate's Python file it was compiled from, or none.
//   ttir, ttgir (MLIR): `loc(...)` at the end of an operation, `#locN = loc(...)` aliases, with
//                       name, callsite (the callee first) and fused locations;
//   llir (LLVM IR):     `!dbg !N` on an instruction or a `define`, through `!DILocation`
//                       (inlinedAt followed when the callee is elsewhere), `!DISubprogram`,
//                       lexical blocks and `!DIFile`;
//   ptx:                `.loc FILE LINE COL` (with `inlined_at`) in force until the next one or
//                       the end of the function, the files from the `.file` table.
// Only locations in one of `files` (the candidate's path as the compiler saw it) count. The
// text is the candidate's compiler's output: malformed input gives unmapped lines, never an
// error.

#include <optional>
#include <string>
#include <vector>

namespace crucible::inspect {

using LineMap = std::vector<std::optional<int>>;

LineMap mlirLineMap(const std::string& text, const std::vector<std::string>& files);
LineMap llvmLineMap(const std::string& text, const std::vector<std::string>& files);
LineMap ptxLineMap(const std::string& text, const std::vector<std::string>& files);

/// The map for a level by name ("ttir", "ttgir", "llir", "ptx"); nullopt for other names.
std::optional<LineMap> lineMapFor(const std::string& level, const std::string& text,
                                  const std::vector<std::string>& files);

}  // namespace crucible::inspect
