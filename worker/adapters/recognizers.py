"""The recognizers the PII stage runs in Presidio, and the refinement of their findings.

Presidio supplies the engine, spaCy NER (names), e-mail, phone numbers validated by
``phonenumbers`` for many regions, IBAN with its checksum, US SSN/ITIN with context words,
Bitcoin checksums, IP addresses, and checksum-validated national identifiers (UK NINO,
Indian PAN, Italian codice fiscale, Spanish NIF/NIE, Singapore NRIC/FIN). The
``ibex_worker.pii`` finders add what Presidio lacks: phone numbers in any format with context,
payment cards of every network and length (a mistyped one is masked, not dropped),
mistyped IBANs, Ethereum and case-folded Bitcoin addresses, identifiers announced by their
name, postal addresses, and names announced by a greeting, sign-off, form field or family
word.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import phonenumbers
from presidio_analyzer import LocalRecognizer, RecognizerRegistry, RecognizerResult
from presidio_analyzer.predefined_recognizers import (CryptoRecognizer, EmailRecognizer, EsNieRecognizer,
                                                      EsNifRecognizer, IbanRecognizer, InPanRecognizer,
                                                      IpRecognizer, ItFiscalCodeRecognizer, PhoneRecognizer,
                                                      SgFinRecognizer, SpacyRecognizer, UkNinoRecognizer,
                                                      UsItinRecognizer, UsSsnRecognizer)

from ibex_worker.pii import (addresses, cjk_addresses, cjk_names, handles, ibans, identifiers, languages,
                             name_neighbours, name_words, names, networks, numbers, payments, script_names, tables)
from ibex_worker.pii.business import SSN_WORDS
from ibex_worker.pii.casing import View
from ibex_worker.pii.lexicon import capitalised_share, gazetteer, places
from ibex_worker.pii.policy import Finding
from ibex_worker.pii.vocab import BRANDS, CALENDAR_WORDS, DEMONYMS, NOT_A_PERSON

# Regions whose numbering plans ``phonenumbers`` checks a number without "+" against.
PHONE_REGIONS = ("US", "GB", "IE", "DE", "AT", "CH", "FR", "BE", "NL", "ES", "PT", "IT", "PL", "SE", "NO", "DK",
                 "FI", "IN", "PK", "BD", "CN", "JP", "KR", "SG", "MY", "PH", "ID", "AU", "NZ", "CA", "MX", "BR",
                 "AR", "CO", "ZA", "NG", "KE", "GH", "EG", "AE", "SA", "IL", "TR")
PHONE_VALIDATED_SCORE = 0.75  # a number valid for some region's plan (Presidio gives 0.4)
IP_SCORE = 0.9  # a well-formed address ``ipaddress`` accepts (Presidio gives 0.6)
NATIONAL_ID = "NATIONAL_ID"
# Recognizers refinement asks about by name.
SPACY = "SpacyRecognizer"
CUED = "IbexNameCueRecognizer"
KNOWN = "IbexKnownNameRecognizer"
THING_NAMED = "IbexThingNamedPersonRecognizer"
NAMED_ID = "IbexNamedIdRecognizer"
OTHER_SCRIPT = "IbexOtherScriptNameRecognizer"
CJK_NAMED = "IbexCjkNameRecognizer"  # names in Chinese, Japanese and Korean text: taken as found
SCRIPT_NAMED = "IbexScriptNameRecognizer"  # names cued in Arabic, Hebrew, Indic and Thai text: taken as found
HANDLE_NAMED = "IbexHandleNameRecognizer"  # "user=ingrid.halvorsen": taken as found
_NUMBER_TYPES = frozenset({"PHONE_NUMBER", "CREDIT_CARD", "US_SSN", "US_ITIN", NATIONAL_ID})

# Names of identifiers and payment words that label a value ("NIE", "IBAN", "Amex"): not people.
_LABEL_WORDS = frozenset({*identifiers.ID_KEYWORDS, *payments.CARD_CUES.words, "iban", "bic", "swift", "sepa",
                          "bizum"})
NOT_NAME_WORDS = NOT_A_PERSON | CALENDAR_WORDS | DEMONYMS | _LABEL_WORDS
_NOT_NAME_NEIGHBOURS = NOT_NAME_WORDS | BRANDS
_PLACE_TYPES = frozenset({"street", "st", "road", "rd", "avenue", "ave", "boulevard", "blvd", "square", "station",
                          "bridge", "highway", "plaza", "terrace", "quay", "airport", "hospital", "university",
                          "college", "school", "church", "cathedral", "stadium", "arena", "mall", "centre", "center"})
_BRAND_MENTION = re.compile(r"(?<![\w])(?:" + "|".join(sorted((re.escape(b) for b in BRANDS), key=len, reverse=True))
                            + r")(?![\w])", re.IGNORECASE)
ID_LIKE = re.compile(r"[\d@_/\\=]|\w-\w*\d")
_ZIP4 = re.compile(r"\d{5}-\d{4}")
_LATIN = re.compile(r"[\u0000-\u024f\u1e00-\u1eff]+")


# A finder's results travel through Presidio as "<TYPE>__<recognizer>": Presidio merges a
# result into another of the same type on the same span, keeping an arbitrary one of equals,
# and refinement needs to know, deterministically, every recognizer that found a span.
TAG = "__"


def entity_type(tagged: str) -> tuple[str, str]:
    """``("PERSON", "IbexNameCueRecognizer")`` from ``PERSON__IbexNameCueRecognizer``."""
    base, _, recognizer = tagged.partition(TAG)
    return base, recognizer


class FunctionRecognizer(LocalRecognizer):
    """A Presidio recognizer around a ``ibex_worker.pii`` finder (text -> hits). With
    ``with_entities`` the finder also gets spaCy's entity spans ``(start, end, label)``."""

    def __init__(self, name: str, entities: Sequence[str], find: Callable[..., list[numbers.Hit]], *,
                 with_entities: bool = False) -> None:
        self._find = find
        self._with_entities = with_entities
        super().__init__(supported_entities=[f"{e}{TAG}{name}" for e in entities], supported_language="en",
                         name=name)

    def load(self) -> None:
        pass

    def analyze(self, text: str, entities: list[str], nlp_artifacts: Any = None) -> list[RecognizerResult]:
        if self._with_entities:
            doc = getattr(nlp_artifacts, "tokens", None)
            spans = [(e.start_char, e.end_char, e.label_) for e in doc.ents] if doc is not None else []
            hits = self._find(text, spans)
        else:
            hits = self._find(text)
        return [RecognizerResult(f"{hit.entity_type}{TAG}{self.name}", hit.start, hit.end, hit.score,
                                 recognition_metadata={RecognizerResult.RECOGNIZER_NAME_KEY: self.name,
                                                       RecognizerResult.RECOGNIZER_IDENTIFIER_KEY: self.id})
                for hit in hits if f"{hit.entity_type}{TAG}{self.name}" in entities]


class NameTrimmingSpacyRecognizer(SpacyRecognizer):
    """spaCy's entities, with a PERSON trimmed to the words that read as a name (see
    ``_trim_person``) before Presidio compares it with the other recognizers' names."""

    def analyze(self, text: str, entities: list[str], nlp_artifacts: Any = None) -> list[RecognizerResult]:
        results = []
        for result in super().analyze(text, entities, nlp_artifacts):
            if result.entity_type == "PERSON":
                span = _trim_person(text, result.start, result.end)
                if span is None:
                    continue
                result.start, result.end = span
            results.append(result)
        return results


class AnyDomainEmailRecognizer(EmailRecognizer):
    """Presidio drops an address whose domain is not on the public suffix list (``.test``,
    ``.internal``, ``.corp``): that leaks real internal addresses. The pattern alone is
    strict enough to act on. A message or calendar id (``20240311T084217Z-41729@host``, a
    date and time before the "@"), a hexadecimal key before the "@", a package
    pinned to a version (``react@19.0.0-rc.1``: no domain ends in digits) and a service's
    Kerberos principal (``host/ldap-02.corp@CORP.IO``) are nobody's mailbox, nor is the id a
    mail header names (``Message-ID: <CAF=x8Y2k@mail.gmail.com>``)."""

    def analyze(self, text: str, entities: list[str], nlp_artifacts: Any = None,
                regex_flags: int | None = None) -> list[RecognizerResult]:
        results = super().analyze(text, entities, nlp_artifacts, regex_flags)
        return [r for r in results if not _MESSAGE_ID_HEADER.search(text[max(0, r.start - 40):r.start])]

    def validate_result(self, pattern_text: str) -> bool:
        local, _, domain = pattern_text.rpartition("@")
        return _STAMPED_ID.match(pattern_text) is None and not _SERVICE_PRINCIPAL.match(local) \
            and not _TOKEN_LOCAL.fullmatch(re.split(r"[/=]", local)[-1]) \
            and re.search(r"[^\W\d_]", domain.rsplit(".", 1)[-1]) is not None


# A key before the "@" (a Sentry DSN's hex digits, "dsn=0a1b2c3d4e5f@o4411.ingest..."): nobody's mailbox.
_TOKEN_LOCAL = re.compile(r"(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{12,}", re.IGNORECASE)
# The service part of a Kerberos principal (``host/``, ``HTTP/``); any other path before an
# address ("assumed-role/ops-admin/n.haddad@...") still ends in somebody's mailbox.
_SERVICE_PRINCIPAL = re.compile(r"(?:host|http|https|ldap|nfs|cifs|krbtgt|postgres|imap|smtp|pop|ftp|dns|sip|xmpp|"
                                r"kafka|zookeeper|hdfs|yarn|hive|hbase|mongodb|mysql|oracle|mssqlsvc|kadmin|"
                                r"afs|ipp|vnc|rpc|nn|dn|rm|nm|jhs|spark|livy|impala|solr|oozie|hue)/",
                                re.IGNORECASE)


# A mail header that holds message ids, right before the value ("In-Reply-To: <", "References: <a@b> <").
_MESSAGE_ID_HEADER = re.compile(r"(?:message-id|in-reply-to|references|content-id|x-message-id)\s*:\s*"
                                r"(?:<[^<>\s]+>\s*)*<$", re.IGNORECASE)
_STAMPED_ID = re.compile(r"(?:19|20)\d{6}t?\d{4,6}z?[-._@]", re.IGNORECASE)


_DIGIT = re.compile(r"\d")  # any decimal digit, as ``phonenumbers`` reads them


def _fewest_phone_digits() -> int:
    """The fewest digits any region's numbering plan allows (``phonenumbers`` metadata)."""
    lengths = (length for region in phonenumbers.SUPPORTED_REGIONS
               for length in phonenumbers.PhoneMetadata.metadata_for_region(region).general_desc.possible_length)
    return min(length for length in lengths if length > 0)


class ValidatedPhoneRecognizer(PhoneRecognizer):
    """Presidio's matcher runs once per region over the whole text; a text with fewer digits
    than the shortest number of any plan holds no valid number, so it is not scanned."""

    SCORE = PHONE_VALIDATED_SCORE
    FEWEST_DIGITS = _fewest_phone_digits()

    def analyze(self, text: str, entities: list[str], nlp_artifacts: Any = None) -> list[RecognizerResult]:
        if len(_DIGIT.findall(text)) < self.FEWEST_DIGITS:
            return []
        results = super().analyze(text, entities, nlp_artifacts)
        for result in results:
            result.end = tables.row_end(text, result.start, result.end)  # not into a table's next row
        return results


class CheckedIpRecognizer(IpRecognizer):
    """An address ``ipaddress`` accepts is an IP address (Presidio scores it 0.6, below any
    sane redaction threshold, which quarantined every IP instead of redacting it)."""

    def validate_result(self, pattern_text: str) -> bool | None:
        return None

    def analyze(self, text: str, entities: list[str], nlp_artifacts: Any = None,
                regex_flags: int | None = None) -> list[RecognizerResult]:
        results = super().analyze(text, entities, nlp_artifacts, regex_flags)
        for result in results:
            if result.score >= 0.5:
                result.score = IP_SCORE
        return results


class _UpperCaseMixin:
    """Run a pattern recognizer on the view upper-cased (same length): its check letters and
    format rules expect capitals, and the view is case folded."""

    def analyze(self, text: str, entities: list[str], nlp_artifacts: Any = None,
                regex_flags: int | None = None) -> list[RecognizerResult]:
        upper = "".join(ch.upper() if len(ch.upper()) == 1 else ch for ch in text)
        return super().analyze(upper, entities, nlp_artifacts, regex_flags)  # type: ignore[misc]


def _upper_cased(recognizer_class: type) -> type:
    return type(recognizer_class.__name__, (_UpperCaseMixin, recognizer_class), {})


def build_registry(nlp_engine: Any) -> RecognizerRegistry:
    registry = RecognizerRegistry(supported_languages=["en"])
    for recognizer in (
        NameTrimmingSpacyRecognizer(name=SPACY), AnyDomainEmailRecognizer(),
        ValidatedPhoneRecognizer(supported_regions=PHONE_REGIONS),
        IbanRecognizer(), UsSsnRecognizer(), UsItinRecognizer(), CryptoRecognizer(), CheckedIpRecognizer(),
        *(_upper_cased(cls)(supported_entity=NATIONAL_ID) for cls in (
            UkNinoRecognizer, InPanRecognizer, ItFiscalCodeRecognizer, EsNifRecognizer, EsNieRecognizer,
            SgFinRecognizer)),
        FunctionRecognizer("IbexIpRecognizer", ["IP_ADDRESS"], networks.ip_addresses),
        FunctionRecognizer("IbexIdShapeRecognizer", [NATIONAL_ID], identifiers.id_shapes),
        FunctionRecognizer("IbexPhoneRecognizer", ["PHONE_NUMBER"], numbers.phones),
        FunctionRecognizer("IbexCardRecognizer", ["CREDIT_CARD"], payments.cards),
        FunctionRecognizer("IbexIbanRecognizer", ["IBAN_CODE"], ibans.ibans),
        FunctionRecognizer("IbexWalletRecognizer", ["CRYPTO"], payments.wallets),
        FunctionRecognizer(NAMED_ID, ["US_SSN", "US_ITIN", NATIONAL_ID, "PHONE_NUMBER"], identifiers.named_ids),
        FunctionRecognizer("IbexAddressRecognizer", ["STREET_ADDRESS"], addresses.addresses),
        FunctionRecognizer("IbexCjkAddressRecognizer", ["STREET_ADDRESS"], cjk_addresses.cjk_addresses),
        FunctionRecognizer(CUED, ["PERSON"], names.cued_names),
        FunctionRecognizer(KNOWN, ["PERSON"], names.known_names, with_entities=True),
        FunctionRecognizer(THING_NAMED, ["PERSON"], lambda text: names.people_named_like_things(text, NOT_A_PERSON)),
        FunctionRecognizer(OTHER_SCRIPT, ["PERSON"], names.other_script_names),
        FunctionRecognizer(CJK_NAMED, ["PERSON"], cjk_names.cjk_names),
        FunctionRecognizer(SCRIPT_NAMED, ["PERSON"],
                           lambda text: script_names.script_names(text) + names.cued_other_script(text)),
        FunctionRecognizer(HANDLE_NAMED, ["PERSON"], handles.handles),
    ):
        registry.add_recognizer(recognizer)
    return registry


def refine(view: View, findings: list[Finding]) -> list[Finding]:
    """Drop what a recognizer got wrong in ways context shows: a "person" that is an id, a
    programming language or a month, a lone word spaCy alone calls a person, an "IP address"
    that is a version number or a wide range, a "phone number" that is a date, an order
    number or a table's cells. Then cut the people of a sentence in another language to their names, add the
    names joined by "and" to a person found, grow each person over the rest of its name, and
    drop people inside a brand's name."""
    kept = [f for f in findings if _keep(view.text, f) and not (f.entity_type == "PHONE_NUMBER" and view.across_columns(f.start, f.end))]
    named = [(f.start, f.end) for f in kept if f.recognizer == NAMED_ID] + identifiers.creditor_references(view.text)
    kept = [f for f in kept if f.recognizer == NAMED_ID or not _inside_named_id(f, named)]
    cards = [f for f in kept if f.entity_type == "CREDIT_CARD"]
    kept = [f for f in kept if not _phone_inside_card(f, cards)]
    people = [f for f in kept if f.entity_type == "PERSON" and f.recognizer != SPACY]
    kept = [f for f in kept if f.recognizer != SPACY or f.entity_type != "PERSON"
            or _corroborated(view.text, f, people)]
    foreign = languages.reads_foreign(view.text)
    kept = _names_of_foreign_text(view.text, kept) if foreign else kept
    listed = name_neighbours.coordinated(view.text, [(f.start, f.end) for f in kept if f.entity_type == "PERSON"],
                               NOT_NAME_WORDS)
    kept += [Finding(h.entity_type, h.start, h.end, h.score, KNOWN) for h in listed
             if plausible_person(view.text[h.start:h.end], placed=True)]
    kept = kept if foreign else _completed_names(view.text, kept)
    brands = [(m.start(), m.end()) for m in _BRAND_MENTION.finditer(view.text)]
    return [f for f in kept if f.entity_type != "PERSON" or not any(s <= f.start and f.end <= e for s, e in brands)]


def _completed_names(text: str, findings: list[Finding]) -> list[Finding]:
    """Each person grown over the rest of its name (``[Hee-jin] Park``), never into another
    finding, a weekday, a product or a language."""
    out = []
    for f in findings:
        start, end = (name_neighbours.completed(text, f.start, f.end, _NOT_NAME_NEIGHBOURS)
                      if f.entity_type == "PERSON" else (f.start, f.end))
        if (start, end) != (f.start, f.end) and not any(
                o.entity_type != "PERSON" and o.start < end and start < o.end for o in findings):
            f = Finding(f.entity_type, start, end, f.score, f.recognizer)
        out.append(f)
    return out


def _names_of_foreign_text(text: str, findings: list[Finding]) -> list[Finding]:
    """In a sentence of another language, a person found by a tagger or the gazetteer keeps only
    its words that are names (see ``ibex_worker.pii.languages``); a cue's name stands."""
    out = []
    for f in findings:
        if f.entity_type != "PERSON" or f.recognizer in (CUED, CJK_NAMED, SCRIPT_NAMED):
            out.append(f)
            continue
        out.extend(Finding(f.entity_type, start, end, f.score, f.recognizer)
                   for start, end in languages.names_in_foreign_text(text, f.start, f.end, name_words.PARTICLES))
    return out


def _inside_named_id(finding: Finding, named: list[tuple[int, int]]) -> bool:
    """"NHS number 943 476 5919" is an NHS number, "RF18 5390 0754 7034" a payment's creditor
    reference, whatever else their digits could be."""
    return finding.entity_type in _NUMBER_TYPES and any(s <= finding.start and finding.end <= e for s, e in named)


def _phone_inside_card(finding: Finding, cards: list[Finding]) -> bool:
    """``4358 1699 0482 3603``: its last two groups dial somewhere, the run is a card number."""
    return finding.entity_type == "PHONE_NUMBER" and any(
        c.start <= finding.start and finding.end <= c.end and (c.start, c.end) != (finding.start, finding.end)
        for c in cards)


_NOT_NAME_EDGE = re.compile(r"\S*[\d@_/\\=]\S*")


def _not_name_edge(word: str) -> bool:
    bare = word.strip(".,;:!?()'’\"")
    return (bool(_NOT_NAME_EDGE.fullmatch(word)) or not bare
            or bare[:1].islower() and bare.lower() not in name_words.PARTICLES)


def _trim_person(text: str, start: int, end: int) -> tuple[int, int] | None:
    """spaCy runs a name into a number or a common word (``Zsófia Nagy 40``, ``Haskell
    meetup``), or tags a phrase of another language (``appelez le``): keep the part that reads
    as a name - words the view capitalises - or nothing."""
    words = [m for m in re.finditer(r"\S+", text[start:end])]
    while words and _not_name_edge(words[-1].group(0)):
        words.pop()
    while words and _not_name_edge(words[0].group(0)):
        words.pop(0)
    if not words:
        return None
    return start + words[0].start(), start + words[-1].start() + len(words[-1].group(0).rstrip(",.;:"))


def _corroborated(text: str, finding: Finding, people: list[Finding]) -> bool:
    """spaCy's tagger alone is not trusted with a name: the span must hold a known name that
    is not just a common word, or another recognizer must have found a name there too
    (it tags phrases of other languages, products and places as people)."""
    if any(p.start < finding.end and finding.start < p.end for p in people):
        return True
    for word in re.findall(r"[^\W\d_]+", text[finding.start:finding.end].lower()):
        share = capitalised_share(word)
        if (len(word) >= 3 and word not in name_words.PARTICLES and word not in _LABEL_WORDS and word in gazetteer()
                and (share is None or share >= names.NAME_SHARE)):
            return True
    return False


def _keep(text: str, finding: Finding) -> bool:
    value = text[finding.start:finding.end]
    if finding.entity_type == "PERSON":
        if finding.recognizer in (THING_NAMED, HANDLE_NAMED):
            return True  # "Julia from accounting", "user=ingrid.halvorsen": only a person is left
        if names.after_title(text, finding.start):
            return not ID_LIKE.search(value)  # "Ms. Haskell", "Dr. Paris": a title names a person
        return plausible_person(value, announced=finding.recognizer == CUED, placed=finding.recognizer in (CUED, KNOWN))
    if finding.entity_type == "IP_ADDRESS":
        return networks.ip_in_context(text, finding.start, finding.end)
    if finding.entity_type == "PHONE_NUMBER":
        return finding.recognizer == NAMED_ID or numbers.phone_in_context(text, finding.start, value)  # "my number"
    if finding.recognizer == "InPanRecognizer":
        return _PAN.fullmatch(value) is not None  # Presidio's weakest PAN pattern looks ahead past its own match
    if finding.entity_type in ("NATIONAL_ID", "US_SSN") and identifiers.format_mask(value):
        return False  # "expected AA999999A": the format's mask, not somebody's number
    if finding.entity_type == "US_SSN":
        if finding.score < numbers.LIKELY and not SSN_WORDS.found_in(re.findall(r"[\w#]+", text.lower())) \
                and identifiers.filed_as_record(text, finding.start, finding.end):
            return False  # "Model number on the water heater is 442-81-0093", "WC-778-21-0093", no SSN word near
        return not _ZIP4.fullmatch(value)  # 94105-1420 is grouped as a ZIP+4; an SSN is grouped 3-2-4
    return True


# India's PAN: five letters, four digits, a check letter.
_PAN = re.compile(r"[A-Za-z]{5}\d{4}[A-Za-z]")


def plausible_person(value: str, *, announced: bool = False, placed: bool = False) -> bool:
    """Not an id, not a programming language or product, not words that are common in lower
    case and capitalised only by their place (``Card:``, ``Mum says``), not an acronym.
    ``placed``: the finder told a person from a one-word place of that name already (``my
    sister Georgia``, ``Austin said``)."""
    if ID_LIKE.search(value):
        return False
    words = re.findall(r"[^\W\d_]+", value.lower())
    if not words or all(word in NOT_NAME_WORDS or word in name_words.PARTICLES for word in words) \
            and any(word in NOT_NAME_WORDS for word in words):
        return False  # "Kotlin", "Christmas", "el NIE de", "Belgian IBAN"
    if words[-1] in _PLACE_TYPES and len(words) > 1:
        return False  # "O'Connell Street", "Oxford Street station": a place named after someone
    if value.lower() in places() and not (placed and len(words) == 1) or value.lower() in BRANDS \
            or value.lower() in _LABEL_WORDS:
        return False
    if not announced and all((share := capitalised_share(word)) is not None and share < names.NAME_SHARE
                             for word in words):
        return False
    return not all(len(word) <= 5 and _LATIN.fullmatch(word) and not re.search(r"[aeiouyà-ÿ]", word)
                   for word in words)
