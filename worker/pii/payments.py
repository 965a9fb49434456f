"""Payment cards and cryptocurrency wallet addresses, found by shape and decided by checksum,
network and context (see ``numbers`` for the score scale)."""

from __future__ import annotations

import bisect
import itertools
import re

from ibex_worker.pii import spoken
from ibex_worker.pii.business import BUSINESS
from ibex_worker.pii.checksums import gtin_valid, luhn_valid
from ibex_worker.pii.context import Cues, words_before
from ibex_worker.pii.card_networks import CARD_GROUPS, card_network
from ibex_worker.pii.numbers import CERTAIN, LIKELY, UNCERTAIN, UNSPACED, Hit

CARD_CUES = Cues.of([
    "card", "cards", "credit", "debit", "visa", "mastercard", "mc", "amex", "american express", "discover",
    "jcb", "diners", "maestro", "unionpay", "rupay", "mir", "cc", "ccn", "pan", "payment", "paid", "pay",
    "charged", "charge", "refund", "billing", "cardholder", "expiry", "exp", "cvv", "cvc",
])

CRYPTO_CUES = Cues.of([
    "wallet", "btc", "bitcoin", "eth", "ether", "ethereum", "crypto", "usdt", "usdc", "tether", "address",
    "addr", "send", "sent", "deposit", "withdraw", "withdrawal", "payout", "to", "from",
])

# ---------------------------------------------------------------- payment cards

# Digits in groups of one separator: a space, a dash (also spaced: "5114 - 1096"), a point or
# a slash; a number glued to kana or ideographs ("カード番号は3540-7554-5326-9524です") too.
# The first separator is the only one: "4111 1111 1111 1111 - 123" is a card, then its code.
_CARD = re.compile(rf"(?<![^\W{UNSPACED}])(?<![.\-/])\d{{1,19}}(?:(?P<sep> - |[ \-./])\d{{1,19}}(?:(?P=sep)\d{{1,19}})*)?"
                   rf"(?![^\W{UNSPACED}]|[.\-/:]\d)")
# Points and slashes group dates, versions and paths as well: only a card's own grouping counts.
_STRICT_GROUPS = {(4, 4, 4, 4), (4, 6, 5)}


def cards(text: str) -> list[Hit]:
    """Cards by their shape, network, check digit and the words before them. A number sharing
    its first eight digits with one a business word names is of that record's series ("Serial
    4485-2231-0098-7712 through 4485-2231-0098-7799") unless a card's word announces it."""
    hits = []
    records: set[str] = set()
    for match in _CARD.finditer(text):
        start, rest = match.start(), match.group(0)
        while (run := _card_run(rest)) is not None:  # "cards 4539 1488 0343 6467 5425 2334 3010 9903": two
            raw = run.replace(" - ", "-")
            digits = re.sub(r"\D", "", raw)
            series = digits[:8] in records and not CARD_CUES.found_in(words_before(text, start, 5))
            score = _card_score(text, start, raw, digits) if not series else 0.0
            if score:
                hits.append(Hit("CREDIT_CARD", start, start + len(run), score))
            elif BUSINESS.found_in(words_before(text, start, 2)):
                records.add(digits[:8])
            gap = len(re.match(r"\D*", rest[len(run):]).group(0))
            start, rest = start + len(run) + gap, rest[len(run) + gap:]
    return hits + _read_out_cards(text)


def _card_run(run: str) -> str | None:
    """The card in a run of digit groups: the whole run, or, when it is longer than a card
    ("4539 1488 0343 6467 0127 123": an expiry and a code follow), its longest leading groups
    that are grouped as a card's are."""
    sep = next((s for s in (" - ", " ", "-", ".", "/") if s in run), None)
    groups = run.split(sep) if sep else [run]
    longest = bisect.bisect_right(list(itertools.accumulate(len(g) for g in groups)), 19)  # no card is longer
    for count in range(longest, 0, -1):
        head = groups[:count]
        lengths = tuple(len(g) for g in head)
        if not 12 <= sum(lengths) <= 19:
            continue
        if count == len(groups) and sep not in (".", "/") or lengths in _STRICT_GROUPS \
                or lengths in CARD_GROUPS and sep not in (".", "/"):
            return sep.join(head) if sep else run
    return None


def _read_out_cards(text: str) -> list[Hit]:
    """A card read out in words ("read back the card: five three seven four, one two ..."):
    13 to 19 digits, most said in words, after a card's word or starting like a card of some
    network (uncertain unless its check digit or a card's word agrees)."""
    hits = []
    for start, end in spoken.spoken_spans(text):
        digits, said = spoken.spoken_digits(text[start:end])
        if not (13 <= len(digits) <= 19 and said >= 8):
            continue
        cue, valid = CARD_CUES.found_in(words_before(text, start, 6)), luhn_valid(digits)
        if cue or card_network(digits):  # longer than any phone number: a misheard card is still one
            hits.append(Hit("CREDIT_CARD", start, end, CERTAIN if cue and valid else LIKELY if cue or valid
                            else UNCERTAIN))
    return hits


def _card_score(text: str, start: int, raw: str, digits: str) -> float:
    before = words_before(text, start, 5)
    cue = CARD_CUES.found_in(before)
    network = card_network(digits)
    groups = tuple(len(g) for g in re.split(r"[ \-./]", raw))
    if set(groups) == {1}:
        groups = (len(digits),)  # "5 1 0 5 1 0 ...": read digit by digit, no grouping at all
    card_shaped = network and (len(groups) == 1 or groups in CARD_GROUPS)
    if BUSINESS.found_in(before[-2:]) and not _card_named_after(before) \
            and not (luhn_valid(digits) and CARD_CUES.found_in(words_before(text, start, 12))) \
            and _business_in_sentence(text, start):
        return 0.0  # "order id 5623...", "exp ..., order id ...": the business word is the nearer
    if not cue and len(digits) in (12, 13) and gtin_valid(digits) and not luhn_valid(digits):
        return 0.0  # an EAN-13 or UPC-A barcode, its own check digit right and a card's wrong
    if luhn_valid(digits) and card_shaped:
        return CERTAIN
    if cue and (network or luhn_valid(digits)):
        return LIKELY if luhn_valid(digits) else UNCERTAIN
    if card_shaped:
        return UNCERTAIN  # a card's network and length, check digit wrong: a mistyped card is still a card
    return 0.0


# The end of a sentence or a question: a business word before it names nothing after it
# ("... the school lunch account? 4539 5780 1234 5671 exp 09/27").
_CLAUSE_END = re.compile(r"[?!;]\s|\.\s+(?=[A-Z\d])")


def _business_in_sentence(text: str, start: int) -> bool:
    clause = _CLAUSE_END.split(text[max(0, start - 80):start])[-1]
    return BUSINESS.found_in(words_before(clause, len(clause), 2))


def _card_named_after(before: list[str]) -> bool:
    """A card word after the business word nearest the number ("order gift card")."""
    business_at = next(i for i in range(max(0, len(before) - 2), len(before)) if BUSINESS.found_in(before[i:]))
    return CARD_CUES.found_in(before[business_at:])


# ---------------------------------------------------------------- cryptocurrency addresses

# Bitcoin (main and test network), Ethereum; a letter of a script written without spaces may
# touch it ("送金先0xF641…への").
_CRYPTO = re.compile(r"(?<![^\W\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af])"
                     r"(?:(?:bc|tb)1[ac-hj-np-z02-9]{25,62}|[13][1-9a-z]{25,34}|0x[0-9a-f]{40})"
                     r"(?![^\W\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af])", re.IGNORECASE)


# Shapes common enough among other ids that only a coin's word near them makes them wallets:
# Litecoin, Dogecoin, Dash and Tron (base58, 26-35 characters), Solana (base58, 32-44).
_CUED_WALLET = re.compile(r"(?<![\w])(?:[lmdrxt][1-9a-z]{24,34}|[1-9a-z]{32,44})(?![\w])", re.IGNORECASE)
# Litecoin bech32, Cardano, Bitcoin Cash (CashAddr), Monero (95 characters from 4 or 8), the
# Cosmos chains' bech32, Tezos (tz1/tz2/tz3), Stellar (G and 55 base32 letters) and TON (EQ or
# UQ and 46) are distinctive by shape.
_SHAPED_WALLET = re.compile(r"(?<![\w])(?:ltc1[ac-hj-np-z02-9]{25,62}|addr1[ac-hj-np-z02-9]{50,110}|"
                            r"(?:bitcoincash:)?[qp][ac-hj-np-z02-9]{41}|[48][0-9a-z]{94}|"
                            r"(?:cosmos|osmo|juno|terra|celestia|inj|sei|kava|akash)1[ac-hj-np-z02-9]{38,58}|"
                            r"tz[123][1-9a-z]{33}|g[a-z2-7]{55}|(?:eq|uq)[a-z0-9_\-]{46})(?![\w\-])",
                            re.IGNORECASE)
# A bech32 address with characters its alphabet lacks ("bc1qk4m7…b7n9…"): a mistyped or
# invented address, a wallet only where a coin's or wallet's word comes before it.
_LOOSE_BECH32 = re.compile(r"(?<![\w])(?:bc|ltc)1[0-9a-z]{25,62}(?![\w])", re.IGNORECASE)
COIN_CUES = Cues.of([
    "wallet", "wallets", "ltc", "litecoin", "doge", "dogecoin", "sol", "solana", "phantom", "xmr", "monero", "p2sh",
    "p2pkh", "bech32", "payout", "deposit", "withdrawal", "crypto", "usdt", "usdc", "sol.transfer", "xrp",
    "ripple", "cardano", "bch", "tron", "trx", "dash", "address", "addr", "indirizzo", "adresse", "dirección",
    "direccion", "endereço", "endereco", "adres", "adresa", "btc", "bitcoin", "trc20", "erc20", "bep20",
    "kripto", "krypto", "cripto", "cüzdan", "cüzdanım", "cüzdanı", "adresim", "adresi", "carteira", "billetera",
    "monedero", "portefeuille", "portafoglio", "portfel", "portfela", "peněženka", "dompet", "кошелек", "кошелёк", "адрес", "钱包", "地址",
    "ウォレット", "アドレス", "지갑", "주소",
])
# A coin's ticker or name right after an address ("... . Importe: 1.25 LTC").
_COINS_AFTER = frozenset({"ltc", "btc", "trx", "usdt", "usdc", "trc20", "erc20", "bep20", "doge", "xrp", "eth",
                          "litecoin", "bitcoin", "tron", "dogecoin", "ethereum", "sol", "solana", "xlm", "ada",
                          "xmr", "bnb", "avax", "matic", "lamports"})
# A text about the XRP ledger: its accounts' addresses start with "r" (base58, 25 to 35).
_XRP_TEXT = re.compile(r"(?<![^\W_])(?:xrpl?|ripple)(?![^\W_])", re.IGNORECASE)
# Words that name an id, a token or a key right before a value.
_ID_WORDS = Cues.of(["id", "sid", "trace", "request", "session", "token", "key", "nonce", "hash", "code", "ref"])
# Base58 with a version byte of Tron, Litecoin or Dogecoin: 34 characters from T, L, M or D.
# Without a coin's word near it, such a value is masked as uncertain (fail closed).
_VERSIONED_BASE58 = re.compile(r"[tlmd][1-9a-z]{33}", re.IGNORECASE)


def wallets(text: str) -> list[Hit]:
    """Bitcoin (legacy, P2SH, bech32), Ethereum, Litecoin bech32 and Monero addresses by shape;
    Litecoin, Dogecoin and Solana addresses by shape and a coin's word among the eight before.
    The view is case folded, so base58 check digits cannot be verified."""
    hits = [Hit("CRYPTO", m.start(), m.end(), CERTAIN) for m in _SHAPED_WALLET.finditer(text)
            if not m.group(0).isdigit()]
    for match in _CUED_WALLET.finditer(text):
        value = match.group(0).lower()
        if "0" in value or value.isalpha() or value.isdigit() or re.fullmatch(r"[0-9a-f]+", value) \
                or any(h.start <= match.start() < h.end for h in hits):
            continue  # base58 has no 0; hex is a hash or a digest
        after = [w.rstrip(".") for w in re.findall(r"[^\W_][\w.]*", text[match.end():match.end() + 40].lower())[:4]]
        before = words_before(text, match.start(), 8)
        if COIN_CUES.found_in(before) or any(word in _COINS_AFTER for word in after) \
                or value[0] == "r" and len(value) <= 35 and _XRP_TEXT.search(text):
            hits.append(Hit("CRYPTO", match.start(), match.end(), CERTAIN))
        elif _VERSIONED_BASE58.fullmatch(value) and not value[1:].isalpha() and not _ID_WORDS.found_in(before[-3:]) \
                and not re.fullmatch(r"[a-z]{1,2}[0-9a-f]+", value):
            hits.append(Hit("CRYPTO", match.start(), match.end(), UNCERTAIN))  # not a SID ("MM" and hex)
    for match in _LOOSE_BECH32.finditer(text):
        if not any(h.start <= match.start() < h.end for h in hits) and not _CRYPTO.fullmatch(match.group(0)) \
                and COIN_CUES.found_in(words_before(text, match.start(), 8)):
            hits.append(Hit("CRYPTO", match.start(), match.end(), LIKELY))  # a mistyped address still is one
    for match in _CRYPTO.finditer(text):
        value = match.group(0).lower()
        if value[0] in "13" and (value.isdigit() or value.isalpha() or "0" in value
                                 or re.fullmatch(r"[0-9a-f]+", value)):
            continue  # a base58 address of 26 or more characters is all hex once in 10^14
        before = words_before(text, match.start(), 4)
        if BUSINESS.found_in(before[-2:]) and not CRYPTO_CUES.found_in(before):
            continue
        hits.append(Hit("CRYPTO", match.start(), match.end(), CERTAIN if CRYPTO_CUES.found_in(before) else LIKELY))
    return hits + _listed_after(text, hits)


# What joins the items of a list of addresses.
_LIST_JOIN = re.compile(r"\s*(?:[,;/]|\band\b|\bor\b)\s*$", re.IGNORECASE)


def _listed_after(text: str, hits: list[Hit]) -> list[Hit]:
    """A shape a coin's word would make a wallet, listed right after a wallet ("wallets: 1Fya…,
    0xf739…, CTgj…"): the list's word is too far back to be read."""
    found = sorted(hits, key=lambda hit: hit.start)
    listed: list[Hit] = []
    for match in _CUED_WALLET.finditer(text):
        value = match.group(0).lower()
        if "0" in value or value.isalpha() or value.isdigit() or re.fullmatch(r"[0-9a-f]+", value) \
                or any(h.start <= match.start() < h.end for h in found):
            continue
        previous = [h for h in found + listed if h.end <= match.start()]
        if previous and _LIST_JOIN.fullmatch(text, max(h.end for h in previous), match.start()):
            listed.append(Hit("CRYPTO", match.start(), match.end(), LIKELY))
    return listed
