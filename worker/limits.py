"""Fixed bounds of a request, shared by the API's schemas and the stage or service that
enforces them (the bounds a deployment tunes are settings, in ``ibex_worker.config``)."""

from __future__ import annotations

MAX_LABELS = 5  # labels on one memory
NOTE_MAX_CHARS = 2000  # a person's note on a decision (an escalation's resolution, a release)
LIST_LIMIT_MAX = 200  # items on one page of a listing
