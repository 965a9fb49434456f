"""Subject keys for conflict detection, read from the redactor's spaCy parse (no extra
model call).

A key is ``"<subject words>|<predicate lemma>"``: the lemmas of the sentence's grammatical
subject (compounds and modifiers kept, determiners, numbers and stop words dropped) and
of its root verb. Imperatives with no subject fall back to the first noun chunk
("Use port 8080 for staging" -> ``port|use``). Any token inside a redacted span becomes
that span's placeholder, so a key never carries a raw PII value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

_SUBJECT_DEPS = {"nsubj", "nsubjpass"}
_MODIFIER_DEPS = {"compound", "amod", "nmod", "poss"}


class _Span(Protocol):
    entity_type: str
    start: int
    end: int


def subject_key_from_doc(doc: Any, redacted: Sequence[_Span]) -> str | None:
    sentences = list(doc.sents)
    if not sentences:
        return None
    sentence = sentences[0]
    root = sentence.root
    words = _subject_words(_subject_tokens(sentence, root), redacted)
    predicate = _word(root, redacted, keep_stop_words=True) or ""
    if not words and not predicate:
        return None
    return f"{' '.join(words)}|{predicate}"


def _subject_tokens(sentence: Any, root: Any) -> list[Any]:
    head = next((t for t in root.children if t.dep_ in _SUBJECT_DEPS), None)
    if head is None:
        chunk = next(iter(sentence.noun_chunks), None)
        return list(chunk) if chunk is not None else []
    return [t for t in head.subtree if t.i == head.i or (t.dep_ in _MODIFIER_DEPS and t.head.i == head.i)]


def _subject_words(tokens: Sequence[Any], redacted: Sequence[_Span]) -> list[str]:
    words: list[str] = []
    for token in tokens:
        word = _word(token, redacted)
        if word and (not words or words[-1] != word):
            words.append(word)
    return words


def _word(token: Any, redacted: Sequence[_Span], *, keep_stop_words: bool = False) -> str | None:
    start, end = token.idx, token.idx + len(token.text)
    for span in redacted:
        if start < span.end and span.start < end:
            return f"[{span.entity_type}]"
    if not token.is_alpha or token.like_num or (token.is_stop and not keep_stop_words):
        return None
    return token.lemma_.lower()
