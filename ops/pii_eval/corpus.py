"""The labelled PII corpus: one example per line, values marked inline.

A corpus file holds lines ``<shape>\\t<text>``; ``#`` starts a comment line and blank lines
are skipped. In the text, ``[[LABEL|value]]`` marks a span of personal data: the markup is
removed and the value's character span recorded under LABEL. A line without markup is a
negative (nothing in it is personal data). ``shape`` names the kind of text (chat,
signature, ticket, address, negative, ...) and is reported, never interpreted.

Run as ``python -m ops.pii_eval.corpus FILE...`` to check files and print their counts.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

LABELS = ("PERSON", "EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "IBAN_CODE", "US_SSN", "IP_ADDRESS",
          "CRYPTO", "STREET_ADDRESS", "NATIONAL_ID")
_MARK = re.compile(r"\[\[([A-Z_]+)\|([^\[\]|]+?)\]\]")
CORPUS_DIR = Path(__file__).resolve().parents[2] / "tests" / "data" / "pii"


@dataclass(frozen=True)
class Span:
    label: str
    start: int
    end: int


@dataclass(frozen=True)
class Example:
    source: str      # file:line
    shape: str
    text: str
    spans: tuple[Span, ...]

    def value(self, span: Span) -> str:
        return self.text[span.start:span.end]


class CorpusError(ValueError):
    pass


def parse_line(line: str, source: str) -> Example | None:
    stripped = line.rstrip("\n")
    if not stripped.strip() or stripped.lstrip().startswith("#"):
        return None
    shape, sep, marked = stripped.partition("\t")
    if not sep or not shape.strip() or not marked.strip():
        raise CorpusError(f"{source}: expected '<shape>\\t<text>'")
    out, spans, cursor = [], [], 0
    for match in _MARK.finditer(marked):
        label, value = match.group(1), match.group(2)
        if label not in LABELS:
            raise CorpusError(f"{source}: unknown label {label!r}")
        if value != value.strip():
            raise CorpusError(f"{source}: a marked value starts or ends with whitespace")
        out.append(marked[cursor:match.start()])
        start = sum(len(part) for part in out)
        out.append(value)
        spans.append(Span(label, start, start + len(value)))
        cursor = match.end()
    out.append(marked[cursor:])
    text = "".join(out)
    if "[[" in text or "]]" in text:
        raise CorpusError(f"{source}: unbalanced or malformed markup")
    return Example(source, shape.strip(), text, tuple(spans))


def load_file(path: Path) -> list[Example]:
    examples = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        example = parse_line(line, f"{path.name}:{number}")
        if example is not None:
            examples.append(example)
    return examples


def load_split(split: str, root: Path = CORPUS_DIR) -> list[Example]:
    """Every example of a split folder (``dev`` or ``heldout``), files in name order."""
    files = sorted((root / split).glob("*.txt"))
    if not files:
        raise CorpusError(f"no corpus files under {root / split}")
    return [example for path in files for example in load_file(path)]


def main(argv: list[str]) -> int:
    total, labels, shapes, negatives = 0, Counter(), Counter(), 0
    for name in argv:
        try:
            examples = load_file(Path(name))
        except CorpusError as exc:
            print(f"error: {exc}")
            return 1
        total += len(examples)
        for example in examples:
            shapes[example.shape] += 1
            negatives += not example.spans
            labels.update(span.label for span in example.spans)
    print(f"{total} examples, {negatives} negatives")
    print("spans:", dict(sorted(labels.items())))
    print("shapes:", dict(sorted(shapes.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
