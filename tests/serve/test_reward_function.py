"""The verl reward function (integrations/verl/crucible_reward) against a live `crucible serve`:
the contract's dict, the batched and async forms, a cheat scored as one, and an outage raised,
never scored 0."""
import asyncio
import os
import sys

import pytest

from conftest import REFERENCE, candidate

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "integrations", "verl"))
from crucible_reward import (CrucibleUnavailable, Settings, compute_score,  # noqa: E402
                             compute_score_async, compute_score_batch)

RESPONSE = "The kernel fuses nothing; it is one pass.\n\n```python\n" + candidate() + "```\n"
CHEAT = candidate().replace("        y = torch.empty_like(x)", "        return torch.relu(x)\n"
                            "        y = torch.empty_like(x)")
KEYS = {"score", "verified", "correct", "cheating", "speedup", "flags", "reward_valid",
        "reward_r_correct", "reward_r_speed"}


def settings_for(service):
    return Settings(url=f"http://127.0.0.1:{service.port}", trials=2, retries=2, backoff_s=0.2)


def test_a_response_is_scored_with_its_components_under_fixed_keys(serve):
    service = serve("--lanes", "cpu")
    settings = settings_for(service)
    scored = compute_score("crucible", RESPONSE, REFERENCE, {"index": 0}, settings=settings)
    assert set(scored) == KEYS
    assert scored["verified"] == 1.0 and scored["correct"] == 1.0 and scored["cheating"] == 0.0
    # tritonrl: r_correct + 0.1 r_speed, from the service's own numbers
    assert scored["score"] == pytest.approx(scored["reward_r_correct"]
                                            + 0.1 * scored["reward_r_speed"])
    cheat = compute_score("crucible", CHEAT, REFERENCE, None, settings=settings)
    assert set(cheat) == KEYS and cheat["cheating"] == 1.0 and cheat["flags"] >= 1
    assert cheat["score"] == 0.0
    # The same response again is the kept result (the id follows the content).
    assert compute_score("crucible", RESPONSE, REFERENCE, {"index": 0},
                         settings=settings) == scored


def test_the_batched_and_async_forms_answer_in_order(serve):
    service = serve("--lanes", "cpu")
    settings = settings_for(service)
    scores = compute_score_batch(["crucible"] * 3, [RESPONSE, CHEAT, RESPONSE],
                                 [REFERENCE] * 3, [None, None, {"trials": 3}], settings=settings)
    assert [s["verified"] for s in scores] == [1.0, 0.0, 1.0]
    assert scores[1]["cheating"] == 1.0
    one = asyncio.run(compute_score_async("crucible", RESPONSE, REFERENCE, None,
                                          settings=settings))
    assert one == scores[0]


def test_an_outage_is_raised_not_scored_and_a_bad_reference_is_the_datasets_error(serve):
    nowhere = Settings(url="http://127.0.0.1:9", retries=2, backoff_s=0.05)
    with pytest.raises(CrucibleUnavailable, match="after 3 attempts"):
        compute_score("crucible", RESPONSE, REFERENCE, None, settings=nowhere)
    service = serve("--lanes", "cpu")
    with pytest.raises(ValueError, match="reference was refused"):
        compute_score("crucible", RESPONSE, "def (", None, settings=settings_for(service))
