"""``IbexClient`` (blocking) and ``AsyncIbexClient`` (``await``): the same calls, the same
retries, driven over ``httpx.Client`` or ``httpx.AsyncClient``."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import httpx

from ibex_client._core import (BATCH_MAX, BatchItemResult, Flow, RetryPolicy, Send, Sleep, batch_flow, decode,
                               derived_key, get_flow, job_from, memory_body, request_flow, write_result)

_MAX_WAIT_S = 30  # the API holds an answer at most this long (Prefer: wait)


class _Calls:
    """The calls, as flows; a subclass runs them (``_run``). In ``AsyncIbexClient`` every
    call returns an awaitable of what the docstring says."""

    def __init__(self, org_id: str | None, agent_id: str | None, retry: RetryPolicy | None) -> None:
        self.org_id, self.agent_id = org_id, agent_id
        self.retry = retry or RetryPolicy()
        self._rng = random.Random()

    def _run(self, flow: Flow) -> Any:
        raise NotImplementedError

    # ------------------------------------------------------------ writes

    def add(self, content: str, *, agent_id: str | None = None, org_id: str | None = None, source: str = "api",
            labels: Sequence[Any] | None = None, valid_from: datetime | str | None = None,
            valid_until: datetime | str | None = None, category: str | None = None,
            confidence: float | None = None, metadata: Mapping[str, Any] | None = None,
            idempotency_key: str | None = None, wait: float = 0) -> Any:
        """Write one memory; a ``WriteResult``.

        ``labels``: strings or ``{"label", "confidence"}``. ``wait`` (seconds, at most 30):
        hold the answer until the pipeline finished, so the result has the memory id, near
        duplicates, supersessions and escalations; otherwise (or when it takes longer) the
        result is ``queued`` with the job id (see ``job()``). An exact copy of an active
        memory comes back with ``outcome == "exact_duplicate"`` and that memory's id. Without
        ``idempotency_key`` the key is derived from the body (``derived_key``)."""
        org, agent = org_id or self.org_id, agent_id or self.agent_id
        if not org or not agent:
            raise ValueError("org_id and agent_id are needed (in the call or the client)")
        body = memory_body(content, org_id=org, agent_id=agent, source=source, labels=labels,
                           valid_from=valid_from, valid_until=valid_until, category=category,
                           confidence=confidence, metadata=metadata)
        return self._run(self._add(body, idempotency_key or derived_key(body), wait))

    def _add(self, body: dict[str, Any], key: str, wait: float) -> Flow:
        headers = {"X-Idempotency-Key": key}
        if wait:
            headers["Prefer"] = f"wait={int(min(_MAX_WAIT_S, max(1, wait)))}"
        response = yield from request_flow("POST", "/v1/memories", self.retry, self._rng, json=body, headers=headers)
        return write_result(response.status_code, decode(response), response.headers, key)

    def add_many(self, items: Iterable[Mapping[str, Any]]) -> Any:
        """Write many memories, ``BATCH_MAX`` per request; a list of ``BatchItemResult`` in the
        items' order. Each item is a write body (``content``, ``source`` ..., ``org_id`` and
        ``agent_id`` defaulting to the client's) and may carry ``idempotency_key`` (else one
        is derived from the body). Items refused for back-pressure or unavailability are sent
        again after ``Retry-After``; other refusals are the item's ``error``."""
        prepared = [self._batch_item(item) for item in items]
        return self._run(self._add_many(prepared))

    def _add_many(self, prepared: list[dict[str, Any]]) -> Flow:
        results: list[BatchItemResult | None] = [None] * len(prepared)
        for start in range(0, len(prepared), BATCH_MAX):
            yield from batch_flow(prepared, list(range(start, min(start + BATCH_MAX, len(prepared)))), results,
                                  self.retry, self._rng)
        return [r for r in results if r is not None]

    def _batch_item(self, item: Mapping[str, Any]) -> dict[str, Any]:
        body = {k: v for k, v in item.items() if k != "idempotency_key"}
        body.setdefault("org_id", self.org_id)
        body.setdefault("agent_id", self.agent_id)
        return {**body, "idempotency_key": item.get("idempotency_key") or derived_key(body)}

    # ------------------------------------------------------------ reads

    def job(self, job_id: str) -> Any:
        """The job's state; a ``Job`` (``result`` once it succeeded)."""
        return self._run(self._job(job_id))

    def _job(self, job_id: str) -> Flow:
        return job_from((yield from get_flow(f"/v1/jobs/{job_id}", self.retry, self._rng)))

    def wait_for_job(self, job_id: str, timeout: float = 60.0) -> Any:
        """Poll the job until it succeeded or failed; the ``Job``. Raises ``TimeoutError``."""
        return self._run(self._wait_for_job(job_id, timeout))

    def _wait_for_job(self, job_id: str, timeout: float) -> Flow:
        deadline, interval = time.monotonic() + timeout, 0.25
        while True:
            job = yield from self._job(job_id)
            if job.finished:
                return job
            if time.monotonic() >= deadline:
                raise TimeoutError(f"job {job_id} still {job.status} after {timeout} s")
            yield Sleep(min(interval, max(0.0, deadline - time.monotonic())))
            interval = min(interval * 1.5, 2.0)

    def get(self, memory_id: str) -> Any:
        """The stored memory (redacted content, status, labels, validity ...), as a dict."""
        return self._run(get_flow(f"/v1/memories/{memory_id}", self.retry, self._rng))

    def relationships(self, memory_id: str) -> Any:
        """The memory's links in both directions, with their evidence, as a dict."""
        return self._run(get_flow(f"/v1/memories/{memory_id}/relationships", self.retry, self._rng))

    def escalations(self, status: str | None = None) -> Any:
        """The org's escalations (every page), optionally of one ``status``: a list of dicts."""
        return self._run(self._escalations(status))

    def _escalations(self, status: str | None) -> Flow:
        found: list[dict[str, Any]] = []
        cursor = None
        while True:
            params = {k: v for k, v in (("status", status), ("cursor", cursor)) if v}
            page = yield from get_flow("/v1/escalations", self.retry, self._rng, params=params or None)
            found.extend(page.get("escalations", []))
            cursor = page.get("next_cursor")
            if not cursor:
                return found


def _advance(flow: Flow, answer: Any) -> tuple[bool, Any]:
    """Hand the flow the answer to its last step: (False, its next step) or (True, its result)."""
    try:
        return False, flow.send(answer)
    except StopIteration as done:
        return True, done.value


def _headers(api_key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}", "User-Agent": "ibex-client"}


class IbexClient(_Calls):
    """``IbexClient(base_url, api_key)``: writes and reads for one API key, blocking.

    Every write carries an idempotency key, so the client retries it safely: on ``429`` and
    ``503`` it waits what ``Retry-After`` says (at most ``retry.max_delay``, with jitter),
    after a lost connection it backs off, up to ``retry.max_retries`` more tries; then it
    raises the typed error. ``org_id`` and ``agent_id`` given here are every call's default."""

    def __init__(self, base_url: str, api_key: str, *, org_id: str | None = None, agent_id: str | None = None,
                 timeout: float = 30.0, retry: RetryPolicy | None = None,
                 transport: httpx.BaseTransport | None = None) -> None:
        super().__init__(org_id, agent_id, retry)
        self._http = httpx.Client(base_url=base_url.rstrip("/"), timeout=timeout, transport=transport,
                                  headers=_headers(api_key))

    def __enter__(self) -> IbexClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _run(self, flow: Flow) -> Any:
        finished, value = _advance(flow, None)
        while not finished:
            finished, value = _advance(flow, self._do(value))
        return value

    def _do(self, step: Send | Sleep) -> Any:
        if isinstance(step, Sleep):
            return time.sleep(step.seconds)
        try:
            return self._http.request(step.method, step.path, **step.kwargs)
        except httpx.TransportError as exc:
            return exc


class AsyncIbexClient(_Calls):
    """``AsyncIbexClient(base_url, api_key)``: the calls of ``IbexClient``, each awaited."""

    def __init__(self, base_url: str, api_key: str, *, org_id: str | None = None, agent_id: str | None = None,
                 timeout: float = 30.0, retry: RetryPolicy | None = None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        super().__init__(org_id, agent_id, retry)
        self._http = httpx.AsyncClient(base_url=base_url.rstrip("/"), timeout=timeout, transport=transport,
                                       headers=_headers(api_key))

    async def __aenter__(self) -> AsyncIbexClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _run(self, flow: Flow) -> Any:
        finished, value = _advance(flow, None)
        while not finished:
            finished, value = _advance(flow, await self._do(value))
        return value

    async def _do(self, step: Send | Sleep) -> Any:
        if isinstance(step, Sleep):
            return await asyncio.sleep(step.seconds)
        try:
            return await self._http.request(step.method, step.path, **step.kwargs)
        except httpx.TransportError as exc:
            return exc
