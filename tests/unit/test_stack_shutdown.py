"""``ibex up``'s shutdown order as pure logic: every child is signalled first, and the embedded
servers are stopped even when a child outlives SIGKILL (a process stuck in the kernel)."""

from __future__ import annotations

import subprocess
from types import SimpleNamespace

from ibex_worker.devstack.stack import Stack


class _Child:
    def __init__(self, name: str, events: list[str], *, stuck: bool = False) -> None:
        self.popen = SimpleNamespace(args=["python", "-m", "ibex_worker.cli", name])
        self.name, self.events, self.stuck = name, events, stuck

    def terminate(self) -> None:
        self.events.append(f"terminate {self.name}")

    def wait_or_kill(self, timeout: float) -> None:
        self.events.append(f"wait {self.name}")
        if self.stuck:
            raise subprocess.TimeoutExpired(self.popen.args, timeout)


class _Service:
    def __init__(self, name: str, events: list[str]) -> None:
        self.name, self.events = name, events

    def stop(self) -> None:
        self.events.append(f"stop {self.name}")


def test_the_servers_stop_after_every_child_even_one_that_outlives_sigkill(tmp_path, capsys):
    events: list[str] = []
    stack = Stack(SimpleNamespace(data_dir=str(tmp_path)))
    stack.children = [_Child("worker", events, stuck=True), _Child("api", events)]
    stack.services = [_Service("postgres", events), _Service("redis", events)]
    stack._shutdown()
    assert events == ["terminate worker", "terminate api", "wait worker", "wait api", "stop redis", "stop postgres"]
    assert "worker did not exit after SIGKILL" in capsys.readouterr().err
