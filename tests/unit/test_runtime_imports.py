"""What loading the PII redactor imports: not PyTorch or transformers, which it never uses and
which made every pool process's start seconds longer; and that a process that has them
(the embedder's) keeps them working. Each case runs in a fresh interpreter, so the test
process's own imports do not decide it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.unit


def _run(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


_LOAD = """
import json, sys
from ibex_worker.config import Settings
from ibex_worker import runtime
{before}
redactor = runtime.load_redactor(Settings())
outcome = redactor.redact_many(["Call Jane Doe at +44 7700 900123 about the offsite."])[0]
{after}
print(json.dumps({{"content": outcome.content, "torch": "torch" in sys.modules,
                  "transformers": "transformers" in sys.modules, **extra}}))
"""


def test_the_redactor_loads_without_importing_torch_or_transformers_and_still_finds_values():
    seen = _run(_LOAD.format(before="", after="extra = {}"))
    assert seen == {"content": "Call [PERSON] at [PHONE_NUMBER] about the offsite.", "torch": False,
                    "transformers": False}


def test_torch_and_transformers_import_normally_after_the_redactor_loaded():
    after = ("import torch, transformers\n"
             "extra = {'tensor': int(torch.ones(2).sum()), 'version': bool(transformers.__version__)}")
    seen = _run(_LOAD.format(before="", after=after))
    assert seen["content"] == "Call [PERSON] at [PHONE_NUMBER] about the offsite."
    assert (seen["torch"], seen["transformers"], seen["tensor"], seen["version"]) == (True, True, 2, True)


def test_a_process_that_imported_torch_first_keeps_it_while_the_redactor_loads():
    seen = _run(_LOAD.format(before="import torch\nfirst = torch",
                             after="extra = {'same': sys.modules['torch'] is first}"))
    assert (seen["torch"], seen["same"]) == (True, True)
    assert seen["content"] == "Call [PERSON] at [PHONE_NUMBER] about the offsite."


def test_stop_words_read_by_path_are_those_the_language_packages_export():
    code = """
import importlib, json
from ibex_worker.pii import languages
by_path = {code: sorted(languages._stop_words(code)) for code in languages._SPACY_LANGUAGES}
by_import = {code: sorted(importlib.import_module(f"spacy.lang.{code}.stop_words").STOP_WORDS)
             for code in languages._SPACY_LANGUAGES}
print(json.dumps({"same": by_path == by_import, "sizes": [len(v) for v in by_path.values()]}))
"""
    seen = _run(code)
    assert seen["same"] is True
    assert min(seen["sizes"]) > 50


def test_a_process_of_the_persist_and_conflict_stages_reads_the_typo_word_lists_at_start():
    code = """
import json
from ibex_worker import runtime
from ibex_worker.config import Settings
from ibex_worker.conflict_rules import edits
settings = Settings(cache_enabled=False)
runtime.build_deps(settings, with_pii=False, with_embedder=False, consumed_queues=frozenset({settings.queue_embed}))
embed_only = edits._english.cache_info().currsize
runtime.build_deps(settings, with_pii=False, with_embedder=False, consumed_queues=frozenset({settings.queue_persist}))
print(json.dumps({"embed_only": embed_only, "persist": edits._english.cache_info().currsize}))
"""
    assert _run(code) == {"embed_only": 0, "persist": 1}
