"""Names in Chinese, Japanese and Korean text (``ibex_worker.pii.cjk_names``): announced by a
title or honorific after them, or by a field, a greeting or a verb before them; the words
these cues also follow are not names."""

from __future__ import annotations

import pytest

from ibex_worker.pii.cjk_names import cjk_names


def _names(text: str) -> list[str]:
    return [text[hit.start:hit.end] for hit in cjk_names(text)]


@pytest.mark.parametrize("text, names", [
    ("明天上午周小姐会把样品送到前台。", ["周"]),                                  # a family name and a title
    ("请转告欧阳娜娜女士，合同已经盖章。", ["欧阳娜娜"]),                            # a compound family name
    ("这件事交给郑国平经理处理。", ["郑国平"]),
    ("收件人：何静怡，电话见订单备注", ["何静怡"]),                                  # a field before the name
    ("有问题请联系谢文杰，他这周值班。", ["谢文杰"]),                                # a verb, the name ends the run
    ("您好 蔡雅婷，您的包裹已签收。", ["蔡雅婷"]),                                   # a greeting
    ("明日の打ち合わせは中島さんが担当します。", ["中島"]),                          # an honorific after a name
    ("宛先：藤原 翔太 様", ["藤原 翔太"]),
    ("本件の窓口は小野です。よろしくお願いいたします。", ["小野"]),                  # a family name before です
    ("はるかちゃんの発表会は日曜日です。", ["はるか"]),                              # a name in kana
    ("氏名：キムラ タクヤ", ["キムラ タクヤ"]),
    ("정수빈 씨에게 자료를 보내 주세요.", ["정수빈"]),                               # a title after a Korean name
    ("한지우님, 예약이 확정되었습니다.", ["한지우"]),
    ("담당자: 윤서준 과장", ["윤서준"]),
    ("안녕하세요, 배유진입니다.", ["배유진"]),
    ("出席名单：罗志明、韩雪、宋立新，地点：三楼", ["罗志明", "韩雪", "宋立新"]),  # a field's list
    ("患者姓名：褚文博，科室：骨科", ["褚文博"]),                                 # a rare family name after a colon
    ("有事找小孙，他在二楼。", ["小孙"]),                                           # a nickname
    ("这是我朋友冯丽娟，她会来接你。", ["冯丽娟"]),                                 # a relation before the name
    ("请把报价单转告蒋文华她的团队。", ["蒋文华"]),                                 # a pronoun ends the name
    ("明日は松井部長が来社されます。", ["松井"]),                                  # a rank after a family name
    ("お世話になっております。西田ゆかりです。", ["西田ゆかり"]),                  # a self-introduction
    ("署名：菅原 大輔", ["菅原 大輔"]),
    ("연락은 송 과장님께 드리세요.", ["송"]),                                        # a family name and a rank
    ("감사합니다. 홍길동 드림", ["홍길동"]),                                         # a letter's sign-off
    ("这件事要请示龚院长。", ["龚"]),                                                # a head of an institute
    ("空调师傅老孟明天上午来。", ["老孟"]),                                          # a nickname after a trade
    ("経理の長谷川からご連絡します。", ["長谷川"]),                                  # a department's member
    ("어제 문지호랑 영화 봤어.", ["문지호"]),                                        # a particle after a full name
])
def test_a_name_a_title_field_greeting_or_verb_announces_is_found(text, names):
    assert _names(text) == names


@pytest.mark.parametrize("text", [
    "本周末不上班，找工作的事下周再说。",           # "找工作": a verb and a word, no name after it
    "我们下周去北京开会，请准备好资料。",
    "看医生之前先挂号。",                            # no family name before the title
    "お客様各位、いつもご利用ありがとうございます。",  # "the customer", with its honorific
    "皆さん、会議室は3階です。",
    "令和6年10月15日までに様式第5号を提出してください。",  # "様式" is a word; kana after a kanji end a word
    "お客様氏名の欄にご記入ください。",
    "여러분, 회의는 3시에 시작합니다.",
    "부서 대리 회의는 금요일입니다.",                # two syllables before a rank are a word
    "우리 팀장님이 내일 발표해요.",
    "택배 기사님이 오후에 오신대요.",
    "팀장님, 회의실 예약했습니다.",                  # a title alone
    "报名表：姓名、性别、年龄都要填写。",            # a form's field names
    "请各位同学按时交作业。",                        # no name before the title
    "来宾请到前台登记，这位老师会带您进去。",
    "本日は担当します部署の説明をいたします。",      # 担当 as a verb
    "维修师傅下午两点上门。",                        # a trade before a title is no name
    "数学老师布置了作业。",
    "김치랑 밥 주세요.",                            # two syllables before a particle are a word
])
def test_words_the_cues_also_follow_are_not_names(text):
    assert _names(text) == []


@pytest.mark.parametrize("text, names", [
    ("网关固件升级后无法注册，请李强跟进。", ["李强"]),                # asked to follow up
    ("请张小明处理一下", ["张小明"]),
    ("被保险人 张伟，身份证号已核实", ["张伟"]),                      # the insured, a field
])
def test_a_person_asked_to_act_or_insured_is_named(text, names):
    assert _names(text) == names


@pytest.mark.parametrize("text", ["请尽快处理", "请大家确认", "请您确认"])
def test_a_request_to_nobody_in_particular_names_nobody(text):
    assert _names(text) == []


@pytest.mark.parametrize("text, names", [
    ("行动项：刘洋负责埋点方案，陈静负责实验配置。", ["刘洋", "陈静"]),    # an action item's owners
    ("报价单已发出。谢谢，张伟", ["张伟"]),                            # thanks, signed off
    ("明日の件、お電話いただけますか。山本", ["山本"]),                  # a letter signed with a family name
    ("ご連絡をお願いいたします。 田中一郎", ["田中一郎"]),
    ("민수야, 밥 먹었어?", ["민수"]),                                   # called: 야 after a vowel
    ("지현아 오늘 저녁 먹자", ["지현"]),                                # 아 after a consonant
    ("참석자: 이서연, 최지훈, 정하은", ["이서연", "최지훈", "정하은"]),  # a list after its field
    ("배송지 서울, 수령인 최현우", ["최현우"]),                          # the recipient, no colon
    ("사용자 이름은 김민준이고, 번호는 비공개", ["김민준"]),
    ("안녕하세요, 저는 김민준입니다.", ["김민준"]),                         # "저는" is the speaker's word
    ("고객: 김민수, 주소는 서울", ["김민수"]),                               # no list after a customer's field
    ("用户的同事张敏负责报销。", ["张敏"]),                                # what the colleague does ends the name
])
def test_owners_signatures_calls_and_listed_attendees_are_named(text, names):
    assert _names(text) == names


@pytest.mark.parametrize("text", [
    "品质部负责检验", "谢谢，大家", "아니야 괜찮아", "어디야?", "친구야 고마워", "수령인 주소는 서울",
    "민수아, 밥 먹었어?",                                               # the ending disagrees with the name
    "괜찮아 걱정마",
])
def test_words_in_the_same_places_are_not_names(text):
    assert _names(text) == []
