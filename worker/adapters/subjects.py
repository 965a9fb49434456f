"""Subject keys for conflict detection, read from the redactor's spaCy parse (no extra
model call).

A key is ``"<subject words>|<predicate lemma>"``: the lemmas of the sentence's grammatical
subject (compounds and modifiers kept, determiners, numbers and stop words dropped) and
of its root verb. Imperatives with no subject fall back to the first noun chunk ("Use port 8080 for
staging" -> ``port|use``); a verb the parser took for the subject is the predicate. Any token inside a redacted span becomes
that span's placeholder, so a key never carries a raw PII value.

The **aspect** is the respect in which the fact holds: the "for" phrase of the predicate,
attached to the root verb or to its object ("The user prefers Python for data work" and
"The user is switching to Go for data work" -> ``for data work``). Facts about one subject
in one aspect are compared by the conflict stage even when their texts differ too much to
be near duplicates. No aspect when the phrase holds a redacted value (``for [PERSON]``
cannot be compared) or no content word.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

_SUBJECT_DEPS = {"nsubj", "nsubjpass"}
_MODIFIER_DEPS = {"compound", "amod", "nmod", "poss"}
_NOT_NOMINAL = {"VERB", "AUX"}
_OBJECT_DEPS = {"dobj", "xcomp", "attr", "acomp", "oprd"}
_ASPECT_PREPOSITIONS = {"for"}
_AUX_DEPS = {"aux", "auxpass", "neg"}
_COMPLEMENT_DEPS = {"attr", "oprd"}


class _Span(Protocol):
    entity_type: str
    start: int
    end: int


def subject_key_from_doc(doc: Any, redacted: Sequence[_Span]) -> str | None:
    sentences = list(doc.sents)
    if not sentences:
        return None
    sentence = sentences[0]
    root = _predicate(sentence.root)
    words = _subject_words(_subject_tokens(sentence, root), redacted)
    predicate = _word(root, redacted, keep_stop_words=True) or ""
    if not words and not predicate:
        return None
    return f"{' '.join(words)}|{predicate}"


def subject_extent(doc: Any) -> tuple[int, int] | None:
    """Where the first sentence's subject phrase lies, in the parsed text: from the start of
    its subject's subtree up to its verb, so that a phrase the parser hung on the verb but
    written before it counts ("The retention policy for Maria is due"); for a sentence
    without a subject, its first noun chunk ("Call Maria back"); None when there is neither."""
    sentences = list(doc.sents)
    if not sentences:
        return None
    root = _predicate(sentences[0].root)
    head = _subject_of(root)
    if head is None or head.pos_ in _NOT_NOMINAL:
        chunk = next(iter(sentences[0].noun_chunks), None)
        return (chunk.start_char, chunk.end_char) if chunk is not None else None
    end = head.right_edge.idx + len(head.right_edge.text)
    verbs = [t for t in (root, *root.children) if t.i > head.right_edge.i and (t is root or t.dep_ in _AUX_DEPS)]
    if verbs:
        verb = min(verbs, key=lambda t: t.i)
        before = doc[verb.i - 1]
        end = max(end, before.idx + len(before.text))
    return head.left_edge.idx, end


def complement_extent(doc: Any) -> tuple[int, int] | None:
    """Where the complement of the first sentence's verb lies ("The user's manager is Maria
    Lopez", "They named Maria the owner"): the subtree of its ``attr`` or ``oprd``; None
    when it has none."""
    sentences = list(doc.sents)
    if not sentences:
        return None
    root = _predicate(sentences[0].root)
    head = next((t for t in root.children if t.dep_ in _COMPLEMENT_DEPS), None)
    if head is None:
        return None
    return head.left_edge.idx, head.right_edge.idx + len(head.right_edge.text)


def _subject_of(verb: Any) -> Any:
    return next((t for t in verb.children if t.dep_ in _SUBJECT_DEPS), None)


def _predicate(root: Any) -> Any:
    """The root, or the verb the parser took for its subject ("The user prefers Go": the
    small model may read "Go" as the root verb and "prefers" as its subject)."""
    head = _subject_of(root)
    return head if head is not None and head.pos_ in _NOT_NOMINAL and _subject_of(head) is not None else root


def _subject_tokens(sentence: Any, root: Any) -> list[Any]:
    head = _subject_of(root)
    if head is None or head.pos_ in _NOT_NOMINAL:
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


def aspect_from_doc(doc: Any, redacted: Sequence[_Span]) -> str | None:
    sentences = list(doc.sents)
    if not sentences:
        return None
    top = sentences[0].root
    root = _predicate(top)
    heads = [root, *(t for t in root.children if t.dep_ in _OBJECT_DEPS), *([top] if top is not root else [])]
    for head in heads:
        for prep in head.children:
            if prep.dep_ == "prep" and prep.lower_ in _ASPECT_PREPOSITIONS:
                return _phrase(prep, redacted)
    return None


def _phrase(prep: Any, redacted: Sequence[_Span]) -> str | None:
    obj = next((t for t in prep.children if t.dep_ == "pobj"), None)
    if obj is None:
        return None
    tokens = [t for t in obj.subtree if t.i == obj.i or (t.dep_ in _MODIFIER_DEPS and t.head.i == obj.i)]
    words = [_word(t, redacted) for t in tokens]
    if any(w is not None and w.startswith("[") for w in words):
        return None
    kept = [w for w in words if w]
    return f"{prep.lower_} {' '.join(kept)}" if kept else None
