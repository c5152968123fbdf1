"""verl's custom reward contract over `crucible serve` (standard library only).

`compute_score(data_source, solution_str, ground_truth, extra_info)` returns a dict: `score`
(the reward preset's total) and, under fixed keys, what it is made of: `verified`, `correct`,
`cheating`, `speedup`, `flags`, and each of the preset's components as `reward_<name>`. The
ground truth is the task's reference module; `extra_info` may carry `backend`, `trials`,
`reward_preset` and `timeout` for the request (else the CRUCIBLE_* settings below).

Settings (environment): CRUCIBLE_SERVE_URL, CRUCIBLE_SERVE_TOKEN, CRUCIBLE_REWARD_PRESET
(tritonrl), CRUCIBLE_BACKEND (the lane's), CRUCIBLE_TRIALS (5), CRUCIBLE_RETRIES (8),
CRUCIBLE_BACKOFF_S (1.0), CRUCIBLE_DEADLINE_S (3600: how long one score may wait in all).
"""
import asyncio
import hashlib
import json
import os
import random
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field

# One request's fields that extra_info may set.
_REQUEST_FIELDS = ("backend", "trials", "reward_preset", "timeout", "compile_baseline", "seed")
_RETRIED_STATUSES = {429, 500, 502, 503, 504}
_BATCH_LIMIT = 256  # the service's own cap per batch


class CrucibleUnavailable(RuntimeError):
    """The service could not judge (down, overloaded past the retries, or its lane died twice).
    An infrastructure failure: never a reward of zero for the policy."""


@dataclass
class Settings:
    url: str = "http://127.0.0.1:8765"
    token: str = ""
    reward_preset: str = "tritonrl"
    backend: str = ""
    trials: int = 5
    retries: int = 8
    backoff_s: float = 1.0
    deadline_s: float = 3600.0
    extra: dict = field(default_factory=dict)

    @classmethod
    def from_env(cls, env=None):
        env = os.environ if env is None else env
        return cls(url=env.get("CRUCIBLE_SERVE_URL", cls.url).rstrip("/"),
                   token=env.get("CRUCIBLE_SERVE_TOKEN", ""),
                   reward_preset=env.get("CRUCIBLE_REWARD_PRESET", cls.reward_preset),
                   backend=env.get("CRUCIBLE_BACKEND", ""),
                   trials=int(env.get("CRUCIBLE_TRIALS", cls.trials)),
                   retries=int(env.get("CRUCIBLE_RETRIES", cls.retries)),
                   backoff_s=float(env.get("CRUCIBLE_BACKOFF_S", cls.backoff_s)),
                   deadline_s=float(env.get("CRUCIBLE_DEADLINE_S", cls.deadline_s)))


def _request(settings, solution_str, ground_truth, extra_info):
    body = {"reference_code": ground_truth, "kernel_code": solution_str,
            "reward_preset": settings.reward_preset, "trials": settings.trials}
    if settings.backend:
        body["backend"] = settings.backend
    for key in _REQUEST_FIELDS:
        if isinstance(extra_info, dict) and extra_info.get(key) is not None:
            body[key] = extra_info[key]
    # The id follows the content: a retried or repeated request is answered from the kept
    # result instead of running again.
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
    body["task_id"] = "verl-" + digest[:32]
    return body


def _call(settings, method, path, body=None, started=None):
    """(status, JSON) of one request, retried with backoff (and Retry-After) on connection
    failures and 429/5xx until `retries` or the deadline; CrucibleUnavailable then."""
    started = time.monotonic() if started is None else started
    data = None if body is None else json.dumps(body).encode()
    last = "no attempt"
    for attempt in range(settings.retries + 1):
        req = urllib.request.Request(settings.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        if settings.token:
            req.add_header("Authorization", f"Bearer {settings.token}")
        wait = settings.backoff_s * (2 ** attempt) * (0.5 + random.random())
        left = settings.deadline_s - (time.monotonic() - started)
        try:
            with urllib.request.urlopen(req, timeout=max(1.0, left)) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as exc:
            payload = exc.read()
            if exc.code not in _RETRIED_STATUSES:
                detail = json.loads(payload or b"{}").get("error", "") if payload else ""
                raise ValueError(
                    f"crucible serve refused the request ({exc.code}): {detail}") from None
            last = f"HTTP {exc.code}"
            retry_after = exc.headers.get("Retry-After")
            if retry_after and retry_after.isdigit():
                wait = max(wait, float(retry_after))
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            last = f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}"
        if attempt == settings.retries or time.monotonic() - started + wait > settings.deadline_s:
            break
        time.sleep(wait)
    raise CrucibleUnavailable(f"crucible serve at {settings.url} did not answer {method} {path} "
                              f"after {attempt + 1} attempts: {last}")


def _until_done(settings, status, body, started):
    """Follows a 202 (the service's wait ran out) with GET /results until the job is done."""
    delay = settings.backoff_s
    while status == 202:
        if time.monotonic() - started > settings.deadline_s:
            raise CrucibleUnavailable(f"job {body.get('task_id')} was not done within "
                                      f"{settings.deadline_s:.0f} s")
        time.sleep(delay)
        delay = min(delay * 2, 30.0)
        status, body = _call(settings, "GET", f"/results/{body['task_id']}", started=started)
    return body


def _score(result):
    """The reward dict of one evaluation; CrucibleUnavailable where the service could not judge,
    ValueError where the request itself was wrong (the reference: a dataset error)."""
    if result.get("status") == "failed":
        raise CrucibleUnavailable(f"job {result.get('task_id')}: "
                                  f"{(result.get('error') or {}).get('message', 'failed')}")
    if result.get("verdict") is None:
        raise ValueError(f"job {result.get('task_id')}: the reference was refused: "
                         f"{(result.get('error') or {}).get('message', '')}")
    reward = result.get("reward") or {}
    flags = result.get("flags") or []
    scored = {"score": float(reward.get("total") or 0.0),
              "verified": float(result["verdict"] == "verified"),
              "correct": float(bool(result.get("correct"))),
              "cheating": float(result["verdict"] == "cheating"),
              "speedup": float(result.get("speedup") or 0.0),
              "flags": float(len(flags))}
    for name in reward.get("order") or sorted(reward.get("components") or {}):
        scored[f"reward_{name}"] = float((reward.get("components") or {}).get(name) or 0.0)
    return scored


def compute_score(data_source, solution_str, ground_truth, extra_info=None, settings=None,
                  **kwargs):
    """verl's per-response reward function."""
    settings = settings or Settings.from_env()
    started = time.monotonic()
    status, body = _call(settings, "POST", "/evaluate",
                         _request(settings, solution_str, ground_truth, extra_info),
                         started=started)
    return _score(_until_done(settings, status, body, started))


def compute_score_batch(data_sources, solution_strs, ground_truths, extra_infos=None,
                        settings=None, **kwargs):
    """verl's batched reward function: one POST /evaluate/batch per 256 responses, the lanes
    working through them in parallel; the scores in the responses' order."""
    settings = settings or Settings.from_env()
    extra_infos = extra_infos if extra_infos is not None else [None] * len(solution_strs)
    requests = [_request(settings, s, g, e)
                for s, g, e in zip(solution_strs, ground_truths, extra_infos)]
    started = time.monotonic()
    scores = []
    for first in range(0, len(requests), _BATCH_LIMIT):
        chunk = requests[first:first + _BATCH_LIMIT]
        _, answer = _call(settings, "POST", "/evaluate/batch", {"requests": chunk},
                          started=started)
        for request, result in zip(chunk, answer["results"]):
            if result.get("status") == "rejected":
                raise ValueError(f"crucible serve refused {request['task_id']} "
                                 f"({result.get('code')}): {result.get('error')}")
            if result.get("status") in ("queued", "running"):
                result = _until_done(settings, 202, result, started)
            scores.append(_score(result))
    return scores


async def compute_score_async(data_source, solution_str, ground_truth, extra_info=None,
                              settings=None, **kwargs):
    """The same as compute_score, awaitable (verl's asynchronous reward loop)."""
    return await asyncio.to_thread(compute_score, data_source, solution_str, ground_truth,
                                   extra_info, settings)
