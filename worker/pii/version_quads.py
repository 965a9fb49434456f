"""Dotted quads that the text uses as versions, not as hosts' addresses: a quad paired with
another of the same product, named by a version's key, compared with or replaced by another,
run by a device, or named by a product before it or by a version's word after it.

Each rule gives way to the words of hosts and networks around the quad, and the rules that
read only how a quad is used (not what names it) leave private and documentation addresses
masked: an uncertain quad stays an address (fail closed).
"""

from __future__ import annotations

import ipaddress
import re

from ibex_worker.pii.context import words_before
from ibex_worker.pii.network_words import (ADDRESS_WORDS, COMPONENTS, DOTTED, IP_CUES, NETWORK_WORDS, NOT_AN_IP,
                                           UPGRADES)


def read_as_version(text: str, start: int, end: int) -> bool:
    """The quad at ``start:end`` is a version (or a section) by how the text uses it."""
    if _host_named(text, start, end):
        return False
    if _version_pair(text, start, end) or _named_by_key(text, start) or _SECTION_SIGN.search(text[:start]):
        return True
    return _is_global(text[start:end]) and _version_by_use(text, start, end)


# "dig @1.1.1.1", "10.60.1.23:443": glued to a host's sign.
_HOST_SIGN = re.compile(r"@\s*$")


def _host_named(text: str, start: int, end: int) -> bool:
    """A word of hosts or addresses right before the quad, "@" glued to it, or a port after it."""
    return (bool(_HOST_SIGN.search(text[max(0, start - 2):start])) or text[end:end + 1] == ":"
            or ADDRESS_WORDS.found_in(words_before(text, start, 2)))


_SECTION_SIGN = re.compile(r"§\s*$")


def _version_pair(text: str, start: int, end: int) -> bool:
    """``updater: current=8.4.255.10 target=8.4.255.12``, ``firmware 6.2.10.16, two releases
    behind 6.2.12.0``: quads sharing their first two parts are versions of one thing when
    one of them is named a version (a word or a key), or an upgrade's word comes right before
    the first, none is a private address and the text has no word of networks; never when a
    word of hosts or networks or "at" stands right before any of them, or a word of networks
    right after ("the router at 192.168.1.1 ... the NAS at 192.168.1.20", "build 10.4.22.101
    ... on the box at 10.4.22.10, port 9090" stay hosts)."""
    parts = text[start:end].split(".")
    if len(parts) != 4:
        return False
    pair = [m for m in DOTTED.finditer(text) if m.group(0).split(".")[:2] == parts[:2]]
    if len(pair) < 2:
        return False
    named = [words_before(text, m.start(), 5) for m in pair]
    if any(IP_CUES.found_in(words) or NETWORK_WORDS.found_in(words) or ADDRESS_WORDS.found_in(words)
           or words[-1:] == ["at"] for words in named) \
            or any(NETWORK_WORDS.found_in(_words(text[m.end():m.end() + 24])[:3]) for m in pair):
        return False
    if any(NOT_AN_IP.found_in(words[-1:]) for words in named) or any(_named_by_key(text, m.start()) for m in pair):
        return True
    return (UPGRADES.found_in(named[0][-3:]) and not NETWORK_WORDS.found_in(_words(text))
            and not any(_private(m.group(0)) for m in pair))


# An identifier of a key or attribute that names a version: "ClientVersion", "version_name",
# "oldVersion", "fw_ver", "firmware_allowlist" (the plain words are in NOT_AN_IP).
_VERSION_KEY = re.compile(r"[a-z_]*(?:version|_ver|fwver|firmware)[a-z_]*", re.IGNORECASE)
_KEY_TOKEN = re.compile(r"[A-Za-z_][\w\-]*")
_KEY_TAIL = re.compile(r"(?:[A-Za-z_][\w\-]*[\s\"'=:(<>/]*){1,2}$")


def _named_by_key(text: str, start: int) -> bool:
    """``version_name=4.1.23.0``, ``<add key="ClientVersion" value="6.2.12.0" />``,
    ``AssemblyFileVersion("2.4.1.12")``: one of the two identifiers right before the quad, with
    nothing but quotes, brackets and ``=`` or ``:`` around them, names a version."""
    tail = _KEY_TAIL.search(text[max(0, start - 40):start])
    if tail is None:
        return False
    keys = [k for k in _KEY_TOKEN.findall(tail.group(0)) if k.lower() not in ("key", "value", "add")]
    return any(_VERSION_KEY.fullmatch(k) for k in keys[-2:])


# What joins two versions compared or replaced ("9.16.4.48 -> 9.18.4.22", "4.19.2.1 replaced
# 4.19.1.7", "is 2.4.10.1 newer than 2.4.9.12", "on 9.16.4.48; TAC recommends 9.18.4.22").
_COMPARED = re.compile(r"\s*(?:->|→|=>|replaced|replaces|superseded\s+by|(?:is\s+)?(?:newer|older|later|earlier)"
                       r"\s+than|[;,]?\s*(?:\w+\s+)?recommends|patched\s+to)\s*", re.IGNORECASE)
# How a device or product is said to run a version: "it's on 6.2.12.0", "is still 12.2.0.1",
# "replica 10.2.3.5 on 19.22.0.0", "sweep: 10.30.1.11=6.2.12.0".
_RUNS_ON = re.compile(r"(?:(?:is|are|it's|still|already|stays|remains)\s+on|(?:is|are)\s+still|"
                      r"still\s+(?:shows|reports|runs|at)|\d\.\d{1,3}\s+on|\d\.\d{1,3}\s*=)\s*$", re.IGNORECASE)
# What follows a version: its date in a changelog's heading ("8.4.255.12 (2024-05-14)"), a
# version's word ("the 4.1.22.7 driver update"), "is just the firmware version", a unit
# ("2.5.100.40 mm").
_VERSION_AFTER = re.compile(r"\s*(?:\(\d{4}-\d{2}-\d{2}\)|(?:driver|firmware|update|release|build|patch|hotfix)\b|"
                            r"(?:is|was)\s+(?:just\s+|only\s+)?(?:the\s+|a\s+)?(?:\w+\s+)?(?:version|firmware|build|"
                            r"release)\b|(?:mm|cm|kg|km|ms|mb|gb)\b)", re.IGNORECASE)
_QUAD = re.compile(r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?![\w]|\.\d|:\d)")


def _version_by_use(text: str, start: int, end: int) -> bool:
    """A public address's shape used as a version: run by a device ("is on"), right after a
    product's or part's name or before a version's word, or compared with or replaced by
    another quad of the same first part. Private and documentation addresses are hosts here."""
    before = words_before(text, start, 5)
    if IP_CUES.found_in(before[-2:]):
        return False
    if _RUNS_ON.search(text[max(0, start - 30):start]) and not IP_CUES.found_in(before) \
            or COMPONENTS.found_in(before[-3:]) or _VERSION_AFTER.match(text, end):
        return True
    first = text[start:end].split(".")[0]
    for other in _QUAD.finditer(text):
        if other.start() == start or other.group(0).split(".")[0] != first:
            continue
        between = text[end:other.start()] if other.start() > start else text[other.end():start]
        if _COMPARED.fullmatch(between):
            return True
    return False


def _words(text: str) -> list[str]:
    return [word.lower() for word in re.findall(r"[^\W\d_]+", text)]


def _is_global(value: str) -> bool:
    try:
        return ipaddress.ip_address(value).is_global
    except ValueError:
        return False


def _private(value: str) -> bool:
    try:
        return ipaddress.ip_address(value).is_private
    except ValueError:
        return False
