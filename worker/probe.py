"""A container healthcheck for the loop processes: ``python -m ibex_worker.probe PROCESS
MAX_AGE [URL]`` exits 0 when the process's /metrics (default ``http://127.0.0.1:9101/metrics``)
answers and says it finished a round (``ibex_process_last_round_timestamp_seconds``) at most
MAX_AGE seconds ago; 1 otherwise, with the reason on stderr. An answering endpoint alone proves
little: it is a thread, and it answers while the loop is stuck."""

from __future__ import annotations

import re
import sys
import time
import urllib.request

DEFAULT_URL = "http://127.0.0.1:9101/metrics"


def last_round(text: str, process: str) -> float | None:
    """The newest round time ``text`` (Prometheus text format) reports for ``process``."""
    pattern = re.compile(r'^ibex_process_last_round_timestamp_seconds\{[^}]*process="' + re.escape(process)
                         + r'"[^}]*\}\s+(\S+)', re.M)
    found = [float(value) for value in pattern.findall(text)]
    return max(found) if found else None


def check(process: str, max_age: float, url: str = DEFAULT_URL) -> str | None:
    """None when healthy, else why not."""
    try:
        with urllib.request.urlopen(url, timeout=3) as response:
            text = response.read().decode("utf-8", "replace")
    except OSError as exc:
        return f"no metrics at {url} ({type(exc).__name__})"
    when = last_round(text, process)
    if when is None:
        return f"{process} has not finished a round yet"
    age = time.time() - when
    return None if age <= max_age else f"{process}'s last round was {age:.0f} s ago (more than {max_age:.0f} s)"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (2, 3):
        print("usage: python -m ibex_worker.probe PROCESS MAX_AGE_SECONDS [METRICS_URL]", file=sys.stderr)
        return 2
    problem = check(args[0], float(args[1]), *args[2:])
    if problem:
        print(problem, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
