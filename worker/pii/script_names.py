"""Names in text written in Arabic script (Arabic, Persian, Urdu), Hebrew, Devanagari,
Bengali, Gurmukhi, Gujarati, Tamil, Telugu, Thai and Cyrillic (Russian, Ukrainian), from the
words that announce them: a title or honorific before the name (السيد, آقای, ד"ר, श्री, শ্রী, คุณ,
пан), a relation (أخي, همکارم,
אחיו, बहन), a greeting or vocative (يا, שלום, नमस्ते), a naming word (اسمه, שמו, नाम), a sign-off
(مع التحية, בברכה, धन्यवाद), a contact verb (позвони, свяжитесь с); an honorific after it
(सुनीता जी, রাজু দা, செல்வி அக்கா); a verb of saying or the doer's mark right after it (مریم گفت,
דנה אמרה, विकास ने); "tell" with "to" glued to it (قل لـخالد).

Neither the English model nor the name model reads these scripts (most have no capitals, and
the analysed view capitalises every Cyrillic word), so the cue is the only evidence: the word
after it is taken as the name (two after a title, a naming word, a sign-off or a kinship name
like أبو), without a dictionary of names (uncertain means masked). Thai is written without
spaces: after its prefixes the name runs to the next space, particle or common verb, at most
``_THAI_MAX`` letters. Chinese, Japanese and Korean are ``cjk_names``'.
"""

from __future__ import annotations

import re
import unicodedata

from ibex_worker.pii.numbers import LIKELY, Hit

# Letters and their marks, without the scripts' punctuation and digits (، ؛ ؟ । ॥ ٠-٩).
_ARABIC = "\u0620-\u065f\u066e-\u06d3\u06d5-\u06dc\u06df-\u06e8\u06ea-\u06ef\u06fa-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufefc\u200c"
_HEBREW = "\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7\u05d0-\u05ea\u05f0-\u05f2\ufb1d-\ufb4f"
# Devanagari, Bengali, Gurmukhi, Gujarati, Tamil, Telugu (letters and signs; no digits or dandas).
_INDIC = ("\u0900-\u0963\u0971-\u097f\u0980-\u09e3\u09f0\u09f1\u0a00-\u0a65\u0a70-\u0a7f\u0a80-\u0ae5"
          "\u0b80-\u0be5\u0c00-\u0c65")
_LETTERS = _ARABIC + _HEBREW + _INDIC
# A word of these scripts; Hebrew abbreviations carry a quote inside (ד"ר, עו״ד).
_WORD = rf"[{_LETTERS}](?:[{_LETTERS}]|[\"'״׳](?=[{_LETTERS}]))*"
_PUNCT = r"[\s,:،؛\-–—.]*"

# Titles: the name after them may have two words.
_TITLES = """
السيد السيدة السيده سيد سيدة الأستاذ الأستاذة الاستاذ الاستاذة أستاذ استاذ الدكتور الدكتورة دكتور د. المهندس
المهندسة الشيخ الحاج الحاجة آقای آقاي خانم دکتر مهندس جناب سرکار حاجی محترمہ
מר גב' גב׳ גברת ד"ר ד״ר דר' פרופ' פרופ׳ פרופסור עו"ד עו״ד הרב
श्री श्रीमती सुश्री डॉ. डॉ डॉक्टर कुमारी श्रीमान प्रोफेसर
শ্রী শ্রীমতী ডাঃ ডা. ডক্টর জনাব বেগম
""".split()
# Kinship names that are part of the name they begin (أبو أحمد, أم كلثوم).
_KUNYA = ("أبو", "ابو", "أم", "ام")
# Relations and vocatives: one word after them. Hebrew's "my daughter", "my husband", "my
# friend" and "in the name of" (בתי, בעלי, חברי, בשם) are left out: they are also "the schools
# of", "the owners of", "the members of" ("בתי ספר", "בעלי עסקים", "חברי הצוות").
_ONE_WORD_CUES = """
يا عزيزي عزيزتي أخي أختي اختي ابني ابنتي بنتي زوجي زوجتي صديقي صديقتي زميلي زميلتي جاري جارتي عمي
خالي عمتي خالتي مديري مديرتي
عزیزم برادرم خواهرم همکارم دوستم پسرم دخترم همسرم شوهرم مادرم پدرم
بھائی بہن دوست
אחי אחיו אחיה אחותי אחותו אחותה בנו בנה בתו בתה אשתי חברתי חברו חברתו שכני שכנתי
प्रिय भाई बहन दीदी भैया बेटा बेटी पति पत्नी दोस्त मित्र सहकर्मी चाचा चाची मामा मामी
প্রিয় ভাই বোন বন্ধু দাদা দিদি আপু স্ত্রী স্বামী ছেলে মেয়ে সহকর্মী
""".split()
# Naming words ("his name is", "called"): the name after them may have two words.
_NAMING = """اسمه اسمها اسمي اسمى المدعو المدعوة يدعى تدعى اسمش اسمم بنام שמו שמה שמי נקרא נקראת नाम नाव নাম""".split()
# Greetings: the word right after them, with no comma between ("مرحبا، كيف حالك" greets nobody).
_GREETINGS = "مرحبا أهلا سلام שלום היי नमस्ते नमस्कार নমস্কার".split()
# Sign-offs: the name after them (often after a line break) may have two words.
_SIGN_OFFS = ["مع التحية", "مع خالص التحيات", "تحياتي", "با احترام", "با تشکر", "با سپاس", "ارادتمند", "בברכה",
              "בתודה", "धन्यवाद", "सादर", "ধন্যবাদ", "শুভেচ্ছান্তে"]
# Honorifics after a name.
_AFTER = ("जी ताई भाऊ भैया दीदी साहब साहेब बाबू दा দা দি দিদি ভাই আপা আপু সাহেব বাবু ਜੀ ਭਾਜੀ ਭੈਣ ਜੀ ભાઈ બેન "
          "அக்கா அண்ணா அண்ணன் ஐயா సారు గారు అక్క అన్న").split()
# Verbs of saying and asking right after a name (its subject), and the pronouns that are no name.
# Hindi, Punjabi and Urdu mark the doer of a past deed with ने, ਨੇ, نے ("विकास ने बोला": Vikas said).
_SAID = ("قال قالت يقول تقول گفت میگوید می‌گوید پرسید אמר אמרה סיפר סיפרה ביקש ביקשה שאל שאלה ने ਨੇ نے"
         ).split()
# Subjects of those verbs that are no names: the user, the customer, the manager, the doctor.
_SUBJECTS = frozenset("""المستخدم المستخدمة العميل العميلة الزبون المدير المديرة الطبيب الطبيبة الموظف الموظفة
الشركة الفريق المندوب کاربر مشتری مدیر دکتر پزشک همکار رئیس فروشنده پشتیبان مهندس استاد
कंपनी टीम सरकार डॉक्टर बैंक पुलिस ग्राहक उपयोगकर्ता यूज़र यूजर मैनेजर सिस्टम दुकान दुकानदार कोर्ट अदालत स्कूल
ਕੰਪਨੀ ਟੀਮ ਸਰਕਾਰ ਡਾਕਟਰ ਬੈਂਕ ਪੁਲਿਸ ਗਾਹਕ کمپنی ٹیم حکومت ڈاکٹر بینک پولیس گاہک صارف
המשתמש המשתמשת הלקוח הלקוחה המנהל המנהלת הרופא הרופאה הבוס הספק הנציג הנציגה השכן השכנה""".split())
_PRONOUNS = frozenset("""هو هي أنا انا نحن هم هن أنت انت او من تو ما شما آنها ایشان وی הוא היא אני אנחנו הם הן אתה
את आप तुम मैं वह वो हम वे आपको आपका आपकी सब सभी আপনি তুমি আমি সে আমরা তারা""".split())
# Function words a second word after a title is not (prepositions, conjunctions, "is").
_NOT_SECOND = frozenset("""في من على إلى الى عن مع و أو او لا قد كان كانت هو هي در از به با که را و یا این آن است
ב ל מ ו של את עם על זה כולם לכולם לך לכם חברים רב وسهلا بك بكم عليكم وقت خسته همه دوستان جی هاں हाँ जी هذا هذه ذلك تلك هنا كيف ماذا में से को का की के है हैं और या ने पर এ ও থেকে কে কি এবং الله رب جماعة شباب""".split())


def _alternation(words: list[str]) -> str:
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(set(words), key=len, reverse=True))


# Hebrew glues its prepositions and "that" to the word after them ("שאחיו": that his brother),
# Arabic its "and", "to" and "with" ("والسيدة": and Mrs).
_BEFORE = re.compile(
    rf"(?<![{_LETTERS}])(?:[ושבלמכ]{{1,2}}(?=[{_HEBREW}])|[وفبل](?=[{_ARABIC}]))?"
    rf"(?:(?P<title>{_alternation(_TITLES + _NAMING)})|(?P<sign>{_alternation(_SIGN_OFFS)})|"
    rf"(?P<one>{_alternation(_ONE_WORD_CUES)})|(?P<greeting>{_alternation(_GREETINGS)})(?=\s+[{_LETTERS}]))(?![{_LETTERS}]){_PUNCT}(?:\\n)?{_PUNCT}"
    rf"(?P<kunya>(?:{_alternation(list(_KUNYA))})\s+)?(?P<first>{_WORD})(?:\s+(?P<second>{_WORD}))?")
_HONORIFIC_AFTER = re.compile(rf"(?<![{_LETTERS}])(?:(?P<given>{_WORD})\s+)?(?P<name>{_WORD})\s+"
                              rf"(?:{_alternation(_AFTER)})(?![{_LETTERS}])")
_SAYS = re.compile(rf"(?:^|(?<=[\s,.:،؛!?]))(?P<name>{_WORD})\s+(?:{_alternation(_SAID)})(?![{_LETTERS}])")
# "Tell Khalid": an imperative of telling, then the name with "to" glued to it ("قل لـخالد", "قولي لأحمد").
_TELL = re.compile(rf"(?<![{_LETTERS}])(?:قل|قولي|قولوا|بلغ|بلّغ)\s+(?:لـ|ل)(?P<name>{_WORD})")
# "Abu" and the name after it are one name anywhere ("أم" alone is also "or").
_KUNYA_NAME = re.compile(rf"(?<![{_LETTERS}])(?:أبو|ابو)\s+{_WORD}")

_THAI = "\u0e00-\u0e7f"
_THAI_MAX = 12
# Titles and relations written before a Thai name, longest first ("น้องสาว" is a younger sister,
# "น้อง" alone a younger one's title, "ชื่อเล่น" a nickname); "คุณ" inside "ขอบคุณ" (thank you)
# is none. After a title or a naming word the surname may follow, after a space.
_THAI_TITLES = ("ชื่อ-นามสกุล", "ชื่อนามสกุล", "ชื่อเล่น", "นางสาว", "อาจารย์", "ด.ช.", "ด.ญ.", "ดร.", "นาย",
                "นาง", "ชื่อ", "(?<!ขอบ)คุณ")
_THAI_RELATIONS = ("น้องสาว", "น้องชาย", "พี่สาว", "พี่ชาย", "พี่", "น้อง")
_THAI_CUE = re.compile("(?:(?P<title>" + "|".join(t.replace(".", "\\.") for t in _THAI_TITLES) + ")|"
                       + "|".join(_THAI_RELATIONS) + ")[\\s:\\-]*")
# Where a name glued to the text after it ends: particles, and the commonest verbs and words
# that follow a name (call, go, say, will, that, give, and, with, send, ask, is, not; "มา",
# come, ends names too: "ปัทมา").
_THAI_PARTICLES = "ค่ะ|ครับ|คะ|นะ|จ้ะ|จ้า"
_THAI_STOP = re.compile(_THAI_PARTICLES + "|ด้วย|โทร|ไป|บอก|จะ|ว่า|ให้|ที่|และ|กับ|ส่ง|ถาม|แจ้ง|เป็น|อยู่|ไม่|"
                        "ได้|ต้องการ|ชื่อ")
# What right after "คุณ" (also "you") or "ชื่อ" (also "the name of") makes no name: quality, can,
# must, value, have, will, the user's, the account's, the file's, the product's, the shop's.
_THAI_NO_NAME = re.compile(_THAI_PARTICLES + "|ภาพ|สมบัติ|สามารถ|ต้อง|ค่า|มี|ก็|จะ|ได้|เป็น|ไม่|ช่วย|ควร|อาจ|ผู้|บัญชี|"
                           "ไฟล์|สินค้า|บริษัท|ร้าน|ชื่อ|คือ")
_THAI_RUN = re.compile(f"[{_THAI}]+")


# Russian and Ukrainian: the person a contact verb addresses ("позвони Марине", "свяжитесь с
# Иваном", "нагадайте Олені") or a title names. The analysed view capitalises every word it does
# not know as English, so capitals say nothing here: the cue does, and the words that follow
# such verbs without naming anyone (tomorrow, about, please, pronouns) are skipped.
_CYRILLIC_WORD = r"[\u0400-\u04ff](?:[\u0400-\u04ff'’ʼ-]*[\u0400-\u04ff])?"
_CYRILLIC_CUES = re.compile(
    r"(?<![\u0400-\u04ff])(?:(?P<with>(?:свяжитесь|свяжись|связаться|поговорите|поговори|поговорить|встреча|"
    r"встретиться|созвониться|созвон|переговорите|зв['’ʼ]яжіться|поговоріть|зустріч)\s+(?:с|со|з|із))|"
    r"(?P<to>позвоните|позвони|позвонить|передайте|передай|передать|напомните|напомни|напомнить|спросите|спроси|"
    r"скажите|скажи|напишите|напиши|написать|зателефонуйте|зателефонуй|подзвоніть|подзвони|нагадайте|нагадай|"
    r"передайте|напишіть|скажіть|запитайте)|(?P<title>господин|господина|госпожа|госпоже|г-н|г-жа|пан|пані|"
    r"пана|пани))\s+(?P<first>" + _CYRILLIC_WORD + r")(?:\s+(?P<second>" + _CYRILLIC_WORD + r"))?", re.IGNORECASE)
_CYRILLIC_NO_NAME = frozenset("""про о об обо что чтобы завтра сегодня вчера позже потом сейчас срочно мне ему ей им нам
вам всем нас него неё нее них пожалуйста в во на по после до через как когда если и а но или да нет клиенту клиента
клиентом менеджеру менеджером поддержкой поддержке ответ мені йому їй нам вам завтра сьогодні будь ласка щодо про
після до на у в і та що коли спасибо дякую нами мной мною ним ней ними тобой вами мне тебе ему ей мы вы они нею
ним ними нею мною тобою вами ними нас вас командой юристом менеджером поддержкой бухгалтерией руководителем
директором коллегами отделом банком курьером врачом службой правду отчёт отчет документы маме папе маму папу
командою юристом менеджером підтримкою бухгалтерією керівником директором колегами відділом банком кур'єром лікарем
службою мамі татові""".split())


def _cyrillic(match: re.Match[str]) -> Hit | None:
    first, second = match.group("first"), match.group("second")
    if first.lower() in _CYRILLIC_NO_NAME:
        return None
    two = second and second.lower() not in _CYRILLIC_NO_NAME and not match.group("title")
    return Hit("PERSON", match.start("first"), match.end("second") if two else match.end("first"), LIKELY)


def script_names(text: str) -> list[Hit]:
    if not re.search(f"[{_LETTERS}{_THAI}\u0400-\u04ff]", text):
        return []
    hits = [hit for m in _CYRILLIC_CUES.finditer(text) if (hit := _cyrillic(m)) is not None]
    at = 0
    while (match := _BEFORE.search(text, at)) is not None:
        hits.append(_cued(match))
        at = match.start("first")  # a cue may be followed by another ("سلام آقای رضایی")
    hits += [hit for m in _HONORIFIC_AFTER.finditer(text) if (hit := _before_honorific(m)) is not None]
    hits += [Hit("PERSON", m.start("name"), m.end("name"), LIKELY) for m in _SAYS.finditer(text)
             if _subject_named(m.group("name"))]
    hits += [Hit("PERSON", m.start("name"), m.end("name"), LIKELY) for m in _TELL.finditer(text)
             if _subject_named(m.group("name"))]
    hits += [Hit("PERSON", m.start(), m.end(), LIKELY) for m in _KUNYA_NAME.finditer(text)]
    hits += [hit for m in _THAI_CUE.finditer(text) if (hit := _thai(text, m.end(), bool(m.group("title")))) is not None]
    return [hit for hit in hits if hit is not None]


# A preposition glued to the article ("بالدعم": with the support) begins no name.
_GLUED_ARTICLE = ("بال", "لل", "وال", "فال", "كال")
_CUE_WORDS = frozenset(_TITLES) | frozenset(_ONE_WORD_CUES) | frozenset(_GREETINGS) | frozenset(_NAMING)


def _subject_named(word: str) -> bool:
    """A name, not a pronoun, a function word or a role ("الهام", "الیاس" are names)."""
    return not (word in _PRONOUNS or word in _NOT_SECOND or word in _SUBJECTS)


def _before_honorific(match: re.Match[str]) -> Hit | None:
    """"प्रकाश जी", "राजेश कुमार जी": the one or two words before the honorific."""
    if not _subject_named(match.group("name")):
        return None
    given = match.group("given")
    start = match.start("given") if given and _subject_named(given) else match.start("name")
    return Hit("PERSON", start, match.end("name"), LIKELY)


def _cued(match: re.Match[str]) -> Hit | None:
    first = match.group("first")
    if not _subject_named(first) or first in _CUE_WORDS:
        return None
    start = match.start("kunya") if match.group("kunya") else match.start("first")
    end = match.end("first")
    second = match.group("second")
    two = match.group("title") or match.group("sign") or match.group("kunya")
    if two and second and _subject_named(second) and not second.startswith(_GLUED_ARTICLE):
        end = match.end("second")
    return Hit("PERSON", start, end, LIKELY)


def _thai(text: str, at: int, titled: bool) -> Hit | None:
    """The name right after a Thai cue: its letters up to a space, a particle or a common verb;
    after a title, the surname after a space too."""
    first = _thai_word(text, at)
    if first is None:
        return None
    end = at + len(first)
    if titled and text[end:end + 1] == " " and len(first) == len(_THAI_RUN.match(text, at).group(0)):
        surname = _thai_word(text, end + 1)
        if surname and not _THAI_STOP.match(surname):
            end += 1 + len(surname)
    return Hit("PERSON", at, end, LIKELY)


def _thai_word(text: str, at: int) -> str | None:
    run = _THAI_RUN.match(text, at)
    if run is None or _THAI_NO_NAME.match(run.group(0)):
        return None
    stop = _THAI_STOP.search(run.group(0), 2)
    word = run.group(0)[:stop.start() if stop else None][:_THAI_MAX]
    return word if len(word) >= 2 else None


# Scripts written without capitals (Arabic, Hebrew, the Indic scripts, Thai, Georgian, Ethiopic):
# in English text a name in one of them cannot be told by its capital letter.
_CASELESS = re.compile(r"[\u0590-\u05ff\u0600-\u06ff\u0750-\u077f\u0900-\u0dff\u0e00-\u0e7f\u10d0-\u10ff"
                       r"\u1200-\u137f\ufb1d-\ufdff\ufe70-\ufefc]")
_MAX_RUN = 3


def has_caseless(text: str) -> bool:
    return _CASELESS.search(text) is not None


def caseless_run(text: str, pos: int) -> tuple[int, int] | None:
    """The span of one to three words of caseless scripts starting at ``pos`` ("The user's
    Tamil tutor is கார்த்திகா சுப்ரமணியம்", "Accountant: వెంకట రమణ రావు"): after a word that
    announces a person in English, such a run is the name (uncertain means masked). Words end at
    a space or at a character that is neither a letter nor a mark of the script; a run followed
    by more words of the script is a phrase, no name."""
    end, words = pos, 0
    while words < _MAX_RUN:
        cursor = end if words == 0 else end + 1
        if words and text[end:end + 1] != " ":
            break
        word_end = cursor
        while word_end < len(text) and _CASELESS.match(text[word_end]) \
                and unicodedata.category(text[word_end])[0] in "LM":
            word_end += 1
        if word_end == cursor:
            break
        end, words = word_end, words + 1
    if not words:
        return None
    after = text[end:end + 2]
    if after[:1] == " " and _CASELESS.match(after[1:2] or " "):
        return None
    return pos, end
