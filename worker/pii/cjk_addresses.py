"""Street addresses written in Chinese, Japanese and Korean, and Vietnamese ones, from their
structure alone: no list of places.

These addresses run from the largest unit to the smallest with no spaces, each unit closed
by its administrative suffix, then a number in the form the country uses, then the building
and the room:

- Japanese: prefecture (都道府県), one or more of city, ward, district, town or village
  (市区郡町村), the town's name, then the block and lot (``4-12-10``, ``2丁目3番4号``);
- Chinese: province or city (省市), district, county or township (区县鎮鄉), a road
  (路街道巷弄), its section and lane, and its number with 号, then 院, 栋, 单元, 楼, 座 or 室;
- Korean: province or metropolitan city (도, 특별시, 광역시, or its short name), district
  (구군시), an optional neighbourhood (읍면동리), a road (로, 길, 번길) and its number (or,
  after the neighbourhood, a lot's number), then 동 and 호, and the neighbourhood in brackets.

An address needs two administrative units in a row (or one and a numbered road), then a
number in an address's form: "北京市的2个项目" or "東京都の天気" name a place, not a door.
The building and room that follow are taken while each ends in a unit (号, 室, 楼, 座, 階,
동, 호) or is a building's name with a room number, and a building named in katakana; a
count, a year or a time ends it.
"""

from __future__ import annotations

import re

from ibex_worker.pii.numbers import LIKELY, Hit

_HAN = "\u3400-\u4dbf\u4e00-\u9fff"
_KANA = "\u3040-\u30ff\uff66-\uff9f"
_HANGUL = "\uac00-\ud7a3"
_DASH = "-－‐−–"

_PROVINCE = rf"[{_HAN}]{{1,4}}?(?:都|道|府|県|縣|省|自治区)"
_CITY = rf"[{_HAN}{_KANA}]{{1,6}}?(?:市|区|區|县|縣|郡|町|村|鎮|镇|鄉|乡)"
_ROAD = rf"[{_HAN}\d]{{1,8}}?(?:大道|路|街|道|巷|弄|胡同)"
# A road's section, lane and alley before the door ("文化路一段188巷44號").
_SECTION = rf"(?:[一二三四五六七八九十\d]{{1,3}}段)?\s*(?:\d{{1,5}}\s*巷\s*)?(?:\d{{1,5}}\s*弄\s*)?"
# Sapporo's grid ("北3条西4丁目") comes before the block.
_GRID = r"(?:[東西南北]?\d{1,2}条[東西南北]?)?"
_FLOOR_AFTER = r"(?!\d|\s*(?:階|F|号室|室|楼|樓|層|层))"  # "103番地 2階": the 2 is the floor's
_BLOCK = (rf"{_GRID}\d{{1,5}}(?:\s*(?:丁目|番地|番|[{_DASH}])\s*\d{{1,5}}{_FLOOR_AFTER}){{1,3}}\s*(?:号|號|番地)?"
          rf"|\d{{1,5}}\s*番地")
_DOOR = rf"{_SECTION}\d{{1,5}}\s*(?:号|號|番地)"
# Platforms, lines, cars and exits are numbered like blocks ("梅田の3-4番線").
_NOT_TRANSIT = r"(?!\s*(?:番線|号線|線|番ホーム|号車|番出口|号出口|号线|号口))"
_NOT_ROOM = r"(?![\d年月日時分秒歳人個名回件円元点%])"
_UNIT = (rf"\s*,?\s*(?:[{_HAN}{_KANA}A-Za-z]{{1,14}}?\s*)?[A-Za-z\d]{{1,5}}\s*"
         r"(?:号室|号楼|號樓|号院|号|號|室|階|楼|樓|层|層|座|棟|栋|单元|單元|F)(?:之\d{1,2})?")
_ROOM = rf"\s*[{_HAN}{_KANA}A-Za-z]{{2,14}}\s*\d{{3,4}}{_NOT_ROOM}"
# A building named in katakana with no number after it ("ペンションアルプスロッジ").
_BUILDING = r"\s*[\u30a0-\u30ffー・]{3,20}(?![\u30a0-\u30ff\d])"
_TAIL = (rf"(?:{_UNIT}|{_ROOM}|\s*\d{{3,4}}\s*(?:室|号){_NOT_ROOM}|(?<=[座楼樓])\d{{3,4}}{_NOT_ROOM}"
         rf"|(?<=[单單]元)\d{{3,4}}{_NOT_ROOM}){{0,3}}"
         rf"(?:{_BUILDING})?")
_JA_ZH = re.compile(
    rf"(?:{_PROVINCE}(?:{_CITY}){{1,3}}|(?:{_CITY}){{2,3}})\s*"
    rf"(?:[{_HAN}{_KANA}ー]{{0,10}}?\s*(?:{_BLOCK}){_NOT_TRANSIT}|{_ROAD}\s*{_DOOR}|[{_HAN}{_KANA}ー]{{0,10}}?{_ROAD}\s*{_DOOR})"
    rf"{_TAIL}"
    rf"|{_CITY}{_ROAD}\s*{_DOOR}{_TAIL}")

# The province or metropolitan city, also by the short names its seventeen are written with ("서울 마포구").
_KR_TOP = (rf"(?:[{_HANGUL}]{{1,6}}?(?:특별자치시|특별자치도|특별시|광역시|도|시)"
           r"|서울|부산|대구|인천|광주|대전|울산|세종|경기|강원|충북|충남|전북|전남|경북|경남|제주)")
_KR_DISTRICT = rf"[{_HANGUL}]{{1,6}}?(?:구|군|시)"
_KR_ROAD = rf"[{_HANGUL}\d]{{1,10}}?(?:대로|로|길)(?:\s*\d{{1,4}}번?길)?"
_KR_TAIL = rf"(?:\s*,?\s*(?:[{_HANGUL}A-Za-z]{{1,12}}\s*)?(?:[A-Za-z]?\d{{1,5}}|[A-Za-z])\s*(?:동|호|층)){{0,3}}"
# The road's number, or a lot's number right after the neighbourhood ("정자동 178-1", the old
# form; "정자동 1명" counts people); then the building and room, and the neighbourhood in
# brackets that road addresses end with.
_KOREAN = re.compile(
    rf"{_KR_TOP}(?:\s*{_KR_DISTRICT}){{1,2}}\s*"
    rf"(?:[{_HANGUL}]{{1,6}}?(?:읍|면|동|리)\s*(?:{_KR_ROAD}\s*)?|{_KR_ROAD}\s*)\d{{1,5}}(?:-\d{{1,5}})?"
    rf"(?!\d|\s*(?:명|곳|건|세대|가구|개|회|차|번째|년|월|일|시|분|원|%)){_KR_TAIL}(?:\s*\([{_HANGUL}\d\s,·]{{1,20}}\))?")


# With no spaces, a match may start inside the words before the address ("她住在杭州市...",
# "住所は神奈川県..."): pronouns, "live in", "send to", "address" and particles come off.
_LEAD = re.compile(r"(?:[我你他她它们咱]|发票|包裹|快递|住在|住所|住址|地址|寄到|寄往|寄给|送到|发到|发往|位于|来自|搬到|放在|"
                   r"住|在|到|寄|送|于|是|请|は|が|に|の|へ|で|を)+")


# Vietnamese, in Latin letters: a door's number and the street's name, then comma-separated
# ward, district and city ("123 Nguyễn Huệ, Phường Bến Nghé, Quận 1, TP. Hồ Chí Minh", "45 Nguyen
# Hue, District 1, Ho Chi Minh City"). The street is Vietnamese by its letters, or by the ward's
# or district's word that opens the next part.
_VI_LETTER = re.compile("[ăâđêôơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ]", re.IGNORECASE)
_VI_UNIT = re.compile(r"(?:phường|p\.|quận|q\.|huyện|xã|thị xã|thị trấn|tp\.|thành phố|district|dist\.|ward)"
                      r"(?=[\s\d])", re.IGNORECASE)
_VI_STREET = re.compile(r"(?<![\w\-/])\d{1,4}[a-z]?(?:/\d{1,4})*\s+[^\W\d_]+(?:\s+[^\W\d_]+){0,3}(?=\s*,)",
                        re.IGNORECASE)
_VI_PART = re.compile(r"""\s*,\s*((?:[^\W\d_][\w.]*|\d{1,3})(?:\s+(?:[^\W\d_][\w.]*|\d{1,3})){0,4})(?=\s*(?:[,.;)\n"'”]|$))""")


def _vietnamese(text: str) -> list[Hit]:
    hits = []
    for match in _VI_STREET.finditer(text):
        end, parts, by_unit = match.end(), 0, False
        if not any(_VI_LETTER.search(w) or w[0].isupper() for w in match.group(0).split()[1:]):
            continue  # "2 bowls": English words written as such
        while parts < 4 and (part := _VI_PART.match(text, end)) is not None:
            words = part.group(1)
            unit = _VI_UNIT.match(words)
            rest = words[unit.end():].split() if unit else words.split()
            if not all(_VI_LETTER.search(w) or w[0].isupper() or w.isdigit() or w.lower() in ("city", "province")
                       for w in rest):
                break
            by_unit, parts, end = by_unit or unit, parts + 1, part.end()
        if parts and (by_unit or _VI_LETTER.search(match.group(0))):
            hits.append(Hit("STREET_ADDRESS", match.start(), end, LIKELY))
    return hits


def cjk_addresses(text: str) -> list[Hit]:
    hits = _vietnamese(text)
    for pattern in (_JA_ZH, _KOREAN):
        for match in pattern.finditer(text):
            start, end = match.start(), match.end()
            lead = _LEAD.match(text, start, end)
            if lead is not None and pattern is _JA_ZH and _JA_ZH.match(text, lead.end()):
                start = lead.end()
            while end > start and text[end - 1] in " ,":
                end -= 1
            hits.append(Hit("STREET_ADDRESS", start, end, LIKELY))
    return hits
