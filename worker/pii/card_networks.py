"""Payment cards' networks: the groupings cards are printed and written in, and the lengths
each network's numbers have."""

from __future__ import annotations

# A payment card's grouping as printed and written.
CARD_GROUPS = {(4, 4, 4, 4), (4, 6, 5), (4, 6, 4), (4, 4, 4, 4, 3), (4, 4, 4, 2), (4, 4, 4, 3), (4, 4, 4, 1),
               (4, 4, 4), (4, 4, 5), (4, 4, 4, 4, 2), (4, 4, 4, 4, 1), (6, 13), (4, 4, 4, 6), (4, 4, 4, 5)}


def card_network(digits: str) -> bool:
    """The number starts like a card of some network and has that network's length."""
    n, first2, first4 = len(digits), int(digits[:2]), int(digits[:4])
    if digits[0] == "4":
        return n in (13, 16, 19)
    if 51 <= first2 <= 55 or 2221 <= first4 <= 2720:
        return n == 16
    if first2 in (34, 37):
        return n == 15
    if 300 <= int(digits[:3]) <= 305 or first2 in (36, 38, 39):
        return 14 <= n <= 19
    if 3528 <= first4 <= 3589:
        return 16 <= n <= 19
    if digits[0] == "6" or first2 in (50, 81, 82) or 2200 <= first4 <= 2204:
        return 12 <= n <= 19
    if first4 == 9792:
        return n == 16  # Troy (Türkiye)
    return 56 <= first2 <= 58 and 12 <= n <= 19
