"""Crucible's evaluation service as a verl reward function (docs/RL.md).

Point verl's `custom_reward_function.path` at `crucible_reward/reward.py` and its `name` at
`compute_score` (one response at a time, verl's naive reward manager), `compute_score_batch`
(verl's batch reward manager) or `compute_score_async`. Each calls a running `crucible serve`
(CRUCIBLE_SERVE_URL, default http://127.0.0.1:8765) with retries and backoff. What the service
could not judge raises CrucibleUnavailable: an outage is never scored as the policy's zero.
"""
from .reward import (CrucibleUnavailable, Settings, compute_score, compute_score_async,
                     compute_score_batch)

__all__ = ["CrucibleUnavailable", "Settings", "compute_score", "compute_score_async",
           "compute_score_batch"]
