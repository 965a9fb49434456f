"""Stage 1 and the API's shared check: ``validate_request`` names every bad field and never
quotes what was submitted."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import make_settings
from ibex_worker.errors import ValidationFailed
from ibex_worker.pipeline.labels import normalise
from ibex_worker.pipeline.validate import validate_request

SETTINGS = make_settings()
CANARY = "canary-7f3a9c-secret"


def body(**fields: Any) -> dict[str, Any]:
    base = {"org_id": "acme", "agent_id": "support-bot", "content": "User prefers Python.", "source": "chat"}
    return {**base, **fields}


def without(*names: str) -> dict[str, Any]:
    return {k: v for k, v in body().items() if k not in names}


def rejected(request: Any) -> ValidationFailed:
    with pytest.raises(ValidationFailed) as caught:
        validate_request(request, SETTINGS)
    return caught.value


def fields_of(error: ValidationFailed) -> list[str]:
    return [issue.field for issue in error.issues]


def rendered(error: ValidationFailed) -> str:
    return " ".join([str(error), error.message, json.dumps(error.as_dict()), repr(error.issues)])


# ---------------------------------------------------------------- accepted


def test_a_minimal_request_is_accepted_and_normalised():
    request = validate_request(body(), SETTINGS)
    assert request["valid_from"] is None and request["valid_until"] is None
    assert request["metadata"] == {}
    assert request["content"] == "User prefers Python."


def test_a_full_request_is_accepted_and_times_are_normalised_to_utc_offsets():
    request = validate_request(body(valid_from="2024-03-01T00:00:00Z", valid_until="2024-06-01T02:00:00+02:00",
                                    category="preference", confidence=0.9,
                                    labels=[{"label": "preference", "confidence": 0.9},
                                            {"label": "language", "confidence": 1}],
                                    metadata={"channel": "web"}), SETTINGS)
    assert request["valid_from"] == "2024-03-01T00:00:00+00:00"
    assert request["valid_until"] == "2024-06-01T02:00:00+02:00"
    assert request["metadata"] == {"channel": "web"}


@pytest.mark.parametrize("scope", ["a", "acme", "Acme-Corp_2.eu:west@prod", "0org", "x" * 128])
def test_scope_ids_within_charset_and_length_are_accepted(scope):
    assert validate_request(body(org_id=scope, agent_id=scope), SETTINGS)["org_id"] == scope


@pytest.mark.parametrize("stamp", ["2024-03-01T00:00:00Z", "2024-03-01t00:00:00z", "2024-03-01T00:00:00.123Z",
                                   "2024-03-01T00:00:00+05:30", "2024-03-01T00:00:00-08:00"])
def test_rfc3339_timestamps_with_an_offset_are_accepted(stamp):
    assert validate_request(body(valid_from=stamp), SETTINGS)["valid_from"] is not None


def test_bounds_are_inclusive_at_their_maximum():
    validate_request(body(content="c" * SETTINGS.content_max_chars, source="s" * SETTINGS.source_max_chars,
                          labels=[{"label": "l" * SETTINGS.label_max_chars, "confidence": 0.0}]
                          + [{"label": f"label-{i}", "confidence": 1.0} for i in range(4)]), SETTINGS)


def _metadata_of_size(size: int) -> dict[str, Any]:
    """Metadata whose compact JSON is ``size`` bytes, in strings the PII stage can analyse."""
    chunk = SETTINGS.pii_max_chars // 2
    metadata: dict[str, Any] = {"k": []}
    while len(json.dumps(metadata, separators=(",", ":"))) + chunk + 3 < size:
        metadata["k"].append("m" * chunk)
    metadata["k"].append("")
    metadata["k"][-1] = "m" * (size - len(json.dumps(metadata, separators=(",", ":"))))
    return metadata


def test_metadata_exactly_at_the_size_bound_is_accepted_and_one_byte_more_is_not():
    at_bound, over = _metadata_of_size(SETTINGS.metadata_max_bytes), _metadata_of_size(SETTINGS.metadata_max_bytes + 1)
    assert [len(json.dumps(m, separators=(",", ":"))) for m in (at_bound, over)] == \
        [SETTINGS.metadata_max_bytes, SETTINGS.metadata_max_bytes + 1]
    validate_request(body(metadata=at_bound), SETTINGS)
    assert fields_of(rejected(body(metadata=over))) == ["metadata"]


# ---------------------------------------------------------------- scope


@pytest.mark.parametrize("name", ["org_id", "agent_id"])
@pytest.mark.parametrize("value", [
    pytest.param(None, id="missing"), pytest.param("", id="empty"), pytest.param(42, id="not a string"),
    pytest.param("x" * 129, id="too long"), pytest.param("-leading-dash", id="bad first character"),
    pytest.param("has space", id="space"), pytest.param("a/b", id="slash"), pytest.param("é-org", id="non-ascii"),
    pytest.param("org\x00", id="NUL"),
])
def test_scope_ids_outside_charset_or_length_are_rejected(name, value):
    request = body(**{name: value}) if value is not None else without(name)
    error = rejected(request)
    assert fields_of(error) == [name]


@pytest.mark.parametrize("name", ["org_id", "agent_id"])
@pytest.mark.parametrize("value", ["acme\n", "acme\r\n", "\nacme"])
def test_a_scope_id_with_a_line_break_is_rejected(name, value):
    # `$` alone would match before a trailing newline: "acme\n" must not become a second tenant.
    assert fields_of(rejected(body(**{name: value}))) == [name]


# ---------------------------------------------------------------- content and source


@pytest.mark.parametrize("name", ["content", "source"])
@pytest.mark.parametrize("value", [
    pytest.param(None, id="missing"), pytest.param("", id="empty"), pytest.param("  \t\n ", id="blank"),
    pytest.param(["list"], id="not a string"), pytest.param("a\x00b", id="NUL character"),
])
def test_content_and_source_must_be_non_blank_strings_without_nul(name, value):
    request = body(**{name: value}) if value is not None else without(name)
    assert fields_of(rejected(request)) == [name]


def test_content_over_the_bound_is_rejected():
    error = rejected(body(content="c" * (SETTINGS.content_max_chars + 1)))
    assert fields_of(error) == ["content"]
    assert str(SETTINGS.content_max_chars) in error.issues[0].issue


def test_source_over_the_bound_is_rejected():
    assert fields_of(rejected(body(source="s" * (SETTINGS.source_max_chars + 1)))) == ["source"]


def test_the_content_bound_is_a_setting():
    small = make_settings(content_max_chars=10)
    validate_request(body(content="c" * 10), small)
    with pytest.raises(ValidationFailed):
        validate_request(body(content="c" * 11), small)


# ---------------------------------------------------------------- time


@pytest.mark.parametrize("stamp", [
    pytest.param("2024-03-01T00:00:00", id="no offset"),
    pytest.param("2024-03-01", id="date only"),
    pytest.param("2024-03-01 00:00:00Z", id="space instead of T"),
    pytest.param("yesterday", id="not a timestamp"),
    pytest.param("2024-02-30T00:00:00Z", id="impossible date"),
    pytest.param("", id="empty string"),
    pytest.param(1709251200, id="epoch number"),
])
@pytest.mark.parametrize("name", ["valid_from", "valid_until"])
def test_timestamps_without_an_offset_or_not_rfc3339_are_rejected(name, stamp):
    assert fields_of(rejected(body(**{name: stamp}))) == [name]


@pytest.mark.parametrize("stamp", ["20240301T000000Z", "2024-W09-5T00:00:00Z", "2024-03-01T10:00Z",
                                   "2024-03-01T10Z", "2024-03-01T00:00:00+0000",
                                   "\uff12\uff10\uff12\uff14-03-01T00:00:00Z"])
def test_iso8601_forms_that_are_not_rfc3339_are_rejected(stamp):
    # Basic format, week dates, missing seconds, offsets without a colon, non-ASCII digits.
    assert fields_of(rejected(body(valid_from=stamp))) == ["valid_from"]


@pytest.mark.parametrize(("valid_from", "valid_until"), [
    pytest.param("2024-06-01T00:00:00Z", "2024-06-01T00:00:00Z", id="equal"),
    pytest.param("2024-06-01T00:00:00Z", "2024-01-01T00:00:00Z", id="earlier"),
    pytest.param("2024-06-01T02:00:00+02:00", "2024-06-01T00:00:00Z", id="equal instant in other offsets"),
])
def test_valid_until_must_be_later_than_valid_from(valid_from, valid_until):
    error = rejected(body(valid_from=valid_from, valid_until=valid_until))
    assert [i.as_dict() for i in error.issues] == [{"field": "valid_until", "issue": "must be later than valid_from"}]


def test_valid_until_alone_or_null_times_are_accepted():
    validate_request(body(valid_until="2024-06-01T00:00:00Z"), SETTINGS)
    validate_request(body(valid_from=None, valid_until=None), SETTINGS)


# ---------------------------------------------------------------- labels and category


@pytest.mark.parametrize(("labels", "field"), [
    pytest.param([], "labels", id="empty list"),
    pytest.param([{"label": f"l{i}", "confidence": 0.5} for i in range(6)], "labels", id="six labels"),
    pytest.param({"label": "x", "confidence": 0.5}, "labels", id="not a list"),
    pytest.param([{"label": "work", "confidence": 0.5}, {"label": "work", "confidence": 0.4}], "labels[1].label",
                 id="duplicate"),
    pytest.param([{"label": "Work", "confidence": 0.5}, {"label": " work ", "confidence": 0.4}], "labels[1].label",
                 id="duplicate after trimming and lowercasing"),
    pytest.param([{"label": "   ", "confidence": 0.5}], "labels[0].label", id="blank label"),
    pytest.param([{"label": 7, "confidence": 0.5}], "labels[0].label", id="label not a string"),
    pytest.param([{"label": "x" * 65, "confidence": 0.5}], "labels[0].label", id="label too long"),
    pytest.param([{"label": "work", "confidence": 1.01}], "labels[0].confidence", id="confidence above one"),
    pytest.param([{"label": "work", "confidence": -0.01}], "labels[0].confidence", id="negative confidence"),
    pytest.param([{"label": "work", "confidence": True}], "labels[0].confidence", id="bool confidence"),
    pytest.param([{"label": "work", "confidence": "0.5"}], "labels[0].confidence", id="string confidence"),
    pytest.param([{"label": "work", "confidence": float("nan")}], "labels[0].confidence", id="NaN confidence"),
    pytest.param([{"label": "work", "confidence": float("inf")}], "labels[0].confidence", id="infinite confidence"),
    pytest.param([{"label": "work"}], "labels[0].confidence", id="missing confidence"),
    pytest.param([{"label": "work", "confidence": 0.5, "extra": 1}], "labels[0]", id="unknown key in a label"),
    pytest.param(["work"], "labels[0]", id="label not an object"),
])
def test_bad_labels_are_rejected_with_the_field_that_is_wrong(labels, field):
    error = rejected(body(labels=labels))
    assert fields_of(error) == [field]


def test_every_bad_label_is_reported_not_just_the_first():
    error = rejected(body(labels=[{"label": "a", "confidence": 2}, {"label": "", "confidence": 0.5},
                                  {"label": "a", "confidence": False}]))
    assert sorted(fields_of(error)) == ["labels[0].confidence", "labels[1].label", "labels[2].confidence",
                                        "labels[2].label"]


@pytest.mark.parametrize(("fields", "field"), [
    pytest.param({"category": ""}, "category", id="blank category"),
    pytest.param({"category": "x" * 65}, "category", id="category too long"),
    pytest.param({"category": 3}, "category", id="category not a string"),
    pytest.param({"confidence": 1.5}, "confidence", id="confidence above one"),
    pytest.param({"confidence": False}, "confidence", id="bool confidence"),
    pytest.param({"confidence": "high"}, "confidence", id="string confidence"),
])
def test_bad_scalar_category_or_confidence_is_rejected(fields, field):
    assert fields_of(rejected(body(**fields))) == [field]


@pytest.mark.parametrize("confidence", [0, 0.0, 1, 1.0, 0.5])
def test_confidence_bounds_are_inclusive(confidence):
    validate_request(body(confidence=confidence, labels=[{"label": "x", "confidence": confidence}]), SETTINGS)


# ---------------------------------------------------------------- metadata and shape


@pytest.mark.parametrize("metadata", [
    pytest.param(["a"], id="list"), pytest.param("text", id="string"),
    pytest.param({"n": float("nan")}, id="NaN"), pytest.param({"when": object()}, id="not JSON"),
])
def test_metadata_must_be_a_plain_json_object(metadata):
    assert fields_of(rejected(body(metadata=metadata))) == ["metadata"]


def test_unknown_fields_are_rejected_by_name():
    error = rejected(body(summary="x", priority=1))
    assert fields_of(error) == ["priority", "summary"]
    assert all(issue.issue == "unknown field" for issue in error.issues)


@pytest.mark.parametrize("request_body", [None, [], "text", 3])
def test_a_body_that_is_not_an_object_is_rejected(request_body):
    assert fields_of(rejected(request_body)) == ["body"]


def test_all_bad_fields_are_reported_together():
    error = rejected({"org_id": "", "content": " ", "valid_from": "nope", "labels": [], "metadata": []})
    assert set(fields_of(error)) == {"org_id", "agent_id", "content", "source", "valid_from", "labels", "metadata"}
    assert error.code == "VALIDATION_ERROR"
    assert error.message == "invalid fields: agent_id, content, labels, metadata, org_id, source, valid_from"


# ---------------------------------------------------------------- no echo


@pytest.mark.parametrize("bad", [
    pytest.param({"content": CANARY * 1000}, id="content too long"),
    pytest.param({"content": CANARY + "\x00"}, id="content with NUL"),
    pytest.param({"source": CANARY * 10}, id="source too long"),
    pytest.param({"org_id": CANARY + " !"}, id="org_id charset"),
    pytest.param({"agent_id": CANARY + "/"}, id="agent_id charset"),
    pytest.param({"valid_from": CANARY}, id="valid_from garbage"),
    pytest.param({"valid_until": "2024-01-01T00:00:00" + CANARY}, id="valid_until garbage"),
    pytest.param({"category": CANARY * 10}, id="category too long"),
    pytest.param({"confidence": CANARY}, id="confidence string"),
    pytest.param({"labels": [{"label": CANARY, "confidence": 0.5}, {"label": CANARY, "confidence": 0.5}]},
                 id="duplicate label"),
    pytest.param({"labels": [{"label": CANARY * 10, "confidence": CANARY}]}, id="label too long"),
    pytest.param({"metadata": {"note": CANARY * 2000}}, id="metadata too large"),
    pytest.param({"metadata": {"note": CANARY * 450}}, id="metadata string longer than the PII stage analyses"),
    pytest.param({"metadata": CANARY}, id="metadata not an object"),
])
def test_error_messages_never_include_the_submitted_value(bad):
    # The content itself carries the canary too: a valid field must not leak either.
    error = rejected({**body(content=f"User note {CANARY}."), **bad})
    assert CANARY not in rendered(error)
    assert CANARY[:12] not in rendered(error)


# ---------------------------------------------------------------- labels.normalise


def test_given_labels_are_trimmed_and_lowercased():
    assert normalise({"labels": [{"label": "  Work ", "confidence": 1}, {"label": "TRAVEL", "confidence": 0.25}]}) == [
        {"label": "work", "confidence": 1.0}, {"label": "travel", "confidence": 0.25}]


def test_a_label_is_synthesized_from_category_and_confidence_when_none_are_given():
    assert normalise({"category": " Preference ", "confidence": 0.8}) == [{"label": "preference", "confidence": 0.8}]
    assert normalise({"category": "preference", "confidence": 0}) == [{"label": "preference", "confidence": 0.0}]


def test_without_category_or_labels_the_label_is_uncategorized_with_full_confidence():
    assert normalise({}) == [{"label": "uncategorized", "confidence": 1.0}]
    assert normalise({"labels": None, "category": None, "confidence": None}) == [
        {"label": "uncategorized", "confidence": 1.0}]
    assert normalise({"confidence": 0.3}) == [{"label": "uncategorized", "confidence": 0.3}]


def test_given_labels_win_over_the_scalar_category():
    assert normalise({"category": "preference", "confidence": 0.8,
                      "labels": [{"label": "work", "confidence": 0.6}]}) == [{"label": "work", "confidence": 0.6}]


def test_a_metadata_string_the_pii_stage_could_not_analyse_is_refused_at_the_door():
    limit = SETTINGS.pii_max_chars
    assert len(CANARY) * 450 > limit and len(json.dumps({"k": CANARY * 450})) < SETTINGS.metadata_max_bytes
    for metadata in ({"note": "x" * (limit + 1)}, {"a": [{"b": "y" * (limit + 1)}]}, {"z" * (limit + 1): 1}):
        assert fields_of(rejected(body(metadata=metadata))) == ["metadata"]
    validate_request(body(metadata={"note": "x" * limit}), SETTINGS)
