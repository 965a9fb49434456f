"""Record identifiers (``ibex_worker.identifiers``): what counts as naming a record, and when
two memories are about different records."""

from __future__ import annotations

import pytest

from ibex_worker.identifiers import distinct_records, find


@pytest.mark.parametrize(("content", "expected"), [
    ("[PERSON] asked to be called back regarding ticket 84898.", {"ticket": {"84898"}}),
    ("Invoices for account 919413 go to the finance mailbox.", {"account": {"919413"}}),
    ("Invoice No. 2024-118 is overdue.", {"invoice": {"2024-118"}}),
    ("Order #A-7731 left the warehouse.", {"order": {"a-7731"}}),
    ("Refund for booking: BK55120.", {"booking": {"bk55120"}, "bk": {"55120"}}),
    ("Tickets 4821 and 4822 were merged; see #4823.", {"ticket": {"4821", "4822"}}),
    ("tickets #4821, #4822 or 4823 mention it", {"ticket": {"4821", "4822", "4823"}}),
    ("Purchase order 55012 was approved.", {"purchase order": {"55012"}}),
    ("See INC0012345 and ORD-88213.", {"inc": {"0012345"}, "ord": {"88213"}}),
    ("TICKET 84898 WAS CLOSED", {"ticket": {"84898"}}),
])
def test_a_record_noun_with_a_value_or_a_code_names_a_record(content, expected):
    assert {kind: set(values) for kind, values in find(content).items()} == expected


@pytest.mark.parametrize("content", [
    "Use port 8080 for staging.",
    "Passwords are hashed with SHA-256 and AES-128.",
    "The order of 3 items changed.",
    "The account owner 1234 asked.",
    "Case 2 of the plan failed.",
    "Regarding ticket [PHONE_NUMBER], call back.",
    "The customer renews the Atlas contract every September.",
    "The standup is at 9am on Mondays.",
    "Order 500 units of paper every Monday.",
    "Payment 250 EUR was received on Friday.",
    "Refund 45.00 approved for the damaged parcel.",
    "Quote 1200 for the new roof was accepted.",
    "The lab is certified to ISO-9001 and RFC-7231 compliant.",
])
def test_values_settings_and_placeholders_are_not_records(content):
    assert find(content) == {}


def test_two_memories_are_about_different_records_only_when_a_shared_kind_has_no_value_in_common():
    assert distinct_records(find("ticket 84898 closed"), find("Ticket 78037 closed")) == ["ticket"]
    assert distinct_records(find("ticket 84898 closed"), find("TICKET 84898 reopened")) == []
    assert distinct_records(find("ticket 84898"), find("account 78037")) == []
    assert distinct_records(find("ticket 84898"), find("no record here")) == []
    assert distinct_records(find("tickets 1001 and 1002"), find("ticket 1002")) == []
    assert distinct_records(find("ticket 1001, order 55012"), find("ticket 1002, order 55013")) == ["order", "ticket"]


@pytest.mark.parametrize("a, b", [
    ("Bug PAY-219 causes double charges on retries.", "Bug PAY-245 causes double charges on retries."),
    ("Invoice 9043 was paid in full yesterday.", "Invoice 9087 was paid in full yesterday."),
    ("Pull request #882 is waiting for a second review.", "Pull request #907 is waiting for a second review."),
    ("Change request CR-338 is scheduled tonight.", "Change request CR-351 is scheduled tonight."),
])
def test_issue_keys_and_records_stated_about_are_different_records(a, b):
    assert distinct_records(find(a), find(b))


@pytest.mark.parametrize("a, b", [
    ("The serial line runs RS-232 at the depot.", "The serial line runs RS-485 at the depot."),
    ("Tokens are signed with ES-256.", "Tokens are signed with PS-384."),
    ("The invoice 9043 for the roof", "The invoice 9087 for the roof"),   # an amount as often
])
def test_standards_and_bare_short_numbers_are_no_records(a, b):
    assert not distinct_records(find(a), find(b))
