"""IP addresses in context: a dotted quad that is a version, a section number, a netmask or a
range wider than a household's is nobody's address.

A recognizer finds the shape (``ipaddress`` accepts it); ``ip_in_context`` says whether the
text lets it stand for a host. ``ipv6_with_port`` finds an IPv6 address a port is glued to.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from functools import lru_cache

from ibex_worker.pii import spoken, version_quads
from ibex_worker.pii.context import words_before
from ibex_worker.pii.network_words import (BUILD_TAG_AFTER, DEPLOYS, DOTTED, ENVIRONMENT_AFTER, GLUED_VERSION_KEY,
                                           IMAGE_TAG_BEFORE, IP_CUES, NETWORK_WORDS, NOT_AN_IP, NOT_AN_IP_VERSIONS,
                                           OTHER_VERSION_WORDS, UPGRADES, VERSION_AFTER, VERSION_SUFFIXES)
from ibex_worker.pii.numbers import LIKELY, Hit

_DIRECTIONS = frozenset({"from", "to"})

_PREFIX_LENGTH = re.compile(r"/(\d{1,3})(?!\d)")
_MASK_OCTET = r"(?:255|254|252|248|240|224|192|128|0)"
_NETMASK = re.compile(rf"255\.{_MASK_OCTET}\.{_MASK_OCTET}\.{_MASK_OCTET}")


def ip_in_context(text: str, start: int, end: int) -> bool:
    """No host's address: a version, a section, a netmask or a wildcard mask ("0.0.0.255": no
    host is on network 0), a wide range, a part of a longer dotted run, a hardware id."""
    value = text[start:end]
    before = words_before(text, start, 5)
    named = before[-1:] if before[-1:] != ["is"] else before[-2:-1]  # "the router fw is 1.0.11.116"
    return not (NOT_AN_IP.found_in(named) or _other_version_word(text, start, named) or _build(text, start, end, named)
                or VERSION_AFTER.match(text, end) and not IP_CUES.found_in(before)
                or _inside_dotted_run(text, start, end) or _HARDWARE_ID.fullmatch(value)
                or value.startswith("0.")
                or _network(text, start, end) or _NETMASK.fullmatch(value) is not None
                or _version_like(value) and not IP_CUES.found_in(before) and text[start - 1:start] != "@"
                and not version_quads.ipv6_in(text)
                or _version_change(text, start, end) or _product_version(text, start, end, before)
                or version_quads.read_as_version(text, start, end)
                or _version_sibling(text, start, end) and not _hosts_around(text, start, end, before))


def _other_version_word(text: str, start: int, named: list[str]) -> bool:
    """"La versión 8.0.36.1", "Firmware-Version 7.29.0.1", with no word of hosts in the clause."""
    glued = any(w.rstrip("是为は：:").endswith(VERSION_SUFFIXES) and not w.startswith("ip") for w in named)
    return (OTHER_VERSION_WORDS.found_in(named) or glued) \
        and not IP_CUES.found_in(words_before(text, start, 12, reach=120)) or _version_phrase(text, start)


# Words that, between a version's word and a quad, place the version on a host or a person ("for").
_NOT_PLACING = frozenset({"on", "at", "in", "from", "to", "via", "is", "was", "for", "by", "with", "de", "a", "à", "en",
                          "na", "z", "von", "auf", "für", "desde", "sur", "vers", "pour", "para", "per", "van"})


def _version_phrase(text: str, start: int) -> bool:
    """"the version stays 2.7.0.1", "la versión del agente sigue siendo 3.12.5.0", "Firmware
    routera: 1.12.0.4", "에이전트 버전은 3.12.5.0": a version's word two to five words before a
    public quad, and between them no word of hosts or networks, no word that places something
    at an address and no number, no word of hosts or networks in the clause, no private address
    in the text."""
    before = words_before(text, start, 6)
    for i in range(max(0, len(before) - 5), len(before) - 1):
        if NOT_AN_IP_VERSIONS.found_in([before[i]]) or OTHER_VERSION_WORDS.found_in([before[i]]) or any(
                before[i].rstrip("은는이가：:").endswith(suffix) for suffix in VERSION_SUFFIXES):
            between, clause = before[i + 1:], words_before(text, start, 12, reach=120)
            return not (IP_CUES.found_in(clause) or NETWORK_WORDS.found_in(clause)
                        or _NOT_PLACING.intersection(between) or any(ch.isdigit() for w in between for ch in w)
                        or version_quads.private_in(text))
    return False


def _build(text: str, start: int, end: int, named: list[str]) -> bool:
    """A build's number: named by a version's key glued to another word ("versionName
    4.8.12.1") or an image's tag after a registry's path ("registry.example.com/billing:2.14.3.1");
    or, with no word of hosts or networks around it, deployed to an environment ("Deploy
    5.9.1.204 to staging") or tagged as an image's flavour right after it ("1.27.4.0-alpine").
    Never a quad after "@"."""
    if text[start - 1:start] == "@":
        return False
    if any(GLUED_VERSION_KEY.fullmatch(word) for word in named) or IMAGE_TAG_BEFORE.search(text, max(0, start - 120),
                                                                                           start):
        return True
    if not (DEPLOYS.found_in(named) and text[start - 1:start].isspace() and ENVIRONMENT_AFTER.match(text, end)
            or BUILD_TAG_AFTER.match(text, end)):
        return False
    around = words_before(text, start, 12, reach=120) + re.findall(r"[^\W\d_]+", _clause_after(text, end))[:8]
    return not (IP_CUES.found_in([word for word in around if word not in _DIRECTIONS])
                or NETWORK_WORDS.found_in(around))


# "04:2F:8A:11:9C:3D:77:E0": a MAC or EUI-64 written in two-digit groups reads as IPv6, but
# no one writes an IPv6 address so.
_HARDWARE_ID = re.compile(r"(?:[0-9a-f]{2}:){5,7}[0-9a-f]{2}", re.IGNORECASE)


def _version_change(text: str, start: int, end: int) -> bool:
    """``firmware ... from 9.3.10.1 to 9.3.12.4``: right after "from" or "to", in a clause that
    speaks of a version change and of no host (its only network words are "from" and "to"),
    nor do the words right after it ("rollback to 10.20.5.31 where the old server lives"), with
    a major number up to 30 ("the kiosk went from 81.2.69.160 to 81.2.69.161" after an update
    is a host that moved)."""
    if not version_quads.low_major(text[start:end]):
        return False
    clause = words_before(text, start, 24, reach=200)
    others = [word for word in clause if word not in _DIRECTIONS]
    after = [word for word in re.findall(r"[^\W_]+", _clause_after(text, end))[:8]
             if word not in _DIRECTIONS]
    return (bool(clause) and clause[-1] in _DIRECTIONS and UPGRADES.found_in(clause)
            and not IP_CUES.found_in(others + after) and not NETWORK_WORDS.found_in(others + after))


def _clause_after(text: str, end: int) -> str:
    """The rest of the quad's clause, in lower case, up to 80 characters."""
    return re.split(r"[.;|\n]", text[end:end + 80])[0].lower()


# A product's name right before the quad: a word the view capitalises (no common word), no digits.
_NAME_BEFORE = re.compile(r"(?<![\w.\-])[A-Z][^\W\d_]+[ \t]+$")


def _product_version(text: str, start: int, end: int, before: list[str]) -> bool:
    """``PostgreSQL 15.6.0.1``, ``Nginx 1.25.3.1``: a quad after a product's name, with every
    part below 31 (a host's rarely has; not 10.x) and no port or prefix after it, is its version."""
    if not re.fullmatch(r"\d{1,3}(?:\.\d{1,3}){3}", text[start:end]):
        return False
    parts = [int(part) for part in text[start:end].split(".")]
    return (_NAME_BEFORE.search(text[max(0, start - 40):start]) is not None and max(parts) <= 30 and parts[0] != 10
            and not IP_CUES.found_in(before) and re.match(r"[:/]\d", text[end:end + 2]) is None)


def _network(text: str, start: int, end: int) -> bool:
    """``10.0.0.0/8``, ``2001:db8::/32``, ``198.51.100.0/24``: a range wider than a household's
    or a small office's is nobody's address; an IPv4 /24 written as its network (host part
    zero) is the smallest block routed on the internet, an organisation's, not a subscriber's.
    A narrower one (IPv4 longer than /24, IPv6 /48 or longer: a home's delegated prefix), or a
    host written with its prefix (``10.44.8.17/24``), can point at a few people, so it stays
    masked, a private one too."""
    value = text[start:end]
    length = _PREFIX_LENGTH.search(value) or _PREFIX_LENGTH.match(text, end)
    if length is None or _SLASHED_QUAD.match(text, start):
        return False
    bits = int(length.group(1))
    if _documentation_range(_PREFIX_LENGTH.sub("", value).strip(), bits):
        return True
    if ":" in value:
        return bits < 48
    return bits < 24 or bits == 24 and _PREFIX_LENGTH.sub("", value).strip().endswith(".0")


# Two addresses written with a slash between them ("10.1.1.10/10.1.1.11 both flapping"): the
# digits after the slash start the second address, no prefix's length.
_SLASHED_QUAD = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}/(?P<second>\d{1,3}(?:\.\d{1,3}){3})(?![\d.])")


def slashed_ipv4(text: str) -> list[Hit]:
    """Both addresses of two joined by a slash, which Presidio's pattern reads as one address
    and its prefix (and then as part of a longer dotted run)."""
    hits = []
    for match in _SLASHED_QUAD.finditer(text):
        first = match.group(0).split("/")[0]
        if _is_ip(match.group("second")) and _is_ip(first):
            hits += [Hit("IP_ADDRESS", match.start(), match.start() + len(first), LIKELY),
                     Hit("IP_ADDRESS", match.start("second"), match.end("second"), LIKELY)]
    return hits


def _version_sibling(text: str, start: int, end: int) -> bool:
    """``client 8.4.255.10 < required 8.4.256.0``, ``10.4.22.1 ... 10.4.22 build 1``: another
    dotted number of the text that no IPv4 address can be (three parts, or a part over 255;
    two parts are a decimal or an article's number as often: "per Article 81.2")
    shares the quad's first two parts: both are versions of one thing, unless the quad is
    named an address or a device's. A sibling that is a valid quad proves nothing: "firmware
    10.4.22.1 ... the device at 10.4.22.101"."""
    parts = text[start:end].split(".")
    if len(parts) != 4 or not all(part.isdigit() for part in parts):
        return False
    return any(not (s < end and start < e) for s, e in _no_address_dotted(text).get(tuple(parts[:2]), ()))


def _hosts_around(text: str, start: int, end: int, before: list[str]) -> bool:
    """A word of hosts right before the quad or right after it in its clause ("the box at
    10.0.19.45", "10.3.2.1 is the gateway"), a word of networks in the clause before it, or
    another private address of the same /24 ("from 10.4.4.30 to 10.4.4.31"): the quad is a host's,
    whatever version shares its first parts."""
    after = re.findall(r"[^\W\d_]+", _clause_after(text, end))[:4]
    if IP_CUES.found_in(before) or IP_CUES.found_in(after) or NETWORK_WORDS.found_in(after) \
            or NETWORK_WORDS.found_in(words_before(text, start, 12, reach=120)):
        return True
    value = text[start:end]
    subnet = value.rsplit(".", 1)[0] + "."
    return version_quads.private(value) and any(
        other != value and other.startswith(subnet) and _is_ip(other) for _, _, other in version_quads.quads(text))


@lru_cache(maxsize=32)
def _no_address_dotted(text: str) -> dict[tuple[str, ...], list[tuple[int, int]]]:
    """The text's dotted numbers of three or more parts that no IPv4 address can be, by their
    first two parts (read once per text, not once per quad)."""
    found: dict[tuple[str, ...], list[tuple[int, int]]] = {}
    for match in DOTTED.finditer(text):
        other = match.group(0).split(".")
        if len(other) > 2 and (len(other) != 4 or any(int(p) > 255 for p in other)):
            found.setdefault(tuple(other[:2]), []).append((match.start(), match.end()))
    return found


# Address blocks reserved for documentation (RFC 5737, RFC 3849): a range in one is an example.
_DOCUMENTATION = tuple(ipaddress.ip_network(block) for block in
                       ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32"))


def _documentation_range(address: str, bits: int) -> bool:
    """``2001:db8::/48``: a network written with its prefix inside a documentation block (a
    host there, ``203.0.113.5/30`` too, is still masked: examples are written like real addresses)."""
    try:
        network = ipaddress.ip_network(f"{address}/{bits}")  # a host written with its prefix is none
    except ValueError:
        return False
    return network.num_addresses > 1 and any(network.version == block.version and network.subnet_of(block)
                                             for block in _DOCUMENTATION)


def _version_like(value: str) -> bool:
    """``7.1.3.2``, ``4.2.1.3``: four one-digit parts read as a version or a section number
    unless the text speaks of addresses."""
    return all(len(part) == 1 for part in value.split("."))


def _inside_dotted_run(text: str, start: int, end: int) -> bool:
    """``19618.1.15.11.14``: four of its parts read as an IPv4 address, the whole does not
    (a packet's end as tcpdump prints it, address and port, is an address)."""
    if (start, end) in _packet_ends(text):
        return False
    before, after = text[max(0, start - 2):start], text[end:end + 2]
    return bool(re.fullmatch(r"\d\.", before) or re.fullmatch(r"\.\d", after))


# IPv6 written with a port.
_IPV6_PORT = re.compile(r"(?<![\w:.])((?:[0-9a-f]{0,4}:){2,7}[0-9a-f]{0,4}):(\d{1,5})(?![\w:])", re.IGNORECASE)


def ip_addresses(text: str) -> list[Hit]:
    """The addresses Presidio's recognizer does not see: IPv6 with a port, IPv4 read out,
    glued to words of scripts written without spaces or after another address and a slash,
    and the two ends of a packet as tcpdump prints them."""
    return (ipv6_with_port(text) + spoken_ips(text) + glued_ipv4(text) + slashed_ipv4(text)
            + [Hit("IP_ADDRESS", start, end, LIKELY) for start, end in _packet_ends(text)])


# "IP 10.0.0.5.53422 > 10.0.0.1.53:", "IP6 fe80::1.546 > ff02::1:2.547:": tcpdump writes each
# end of a packet as its address, a dot and its port (or the port's service name).
_PACKET = re.compile(r"\b(?i:ip6?)[ \t]+(?P<a>[0-9A-Fa-f:.]+?)\.(?:\d{1,5}|[a-z][\w\-]*)[ \t]+>[ \t]+"
                     r"(?P<b>[0-9A-Fa-f:.]+?)\.(?:\d{1,5}|[a-z][\w\-]*):")


@lru_cache(maxsize=32)
def _packet_ends(text: str) -> tuple[tuple[int, int], ...]:
    return tuple((m.start(g), m.end(g)) for m in _PACKET.finditer(text) for g in ("a", "b") if _is_ip(m.group(g)))


# An IPv4 address with letters of another script right before or after it ("服务器10.8.21.17又挂了",
# "서버192.168.0.15가", "आईपी192.168.1.20", "服务器IP10.8.21.17挂了"): Presidio's pattern wants a
# word boundary there, and these letters (and the vowel signs of Indic and Thai scripts) are word
# characters to it; so are Latin letters right after it ("10.8.21.17ssh"). A quad with a Latin
# letter before it or no letters around it is left to that pattern ("v10.4.2.1" is no host).
_GLUED_IPV4 = re.compile(r"(?<![0-9.\-_])\d{1,3}(?:\.\d{1,3}){3}(?![0-9_]|\.\d)")


def _other_script(ch: str) -> bool:
    return bool(ch) and not ch.isascii() and unicodedata.category(ch)[0] in "LM"


def glued_ipv4(text: str) -> list[Hit]:
    hits = []
    for match in _GLUED_IPV4.finditer(text):
        before, after = text[max(0, match.start() - 1):match.start()], text[match.end():match.end() + 1]
        glued_after = after.isascii() and after.isalpha() and not before.isalpha()
        if not (_other_script(before) or _other_script(after) or glued_after):
            continue  # no letters, or a Latin letter before it: Presidio's recognizer decides
        try:
            ipaddress.IPv4Address(match.group(0))
        except ValueError:
            continue
        hits.append(Hit("IP_ADDRESS", match.start(), match.end(), LIKELY))
    return hits


# An IPv4 address read out: four groups of number words (or digits) joined by "dot" or "point".
_GROUP = r"(?:[^\W_]+(?:[ \-][^\W_]+){0,2})"
_SPOKEN_IP = re.compile(rf"(?<![\w]){_GROUP}(?:\s+(?:dot|point|punto|punkt|ponto)\s+{_GROUP}){{3}}(?![\w])",
                        re.IGNORECASE)
_SPOKEN_DOT = re.compile(r"\s+(?:dot|point|punto|punkt|ponto)\s+", re.IGNORECASE)


def spoken_ips(text: str) -> list[Hit]:
    """"one nine two dot one six eight dot zero dot one zero": each group said digit by digit
    or as a number, every group a valid part of an IPv4 address, most of it said in words, a
    group read digit by digit or a word of hosts before it ("my ip is ten dot zero ..."), and
    no version's word before it ("the build is two point one point three point four")."""
    hits = []
    for match in _SPOKEN_IP.finditer(text):
        pieces = _SPOKEN_DOT.split(match.group(0))
        first = _numbers(pieces[0].split()[::-1])[::-1]   # "my ip is ten": the numbers that end it
        last = _numbers(pieces[-1].split())                # "one zero and": the numbers that start it
        groups = [first, *(_numbers(p.split()) for p in pieces[1:-1]), last]
        lengths = [len(p.split()) for p in pieces[1:-1]]
        if not first or not last or [len(g) for g in groups[1:-1]] != lengths:
            continue
        head = list(re.finditer(r"\S+", pieces[0]))[-len(first)]
        tail = list(re.finditer(r"\S+", pieces[-1]))[len(last) - 1]
        start, end = match.start() + head.start(), match.end() - len(pieces[-1]) + tail.end()
        digits = ["".join(str(spoken.number_value(w) if not w.isdigit() else w) for w in g) for g in groups]
        said = sum(not word.isdigit() for group in groups for word in group)
        before = words_before(text, start, 6)
        read_digit_by_digit = any(len(g) >= 2 and all(spoken.number_value(w) in range(10) or w.isdigit() for w in g)
                                  for g in groups)
        if said >= 4 and all(len(d) <= 3 and int(d) <= 255 for d in digits) \
                and (IP_CUES.found_in(words_before(text, start, 8)) or read_digit_by_digit) \
                and not (NOT_AN_IP.found_in(before) or UPGRADES.found_in(before)):
            hits.append(Hit("IP_ADDRESS", start, end, LIKELY))
    return hits


def _numbers(words: list[str]) -> list[str]:
    """The leading words of ``words`` that are digits or number words."""
    taken = []
    for word in words:
        if not (word.isdigit() or spoken.number_value(word) is not None):
            break
        taken.append(word)
    return taken


def ipv6_with_port(text: str) -> list[Hit]:
    """``2001:db8::200e:44321`` in a log line: not an address as written, but an address
    followed by a port. The address part is an IP address."""
    hits = []
    for match in _IPV6_PORT.finditer(text):
        if _is_ip(match.group(0)) or not _is_ip(match.group(1)):
            continue
        hits.append(Hit("IP_ADDRESS", match.start(1), match.end(1), LIKELY))
    return hits


def _is_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True

