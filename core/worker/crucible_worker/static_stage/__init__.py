"""The `static` stage: facts about the reference and candidate files from Python's `ast` alone.

Nothing here imports or executes the analysed files: they are read as bytes, decoded and parsed.
The stage reports what it sees (lines of the KernelBench entry points, Triton kernels, their
launch sites, and suspicious constructs as `observations`); the C++ judge decides what they mean.
The facts' shape and the closed vocabulary of observation kinds are in docs/WORKER_PROTOCOL.md.

Precision matters more than recall here: every observation can become a cheat flag, and dynamic
facts from the candidate stage catch most of what a static look misses.

One module per concern: `patterns` (what is looked for), `parsing`, `names` (alias resolution and
folding), `reference`, `kernels`, `launch_hooks`, `statements`, `reach` (what ModelNew can run),
`compensated` (3xTF32/bf16x3 products), `visitor` (the observations) and `analysis` (the stage).
"""
from .analysis import candidate_facts, run
from .reference import reference_facts

__all__ = ["candidate_facts", "reference_facts", "run"]
