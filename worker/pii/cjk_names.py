"""Names in Chinese, Japanese and Korean text, from how these languages write a name: a
family name first, then a short given name, announced by a title or honorific after it
(``林小姐``, ``佐藤様``, ``김민지 씨``, ``최수진님``), or by a field, a greeting or a verb before it
(``姓名：王芳``, ``担当は佐藤です``, ``请联系张伟``, ``성명: 김지현``). A short run of these scripts in
text written in Latin letters is ``names.other_script_names``'s.

The English model and the name model read words separated by spaces; these scripts have
none, and their names are no English token, so this finder's names are taken as found (see
``ibex_worker.adapters.people``). The family names are the common ones of each country (the
hundred most frequent Chinese ones cover most people); a given name is not looked up.
"""

from __future__ import annotations

import re

from ibex_worker.pii.numbers import LIKELY, Hit

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HIRAGANA = "\u3041-\u309f"
_KATAKANA = "\u30a0-\u30ff\uff66-\uff9f"
_HANGUL = "\uac00-\ud7a3"

# The most frequent Chinese family names, simplified and traditional, and the compound ones.
_CHINESE_SURNAMES = frozenset(
    "王李张張刘劉陈陳杨楊黄黃赵趙吴吳周徐孙孫马馬朱胡郭何林高罗羅郑鄭梁谢謝宋唐许許韩韓冯馮邓鄧曹彭曾肖蕭"
    "田董袁潘于蒋蔣蔡余杜叶葉程苏蘇魏吕呂丁任沈姚卢盧姜崔钟鍾谭譚陆陸汪范金石廖贾賈夏韦韋付方白邹鄒孟熊秦邱"
    "江尹薛闫閆段雷侯龙龍史陶黎贺賀顾顧毛郝龚龔邵万萬钱錢严嚴覃武戴莫孔向汤湯欧歐温溫庄莊易常乔喬柯"
)
_CHINESE_COMPOUND_SURNAMES = ("欧阳", "歐陽", "司马", "司馬", "诸葛", "諸葛", "上官", "东方", "東方", "皇甫", "令狐",
                              "慕容", "尉迟", "長孫", "长孙", "夏侯", "公孙", "公孫")
# The most frequent Japanese family names.
_JAPANESE_SURNAMES = frozenset("""
佐藤 鈴木 高橋 田中 伊藤 渡辺 渡邊 山本 中村 小林 加藤 吉田 山田 佐々木 山口 松本 井上 木村 林 斎藤 斉藤 清水 山崎 森
池田 橋本 阿部 石川 山下 中島 石井 小川 前田 岡田 長谷川 藤田 後藤 近藤 村上 遠藤 青木 坂本 福田 太田 西村 藤井
金子 岡本 藤原 中野 三浦 原田 中川 松田 竹内 小野 田村 中山 和田 石田 森田 上田 原 柴田 酒井 工藤 横山 宮崎 宮本
内田 高木 安藤 島田 谷口 大野 丸山 今井 高田 藤本 武田 村田 上野 杉山 増田 小山 大塚 平野 菅原 久保 松井 千葉
岩崎 桜井 木下 野口 松尾 菊地 野村 新井 渡部 浅野 望月 北村 川口 荒木 大西 本田 西田
""".split())
# The most frequent Korean family names (one syllable each).
_KOREAN_SURNAMES = frozenset("김이박최정강조윤장임한오서신권황안송류전홍고문양손배백허유남심노하곽성차주우구민"
                             "진지엄채원천방공현함변염여추도소석선설마길연위표명기반왕금옥육인맹제모탁국어은편용")

# Titles and honorifics written right after a name.
_JAPANESE_HONORIFICS = "さん|さま|様|氏|先生|君|くん|ちゃん|殿"
_CHINESE_TITLES = ("先生|女士|小姐|老师|老師|医生|醫生|经理|經理|总监|總監|主任|同学|同學|师傅|"
                   "師傅|律师|律師|教授|博士|阿姨|叔叔|太太|夫人")
_KOREAN_TITLES = "고객님|선생님|교수님|원장님|사장님|씨|님|대리|과장|차장|부장|팀장|실장|사장|선배|후배"
# Fields and words that announce a name after them.
_FIELDS = ("学生姓名|姓名|氏名|お名前|名前|フリガナ|ふりがな|联系人|聯絡人|收件人|收货人|收貨人|负责人|"
           "負責人|担当者|担当|监护人|監護人|出租方|承租方|申请人|申請人|配達先|宛先|患者|客户|客戶|用户|"
           "用戶|성명|이름|담당자|수신인|고객")
_CHINESE_VERBS = "请联系|請聯繫|联系|聯繫|发给|發給|交给|交給|告诉|告訴|通知|打给|打給|找|叫"
_GREETINGS = "您好|你好|こんにちは|もしもし|안녕하세요"
# Words before an honorific that are no name: the customer, everyone, a wife, a god, a baby.
_NOT_NAMES = frozenset({"客", "皆", "奥", "神", "王", "赤", "子", "母", "父", "兄", "姉", "弟", "妹", "各位",
                        "大家", "疲れ", "苦労", "世話", "皆々", "お客", "患者", "고객", "여러분", "선생", "사모",
                        "아드", "하느", "부모", "손"})

_SPACE = r"[ \u3000]?"
_HAN_RUN = rf"[{_HAN}]"
_KANA_RUN = rf"[{_HIRAGANA}{_KATAKANA}]"


def cjk_names(text: str) -> list[Hit]:
    spans: list[tuple[int, int]] = []
    spans += _before_title(text)
    spans += _after_cue(text)
    return [Hit("PERSON", start, end, LIKELY) for start, end in _merge(spans)]


# A Japanese name before an honorific: a family name (and a given name), or a name in kana.
# (A kana name starts after a boundary: kana after a kanji are a word's ending or a particle,
# "までに様式"; "様式", "氏名", "殿堂" are words, not an honorific after a name.)
_JAPANESE_BEFORE = re.compile(
    rf"(?P<name>{_HAN_RUN}{{1,4}}(?:{_SPACE}{_HAN_RUN}{{1,3}})?|(?<![{_HAN}{_HIRAGANA}{_KATAKANA}])"
    rf"{_KANA_RUN}{{2,6}}(?:{_SPACE}{_KANA_RUN}{{2,6}})?)(?:{_JAPANESE_HONORIFICS})(?![式子々相態名堂])")
_CHINESE_BEFORE = re.compile(rf"(?P<name>{_HAN_RUN}{{1,4}})(?:{_CHINESE_TITLES})")
_KOREAN_BEFORE = re.compile(rf"(?P<name>[{_HANGUL}]{{2,4}}) ?(?P<title>{_KOREAN_TITLES})")


def _before_title(text: str) -> list[tuple[int, int]]:
    spans = []
    for match in _JAPANESE_BEFORE.finditer(text):
        span = _japanese_name(text, match.start("name"), match.end("name"))
        if span is not None:
            spans.append(span)
    for match in _CHINESE_BEFORE.finditer(text):
        span = _chinese_name_ending(text, match.start("name"), match.end("name"))
        if span is not None:
            spans.append(span)
    for match in _KOREAN_BEFORE.finditer(text):
        if len(match.group("name")) == 2 and match.group("title") not in ("씨", "님"):
            continue  # "부서 대리": two syllables before a rank are a word; before 씨 or 님, a given name
        span = _korean_name(match.group("name"), match.start("name"))
        if span is not None:
            spans.append(span)
    return spans


def _japanese_name(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The name a Japanese honorific closes: from a known family name inside the run, or the
    whole run of kana; not "お客様", "皆さん" or "奥様"."""
    name = text[start:end]
    if name.startswith(("お", "ご")) or name in _NOT_NAMES or name.replace(" ", "").replace("\u3000", "") in _NOT_NAMES:
        return None
    if re.fullmatch(rf"{_KANA_RUN}+(?:{_SPACE}{_KANA_RUN}+)?", name):
        return start, end
    for offset in range(len(name)):
        if name[offset:offset + 3] in _JAPANESE_SURNAMES or name[offset:offset + 2] in _JAPANESE_SURNAMES \
                or name[offset] in _JAPANESE_SURNAMES or name[offset] in _CHINESE_SURNAMES:
            return start + offset, end
    return (start, end) if len(name.strip()) >= 2 else None


def _chinese_name_ending(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The name right before a Chinese title: the family name nearest the run's start, and
    at most two characters after it (``林小姐``, ``王建国先生``)."""
    run = text[start:end]
    for offset in range(len(run)):
        surname = 2 if run[offset:offset + 2] in _CHINESE_COMPOUND_SURNAMES else 1 if run[offset] in _CHINESE_SURNAMES \
            else 0
        if surname and len(run) - offset <= surname + 2:
            return None if run[offset:] in _NOT_NAMES else (start + offset, end)
    return None


def _korean_name(name: str, start: int) -> tuple[int, int] | None:
    """A Korean name before a title: two to four syllables; of three or more, the first is
    a family name ("김민지"); two may be a given name alone ("민준 씨")."""
    if name in _NOT_NAMES or len(name) > 2 and name[0] not in _KOREAN_SURNAMES:
        return None
    return start, start + len(name)


# A name after a field or a greeting, or after a Chinese verb that names a person's role.
_AFTER_FIELD = re.compile(rf"(?:{_FIELDS}|{_GREETINGS})\s*[：:，,、]?\s*(?:は|の|은|는)?\s*")
_AFTER_VERB = re.compile(rf"(?:{_CHINESE_VERBS})")
_SELF_NAMED = re.compile(rf"(?P<name>{_HAN_RUN}{{1,3}})(?:です|でございます)")


def _after_cue(text: str) -> list[tuple[int, int]]:
    spans = []
    for match in _AFTER_FIELD.finditer(text):
        span = _name_at(text, match.end())
        if span is not None:
            spans.append(span)
    for match in _AFTER_VERB.finditer(text):
        span = _chinese_name_at(text, match.end(), closed=True)
        if span is not None:
            spans.append(span)
    for match in _SELF_NAMED.finditer(text):
        name = match.group("name")
        for offset in range(len(name)):
            if name[offset:] in _JAPANESE_SURNAMES:
                spans.append((match.start("name") + offset, match.end("name")))  # "担当は佐藤です"
                break
    return spans


def _name_at(text: str, cursor: int) -> tuple[int, int] | None:
    """The name a field or a greeting announces, in whichever of the scripts it is written."""
    katakana = re.match(rf"[{_KATAKANA}]{{2,8}}(?:{_SPACE}[{_KATAKANA}]{{2,8}})?", text[cursor:])
    if katakana:
        return cursor, cursor + katakana.end()
    hangul = re.match(rf"[{_HANGUL}]{{2,4}}?(?=입니다|이에요|예요|씨|님|[^{_HANGUL}]|$)", text[cursor:])
    if hangul:
        return cursor, cursor + hangul.end()
    japanese = re.match(rf"{_HAN_RUN}{{1,3}}{_SPACE}{_HAN_RUN}{{1,3}}(?![{_HAN}])", text[cursor:])
    if japanese and japanese.group(0)[:1] in _JAPANESE_SURNAMES | _CHINESE_SURNAMES \
            or japanese and japanese.group(0).split()[0] in _JAPANESE_SURNAMES:
        return cursor, cursor + japanese.end()
    return _chinese_name_at(text, cursor, closed=False) or _japanese_surname_at(text, cursor)


def _chinese_name_at(text: str, cursor: int, *, closed: bool) -> tuple[int, int] | None:
    """A Chinese name starting at ``cursor``: a family name and one or two characters. After
    a verb (``closed``), the name must end the run of characters (``联系张伟，``): "找工作" is
    no name."""
    run = re.match(rf"{_HAN_RUN}{{1,8}}", text[cursor:])
    if run is None:
        return None
    word = run.group(0)
    surname = 2 if word[:2] in _CHINESE_COMPOUND_SURNAMES else 1 if word[0] in _CHINESE_SURNAMES else 0
    if not surname:
        return None
    if closed:
        return (cursor, cursor + len(word)) if surname + 1 <= len(word) <= surname + 2 else None
    return cursor, cursor + min(len(word), surname + 2)


def _japanese_surname_at(text: str, cursor: int) -> tuple[int, int] | None:
    for length in (3, 2):
        if text[cursor:cursor + length] in _JAPANESE_SURNAMES:
            given = re.match(rf"{_SPACE}{_HAN_RUN}{{1,3}}", text[cursor + length:])
            return cursor, cursor + length + (given.end() if given else 0)
    return None


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(set(spans)):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
