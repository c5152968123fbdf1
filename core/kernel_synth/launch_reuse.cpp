#include "core/kernel_synth/launch_reuse.h"

#include <cctype>

namespace crucible::kernel_synth {

const char* const kReusedLaunch =
    "class _Reused:\n"
    "    \"\"\"A kernel launched as `kernel[grid](...)` that, once Triton has compiled it for a "
    "launch,\n"
    "    launches through that compiled kernel while nothing Triton specialises on differs: the\n"
    "    device, each argument's type and value (a tensor's dtype and whether its address is a\n"
    "    multiple of 16), and the keyword arguments. Triton's own launch binds and specialises\n"
    "    every argument again on every call, which in a forward of small kernels is much of its\n"
    "    time; the compiled kernel's launcher takes the arguments as they are. Off a GPU Triton\n"
    "    gives back no compiled kernel, and every launch goes through it; so does a launch whose\n"
    "    grid is a function of the launch's arguments.\"\"\"\n"
    "\n"
    "    def __init__(self, kernel):\n"
    "        self.kernel = kernel\n"
    "        self.kept = {}  # facts -> (compiled kernel, the parameters passed by keyword, in "
    "order)\n"
    "\n"
    "    def __getitem__(self, grid):\n"
    "        return lambda *args, **meta: self.launch(grid, args, meta)\n"
    "\n"
    "    def launch(self, grid, args, meta):\n"
    "        if self.kept and grid.__class__ is tuple:\n"
    "            facts = _launch_facts(args, meta)\n"
    "            kept = self.kept.get(facts)\n"
    "            if kept is not None:\n"
    "                compiled, keywords = kept\n"
    "                compiled[(*grid, 1, 1)[:3]](*args, *[meta[k] for k in keywords])\n"
    "                return\n"
    "        compiled = self.kernel[grid](*args, **meta)\n"
    "        if hasattr(compiled, \"packed_metadata\") and len(self.kept) < 16:\n"
    "            keywords = self.kernel.arg_names[len(args):]\n"
    "            if all(k in meta for k in keywords):\n"
    "                self.kept[_launch_facts(args, meta)] = (compiled, keywords)\n"
    "\n"
    "\n"
    "def _launch_facts(args, meta):\n"
    "    \"\"\"What Triton's specialisation of a launch depends on (see _Reused).\"\"\"\n"
    "    return (torch.cuda.current_device(), tuple(map(type, args)),\n"
    "            tuple([(a.dtype, a.data_ptr() % 16) if isinstance(a, torch.Tensor) else a\n"
    "                   for a in args]),\n"
    "            tuple(meta.items()), tuple(map(type, meta.values())))\n";

namespace {

bool identifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

/// Whether `text` has `name[` with no identifier character just before it.
bool launchedIn(const std::string& text, const std::string& name) {
  const std::string pattern = name + "[";
  for (std::size_t at = text.find(pattern); at != std::string::npos;
       at = text.find(pattern, at + 1)) {
    if (at == 0 || !identifierChar(text[at - 1])) return true;
  }
  return false;
}

}  // namespace

std::string reuseLaunchedKernels(const std::string& kernels, const std::string& body) {
  static const std::string decorator = "@triton.jit\ndef ";
  std::string lines;
  for (std::size_t at = kernels.find(decorator); at != std::string::npos;
       at = kernels.find(decorator, at + 1)) {
    const std::size_t start = at + decorator.size();
    std::size_t end = start;
    while (end < kernels.size() && identifierChar(kernels[end])) ++end;
    const std::string name = kernels.substr(start, end - start);
    if (!name.empty() && launchedIn(body, name)) lines += name + " = _Reused(" + name + ")\n";
  }
  return lines;
}

}  // namespace crucible::kernel_synth
