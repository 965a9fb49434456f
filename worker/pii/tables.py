"""Tables in a text, as the analysed view has them (line breaks collapsed to spaces): the
header cell above a value, so that a column's name can say what its values are ("fw",
"numero_cliente", "ip").
"""

from __future__ import annotations

import re

# A CSV header at the text's start, cells without spaces unless quoted ("serial,model,old_fw,new_fw",
# '"contact","company"', "ssn|name|state"), or a Markdown header before its separator row
# ("| host | ip | fw | |---|").
_CELL_NAME = r"(?:[^\W\d][\w./-]*|\"[^\W\d][\w./ -]{0,30}\")"
_CSV_HEADER = re.compile(rf"\s*(?P<cells>{_CELL_NAME}(?:(?P<d>[,;|]){_CELL_NAME})+)(?=\s)")
# What stands between a CSV delimiter and a cell's value: nothing, or the previous row's last
# cell (quoted if it holds spaces) and the space that joins the rows.
_CELL_START = re.compile(r"(?:(?:\"[^\"]*\"|[^\s,;|\"]+) )?")
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
    if text[end:end + 1] not in (",", ";", "|") or header is None:
        return end
    cells = [cell.strip().strip('"').lower() for cell in header.group("cells").split(header.group("d"))]
    cut = text.rfind(" ", start, end)
    if cut <= start or len(cells) < 2 or column_name(text, start) != cells[-1]:
        return end  # a value of another column runs to its own delimiter
    return cut


def header_end(text: str) -> int:
    """Where a CSV header at the text's start ends (0: the text starts with none)."""
    header = _CSV_HEADER.match(text)
    return header.end() if header else 0


def cells(text: str) -> list[tuple[int, str]]:
    """``(start, column name)`` of each cell of a CSV table after a delimiter (a row's first
    cell, glued to the row before by a space, is left out)."""
    header = _CSV_HEADER.match(text)
    if header is None:
        return []
    found = []
    for match in re.finditer(re.escape(header.group("d")), text[header.end():]):
        start = header.end() + match.end()
        name = column_name(text, start)
        if name is not None:
            found.append((start, name))
    return found


def first_cells(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each row's first cell of a CSV table, where the view's joining space
    can be told from the cell's own: the cell holds words of letters, and the previous row's
    last cell ends in a digit or a quote ("... 029 2018 0475 Sian Evans,sian@...")."""
    header = _CSV_HEADER.match(text)
    if header is None:
        return []
    delimiter, width = header.group("d"), len(header.group("cells").split(header.group("d")))
    found = []
    for index, match in enumerate(re.finditer(re.escape(delimiter), text[header.end():])):
        if index % (width - 1) != 0:
            continue
        end = header.end() + match.start()
        if index == 0:  # right after the header, whose end is known
            cell = _HEADER_ROW_CELL.fullmatch(text, header.end(), end)
        else:
            cell = _FIRST_CELL.search(text, max(header.end(), end - 120), end)
        if cell is not None:
            found.append((cell.start("value"), cell.end("value")))
    return found


# A cell of one to four words of letters (a person's name, a product's).
WORDS_CELL = r"[^\W\d_]+(?:['’\-][^\W\d_]+)*(?: [^\W\d_]+(?:['’\-][^\W\d_]+)*){0,3}"
_HEADER_ROW_CELL = re.compile(rf" \"?(?P<value>{WORDS_CELL})\"?")
_FIRST_CELL = re.compile(rf"[\d\"] \"?(?P<value>{WORDS_CELL})\"?$")


# An SQL INSERT with its columns named: "INSERT INTO customers (id, first_name) VALUES (311, 'Nomvula')".
_INSERT = re.compile(r"(?<![\w])insert\s+into\s+[\w.\"`]+\s*\((?P<columns>[^()]{1,400})\)\s*values\s*", re.IGNORECASE)
_SQL_ROW = re.compile(r"\s*,?\s*\((?P<row>(?:'(?:[^']|'')*'|[^'()])*)\)")
_SQL_VALUE = re.compile(r"'(?P<quoted>(?:[^']|'')*)'|(?P<bare>[^,\s][^,]*?)(?=\s*(?:,|$))")


def sql_cells(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, column name)`` of each quoted value of an SQL INSERT that names its columns."""
    found = []
    for insert in _INSERT.finditer(text):
        columns = [c.strip().strip('"`').lower() for c in insert.group("columns").split(",")]
        position = insert.end()
        while (row := _SQL_ROW.match(text, position)) is not None:
            values = list(_SQL_VALUE.finditer(text, row.start("row"), row.end("row")))
            if len(values) == len(columns):
                found += [(value.start("quoted"), value.end("quoted"), column)
                          for value, column in zip(values, columns) if value.group("quoted") is not None]
            position = row.end()
    return found
