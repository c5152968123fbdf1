"""verl's own reward managers (verl 0.9.1, in .venv-verl) scoring a batch of model responses
with crucible_reward against a live `crucible serve`: the naive manager one response at a time,
the batch manager through POST /evaluate/batch. Each response's reward lands on its last token,
with every component in reward_extra_info."""
import os
import sys

import numpy as np
import pytest
import torch

from conftest import REFERENCE, candidate

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "integrations", "verl"))
import crucible_reward  # noqa: E402

import verl.protocol as verl_protocol  # noqa: E402  (.venv-verl's python: scripts/setup.sh)
from verl.workers.reward_manager.batch import BatchRewardManager  # noqa: E402
from verl.workers.reward_manager.naive import NaiveRewardManager  # noqa: E402

GOOD = "A single pass.\n```python\n" + candidate() + "```"
CHEAT = "```python\n" + candidate().replace(
    "        y = torch.empty_like(x)", "        return torch.relu(x)\n        y = torch.empty_like(x)"
) + "```"
NO_CODE = "I could not write this kernel."


class Bytes:
    """A tokenizer of bytes: what verl decodes is exactly the text that went in."""

    def encode(self, text):
        return list(text.encode())

    def decode(self, ids, skip_special_tokens=True):
        return bytes(int(i) for i in ids if int(i) > 0).decode()


def batch_of(responses, port):
    """A DataProto as verl's rollout leaves it: left-padded prompts, right-padded responses."""
    tok = Bytes()
    prompts = [tok.encode("Write ModelNew.")] * len(responses)
    answers = [tok.encode(r) for r in responses]
    p_len, r_len = max(map(len, prompts)), max(map(len, answers))
    prompt_ids = torch.zeros(len(responses), p_len, dtype=torch.long)
    response_ids = torch.zeros(len(responses), r_len, dtype=torch.long)
    mask = torch.zeros(len(responses), p_len + r_len, dtype=torch.long)
    for i, (p, r) in enumerate(zip(prompts, answers)):
        prompt_ids[i, p_len - len(p):] = torch.tensor(p)
        response_ids[i, :len(r)] = torch.tensor(r)
        mask[i, p_len - len(p):p_len + len(r)] = 1
    n = len(responses)
    return verl_protocol.DataProto.from_dict(
        tensors={"prompts": prompt_ids, "responses": response_ids, "attention_mask": mask},
        non_tensors={"data_source": np.array(["crucible"] * n, dtype=object),
                     "reward_model": np.array([{"style": "rule", "ground_truth": REFERENCE}] * n,
                                              dtype=object),
                     "extra_info": np.array([{"index": i, "trials": 2} for i in range(n)],
                                            dtype=object)}), [len(a) for a in answers]


@pytest.fixture
def scorer(serve, monkeypatch):
    service = serve("--lanes", "cpu")
    monkeypatch.setenv("CRUCIBLE_SERVE_URL", f"http://127.0.0.1:{service.port}")
    monkeypatch.setenv("CRUCIBLE_TRIALS", "2")
    return service


def check(result, lengths):
    rewards, extra = result["reward_tensor"], result["reward_extra_info"]
    good, cheat, none = (rewards[i, lengths[i] - 1].item() for i in range(3))
    assert good > 1.0 and cheat == 0.0 and none == 0.0
    assert rewards.sum().item() == pytest.approx(good)  # only on each response's last token
    assert extra["verified"] == [1.0, 0.0, 0.0] and extra["cheating"] == [0.0, 1.0, 0.0]
    assert extra["reward_r_correct"][0] == 1.0 and extra["speedup"][0] > 0


def test_the_naive_manager_scores_each_response(scorer):
    data, lengths = batch_of([GOOD, CHEAT, NO_CODE], scorer.port)
    manager = NaiveRewardManager(tokenizer=Bytes(), num_examine=0,
                                 compute_score=crucible_reward.compute_score)
    check(manager(data, return_dict=True), lengths)


def test_the_batch_manager_scores_them_in_one_request(scorer):
    data, lengths = batch_of([GOOD, CHEAT, NO_CODE], scorer.port)
    manager = BatchRewardManager(tokenizer=Bytes(), num_examine=0,
                                 compute_score=crucible_reward.compute_score_batch)
    check(manager(data, return_dict=True), lengths)
