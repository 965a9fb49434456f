"""Names in Chinese, Japanese and Korean text, from how these languages announce a name: a
title, honorific or rank after it (``林小姐``, ``佐藤様``, ``高橋部長``, ``김민지 씨``, ``최 팀장님``,
``류하늘 드림``), a field, greeting, relation or verb before it (``姓名：王芳``, ``我同事宋佳佳``,
``请联系张伟``, ``성명: 김지현``), a self-introduction (``担当は佐藤です``, ``木村拓也と申します``,
``我是刘洋``, ``저는 이준호입니다``), or a nickname (``小王``, ``老李``). A short run of these
scripts in text written in Latin letters is ``names.other_script_names``'s.

The English model and the name model read words separated by spaces; these scripts have
none, and their names are no English token, so this finder's names are taken as found (see
``ibex_worker.adapters.people``). The family names are the common ones of each country (the
hundred most frequent Chinese ones cover most people); a given name is not looked up. After
a field with its colon (``患者姓名：褚国强``) or before a title with nothing before it, any short
run is taken: uncertain means masked.
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

_JAPANESE_HONORIFICS = "さん|さま|様|氏|先生|君|くん|ちゃん|殿"
# Ranks after a Japanese family name ("高橋部長"): only after a known one ("営業部長" is a post).
_JAPANESE_RANKS = "部長|課長|係長|社長|専務|常務|店長|先輩|教授|選手"
_CHINESE_TITLES = ("先生|女士|小姐|老师|老師|医生|醫生|经理|經理|总监|總監|主任|同学|同學|师傅|"
                   "師傅|律师|律師|教授|博士|阿姨|叔叔|太太|夫人|院长|院長|校长|校長|局长|局長|处长|處長|科长|"
                   "科長|所长|所長|厂长|廠長|董事长|董事長|总裁|總裁|总(?![结共是体部数统之额量计裁监经])")
# Titles that follow only a name, never a trade or a subject ("维修师傅", "数学老师").
_NAME_TITLES = ("先生", "女士", "小姐", "太太", "夫人")
# Korean titles and ranks, longest first; "드림" signs a letter off, "엄마" is a child's mother.
_KOREAN_TITLES = ("고객님|선생님|교수님|원장님|사장님|팀장님|부장님|과장님|차장님|대리님|실장님|기사님|환자분|"
                  "간호사|학생|씨|님|대리|과장|차장|부장|팀장|실장|사장|선배|후배|드림|엄마|아빠")
_KOREAN_TITLE_WORDS = frozenset(re.sub(r"님$", "", t) for t in _KOREAN_TITLES.split("|")) | {"담당자", "기사"}
# Chinese fields that announce a name; with a colon after them any short run is taken.
_FIELDS = ("学生姓名|患者姓名|姓名|联系人|聯絡人|紧急联系人|收件人|寄件人|收货人|收貨人|负责人|負責人|监护人|監護人|"
           "出租方|承租方|租客|申请人|申請人|参会人员|订餐人|开票人写|开票人|家长签字|签字|签名|班主任|客户|客戶|用户|用戶|"
           "持卡人|收款人|付款人|户名|戶名|经办人|經辦人|签收人|簽收人|被保险人|被保險人|投保人|受益人")
# Relations and verbs before a Chinese name that must end its run ("我同事宋佳佳，").
_CHINESE_BEFORE_NAME = ("请联系|請聯繫|联系|聯繫|发给|發給|交给|交給|告诉|告訴|转告|轉告|通知|打给|打給|找|叫|由|"
                        "同事|朋友|表哥|表姐|表弟|表妹|老公|老婆|母亲|父亲|妻子|丈夫|儿子|女儿|哥哥|姐姐|弟弟|妹妹")
_RELATIONS = frozenset({"母亲", "父亲", "妻子", "丈夫", "儿子", "女儿", "哥哥", "姐姐", "弟弟", "妹妹", "同事", "朋友",
                        "老公", "老婆", "母親", "父親"})
# Words before an honorific that are no name: the customer, everyone, a wife, a god, a baby.
_NOT_NAMES = frozenset({"客", "皆", "奥", "神", "王", "赤", "子", "母", "父", "兄", "姉", "弟", "妹", "各位",
                        "大家", "疲れ", "苦労", "世話", "皆々", "お客", "患者", "고객", "여러분", "선생", "사모",
                        "아드", "하느", "부모", "손"})

_SPACE = r"[ \u3000]?"
_HAN_RUN = rf"[{_HAN}]"
_KANA_RUN = rf"[{_HIRAGANA}{_KATAKANA}]"
_JA_SURNAME = "|".join(sorted(_JAPANESE_SURNAMES, key=len, reverse=True))


def cjk_names(text: str) -> list[Hit]:
    spans = _chinese(text) + _japanese(text) + _korean(text)
    return [Hit("PERSON", start, end, LIKELY) for start, end in _merge(spans)]


# ---------------------------------------------------------------- Chinese

_CHINESE_BEFORE_TITLE = re.compile(rf"(?P<name>{_HAN_RUN}{{1,4}})(?P<title>{_CHINESE_TITLES})")
# A field of people is named so ("出席名单：", "联络人:", "购买方：", "辅导员："), with its colon.
_CHINESE_FIELD = re.compile(rf"(?P<field>{_FIELDS}|您好|你好|我是|我叫|我姓|此致\s*敬礼[！!]?|"
                            rf"{_HAN_RUN}{{1,4}}(?:人员|人員|名单|名單|主任|人|者|方|员|員)(?=\s*[：:]))\s*(?P<colon>[：:])?\s*")
_CHINESE_CUE = re.compile(rf"(?:{_CHINESE_BEFORE_NAME})")
# "请李强跟进": "please", a name, then what the person is asked to do.
_ASKED_TO_ACT = re.compile(rf"[请請](?P<name>{_HAN_RUN}{{2,3}}?)(?=跟进|跟進|处理|處理|回复|回覆|确认|確認|联系|聯繫|查看|负责|負責|"
                           rf"审批|審批|核实|核實|协助|協助|签字|簽字|签收|簽收)")
# "行动项：刘洋负责埋点方案，陈静负责实验": an action item's owner, a name starting a clause.
_ACTION_OWNER = re.compile(rf"(?:^|(?<=[：:，,；;、。\s]))(?P<name>{_HAN_RUN}{{2,3}}?)(?=负责|負責)")
# "谢谢，张伟": thanks, then a name that ends the text (a message signed off).
_THANKS_SIGNED = re.compile(rf"(?:谢谢|謝謝|多谢|多謝)[，,！!。]?\s*(?P<name>{_HAN_RUN}{{2,3}})[。！!]?\s*$")
# 小王, 老李: a nickname standing alone before a comma, a stop or "said", or after a verb
# or a trade that names a person.
_SURNAME_CLASS = "".join(sorted(_CHINESE_SURNAMES))
_NICKNAME_FORM = rf"(?:[小老][{_SURNAME_CLASS}]|阿(?![姨公婆妈爸])[{_HAN}])"
_NICKNAME = re.compile(rf"(?<![{_HAN}]){_NICKNAME_FORM}(?=[，,。！!？?、：:\s]|说|來|来|$)"
                       rf"|(?:(?<=[找叫给和跟问])|(?<=师傅|師傅)){_NICKNAME_FORM}")  # "找小刘", "维修师傅老周"


def _chinese(text: str) -> list[tuple[int, int]]:
    spans = []
    for match in _CHINESE_BEFORE_TITLE.finditer(text):
        span = _name_before_title(text, match.start("name"), match.end("name"),
                                  any_run=match.group("title") in _NAME_TITLES)
        if span is not None:
            spans.append(span)
    for match in _CHINESE_FIELD.finditer(text):
        spans += _listed_names(text, match.end(), any_run=bool(match.group("colon")))
    for match in _CHINESE_CUE.finditer(text):
        span = _chinese_name_at(text, match.end(), closed=True)
        if span is not None:
            spans.append(span)
    spans += [(m.start("name"), m.end("name")) for m in _ASKED_TO_ACT.finditer(text)
              if _surname_length(m.group("name")) and m.group("name") not in _NOT_NAMES
              and not re.search(_CHINESE_TITLES, m.group("name"))]  # "请王经理审批": the title finder's
    spans += [(m.start(), m.end()) for m in _NICKNAME.finditer(text)]
    spans += [(m.start("name"), m.end("name")) for pattern in (_ACTION_OWNER, _THANKS_SIGNED)
              for m in pattern.finditer(text) if _surname_length(m.group("name")) and m.group("name") not in _NOT_NAMES]
    return spans


def _surname_length(word: str) -> int:
    return 2 if word[:2] in _CHINESE_COMPOUND_SURNAMES else 1 if word[:1] in _CHINESE_SURNAMES else 0


def _name_before_title(text: str, start: int, end: int, *, any_run: bool) -> tuple[int, int] | None:
    """The name right before a Chinese title: from the family name nearest the run's start,
    with at most two characters after it (``林小姐``, ``王建国先生``); before a title only a name
    takes (``any_run``), a run of two or three with nothing of Chinese before it, whatever its
    first character (``褚国强先生``)."""
    run = text[start:end]
    for offset in range(len(run)):
        surname = _surname_length(run[offset:])
        if surname and len(run) - offset <= surname + 2:
            return None if run[offset:] in _NOT_NAMES else (start + offset, end)
    before = text[start - 1:start]
    return (start, end) if any_run and 2 <= len(run) <= 3 and not re.match(rf"[{_HAN}]", before) \
        and not _NOT_IN_NAMES.intersection(run) else None


# Characters of requests, plurals and pointers, no part of a name: "请各位同学", "这位老师".
_NOT_IN_NAMES = frozenset("请請各位们們这這那每的是在有和与與及")


def _listed_names(text: str, cursor: int, *, any_run: bool) -> list[tuple[int, int]]:
    """The Chinese names after a field, one or a list ("参会人员：孙浩、周敏、吴建军"); a relation
    first ("母亲 林秀英") is skipped."""
    spans = []
    while True:
        relation = re.match(rf"(?:{'|'.join(_RELATIONS)})\s*", text[cursor:])
        if relation:
            cursor += relation.end()
        span = _chinese_name_at(text, cursor, closed=False, any_run=any_run)
        if span is None:
            return spans
        spans.append(span)
        separator = re.match(r"、\s*", text[span[1]:])  # "，性别：男": a comma ends the list, the next field starts
        if separator is None:
            return spans
        cursor = span[1] + separator.end()


# A pronoun or what the person does ends a name's run after a verb or a relation:
# "告诉郑丽她的", "同事张敏负责报销".
_ACTS_AFTER_NAME = re.compile("[他她]|负责|負責|跟进|跟進|处理|處理|说|說|觉得|覺得|打算|已经|已經|今天|明天|昨天")


def _chinese_name_at(text: str, cursor: int, *, closed: bool, any_run: bool = False) -> tuple[int, int] | None:
    """A Chinese name at ``cursor``: a family name and one or two characters. After a verb or
    a relation (``closed``) the name ends the run, or a pronoun does (``告诉郑丽她的``): "找工作"
    is no name. After a field with its colon (``any_run``), any run of two to four."""
    run = re.match(rf"{_HAN_RUN}{{1,8}}", text[cursor:])
    if run is None:
        return None
    word = _ACTS_AFTER_NAME.split(run.group(0))[0] if closed else run.group(0)
    if any_run:
        word = re.split(rf"(?:{_CHINESE_TITLES})", word)[0]  # "班主任：葛春燕老师": the name ends at its title
    surname = _surname_length(word)
    if any_run and not surname and 2 <= len(word) <= 4 and word not in _RELATIONS:
        return cursor, cursor + len(word)
    if not surname:
        return None
    if closed:
        return (cursor, cursor + len(word)) if surname + 1 <= len(word) <= surname + 2 else None
    return cursor, cursor + min(len(word), surname + 2)


# ---------------------------------------------------------------- Japanese

# A name before an honorific: kanji (a family name, a space, a given name), a known family
# name and a given name in kana, or a name in kana alone after a boundary (kana after a kanji
# are a word's ending or a particle, "までに様式"); "様式", "氏名", "殿堂" are words.
_JAPANESE_BEFORE = re.compile(
    rf"(?P<name>(?:{_JA_SURNAME}){_SPACE}{_KANA_RUN}{{2,4}}|{_HAN_RUN}{{1,4}}(?:{_SPACE}{_HAN_RUN}{{1,3}})?|"
    rf"(?<![{_HAN}{_HIRAGANA}{_KATAKANA}]){_KANA_RUN}{{2,6}}(?:{_SPACE}{_KANA_RUN}{{2,6}})?)"
    rf"(?:{_JAPANESE_HONORIFICS})(?![式子々相態名堂])")
_JAPANESE_RANKED = re.compile(rf"(?P<name>{_JA_SURNAME})(?:{_JAPANESE_RANKS})")
# "担当は佐藤です", "山口けんじです", "木村拓也と申します": a family name introducing itself.
_SELF_NAMED = re.compile(rf"(?P<name>(?:{_JA_SURNAME})(?:{_SPACE}{_HAN_RUN}{{1,3}}|{_SPACE}{_KANA_RUN}{{2,4}})?)"
                         rf"(?:です|でございます|と申します|といいます)")
# "総務の西村から", "経理の佐々木が": a department, then a family name of two or more characters.
_JA_LONG_SURNAME = "|".join(sorted((n for n in _JAPANESE_SURNAMES if len(n) > 1), key=len, reverse=True))
_DEPARTMENT_MEMBER = re.compile(rf"(?<=の)(?P<name>{_JA_LONG_SURNAME})(?=から|より|が|に|は|と|まで|へ)")
# "鈴木 花子", "石川　健太": a known family name, a space, a given name in one to three kanji
# (written so in signatures and lists); "山田：次の議題" a family name as a speaker's label.
_SPACED_FULL_NAME = re.compile(rf"(?<![{_HAN}{_HIRAGANA}{_KATAKANA}])(?P<name>(?:{_JA_SURNAME})[ \u3000]"
                               rf"(?P<given>{_HAN_RUN}{{1,3}}))(?![{_HAN}])")
# A letter signed off with a known family name (and a given name) at its very end: "…いただけますか。山本".
_SIGNED_OFF = re.compile(rf"(?<=[。！!\s])(?P<name>(?:{_JA_LONG_SURNAME})(?:{_HAN_RUN}{{1,2}})?)\s*$")
_SPEAKER = re.compile(rf"(?:^|(?<=\s))(?P<name>{_JA_LONG_SURNAME})[：:]")  # where a line starts (a space in the view)
# A place or a business named after a family: "上野 公園", "松本 城", "山田 商店", "小林 医院".
_FACILITY = re.compile("(?:公園|城|商店|医院|病院|駅|店|屋|銀行|神社|寺|学校|大学|会館|役所|線|町|村|市|区|県|庁|館|園|院|所|社|堂|橋|川|山)$")
_JAPANESE_FIELD = re.compile(r"(?:署名|差出人|宛名|宛先|受取人|申込者|連絡先|患者名|氏名|お名前|名前|フリガナ|ふりがな|"
                             r"担当者|担当|配達先|こんにちは|もしもし)(?:\s*[：:、]\s*|は|の|\s+)")


def _japanese(text: str) -> list[tuple[int, int]]:
    spans = []
    for match in _JAPANESE_BEFORE.finditer(text):
        name = match.group("name")
        if not (name.startswith(("お", "ご")) or name.replace(" ", "") in _NOT_NAMES):
            spans.append((match.start("name"), match.end("name")))
    spans += [(m.start("name"), m.end("name")) for m in _JAPANESE_RANKED.finditer(text)]
    spans += [(m.start("name"), m.end("name")) for m in _DEPARTMENT_MEMBER.finditer(text)]
    spans += [(m.start("name"), m.end("name")) for m in _SPACED_FULL_NAME.finditer(text)
              if not re.fullmatch(_JAPANESE_RANKS, m.group("given")) and m.group("given") not in _NOT_NAMES
              and not _FACILITY.search(m.group("given"))]
    speakers = list(_SPEAKER.finditer(text))
    if len(speakers) >= 2:  # turns of a conversation, not "松本：晴れ" in a weather list
        spans += [(m.start("name"), m.end("name")) for m in speakers]
    spans += [(m.start("name"), m.end("name")) for m in _SIGNED_OFF.finditer(text)]
    for match in _SELF_NAMED.finditer(text):
        spans.append((match.start("name"), match.end("name")))
    for match in _JAPANESE_FIELD.finditer(text):
        span = _japanese_name_at(text, match.end())
        if span is not None:
            spans.append(span)
    return spans


def _japanese_name_at(text: str, cursor: int) -> tuple[int, int] | None:
    """The name a field announces: in kana (``サトウ ミサキ``, ``さとう はなこ``), or kanji that
    start with a known family name (``加藤 美咲``)."""
    kana = re.match(rf"{_KANA_RUN}{{2,8}}(?:{_SPACE}{_KANA_RUN}{{2,8}})?(?=[\s、，,。（(：:]|$)", text[cursor:])
    if kana:
        return cursor, cursor + kana.end()
    named = re.match(rf"(?:{_JA_SURNAME})(?:{_SPACE}{_HAN_RUN}{{1,3}}(?![{_HAN}]))?", text[cursor:])
    return (cursor, cursor + named.end()) if named else None


# ---------------------------------------------------------------- Korean

_KOREAN_NAME = rf"(?<![{_HANGUL}])(?P<name>[{_HANGUL}]{{1,4}})"
_KOREAN_BEFORE = re.compile(rf"{_KOREAN_NAME} ?(?P<title>{_KOREAN_TITLES})")
# A full name before a particle that follows people ("임하은이랑", "서지수에게"): three syllables
# from a family name (two-syllable words before these are too common: "김치랑").
_KOREAN_PARTICLED = re.compile(rf"(?<![{_HANGUL}])(?P<name>[{_HANGUL}]{{3}})(?=이랑|랑|에게|한테|께서)")
_KOREAN_FIELD = re.compile(r"(?:성명|(?:제|저의|사용자|고객) ?이름은|성함은|이름은|이름|담당자|수신인|받는 ?분|보내는 ?분|주문자|고객|안녕하세요|저는)\s*[:：,，]?\s*"
                           r"|(?:수령인|수취인|받는 ?사람|보내는 ?사람|발신인|참석자|참가자)\s*[:：]\s*")  # these only with a colon
# "수령인 최현우": a recipient's full name ending the clause, without a colon ("수령인 주소는": a word).
_KOREAN_RECIPIENT = re.compile(rf"(?:수령인|수취인)\s+(?P<name>[{_HANGUL}]{{3}})(?=[.,。)]|$)")
# "민수야,", "지현아 오늘": a given name called at the start of a message, its ending agreeing
# with the name's last syllable (아 after a consonant, 야 after a vowel); common words called so
# ("아니야", "어디야", "친구야") are no names.
_KOREAN_VOCATIVE = re.compile(rf"(?:^|(?<=[.!?。]\s))(?P<name>[{_HANGUL}]{{2}})(?P<call>[아야])(?=[\s,!?.~]|$)")
_CALLED_WORDS = frozenset({"아니", "어디", "누구", "진짜", "정말", "그래", "이거", "저거", "그거", "여기", "거기", "저기",
                           "언제", "무슨", "이제", "오늘", "내일", "지금", "벌써", "역시", "최고", "바보", "친구", "엄마",
                           "아빠", "언니", "오빠", "누나", "동생", "자기", "여보", "애들", "얘들", "괜찮", "그렇", "이게",
                           "그게", "저게", "이건", "그건", "다행", "대박", "미안", "사랑"})


def _korean(text: str) -> list[tuple[int, int]]:
    spans = []
    for match in _KOREAN_BEFORE.finditer(text):
        span = _korean_name(match.group("name"), match.start("name"), match.group("title"),
                            spaced=match.end("name") < match.start("title"))
        if span is not None:
            spans.append(span)
    spans += [(m.start("name"), m.end("name")) for m in _KOREAN_PARTICLED.finditer(text)
              if m.group("name")[0] in _KOREAN_SURNAMES]
    for match in _KOREAN_FIELD.finditer(text):
        cursor = match.end()
        while (span := _korean_name_at(text, cursor)) is not None:
            spans.append(span)
            listed = re.match(r"\s*[,，、]\s*", text[span[1]:])  # "참석자: 이서연, 최지훈, 정하은"
            if listed is None or not match.group(0).startswith(("참석자", "참가자")):
                break  # "고객: 김민수, 주소는 ...": only a list of attendees goes on after its first name
            cursor = span[1] + listed.end()
    spans += [(m.start("name"), m.end("name")) for m in _KOREAN_RECIPIENT.finditer(text)
              if m.group("name")[0] in _KOREAN_SURNAMES]
    spans += [(m.start("name"), m.end("name")) for m in _KOREAN_VOCATIVE.finditer(text)
              if m.group("name") not in _CALLED_WORDS and _ends_in_consonant(m.group("name")) == (m.group("call") == "아")]
    return spans


def _ends_in_consonant(word: str) -> bool:
    """Whether a Hangul syllable block word ends in a final consonant (받침)."""
    return (ord(word[-1]) - 0xAC00) % 28 != 0


def _korean_name(name: str, start: int, title: str, *, spaced: bool) -> tuple[int, int] | None:
    """A Korean name before a title: a family name alone before a spaced rank ("최 팀장님"),
    two syllables before 씨 or 님 (a given name), three or four that start with a family
    name. A title itself is no name ("팀장님", "기사님")."""
    if name in _NOT_NAMES or name in _KOREAN_TITLE_WORDS:
        return None
    if len(name) == 1:
        return (start, start + 1) if spaced and name in _KOREAN_SURNAMES and title not in ("씨", "님") else None
    if len(name) == 2:
        return (start, start + 2) if title in ("씨", "님") else None  # "배송 기사님", "우리 팀장님": words
    return (start, start + len(name)) if name[0] in _KOREAN_SURNAMES else None


# "안녕하세요, 저는 김민준입니다": the speaker's own words between a greeting and the name.
_KOREAN_SELF_WORDS = frozenset({"저는", "제가", "저희", "저의", "나는", "내가", "이름은", "성함은"})


def _korean_name_at(text: str, cursor: int) -> tuple[int, int] | None:
    """The name a field or a greeting announces, before its particle or copula."""
    match = re.match(rf"[{_HANGUL}]{{2,4}}?(?=입니다|이에요|예요|이고|씨|님|[^{_HANGUL}]|$)", text[cursor:])
    if match is None or match.group(0) in _KOREAN_TITLE_WORDS or match.group(0) in _NOT_NAMES \
            or match.group(0) in _KOREAN_SELF_WORDS \
            or match.group(0).startswith(("뭐", "무엇", "누구", "어떻", "어디")):  # "이름은 뭐예요?": a question
        return None
    return cursor, cursor + match.end()


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(set(spans)):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
