"""Phone numbers read out in words ("oh seven seven double oh, nine hundred, five one two",
"zéro six, dix-huit, quarante-deux", "null eins sieben eins, zweiundvierzig"): where such a
reading is in a text, and the digits it stands for.

Number words of English, French, Spanish, Italian, Portuguese, German, Dutch and Polish are
known, with their compounds ("quatre-vingt-dix", "veintidós", "trentatré", "zweiundvierzig",
"tweeënveertig"), "tens and unit" read as two words ("vingt et un", "treinta y dos") and
Polish hundreds said in one word ("pięćset dwanaście").
"""

from __future__ import annotations

import re
import unicodedata


def _counted(lines: tuple[str, ...], values: range, **more: int) -> dict[str, int]:
    """Each line's words numbered from ``values``' start (one line a language), and ``more``."""
    table = {word: value for line in lines for word, value in zip(line.split(), values, strict=True)}
    return {**table, **more}


# Words are looked up without accents ("zéro", "três", "fünf", "dreißig" as "zero", "tres", "funf", "dreissig").
_UNITS = _counted(("zero one two three four five six seven eight nine",
                   "zero un deux trois quatre cinq six sept huit neuf",
                   "cero uno dos tres cuatro cinco seis siete ocho nueve",
                   "zero uno due tre quattro cinque sei sette otto nove",
                   "zero um dois tres quatro cinco seis sete oito nove",
                   "null eins zwei drei vier funf sechs sieben acht neun",
                   "nul een twee drie vier vijf zes zeven acht negen",
                   "zero jeden dwa trzy cztery piec szesc siedem osiem dziewiec"), range(10),
                  oh=0, o=0, nought=0, naught=0, une=1, una=1, um=1, uma=1, duas=2, zwo=2, ein=1)
_TEENS = _counted(("ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen",
                   "diez once doce trece catorce quince dieciseis diecisiete dieciocho diecinueve",
                   "dieci undici dodici tredici quattordici quindici sedici diciassette diciotto diciannove",
                   "dez onze doze treze catorze quinze dezesseis dezessete dezoito dezenove",
                   "zehn elf zwolf dreizehn vierzehn funfzehn sechzehn siebzehn achtzehn neunzehn",
                   "tien elf twaalf dertien veertien vijftien zestien zeventien achttien negentien",
                   "dziesiec jedenascie dwanascie trzynascie czternascie pietnascie szesnascie siedemnascie "
                   "osiemnascie dziewietnascie"), range(10, 20),
                  dix=10, douze=12, treize=13, quatorze=14, seize=16, dezasseis=16, dezassete=17, dezanove=19)
_TENS = _counted(("twenty thirty forty fifty sixty seventy eighty ninety",
                  "veinte treinta cuarenta cincuenta sesenta setenta ochenta noventa",
                  "venti trenta quaranta cinquanta sessanta settanta ottanta novanta",
                  "vinte trinta quarenta cinquenta sessenta setenta oitenta noventa",
                  "zwanzig dreissig vierzig funfzig sechzig siebzig achtzig neunzig",
                  "twintig dertig veertig vijftig zestig zeventig tachtig negentig",
                  "dwadziescia trzydziesci czterdziesci piecdziesiat szescdziesiat siedemdziesiat osiemdziesiat "
                  "dziewiecdziesiat"), range(20, 100, 10),
                 vingt=20, vingts=20, trente=30, quarante=40, cinquante=50, soixante=60)
_HUNDRED = frozenset({"hundred", "cent", "cents", "cien", "ciento", "cento", "cem", "hundert", "honderd"})
# Hundreds said in one word: Polish "sto" to "dziewięćset", Italian "duecento" to "novecento"
# (glued to the tens and units after them: "trecentoquaranta"), Spanish and Portuguese
# "doscientos" to "novecientos", "duzentos" to "novecentos".
_HUNDREDS = _counted(("sto dwiescie trzysta czterysta piecset szescset siedemset osiemset dziewiecset",
                      "cento duecento trecento quattrocento cinquecento seicento settecento ottocento novecento",
                      "ciento doscientos trescientos cuatrocientos quinientos seiscientos setecientos ochocientos "
                      "novecientos",
                      "cento duzentos trezentos quatrocentos quinhentos seiscentos setecentos oitocentos novecentos"),
                     range(100, 1000, 100),
                     doscientas=200, trescientas=300, cuatrocientas=400, quinientas=500, seiscientas=600,
                     setecientas=700, ochocientas=800, novecientas=900, duzentas=200, trezentas=300)
_GLUED_HUNDREDS = re.compile(r"(cento|duecento|trecento|quattrocento|cinquecento|seicento|settecento|ottocento|"
                             r"novecento)(\w+)$")
_REPEAT = {"double": 2, "doble": 2, "doppel": 2, "triple": 3, "treble": 3}
_PLUS = frozenset({"plus", "mas"})
_CONNECTORS = frozenset({"et", "y", "e"})  # "vingt et un", "treinta y dos", "vinte e dois"
# Italian tens glued to a unit ("ventidue", "ventotto", "trentatre"), Spanish "veinti-".
_GLUED_TENS = re.compile(r"(vent|trent|quarant|cinquant|sessant|settant|ottant|novant|veinti)[aei]?(\w+)$")
# German and Dutch: the unit first, then "und"/"en" and the tens ("zweiundvierzig", "tweeenveertig").
_JOINT = re.compile(r"und|en")

_TOKEN = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*|\d{1,4}")
_GAP = re.compile(r"\s*,\s*|[\s\-]+")


def _plain(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word.lower().replace("ß", "ss"))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def number_value(word: str) -> int | None:
    """The value (0 to 99) of one number word or compound, in any of the languages known."""
    word = _plain(word)
    for table in (_UNITS, _TEENS, _TENS):
        if word in table:
            return table[word]
    if "-" in word:
        parts = [number_value(part) for part in word.split("-")]
        if None in parts:
            return None
        values = [p for p in parts if p is not None]
        if values[:2] == [4, 20]:  # quatre-vingt(s): four twenties
            values = [80, *values[2:]]
        total = sum(values)
        return total if total < 100 and values[0] >= 10 else None
    glued = _GLUED_TENS.match(word)
    if glued and _UNITS.get(glued.group(2)):
        return _GLUED_STEMS[glued.group(1)] + _UNITS[glued.group(2)]
    for joint in _JOINT.finditer(word):
        unit, tens = word[:joint.start()], word[joint.end():]
        if unit in _UNITS and tens in _TENS:
            return _TENS[tens] + _UNITS[unit]
    return None


_GLUED_STEMS = {"vent": 20, "trent": 30, "quarant": 40, "cinquant": 50, "sessant": 60, "settant": 70, "ottant": 80,
                "novant": 90, "veinti": 20}


def hundreds_value(word: str) -> int | None:
    """The value of hundreds said in one word, with the tens and units glued to them."""
    if word in _HUNDREDS:
        return _HUNDREDS[word]
    glued = _GLUED_HUNDREDS.match(word)
    rest = number_value(glued.group(2)) if glued else None
    return _HUNDREDS[glued.group(1)] + rest if glued and rest is not None and rest > 0 else None


def spoken_spans(text: str) -> list[tuple[int, int]]:
    """Runs of number words and short digit groups, three parts or more, separated by spaces,
    commas or hyphens: where a read-out number may be."""
    runs: list[list[tuple[int, int, str]]] = [[]]
    for token in _tokens(text):
        run = runs[-1]
        if run and not _GAP.fullmatch(text[run[-1][1]:token[0]]):
            runs.append(run := [])
        if _part_of_reading(token[2], bool(run)):
            run.append(token)
        elif run:
            runs.append([])
    out = []
    for run in runs:
        while run and _plain(run[-1][2]) in _TRAILING:
            run = run[:-1]
        if len(run) >= 3 and _standalone(text, run[0][0], run[-1][1]):
            out.append((run[0][0], run[-1][1]))
    return out


_TRAILING = _CONNECTORS | _PLUS | frozenset(_REPEAT)


def _tokens(text: str) -> list[tuple[int, int, str]]:
    """Words and digit groups with their offsets; a hyphenated run of number words that is no
    compound ("five-five-five") is its words."""
    out = []
    for match in _TOKEN.finditer(text):
        token = match.group(0)
        if "-" in token and number_value(token) is None:
            out += [(match.start() + part.start(), match.start() + part.end(), part.group(0))
                    for part in re.finditer(r"[^\W\d_]+", token)]
        else:
            out.append((match.start(), match.end(), token))
    return out


def _part_of_reading(token: str, inside: bool) -> bool:
    word = _plain(token)
    if token.isdigit() or number_value(token) is not None or word in _REPEAT or hundreds_value(word) is not None:
        return True
    return inside and (word in _HUNDRED or word in _CONNECTORS) or not inside and word in _PLUS


def _standalone(text: str, start: int, end: int) -> bool:
    before, after = text[max(0, start - 1):start], text[end:end + 2]
    return not re.fullmatch(r"[\w.,]", before) and not re.match(r"\w|[.,]\d", after)


def spoken_phone(value: str) -> bool:
    """A number read out ("six one seven, 555, 0291", "oh seven seven double two ...", "plus
    eight one, ninety, ...", "zéro six, dix-huit, ..."): seven to fifteen digits, three or
    more of its parts said in words, not one digit over and over ("null, null, null, ...")."""
    digits, said = spoken_digits(value)
    return said >= 3 and 7 <= len(digits) <= 15 and len(set(digits)) > 1


def spoken_digits(value: str) -> tuple[str, int]:
    """The digits a read-out number stands for, and how many of its parts were words."""
    parts: list[str] = []
    said, repeat, tens_open, hundreds_open, last_end = 0, 1, False, False, 0
    for start, end, token in _tokens(value):
        if "," in value[last_end:start]:
            tens_open = hundreds_open = False  # "trezentos, dois": a comma closes the group
        last_end = end
        word = _plain(token)
        if word in _REPEAT:
            repeat = _REPEAT[word]
            continue
        if word in _CONNECTORS:
            continue  # "vingt et un": the tens stay open for the unit
        number = None if token.isdigit() else number_value(token)
        hundreds = hundreds_value(word)
        if hundreds is not None:
            parts.append(str(hundreds))
            said, hundreds_open, tens_open, repeat = said + 1, hundreds % 100 == 0, False, 1
            continue
        if hundreds_open and number is not None and 0 < number < 100 and repeat == 1:
            parts[-1] = str(int(parts[-1]) + number)  # "pięćset dwanaście": 512
        elif tens_open and number is not None and 0 < number < 10 and repeat == 1:
            parts[-1] = str(int(parts[-1]) + number)  # "ninety two", "vingt et un"
        elif token.isdigit():
            parts.append(token)
        elif number is not None:
            parts.append(str(number) * repeat if number < 10 else str(number))
        elif word in _HUNDRED and parts:
            parts[-1] += "00"
        said += number is not None
        tens_open = number is not None and number >= 20 and number % 10 == 0
        hundreds_open = hundreds_open and tens_open and int(parts[-1]) % 10 == 0
        repeat = 1
    return "".join(parts), said
