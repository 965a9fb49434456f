"""Dotted quads that the text uses as versions, not as hosts' addresses: a quad paired with
another of the same product under an update's keys, named by a version's key or a table's
column, in a user agent, run by a host written right before it, headed as a changelog entry,
a step of a version's change or compared, or glued to a file's or a package's name.

Every rule gives way to a word of hosts or networks around the quad, and the rules that read
only how a quad is used (not what names it) leave private and documentation addresses
masked: an uncertain quad stays an address (fail closed). A text listing many quads is a
list of hosts as often as a list of versions; past ``_MAX_QUADS`` these rules do not apply,
which also keeps their cost linear in the text's length.
"""

from __future__ import annotations

import ipaddress
import re
from functools import lru_cache

from ibex_worker.pii import tables
from ibex_worker.pii.context import Cues, words_before
from ibex_worker.pii.network_words import ADDRESS_WORDS, DOTTED, IP_CUES, NETWORK_WORDS, NOT_AN_IP, UPGRADES

_MAX_QUADS = 12


def read_as_version(text: str, start: int, end: int) -> bool:
    """The quad at ``start:end`` is a version (or a section) by how the text uses it."""
    if len(quads(text)) > _MAX_QUADS:
        return False
    if _named_by_key(text, start) or _USER_AGENT.search(text, max(0, start - 80), start) \
            or _column_named_version(text, start):
        return True  # "fw_from=10.52.7.0", "user_agent=Yealink SIP-T54W 96.86.0.70", a table's "fw" column
    if _host_named(text, start, end):  # "from" and "to" are words of hosts too: a version's step says otherwise
        return _is_global(text[start:end]) and not _addressed(text, start, end) \
            and (_version_step(text, start, end) or low_major(text[start:end]) and _upgraded_to(text, start))
    if _SECTION_SIGN.search(text, max(0, start - 3), start) or _version_pair(text, start, end):
        return True
    return _is_global(text[start:end]) and (_version_by_use(text, start, end) or _version_step(text, start, end)
                                            or _file_or_package(text, start, end) or _in_release_text(text, start, end))


@lru_cache(maxsize=32)
def quads(text: str) -> tuple[tuple[int, int, str], ...]:
    return tuple((m.start(), m.end(), m.group(0)) for m in DOTTED.finditer(text) if m.group(0).count(".") == 3)


def _addressed(text: str, start: int, end: int) -> bool:
    return text[max(0, start - 1):start] == "@" or text[end:end + 1] == ":" \
        or ADDRESS_WORDS.found_in(words_before(text, start, 3))


def _host_named(text: str, start: int, end: int) -> bool:
    """A word of hosts, addresses or networks right before the quad, "@" glued to it, or a
    port after it."""
    before = words_before(text, start, 3)
    return (text[max(0, start - 1):start] == "@" or text[end:end + 1] == ":" or ADDRESS_WORDS.found_in(before)
            or IP_CUES.found_in(before[-2:]) or NETWORK_WORDS.found_in(before))


_SECTION_SIGN = re.compile(r"§\s*$")
# Keys whose value is a version: "version", "ClientVersion", "version_name", "fw_version",
# "AssemblyFileVersion", "oldVersion", "image_tag" - "version" as a whole part of the key (the view folds
# camel case, so the parts before it are named: "Conversion" and "Subversion" are no keys),
# then only quotes, brackets, "=" or ":" before the quad.
_VERSION_KEY = re.compile(r"(?:^|_|client|server|app|file|assembly|product|old|new|min|max|target|current|"
                          r"installed|latest|firmware|fw|os|sdk|api|agent|package|schema|binary|component)"
                          r"version(?:_[a-z]+)?$|(?:image|docker|release|build|git)_?tag$"
                          r"|(?:^|_)(?:fw|firmware|bios|uefi)(?:_(?:from|to|old|new|min|max|current|target))?$",
                          re.IGNORECASE)
_KEY_BEFORE = re.compile(r"(?P<key>[A-Za-z_][A-Za-z_]*)(?P<sep>\"?\s*[=:(]\s*\"?|\"\s+value=\")\s*$")


def _named_by_key(text: str, start: int) -> bool:
    """``version_name=4.1.23.0``, ``<add key="ClientVersion" value="6.2.12.0" />``,
    ``AssemblyFileVersion("2.4.1.12")``: the key right before the quad names a version."""
    key = _KEY_BEFORE.search(text, max(0, start - 48), start)
    return key is not None and _VERSION_KEY.search(key.group("key")) is not None


# An update's keys written as keys right before each quad of a pair ("current=8.4.255.10
# target=8.4.255.12"); "old 81.2.69.17, new 81.2.71.204" in prose is a person's address changing.
_UPDATE_KEY = re.compile(r"(?<![\w])(?:current|target|installed|latest|previous)\s*[=:]\s*$", re.IGNORECASE)


def _version_pair(text: str, start: int, end: int) -> bool:
    """``updater: current=8.4.255.10 target=8.4.255.12``, ``firmware 6.2.10.16, two releases
    behind 6.2.12.0``: quads sharing their first two parts are versions of one thing when one
    of them is named a version by the word right before it, or when an update's key stands
    right before each of them in a text about upgrades with no private address among them."""
    parts = text[start:end].split(".")
    pair = [(s, e) for s, e, value in quads(text) if value.split(".")[:2] == parts[:2]]
    if len(pair) < 2 or any(_host_named(text, s, e) for s, e in pair):
        return False
    named = [words_before(text, s, 5) for s, _ in pair]
    if any(IP_CUES.found_in(words) or NETWORK_WORDS.found_in(words) or words[-1:] == ["at"] for words in named) \
            or any(NETWORK_WORDS.found_in(_words(text[e:e + 24])[:3]) for _, e in pair):
        return False  # "the device still failing is 10.4.22.101", "the box at 10.4.22.17, port 9090"
    if any(NOT_AN_IP.found_in(words[-1:]) for words in named):
        return True
    return (all(_UPDATE_KEY.search(text, max(0, s - 16), s) for s, _ in pair) and UPGRADES.found_in(_words(text))
            and not any(private(text[s:e]) for s, e in pair))


# "10.14.2.9 is on 19.3.0.0", "10.14.2.10 is still 12.2.0.1", "sweep: 10.30.1.11=6.2.12.0":
# a host's whole address (or its placeholder), then the version it runs ("27.1 on 81.2.69.142"
# is a version on a host, "14.22 on 81.2.69.142" a time).
_RUN_BY_HOST = re.compile(r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}\s*(?:=|(?:is\s+)?(?:still\s+)?on|is\s+still)\s*$",
                          re.IGNORECASE)
# An update that brings something to the quad ("upgrade the agent to 7.3.0.112", "bumped nginx to
# 1.25.3.1"), naming no host, network or record on the way ("update the A record to ...").
_UPGRADED_TO = re.compile(r"(?<![\w])(?:upgrad|updat|downgrad|bump|pinn?|roll(?:ed|ing)?\s+back)\w*\s+"
                          r"(?P<what>(?:[\w.\-]+\s+){0,3})to\s+(?:v(?:ersion)?\s*)?$", re.IGNORECASE)
_NOT_UPGRADED = frozenset({"record", "records", "entry", "entries", "address", "target", "targets", "dns", "a"})


def _upgraded_to(text: str, start: int) -> bool:
    update = _UPGRADED_TO.search(text, max(0, start - 80), start)
    if update is None:
        return False
    what = _words(update.group("what"))
    return not (IP_CUES.found_in(what) or NETWORK_WORDS.found_in(what) or _NOT_UPGRADED.intersection(what))


# A changelog's heading: "### 8.4.255.12 (2024-05-14)".
_HEADING = re.compile(r"(?:^|\n)\s*#{1,6}\s*$")
_DATED = re.compile(r"\s*\(\d{4}-\d{2}-\d{2}\)")


# "the 4.2.10.1 update": the quad names an update, a release or a patch.
_THE_BEFORE = re.compile(r"(?<![\w])the\s+$", re.IGNORECASE)
_RELEASE_AFTER = re.compile(r"\s+(?:update|upgrade|release|patch|hotfix|build|firmware)\b", re.IGNORECASE)
# "openssl 3.0.13, zlib 1.3.1, libcurl 8.7.1, sqlite 3.45.3.0": a list of components' versions.
_COMPONENT = re.compile(r"[^\W\d_][\w.+-]*\s+v?\d+\.\d+(?:\.\d+)?(?![\d.])")
_LISTED_COMPONENT = re.compile(r"(?:^|[,;:(]\s*)[^\W\d_][\w.+-]*\s+$")


def _version_by_use(text: str, start: int, end: int) -> bool:
    """A public address's shape used as a version: run by a host whose address is written
    right before it, headed as a changelog's entry with its date, or, with a major number up to
    30, named as an update ("the 4.2.10.1 update") or listed after a component's name among
    other components' versions in a text of no hosts."""
    return bool(_RUN_BY_HOST.search(text, max(0, start - 28), start)
                or _HEADING.search(text, max(0, start - 12), start) and _DATED.match(text, end)
                or low_major(text[start:end]) and (_THE_BEFORE.search(text, max(0, start - 6), start)
                                                    and _named_release(text, end) or _listed_component(text, start)))


def low_major(value: str) -> bool:
    """A version's major number: at most ``_HIGHEST_MAJOR`` (a host's first octet rarely is)."""
    major = value.split(".")[0]
    return "." in value and major.isdigit() and int(major) <= _HIGHEST_MAJOR


# Machines a release's word may name ("the 81.2.69.160 build server"): then the quad is theirs.
_MACHINES = Cues.of(["server", "servers", "box", "machine", "host", "node", "agent", "runner", "vm", "instance",
                     "pc", "laptop", "device", "gateway", "router", "proxy", "worker", "bot"])


def _named_release(text: str, end: int) -> bool:
    """"the 4.2.10.1 update bricks ...": a release's word after the quad, and no machine, host or
    network word in the eight words after it (the quad's major number is checked by the caller)."""
    release = _RELEASE_AFTER.match(text, end)
    if release is None:
        return False
    after = _words(text[release.end():release.end() + 80])[:8]
    return not (_MACHINES.found_in(after) or IP_CUES.found_in(after) or NETWORK_WORDS.found_in(after))


def _listed_component(text: str, start: int) -> bool:
    """A name right before the quad at a list's start or after its separator, and at least two
    other "name x.y(.z)" versions in the text, which names no host or network."""
    if _LISTED_COMPONENT.search(text, max(0, start - 40), start) is None:
        return False
    others = [m for m in _COMPONENT.finditer(text) if m.end() <= start or m.start() > start]
    return len(others) >= 2 and not (IP_CUES.found_in(_words(text)) or NETWORK_WORDS.found_in(_words(text)))


def _words(text: str) -> list[str]:
    return [word.lower() for word in re.findall(r"[^\W\d_]+", text)]


def _is_global(value: str) -> bool:
    return (address := _address(value)) is not None and address.is_global


def private(value: str) -> bool:
    return (address := _address(value)) is not None and address.is_private


def private_in(text: str) -> bool:
    """A private address among the text's quads."""
    return any(private(value) for _, _, value in quads(text))


def _address(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        return None


# A user agent's header or key shortly before the quad, no other key or address between: its
# numbers are a product's versions ("User-Agent: Yealink SIP-T54W 96.86.0.70").
_USER_AGENT = re.compile(r"user[-_ ]?agent\s*[=:][^=:@<>]{0,60}$", re.IGNORECASE)


# A table's header cell that names a version column ("fw", "firmware", "old_fw", "bios",
# "agent", "version"); a column of hosts ("ip", "host", "address", "gateway") is never one.
_VERSION_COLUMN = re.compile(r"(?:^|[_\s-])(?:version|ver|fw|firmware|bios|uefi|build|release|agent|driver)"
                             r"(?:$|[_\s-])", re.IGNORECASE)
_HOST_COLUMN = re.compile(r"ip|host|addr|gateway|gw|server|peer|src|dst|node|router", re.IGNORECASE)


def _column_named_version(text: str, start: int) -> bool:
    """``serial,model,old_fw,new_fw / ...,10.61.12.3,11.14.3.0``, ``| host | ip | fw | ...``: in
    a CSV or Markdown table, the header of the quad's column names a version."""
    name = tables.column_name(text, start)
    return name is not None and bool(_VERSION_COLUMN.search(name)) and not _HOST_COLUMN.search(name)


# A version's step: an arrow, a comparison or a change's words of several languages between two
# quads of one major number ("7.2.0.14 to 7.2.1.3", "1.9.3.12 do 1.9.4.27", "с 2.0.7.1 до 2.0.9.15",
# ">= 7.2.0.14"), in a text about updates. Only public addresses' shapes: a private one stays masked.
_STEP = r"(?:->|→|=>|<=|>=|<|>|to|do|до|на|naar|auf|till|para|a|à|en|al)"
_STEP_BEFORE = re.compile(_STEP + r"\s*$", re.IGNORECASE)
_STEP_AFTER = re.compile(r"\s*" + _STEP + r"\s+(?P<next>\d{1,3}(?:\.\d{1,3}){3})(?![\d.])", re.IGNORECASE)
_COMPARED = re.compile(r"(?<![-=])(?:<=|>=|==|!=|<|>)\s*$")
_UPDATE_WORDS = re.compile(r"updat|upgrad|firmware|rollout|version|release|patch|aktuali|actuali|atuali|aggiorn|"
                           r"mise à jour|uppdater|güncelle|обнов|прошив|版本|更新|升级|アップデート|ファーム|업데이트",
                           re.IGNORECASE)


def _version_step(text: str, start: int, end: int) -> bool:
    """The quad is one step of a version's change: the clause speaks of an update before the
    change and of no host, network or traffic before or after it ("Traffic from 81.2.69.160 to
    81.2.69.161 was blocked after the update" is two hosts)."""
    before = words_before(text, start, 30, reach=160)
    after = _words(re.split(r"[;|]|\.\s", text[end:end + 80])[0])
    if _FLOW.found_in(before + after) or NETWORK_WORDS.found_in(before + after):
        return False
    if not low_major(text[start:end]):
        return False
    major = text[start:end].split(".")[0]
    if _COMPARED.search(text, max(0, start - 4), start):
        return not IP_CUES.found_in(before[-3:]) and bool(_UPDATE_WORDS.search(" ".join(before)))
    step = _STEP_AFTER.match(text, end)
    if step is not None and step.group("next").split(".")[0] == major and _is_global(step.group("next")):
        first = start
    else:
        prior = [(s, e) for s, e, _ in quads(text) if start - 16 <= e < start]
        if not (prior and _STEP_BEFORE.search(text[prior[-1][1]:start])
                and text[prior[-1][0]:prior[-1][1]].split(".")[0] == major
                and _is_global(text[prior[-1][0]:prior[-1][1]])):
            return False
        first = prior[-1][0]
    leading = words_before(text, first, 30, reach=160)
    return bool(_UPDATE_WORDS.search(" ".join(leading))) \
        and not IP_CUES.found_in([word for word in leading + after[:3] if word not in ("from", "to")])


# A version's major number rarely passes this; many public addresses start higher.
_HIGHEST_MAJOR = 30
# Words of traffic between two hosts ("SRC 81.2.69.160 -> 81.2.69.161 DENY").
_FLOW = Cues.of(["traffic", "packet", "packets", "flow", "flows", "dropped", "drop", "denied", "deny", "rejected",
                 "reject", "accepted", "accept", "blocked", "tcp", "udp", "icmp", "syn", "src", "dst", "nat"])


# A file's or a package's name glued before the quad by a hyphen ("FleetAgent-7.2.0.14-x64.msi",
# "ojdbc8-19.3.0.0.jar", "app-8.4.255.12.zip"), or a package's revision after it ("7.2.0.14-1ubuntu2").
# Not a name before a slash: "MyApp/4.21.0.33" reads as "jsmith/81.2.69.160" does in the analysed view.
_GLUED_NAME = re.compile(r"(?P<name>[^\W\d_][\w]*)-$")
# An application's or a library's key right before the quad ("app=3.2.0.19", "lib=2.1.0.23").
_APP_KEY = re.compile(r"(?<![\w.\-])(?:app|lib|sdk)\s*=\s*$", re.IGNORECASE)
_PACKAGE_AFTER = re.compile(r"(?:-[\w.]+)?\.(?:msi|exe|zip|jar|deb|rpm|tar|tgz|gz|pkg|dmg|apk|whl|nupkg)\b"
                            r"|-\d+(?:ubuntu|deb|el|fc)\d", re.IGNORECASE)


def _file_or_package(text: str, start: int, end: int) -> bool:
    """A name glued before the quad that is no word of hosts ("ip-81.2.69.160" is a host) and no
    port or prefix after it, a package's file or revision after it, or an application's key right
    before it ("app=3.2.0.19") with a major number up to 30 (the caller checks that the quad is a
    public address's shape)."""
    glued = _GLUED_NAME.search(text, max(0, start - 40), start)
    return glued is not None and not IP_CUES.found_in(_words(glued.group("name"))[-1:]) \
        and re.match(r"[:/]\d", text[end:end + 2]) is None \
        or _PACKAGE_AFTER.match(text, end) is not None \
        or _APP_KEY.search(text, max(0, start - 8), start) is not None and low_major(text[start:end])


# Words of a text about versions and releases, in the languages the finders read.
_RELEASE_TEXT = re.compile(_UPDATE_WORDS.pattern + r"|build|schema|hotfix|changelog|\bversi[oóã]|wersj|verzi|sürüm|"
                           r"верси|버전|バージョン|固件|펌웨어", re.IGNORECASE)
# A capitalised word (a name, or a product's) among the few words before the quad.
_CAPITALISED_BEFORE = re.compile(r"(?<![\w.])[A-Z][a-z]+\W+(?:[^\W\d_]+\W+){0,2}$")
# Words of addresses in other languages ("adresse 2.91.14.7", "über 5.148.3.77").
_FOREIGN_ADDRESS_WORDS = frozenset({"adresse", "dirección", "direccion", "endereço", "endereco", "indirizzo", "adres",
                                    "adresu", "адрес", "über", "aus", "desde", "depuis", "vanaf", "kundin", "kunde"})
# Words that put a host at a quad right before it ("is on 23.94.12.7", "logs in from", "z 10.4.4.30").
_PLACING = frozenset({"on", "at", "from", "to", "via", "is", "was", "de", "desde", "von", "z", "na", "vers", "sur"})


def _in_release_text(text: str, start: int, end: int) -> bool:
    """"Firmware drift: 14 access switches report 9.3.10.2, baseline expects 9.3.12.1": in a text
    about versions or releases that names no host, network, traffic, user or device anywhere (no
    such word in English or an address's word in another language, no "@", no IPv6 address, no
    private address), a quad with a major number up to 30, another dotted number of three parts or
    more with the same first two numbers (not a date), no port or prefix after it, no placing word
    right before it, no bracket before it and no capitalised word among the three words before it
    is a version (a lone quad, or one after a name, may be a person's address: "Maria (23.94.12.7)
    says the upgrade to 23.4.1 broke her app"). The caller checks that the quad is a public
    address's shape."""
    before = words_before(text, start, 3)
    if not low_major(text[start:end]) or re.match(r"[:/]\d", text[end:end + 2]) or "@" in text \
            or not _RELEASE_TEXT.search(text) or _PLACING.intersection(before[-1:]) \
            or text[max(0, start - 1):start] == "(" or _CAPITALISED_BEFORE.search(text, max(0, start - 40), start):
        return False  # "Maria (23.94.12.7) says ...", "submitted by Pierre Martin 2.91.14.7"
    head = text[start:end].split(".")[:2]
    if not any(m.start() != start and m.group(0).split(".")[:2] == head and m.group(0).count(".") >= 2
               and all(len(part) <= 3 for part in m.group(0).split(".")) for m in DOTTED.finditer(text)):
        return False  # a sibling of the same major and minor numbers, no date ("5.2.2024")
    words = _words(text)
    return not (_FOREIGN_ADDRESS_WORDS.intersection(words)
                or IP_CUES.found_in([word for word in words if word not in ("from", "to")])
                or NETWORK_WORDS.found_in(words) or _FLOW.found_in(words) or ipv6_in(text)
                or private_in(text))


_IPV6_SHAPE = re.compile(r"(?<![\w:])[0-9a-f]{0,4}(?::[0-9a-f]{0,4}){2,7}(?![\w:])", re.IGNORECASE)


def ipv6_in(text: str) -> bool:
    """An IPv6 address elsewhere in the text: "why is 2606:4700:4700::1111 slower than 1.1.1.1"
    speaks of addresses, whatever the quad's shape."""
    return any(_address(match.group(0)) is not None and len(re.findall(r"[0-9a-f]+", match.group(0), re.IGNORECASE)) >= 2
               for match in _IPV6_SHAPE.finditer(text))
