"""CPU and memory of the benchmark's processes, sampled with psutil in a background thread.

Processes are grouped into roles (``worker`` = the Celery main process and its pool
children, ``postgres`` = the postmaster and every backend, ...), re-resolved at each sample
so short-lived children are counted (a "flat" role, the benchmark's own process, is that
process alone: its children are the other roles). CPU is user + system time: at every sample each
process's increase since the previous sample (or since its start, for a process first seen
after the baseline) is added to the role's account in the phase then current (the main
thread names the phase). Memory: the peak of the role's summed RSS and, every few
samples, of its summed PSS (shared pages split between the processes sharing them, so
the sum does not count a forked worker's copy-on-write pages twice), plus each process's
own peak RSS. The machine's busy time is accounted too (role ``machine``), so what other
processes on a shared machine took is measured, not guessed from the load average.
"""

from __future__ import annotations

import os
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import psutil

RoleResolver = Callable[[], list[int]]


class ProcMonitor:
    def __init__(self, roles: dict[str, RoleResolver], interval: float = 1.0, pss_every: int = 5,
                 flat: frozenset[str] = frozenset({"bench_client"})) -> None:
        self._roles = roles
        self._flat = flat  # roles whose processes' children belong to other roles
        self._interval = interval
        self._pss_every = pss_every
        self._lock = threading.Lock()
        self._phase: str | None = None
        self._procs: dict[tuple[int, float], psutil.Process] = {}
        self._last_cpu: dict[tuple[int, float], float] = {}
        self._baseline_done = False
        self.cpu: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))  # phase -> role -> s
        self.peak_rss: dict[str, float] = defaultdict(float)
        self.peak_pss: dict[str, float] = defaultdict(float)
        self.proc_peak_rss: dict[str, float] = {}
        self.samples = 0
        self._last_machine: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="procmon", daemon=True)

    # -- control -----------------------------------------------------------------

    def start(self) -> None:
        self._sample()  # baseline: CPU used before now is nobody's
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)

    def phase(self, name: str | None) -> None:
        self._sample()  # close the previous phase's account at the boundary
        with self._lock:
            self._phase = name

    def cpu_of(self, *phases: str) -> dict[str, float]:
        with self._lock:
            out: dict[str, float] = defaultdict(float)
            for ph in phases:
                for role, secs in self.cpu.get(ph, {}).items():
                    out[role] += secs
            return dict(out)

    def memory(self) -> dict[str, Any]:
        with self._lock:
            return {"peak_rss_mb": {k: round(v / 2**20, 1) for k, v in sorted(self.peak_rss.items())},
                    "peak_pss_mb": {k: round(v / 2**20, 1) for k, v in sorted(self.peak_pss.items())},
                    "process_peak_rss_mb": {k: round(v / 2**20, 1) for k, v in sorted(self.proc_peak_rss.items())}}

    # -- sampling ----------------------------------------------------------------

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            self._sample()

    def _resolve(self) -> dict[str, tuple[set[int], list[psutil.Process]]]:
        out: dict[str, tuple[set[int], list[psutil.Process]]] = {}
        for role, resolver in self._roles.items():
            procs: list[psutil.Process] = []
            try:
                pids = resolver()
            except Exception:  # a role's process may be gone or not yet started
                pids = []
            for pid in pids:
                try:
                    root = psutil.Process(pid)
                    procs.append(root)
                    if role not in self._flat:
                        procs.extend(root.children(recursive=True))
                except psutil.Error:
                    continue
            out[role] = (set(pids), procs)
        return out

    def _sample(self) -> None:
        with self._lock:
            self.samples += 1
            with_pss = self.samples % self._pss_every == 1
            phase = self._phase
            for role, (roots, procs) in self._resolve().items():
                rss_sum = pss_sum = 0.0
                for p in procs:
                    try:
                        key = (p.pid, p.create_time())
                        t = p.cpu_times()
                        cpu = t.user + t.system
                        rss = p.memory_info().rss
                        pss = p.memory_full_info().pss if with_pss else 0.0
                        name = p.name()
                    except psutil.Error:
                        continue
                    prev = self._last_cpu.get(key)
                    self._last_cpu[key] = cpu
                    if prev is None and not self._baseline_done:
                        prev = cpu
                    delta = cpu - (prev or 0.0)
                    if phase is not None and delta > 0:
                        self.cpu[phase][role] += delta
                        if role not in self._flat:  # the role's own process vs its children
                            self.cpu[phase][f"{role}.{'main' if p.pid in roots else 'children'}"] += delta
                    rss_sum += rss
                    pss_sum += pss
                    label = f"{role}:{name}:{p.pid}" if role in ("worker", "api") else None
                    if label:
                        self.proc_peak_rss[label] = max(self.proc_peak_rss.get(label, 0.0), rss)
                self.peak_rss[role] = max(self.peak_rss[role], rss_sum)
                if with_pss:
                    self.peak_pss[role] = max(self.peak_pss[role], pss_sum)
            busy = machine_busy_seconds()
            if self._last_machine is not None and phase is not None:
                self.cpu[phase]["machine"] += busy - self._last_machine
            self._last_machine = busy
            self._baseline_done = True


def machine_busy_seconds() -> float:
    """CPU seconds the whole machine spent busy (every process, the kernel, steal)."""
    t = psutil.cpu_times()
    return sum(t) - t.idle - getattr(t, "iowait", 0.0)


def pid_file(path: os.PathLike[str] | str) -> list[int]:
    """The pid on the first line of a pid file (postmaster.pid, redis.pid), or none."""
    try:
        with open(path) as handle:
            return [int(handle.readline().strip())]
    except (OSError, ValueError):
        return []


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def now() -> float:
    return time.monotonic()
