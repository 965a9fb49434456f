"""Names a cue announces in Arabic-script, Hebrew, Devanagari, Bengali and Thai text
(``ibex_worker.pii.script_names``), and the text around such cues that names nobody."""

from __future__ import annotations

import pytest

from ibex_worker.pii.script_names import script_names


def _names(text: str) -> list[str]:
    return sorted({text[h.start:h.end] for h in script_names(text)})


def _covers(text: str, names: list[str]) -> bool:
    """Every name inside a span found, and every span found on a name: after a title the word
    after a one-word name may be taken with it (uncertain means masked)."""
    spans = [(h.start, h.end) for h in script_names(text)]
    at = [(text.index(name), text.index(name) + len(name)) for name in names]
    return all(any(s <= a and b <= e for s, e in spans) for a, b in at) \
        and all(any(s < b and a < e for a, b in at) for s, e in spans)


@pytest.mark.parametrize("text, names", [
    ("أرسل التقرير إلى السيد خالد منصور غدا", ["خالد منصور"]),          # a title: two words
    ("اتصل بي زميلي ياسر بخصوص العقد", ["ياسر"]),                         # a relation: one word
    ("وصلت الرسالة من أبو خليل", ["أبو خليل"]),                          # "Abu" is part of the name
    ("مرحبا سلمى، كيف الحال؟", ["سلمى"]),                                 # a greeting right before it
    ("نرگس گفت جلسه لغو شد", ["نرگس"]),                                   # the subject of "said"
    ("خانم کریمی فردا تماس می‌گیرد", ["کریمی"]),
    ("קבעתי פגישה עם עו\"ד רונית לוי ביום שני", ["רונית לוי"]),
    ("ההודעה נשלחה לבתו נועה", ["נועה"]),                                 # "to his daughter", glued
    ("שלום יואב, הקבצים מצורפים", ["יואב"]),
    ("कृपया श्री विकास मेहता को रिपोर्ट भेजें", ["विकास मेहता"]),
    ("मेरा दोस्त अर्जुन कल आएगा", ["अर्जुन"]),
    ("प्रकाश जी ने फाइल भेज दी", ["प्रकाश"]),                                # an honorific after it
    ("রাজু দা আজ আসবেন না", ["রাজু"]),
    ("ฝากบอกคุณวิไลด้วยนะ", ["วิไล"]),                                      # Thai: up to the particle
    ("พี่ชายชื่อธนาจะมาพรุ่งนี้", ["ธนา"]),
    ("همکارم الناز گفت فایل را فرستاده", ["الناز"]),                      # a name may begin with ال
    ("اتصلت والسيدة فاطمة بالدعم", ["فاطمة"]),                            # "and Mrs", glued
    ("নাম: রহিম উদ্দিন, ঠিকানা নিচে", ["রহিম উদ্দিন"]),                  # a naming word: two words
    ("कल राजेश कुमार जी से बात हुई", ["राजेश कुमार"]),                     # two words before "ji"
    ("ชื่อ: สมชาย ใจดี", ["สมชาย ใจดี"]),                                   # Thai surname after a space
    ("คุณปัทมา", ["ปัทมา"]),                                                # "มา" ends the name, cuts nothing
    ("По договору 77-31 свяжитесь с Иваном.", ["Иваном"]),                   # Russian: whom a contact verb addresses
    ("Встреча с Дмитрием Ивановым в 15:00.", ["Дмитрием Ивановым"]),
    ("Напомни Андрею про счёт.", ["Андрею"]),
    ("Нагадайте Олені Коваль про зустріч.", ["Олені Коваль"]),               # Ukrainian
])
def test_a_cued_name_is_found(text, names):
    assert _covers(text, names)


@pytest.mark.parametrize("text", [
    "الرجاء تحديث عنوان الشحن قبل الجمعة",
    "هو قال إن الدفع تم",                          # a pronoun says it
    "المستخدم قال إن التطبيق بطيء",                 # "the user said"
    "عزيزي العميل، تم استلام طلبك",                # "dear customer"
    "مرحبا، هذا تذكير بموعدك",                     # a greeting and a comma
    "أم تفضل الاجتماع عن بعد؟",                     # "or"
    "کاربر گفت که رمز عبور کار نمی‌کند",             # "the user said"
    "הלקוח אמר שהחבילה לא הגיעה",                  # "the customer said"
    "חג שמח לכולם",
    "שבת שלום לכולם",
    "धन्यवाद! आपका दिन शुभ हो।",
    "कल सुबह दस बजे बैठक है",
    "ขอบคุณมากค่ะ",                                 # "thank you"
    "ส่งเอกสารภายในวันศุกร์",
    "The invoice was sent on Monday.",
    "כל בתי הספר סגורים מחר",                       # "the schools", not "my daughter"
    "בעלי עסקים קטנים קיבלו הנחה",
    "שלום רב, מצורפת החשבונית",
    "أهلا وسهلا بك في خدمة العملاء",
    "سلام خسته نباشید",
    "हाँ जी, ऑर्डर मिल गया",
    "नमस्ते आप कैसे हैं",
    "คุณภาพสินค้าดีมาก",                            # "quality"
    "คุณสามารถเปลี่ยนรหัสผ่านได้",                    # "you can"
    "ชื่อผู้ใช้ของคุณคือ",                            # "your username is"
    "Позвони завтра, пожалуйста.",
    "Свяжитесь с поддержкой.",
    "Напомни про счёт.",
])
def test_text_with_no_cued_name_gives_none(text):
    assert _names(text) == []


@pytest.mark.parametrize("text, names", [
    ("विकास ने बोला है कि वो शाम को गाड़ी ले आएगा", ["विकास"]),               # the doer marked by ने
    ("ਗੁਰਪ੍ਰੀਤ ਨੇ ਕਿਹਾ ਕਿ ਉਹ ਐਤਵਾਰ ਨੂੰ ਆਵੇਗਾ।", ["ਗੁਰਪ੍ਰੀਤ"]),
    ("செல்வி அக்கா நாளை சென்னைக்கு வருகிறார்.", ["செல்வி"]),                # an honorific after it
    ("రమేష్ గారు ఫోన్ చేశారు", ["రమేష్"]),
    ("قل لـخالد إن الاجتماع تأجل إلى الأحد", ["خالد"]),                      # "tell Khalid"
])
def test_names_marked_as_doers_honoured_after_or_told_in_more_scripts(text, names):
    assert _names(text) == names


@pytest.mark.parametrize("text", ["कंपनी ने नया नियम बनाया", "मैंने कहा था", "ग्राहक ने शिकायत की", "हम ने देखा"])
def test_a_company_a_customer_or_a_pronoun_marked_as_doer_is_no_name(text):
    assert _names(text) == []
