"""Tables in a text, as the analysed view has them (line breaks collapsed to spaces): the
header cell above a value, so that a column's name can say what its values are ("fw",
"numero_cliente", "ip").
"""

from __future__ import annotations

import re

# A CSV header at the text's start, cells without spaces ("serial,model,old_fw,new_fw"), or a
# Markdown header before its separator row ("| host | ip | fw | |---|").
_CSV_HEADER = re.compile(r"\s*(?P<cells>[^\W\d][\w./-]*(?:(?P<d>[,;])[^\W\d][\w./-]*)+)(?=\s)")
# What stands between a CSV delimiter and a cell's value: nothing, or the previous row's last
# cell (quoted if it holds spaces) and the space that joins the rows.
_CELL_START = re.compile(r"(?:(?:\"[^\"]*\"|[^\s,;\"]+) )?")
_MARKDOWN_HEADER = re.compile(r"\s*(?P<cells>\|(?:[^|\d]+\|)+?)\s*(?=\|\s*:?-{3,})")


def column_name(text: str, start: int) -> str | None:
    """The lower-case name of the column the value at ``start`` stands in, or None outside a
    table. Rows are told apart by counting delimiters: in the view a row's last cell and the
    next row's first are one run, split at its space."""
    if (header := _CSV_HEADER.match(text)) is not None:
        delimiter = header.group("d")
        cells = header.group("cells").split(delimiter)
        before = text[header.start("cells"):start]
        cell_before = before.rsplit(delimiter, 1)[-1]
        if before.count(delimiter) < len(cells) - 1 or not _CELL_START.fullmatch(cell_before):
            return None  # inside the header, or not where a cell starts: prose after a list
        index = before.count(delimiter) % (len(cells) - 1)
        if index == 0 and not cell_before:
            index = len(cells) - 1  # the row's last cell, glued by a space to the next row's first
    elif (header := _MARKDOWN_HEADER.match(text)) is not None:
        cells = header.group("cells").split("|")[1:-1]
        index = (text[header.start("cells"):start].count("|") - 1) % (len(cells) + 1)
    else:
        return None
    return cells[index].strip().strip('"').lower() if index < len(cells) else None


def row_end(text: str, start: int, end: int) -> int:
    """Where a value found at ``start:end`` in a CSV table's last column ends, when the match ran
    on over the space that joins the row to the next and into that row's first cell ("+44 29
    2018 0475 1043,Aled ...": ``1043`` is the next row's id)."""
    header = _CSV_HEADER.match(text)
    if text[end:end + 1] not in (",", ";") or header is None:
        return end
    cells = [cell.strip().strip('"').lower() for cell in header.group("cells").split(header.group("d"))]
    cut = text.rfind(" ", start, end)
    if cut <= start or len(cells) < 2 or column_name(text, start) != cells[-1]:
        return end  # a value of another column runs to its own delimiter
    return cut
