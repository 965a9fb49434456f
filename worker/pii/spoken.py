"""Phone numbers read out in words ("oh seven seven double oh, nine hundred, five one two"):
the shape the phone finder looks for, and the digits such a reading stands for."""

from __future__ import annotations

import re

_DIGIT_WORDS = {"zero": "0", "oh": "0", "o": "0", "one": "1", "two": "2", "three": "3", "four": "4",
                "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9"}
_TEENS = {"ten": "10", "eleven": "11", "twelve": "12", "thirteen": "13", "fourteen": "14", "fifteen": "15",
          "sixteen": "16", "seventeen": "17", "eighteen": "18", "nineteen": "19"}
_TENS = {"twenty": "2", "thirty": "3", "forty": "4", "fifty": "5", "sixty": "6", "seventy": "7", "eighty": "8",
         "ninety": "9"}
_SPOKEN_DIGIT = (r"(?:(?:double|triple)\s+)?(?:zero|oh|one|two|three|four|five|six|seven|eight|nine|"
                 + "|".join(sorted(_TEENS, key=len, reverse=True)) + "|" + "|".join(_TENS)
                 + r"|\d{1,4})(?:[\s\-]+hundred)?")
SPOKEN = re.compile(rf"(?<![\w.,])(?:plus\s+)?{_SPOKEN_DIGIT}(?:(?:\s*,\s*|[\s\-]+){_SPOKEN_DIGIT}){{2,}}"
                    r"(?![\w]|[.,]\d)", re.IGNORECASE)


def spoken_phone(value: str) -> bool:
    """A number read out ("six one seven, 555, 0291", "oh seven seven double two ...", "oh
    seven seven double oh, nine hundred, five one two", "plus eight one, ninety, ..."): seven
    to fifteen digits, three or more of its parts said in words."""
    digits, said = spoken_digits(value)
    return said >= 3 and 7 <= len(digits) <= 15


def spoken_digits(value: str) -> tuple[str, int]:
    """The digits a read-out number stands for, and how many of its parts were words."""
    parts: list[str] = []
    said, repeat, tens_open = 0, 1, False
    for token in re.findall(r"[a-z]+|\d+|,", value.lower()):
        unit = _DIGIT_WORDS.get(token)
        if token in ("double", "triple"):
            repeat = 2 if token == "double" else 3
            continue
        if tens_open and unit not in (None, "0") and repeat == 1:
            parts[-1] = parts[-1][0] + unit  # "ninety two" is 92
        elif unit is not None:
            parts.append(unit * repeat)
        elif token in _TEENS:
            parts.append(_TEENS[token])
        elif token in _TENS:
            parts.append(_TENS[token] + "0")
        elif token == "hundred" and parts:
            parts[-1] += "00"
        elif token.isdigit():
            parts.append(token)
        said += token.isalpha() and token not in ("plus", "hundred")
        tens_open, repeat = token in _TENS, 1
    return "".join(parts), said
