"""Crucible's worker: the only place user code runs. It reports facts, never verdicts."""
