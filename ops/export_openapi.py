"""Write the HTTP API's OpenAPI document, as a server with default settings answers it at
``/openapi.json``, to ``api/openapi.json`` (``make openapi``). A test compares the committed
file with the live document, so a change to the API that is not exported here fails."""

from __future__ import annotations

import json
import sys
from pathlib import Path

DOCUMENT = Path(__file__).resolve().parents[1] / "api" / "openapi.json"


def document() -> dict:
    from ibex_api.app import create_app
    from ibex_worker.config import Settings

    return create_app(Settings()).openapi()


def main(argv: list[str] | None = None) -> int:
    DOCUMENT.write_text(json.dumps(document(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {DOCUMENT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
