"""Chinese, Japanese and Korean street addresses by their structure (``worker/pii/cjk_addresses``):
administrative units from the largest down, a number in an address's form, then building and
room; a place named with no door, a count, a year or a platform is no address."""

from __future__ import annotations

import pytest

from ibex_worker.pii.cjk_addresses import cjk_addresses


def _found(text: str) -> list[str]:
    return [text[h.start:h.end] for h in cjk_addresses(text)]


@pytest.mark.parametrize(("text", "address"), [
    pytest.param("请寄到广州市天河区体育西路103号维多利广场B座1506室，谢谢。", "广州市天河区体育西路103号维多利广场B座1506室",
                 id="zh: city, district, road, door, tower, room; the request before it stays"),
    pytest.param("她住在杭州市西湖区文三路 90 号 501 室，明天 3 点见。", "杭州市西湖区文三路 90 号 501 室",
                 id="zh: spaced numbers; a time after it stays"),
    pytest.param("发票寄往南京市鼓楼区中山路321号", "南京市鼓楼区中山路321号", id="zh: a road with a number"),
    pytest.param("新地址：广东省佛山市南海区桂城街道海八路12号", "广东省佛山市南海区桂城街道海八路12号",
                 id="zh: province first"),
    pytest.param("住所は神奈川県横浜市中区山下町2-15-3 シーサイドコート805です。",
                 "神奈川県横浜市中区山下町2-15-3 シーサイドコート805", id="ja: prefecture, city, ward, block, building"),
    pytest.param("福岡市博多区博多駅前3丁目2番1号に移転しました", "福岡市博多区博多駅前3丁目2番1号",
                 id="ja: chome, ban, go"),
    pytest.param("京都府京都市左京区吉田本町３６−１", "京都府京都市左京区吉田本町３６−１", id="ja: full-width digits"),
    pytest.param("包裹放在台北市大安區忠孝東路三段217巷6弄9號3樓之1門口", "台北市大安區忠孝東路三段217巷6弄9號3樓之1",
                 id="zh-TW: section, lane, alley, door, floor and its part"),
    pytest.param("寄到 湖北省武汉市洪山区 珞喻路1037号 东区12栋3单元601室", "湖北省武汉市洪山区 珞喻路1037号 东区12栋3单元601室",
                 id="zh: spaces between the parts; building, entrance and flat"),
    pytest.param("彰化縣鹿港鎮中山路88號", "彰化縣鹿港鎮中山路88號", id="zh-TW: county and township"),
    pytest.param("北海道札幌市北区北8条西5丁目2-3 グリーンハイツ", "北海道札幌市北区北8条西5丁目2-3 グリーンハイツ",
                 id="ja: Sapporo's grid and a building named in katakana"),
    pytest.param("静岡県浜松市中区元城町１０３番地 ２階", "静岡県浜松市中区元城町１０３番地 ２階", id="ja: a lot number and a floor"),
    pytest.param("茨城県つくば市天久保２丁目１－１までお越しください", "茨城県つくば市天久保２丁目１－１", id="ja: a city in hiragana"),
    pytest.param("배송지: 부산광역시 해운대구 센텀중앙로 97, 1502호", "부산광역시 해운대구 센텀중앙로 97, 1502호",
                 id="ko: metropolitan city, district, road, number, unit"),
    pytest.param("경기도 성남시 분당구 판교역로 235 에이치스퀘어 N동 7층", "경기도 성남시 분당구 판교역로 235 에이치스퀘어 N동 7층",
                 id="ko: province, city, district, building wing, floor"),
])
def test_an_address_is_found_from_its_first_unit_to_its_room(text, address):
    assert _found(text) == [address]


@pytest.mark.parametrize("text", [
    pytest.param("北京市的2个项目都完成了", id="a city and a count"),
    pytest.param("東京都の天気は晴れです", id="a prefecture and the weather"),
    pytest.param("上海市浦东新区有3家门店", id="a district and its shops"),
    pytest.param("会议室在大阪市北区的12楼", id="a floor of an unnamed building"),
    pytest.param("서울특별시 강남구에 3개 지점이 있다", id="branches in a district"),
    pytest.param("我们在成都市武侯区开了2024年的新店", id="a year"),
    pytest.param("市区町村コード13104は新宿区", id="a municipality code"),
    pytest.param("大阪市北区梅田の3-4番線から出発", id="station platforms"),
    pytest.param("深圳市的GDP增长了3.5%", id="a percentage"),
])
def test_places_without_a_door_are_not_addresses(text):
    assert _found(text) == []
