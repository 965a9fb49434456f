"""How the PII stage's analysis grows with a text's length, on shapes built to make a finder
compare everything with everything: each shape at a quarter of the longest content the API
accepts and at all of it (medians of three), and the ratio of the two times. Linear analysis
gives about 4 and a quadratic finder about 16; the bound is halfway (8, their geometric mean).
The peer is ordinary prose of the same lengths: spaCy's own share makes its ratio above 4 too.

Run: ``python -m ops.bench.pii_long_texts`` (about two minutes on 2 cores). Nothing is
written; the table is printed.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

# Repeated units: digit groups, dotted numbers and hosts, hyphenated and dotted words, titles,
# street abbreviations, separators; "prose" is the peer.
SHAPES = {
    "prose": "The customer renews the Atlas support contract every September. ",
    "digits spaced": "1 ",
    "digit groups": "0412 883 201 ",
    "dotted": "1.2.",
    "quads": "10.0.0.1 ",
    "quads slashed": "10.1.1.1/",
    "hyphens": "a-",
    "accented hyphens": "é-",
    "titles": "Dr. A ",
    "streets": "Str. 5, ",
    "names": "John Smith and Maria Garcia, ",
    "wallet-like": "1A2b3C4d5E6f7G8h9J",
}
BOUND = 8.0  # the long text may cost at most this many times the short one


def _seconds(redactor, text: str, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        redactor.redact_many([text])
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=None, help="the long length (default: the content limit)")
    args = parser.parse_args(argv)
    from ibex_worker.config import Settings
    from ops.pii_eval.evaluate import load_redactor

    long = args.chars or min(Settings(environment="test").content_max_chars, Settings(environment="test").pii_max_chars)
    short = long // 4
    redactor = load_redactor()
    redactor.redact_many(["warm up"])
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}; "
          f"lengths {short} and {long} characters; bound: ratio <= {BOUND}")
    print(f"| shape | {short} chars (s) | {long} chars (s) | ratio | x the peer's | within bound |")
    print("|---|---:|---:|---:|---:|---|")
    worst, peer = 0.0, None
    for name, unit in SHAPES.items():
        times = [_seconds(redactor, (unit * (n // len(unit) + 1))[:n].rstrip()) for n in (short, long)]
        ratio = times[1] / max(times[0], 1e-6)
        peer = peer or ratio
        worst = max(worst, ratio)
        print(f"| {name} | {times[0]:.2f} | {times[1]:.2f} | {ratio:.1f} | {ratio / peer:.2f} | "
              f"{'yes' if ratio <= BOUND else 'NO'} |")
    print(f"worst ratio {worst:.1f} (bound {BOUND})")
    return 0 if worst <= BOUND else 1


if __name__ == "__main__":
    raise SystemExit(main())
