"""IP addresses in context (``ibex_worker.pii.networks``): versions, sections and wide
ranges are nobody's address; a host stays one."""

from __future__ import annotations

import re

import pytest

from ibex_worker.pii import networks, version_quads
from ibex_worker.pii.casing import canonical_view


@pytest.mark.parametrize("text, value, address", [
    ("Controllers upgraded from 7.4.22.3 to 7.4.31.0 overnight", "7.4.22.3", False),  # a version change
    ("Controllers upgraded from 7.4.22.3 to 7.4.31.0 overnight", "7.4.31.0", False),
    ("audit item 4.12.2.1 still open", "4.12.2.1", False),                             # a checklist item
    ("kernel 6.8.12.3 on the gateway", "6.8.12.3", False),
    ("upgraded the router from 10.20.0.1 to 10.20.0.254", "10.20.0.1", True),         # a host word in the clause
    ("firmware bumped; the laptop moved from 192.168.4.20 to 192.168.4.21", "192.168.4.21", True),
    ("Upgraded the agents and then blocked 203.0.113.77", "203.0.113.77", True),       # no "from"/"to" before it
    ("traffic from 198.51.100.23 after the release", "198.51.100.23", True),           # the release comes after
    ("netmask 255.255.255.0", "255.255.255.0", False),
    ("route 10.0.0.0/8 via the core", "10.0.0.0", False),
    ("the home prefix 81.2.69.0/28", "81.2.69.0", True),
    ("ip route add 10.44.8.0/26 via wg0", "10.44.8.0", True),                         # a narrow range, private too
    ("the laptop is 10.44.8.17/24 on wg0", "10.44.8.17", True),                      # a host on it
    ("allow 81.2.69.0/24 through", "81.2.69.0", False),                              # a routed block
    ("allow 81.2.69.128/25 through", "81.2.69.128", True),                           # narrower stays masked
    ("the cluster runs Cassandra 4.1.3.2 now", "4.1.3.2", False),                   # a product's version
    ("db nodes on Mariadb 11.4.2.0 since May", "11.4.2.0", False),
    ("Nadia 23.94.12.7 logged in", "23.94.12.7", True),                             # a part above 30: a host
    ("server Orion 21.4.7.9 is down", "21.4.7.9", True),                            # an address word before it
    ("the Fritzbox 192.168.178.1 page", "192.168.178.1", True),
    ("resolver 8.8.4.4 answered slowly", "8.8.4.4", True),                        # a resolver is a host
    ("nameserver 4.2.2.2", "4.2.2.2", True),
    ("acl permit 10.8.0.0 wildcard 0.0.255.255", "0.0.255.255", False),             # a wildcard mask
    ("agent 12.3.250.7 is behind; minimum is 12.3.251.0 now", "12.3.250.7", True),   # both could be hosts
    ("agent 12.3.250.7 is behind; minimum is 12.3.260.0 now", "12.3.250.7", False),  # a sibling no host can be
    ("we ship 6.2.14.3 today, the notes call it 6.2.14 hotfix 3", "6.2.14.3", False),
    ("firmware 10.4.22.1 is out; the device still failing is 10.4.22.101", "10.4.22.101", True),  # a valid sibling
    ("the 10.4.22 release broke the laptop at 10.4.22.101", "10.4.22.101", True),  # a device's, whatever the version
    ("the host is 10.30.7.12; the chart is 10.30.7 though", "10.30.7.12", True),     # named an address outright
    ("peer 172.16.9.4 then 172.16.12.1", "172.16.9.4", True),
    ("docs use 2001:db8:4400::/48 for the lab", "2001:db8:4400::", False),           # a documentation network
    ("allow 198.51.100.64/26 in the examples", "198.51.100.64", False),
    ("her box sits at 198.51.100.66/26", "198.51.100.66", True),                    # a host written with its prefix
    ("our prefix is 2a02:8108:1dc0::/48", "2a02:8108:1dc0::", True),                # a home's delegated prefix
    ("updater: current=8.4.255.10 target=8.4.255.12 channel=stable", "8.4.255.10", False),  # an update's pair
    ("updater: current=8.4.255.10 target=8.4.255.12 channel=stable", "8.4.255.12", False),
    ("reports firmware 6.2.10.16, two releases behind 6.2.12.0", "6.2.12.0", False),  # its twin is named a version
    ("build 10.4.22.101 is deployed on the staging box at 10.4.22.17, port 9090", "10.4.22.17", True),  # "at", a port
    ("upgraded the router at 192.168.1.1; the NAS at 192.168.1.20 too", "192.168.1.20", True),
    ("update: 10.20.0.5 and 10.20.0.9 are the new bastions", "10.20.0.9", True),    # private: hosts
    ('<add key="ClientVersion" value="6.2.12.0" />', "6.2.12.0", False),            # a version's key
    ("version_name=4.1.23.0", "4.1.23.0", False),
    ('AssemblyFileVersion("2.4.1.12")', "2.4.1.12", False),
    ("Subversion: 81.2.69.142", "81.2.69.142", True),
    ("Building code § 10.4.2.1 requires emergency lighting", "10.4.2.1", False),    # a section sign
    ("ok 10.14.2.9 is on 19.3.0.0, 10.14.2.10 is still 12.2.0.1", "19.3.0.0", False),  # a device runs it
    ("ok 10.14.2.9 is on 19.3.0.0, 10.14.2.10 is still 12.2.0.1", "12.2.0.1", False),
    ("sweep: 10.30.1.11=6.2.12.0 10.30.1.12=6.2.14.3", "6.2.14.3", False),
    ("Maria is on 81.2.69.160 today.", "81.2.69.160", True),                          # a person "is on" a host
    ("Conversion from 81.2.69.160 at 14:02.", "81.2.69.160", True),                 # "version" inside a word
    ("Bob updated 81.2.69.160 and 81.2.69.161 today.", "81.2.69.161", True),         # no update's key before each
    ("Jane's home is 81.2.69.160, per Article 81.2.", "81.2.69.160", True),         # two parts prove nothing
    ("### 8.4.255.12 (2024-05-14)", "8.4.255.12", False),                          # a changelog's heading
    ("Edge router 198.51.100.1 upgraded 9.16.4.48 -> 9.18.4.22.", "9.18.4.22", True),   # an arrow joins flows too
    ("Flow log after the Windows update:\n81.2.69.142 -> 81.17.8.9", "81.17.8.9", True),
    ("Jane runs Nextcloud 27.1 on 81.2.69.142 at home", "81.2.69.142", True),      # no host's address before "on"
    ("Jane was seen at 14.22 on 81.2.69.142", "81.2.69.142", True),
    ("her provider updated her details: old 81.2.69.17, new 81.2.71.204.", "81.2.71.204", True),  # no update's keys
    ("conversion: 81.2.69.142", "81.2.69.142", True),
    ("Edge router 198.51.100.1 upgraded 9.16.4.48 -> 9.18.4.22.", "198.51.100.1", True),
    ("weird, dig @1.1.1.1 works but the internal resolver doesnt", "1.1.1.1", True),  # "@": a host
    ("resolvers: 8.8.8.8, 9.9.9.9", "9.9.9.9", True),
    ("Affected: 10.1.2.3, 10.1.2.4. Not affected: the 10.1.2.x units on 3.1.12.0", "10.1.2.3", True),
    ("moved the build agent to 10.120.3.8, agent version 3.2.1.4", "10.120.3.8", True),
    ("the gateway is still 81.2.69.1 after the upgrade", "81.2.69.1", True),       # a host word before it
    ("traffic from 81.2.69.1 -> 81.2.69.7 was dropped", "81.2.69.7", True),        # a host word before the pair
    ("the home router is on 192.168.178.1", "192.168.178.1", True),               # private: a host
    ("DB2 fix pack 11.5.9.0, IBM i PTF level 7.3.0.12.", "11.5.9.0", False),
    ("DB2 fix pack 11.5.9.0, IBM i PTF level 7.3.0.12.", "7.3.0.12", False),
    ("Changelog: 1.12.0.4 - fixed crash on resume", "1.12.0.4", False),
    ("Сборка 5.0.12.3 вышла вчера.", "5.0.12.3", False),                           # "build" in Russian
])
def test_versions_sections_and_masks_are_not_addresses_and_hosts_are(text, value, address):
    start = text.index(value)
    assert networks.ip_in_context(text, start, start + len(value)) is address


def test_a_message_or_calendar_id_is_not_an_email_address():
    from ibex_worker.adapters.recognizers import AnyDomainEmailRecognizer

    recognizer = AnyDomainEmailRecognizer()
    assert not recognizer.validate_result("20250917T101500Z-88120@cal.example.org")
    assert not recognizer.validate_result("20250917101500.88120@mx.example.org")
    assert recognizer.validate_result("ana.lopez1990@example.org")
    assert recognizer.validate_result("19901203@uni.example.edu")
    assert not recognizer.validate_result("vite@5.4.11")                          # a package pinned to a version
    assert not recognizer.validate_result("billing@2025.11.30")
    assert not recognizer.validate_result("HTTP/web-07.lan.example@LAN.EXAMPLE")   # a service's principal
    assert recognizer.validate_result("federated-user/support/r.okafor@example.net")  # a path ending in a mailbox
    assert not recognizer.validate_result("9c41e07ab2d84f11@o55120.ingest.sentry.example")  # a DSN's key
    assert not recognizer.validate_result("dsn=9c41e07ab2d84f11@o55120.ingest.example")
    assert recognizer.validate_result("contact=l.moreau@example.fr")                 # a field's value
    assert recognizer.validate_result("deadbeef.fan@example.org")                    # hex-like but a name
    assert recognizer.validate_result("k.nowak@example.pl")
    assert recognizer.validate_result("ops@10.0.0.7.nip.io")


@pytest.mark.parametrize("text, mailboxes", [
    ("Message-ID: <CAK7Lq=9dz+Wm3@mail.example.com>", []),
    ("References: <a1.77@lists.example.org> <CAB+qq2@mail.example.com>", []),
    ("In-Reply-To: <x9@mx.example.net>\nFrom: Ines Duarte <ines.duarte@example.pt>", ["ines.duarte@example.pt"]),
    ("write to <tomas.brandt@example.de> about the message id", ["tomas.brandt@example.de"]),
])
def test_the_ids_a_mail_header_names_are_not_mailboxes(text, mailboxes):
    from ibex_worker.adapters.recognizers import AnyDomainEmailRecognizer

    found = AnyDomainEmailRecognizer().analyze(text, ["EMAIL_ADDRESS"])
    assert [text[r.start:r.end] for r in found] == mailboxes


def test_a_hardware_id_in_two_digit_groups_is_not_an_ipv6_address():
    for text, value, address in (("cert serial 5A:0C:91:7E:22:B4:08:F1, renewed", "5A:0C:91:7E:22:B4:08:F1", False),
                                 ("peer fe80::1c2a:7eff:fe11:9b04 dropped", "fe80::1c2a:7eff:fe11:9b04", True)):
        start = text.index(value)
        assert networks.ip_in_context(text, start, start + len(value)) is address


@pytest.mark.parametrize("text, value", [
    ("La versión 8.0.36.1 de la base de datos corrige el fallo", "8.0.36.1"),
    ("Aggiornamento completato: versione 3.1.4.159, 0 errori", "3.1.4.159"),
    ("Firmware-Version 7.29.0.1 erfolgreich installiert", "7.29.0.1"),
    ("服务版本 6.8.2.14 已部署", "6.8.2.14"),
    ("バージョン 2.8.1.44 へ更新しました", "2.8.1.44"),
])
def test_a_version_s_word_in_other_languages_or_glued_before_a_quad_makes_it_a_version(text, value):
    start = text.index(value)
    assert networks.ip_in_context(text, start, start + len(value)) is False


@pytest.mark.parametrize("text", [
    "versione 3.1 installata sul server 10.20.5.31",
    "Login desde la versión 81.2.69.160 del cliente, usuario jgarcia",
    "IP-Version 81.2.69.160",
])
def test_a_host_word_in_the_clause_or_an_ip_s_version_keeps_the_address(text):
    value = re.search(r"\d+\.\d+\.\d+\.\d+", text).group(0)
    start = text.index(value)
    assert networks.ip_in_context(text, start, start + len(value)) is True


@pytest.mark.parametrize("text, value, address", [
    ("error rate 12.4% since 02:14 UTC; rollback to 8.3.1.0 in progress.", "8.3.1.0", False),
    ('Revert "bump protobuf to 3.21.12.0"', "3.21.12.0", False),
    ("rollback of the proxy to 10.20.0.1 done", "10.20.0.1", True),                # a host's word in the clause
    ("rollback to 10.20.5.31 where the old server lives", "10.20.5.31", True),     # a host's word right after
    ("after the firmware update the kiosk went from 81.2.69.160 to 81.2.69.161", "81.2.69.161", True),  # major 81
])
def test_a_rollback_or_a_bump_to_a_quad_is_a_version_change(text, value, address):
    start = text.index(value)
    assert networks.ip_in_context(text, start, start + len(value)) is address


@pytest.mark.parametrize("text, value, address", [
    ('versionName "4.8.12.1"\nversionCode 40812', "4.8.12.1", False),                # a build file's glued key
    ("minSdkVersion 24, appVersion 6.2.14.3", "6.2.14.3", False),
    ("image: registry.example.com/billing:2.14.3.1", "2.14.3.1", False),             # an image's tag
    ("image_tag: 2.14.3.1", "2.14.3.1", False),                                       # its key
    ("HTTP 502 after deploying 2.7.14.3; moved to the queue", "2.7.14.3", True),      # no environment after it
    ("Deploy 5.9.1.204 to staging succeeded", "5.9.1.204", False),
    ("Docker image 1.27.4.0-alpine pushed", "1.27.4.0", False),                     # tagged after it
    ("conversion 81.2.69.160 at 14:02", "81.2.69.160", True),                        # no glued key
    ("ssh deploy@10.0.0.5 failed", "10.0.0.5", True),                                # a login at a host
    ("deployed 81.2.69.160 behind the firewall", "81.2.69.160", True),               # a network word around it
    ("deploying 81.2.69.160 as the new gateway", "81.2.69.160", True),
    ("tag: 81.2.69.160", "81.2.69.160", True),                                       # a bare tag names no image
    ("the laptop at 10.20.5.31-dev is slow", "10.20.5.31", True),                    # a host word before the tag
])
def test_a_build_s_key_image_verb_or_tag_makes_a_quad_a_version_unless_hosts_are_around(text, value, address):
    start = text.index(value)
    assert networks.ip_in_context(text, start, start + len(value)) is address


@pytest.mark.parametrize("text, value", [
    ("服务器10.8.21.17又挂了", "10.8.21.17"),
    ("서버192.168.0.15가 다운됐어요", "192.168.0.15"),
    ("сервер192.168.1.5недоступен", "192.168.1.5"),
    ("सर्वर की आईपी192.168.1.20 पर लॉगिन नहीं", "192.168.1.20"),   # after a vowel sign
    ("เครื่องนี้192.168.1.20 เข้าไม่ได้", "192.168.1.20"),
    ("服务器IP10.8.21.17挂了", "10.8.21.17"),
    ("服务器 10.8.21.17ssh 登录失败", "10.8.21.17"),
])
def test_an_ipv4_address_glued_to_letters_of_another_script_is_found(text, value):
    assert [text[h.start:h.end] for h in networks.glued_ipv4(text)] == [value]


@pytest.mark.parametrize("text", ["v10.4.2.1", "see 10.4.2.1 there", "fw-10.4.2.1", "服务器10.8.21.300", "1.2.3.4.5你好",
                                  "v10.4.2.1build"])
def test_a_quad_glued_to_latin_letters_or_no_address_is_left_to_the_other_finders(text):
    assert networks.glued_ipv4(text) == []


def _address(text: str, value: str) -> bool:
    from ibex_worker.pii.casing import canonical_view

    view = canonical_view(text).text
    start = view.index(value)
    return networks.ip_in_context(view, start, start + len(value))


@pytest.mark.parametrize("text, value, address", [
    ("serial,model,old_fw,new_fw\nR52J30XYZQ,TC57,10.61.12.3,11.14.3.0", "10.61.12.3", False),
    ("serial,model,old_fw,new_fw\nR52J30XYZQ,TC57,10.61.12.3,11.14.3.0", "11.14.3.0", False),
    ("hostname,ip,firmware,site\ncam-21,10.60.2.21,5.7.3.41,Rotterdam", "10.60.2.21", True),   # the ip column
    ("hostname,ip,firmware,site\ncam-21,10.60.2.21,5.7.3.41,Rotterdam", "5.7.3.41", False),
    ("device,ip,fw\nedge-02,7.2.0.15,10.0.0.2", "7.2.0.15", True),                           # by column, not shape
    ("| host | ip | fw |\n|---|---|---|\n| pos-03 | 10.8.1.23 | 9.1.0.77 |", "9.1.0.77", False),
    ("| host | ip | fw |\n|---|---|---|\n| pos-03 | 10.8.1.23 | 9.1.0.77 |", "10.8.1.23", True),
    ("src,dst,action\n81.2.69.160,81.2.69.161,deny", "81.2.69.161", True),
])
def test_a_table_s_header_names_a_column_of_versions_or_of_hosts(text, value, address):
    assert _address(text, value) is address


@pytest.mark.parametrize("text, value, address", [
    ("[sip]\nregistrar=10.5.0.20\nuser_agent=Yealink SIP-T54W 96.86.0.70", "96.86.0.70", False),
    ("[sip]\nregistrar=10.5.0.20\nuser_agent=Yealink SIP-T54W 96.86.0.70", "10.5.0.20", True),
    ("device=HHT-0881 fw_from=10.52.7.0 fw_to=10.52.8.3 status=ok", "10.52.7.0", False),
    ("msiexec /i FleetAgent-7.2.0.14-x64.msi /qn SERVER=10.0.40.5", "7.2.0.14", False),
    ("msiexec /i FleetAgent-7.2.0.14-x64.msi /qn SERVER=10.0.40.5", "10.0.40.5", True),
    ("Aktualizacja z 1.9.3.12 do 1.9.4.27 na terminalach w Gdańsku zakończona", "1.9.3.12", False),
    ("Обновили прошивку на кассах с 2.0.7.1 до 2.0.9.15, откат не потребовался.", "2.0.9.15", False),
    ("2025-03-14T02:11:09Z INFO upgrade from 3.0.12.5 to 3.1.0.2 completed on edge-gw-07", "3.1.0.2", False),
    ("Supported upgrade path: 4.1.0.9 -> 4.2.0.0 -> 4.2.3.18", "4.2.0.0", False),
    ("Traffic from 81.2.69.160 to 81.2.69.161 was blocked after the update", "81.2.69.161", True),
    ("SRC 3.120.4.5 -> 3.120.4.9 DENY tcp/443 after firmware update", "3.120.4.9", True),
    ("Packets 3.120.4.5 -> 3.120.4.9 dropped after the firmware update", "3.120.4.5", True),
    ("map 10.0.40.5 as the default update server (was 10.0.40.4)", "10.0.40.4", True),      # private: fail closed
    ("query: ip >= 81.2.69.0 after the update", "81.2.69.0", True),
    ("Flow log after the Windows update: 81.2.69.142 -> 81.17.8.9", "81.17.8.9", True),
    ("After the Windows update: 81.2.69.142 -> 81.2.69.150", "81.2.69.150", True),      # a major above 30
    ("Bob updated 81.2.69.160 and 81.2.69.161", "81.2.69.161", True),
    ("login from ip-81.2.69.160 after the update", "81.2.69.160", True),                 # a host's name
    ("fetched app-8.4.255.12.zip from the mirror", "8.4.255.12", False),
    ("Edge router 198.51.100.1 upgraded 9.16.4.48 -> 9.18.4.22.", "9.18.4.22", True),       # a router's clause
    ("Özet: depodaki 120 el terminali 8.1.0.44 sürümüne geçti", "8.1.0.44", False),
    ("ハンディ端末のIPは 172.20.3.192、ファームは 11.49.18.2 のままです。", "11.49.18.2", False),
    ("ハンディ端末のIPは 172.20.3.192、ファームは 11.49.18.2 のままです。", "172.20.3.192", True),
    ("تم تحديث أجهزة نقاط البيع إلى الإصدار 4.6.2.10 في جميع الفروع", "4.6.2.10", False),
    ("CRITICAL host 172.16.88.4 firmware 16.8.4.2 below baseline 16.9.0.0", "16.9.0.0", False),
])
def test_user_agents_firmware_keys_packages_and_version_steps_are_versions_and_traffic_is_hosts(text, value, address):
    assert _address(text, value) is address


def test_a_host_after_a_user_agent_s_header_stays_an_address():
    text = "User-Agent: Grandstream GXP2170 1.0.11.79\nContact: <sip:1001@81.2.69.160>"
    assert _address(text, "1.0.11.79") is False
    assert _address(text, "81.2.69.160") is True


@pytest.mark.parametrize("text, value, address", [
    ("does anyone know if the 4.2.10.1 update bricks the older models?", "4.2.10.1", False),   # names an update
    ("王者荣耀 更新到 3.81.1.6 之后一直卡顿", "3.81.1.6", False),                                  # "updated to"
    ("Software BOM: openssl 3.0.13, zlib 1.3.1, libcurl 8.7.1, sqlite 3.45.3.0.", "3.45.3.0", False),
    ("the 81.2.69.160 host went down", "81.2.69.160", True),
    ("block the 81.2.69.160 update server", "81.2.69.160", True),                  # a host word after it
    ("the 81.2.69.160 build server is down", "81.2.69.160", True),                 # a machine named by its build
    ("the 81.2.69.160 build box is down", "81.2.69.160", True),
    ("the 81.2.69.160 update failed", "81.2.69.160", True),                       # major 81: a host's first octet
    ("Inventory: web 81.2.69.160, nginx 1.25.3, redis 7.2.4", "81.2.69.160", True),
    ("servers: web 81.2.69.160, nginx 1.25.3, redis 7.2.4", "81.2.69.160", True),  # a host word in the list
])
def test_an_update_named_by_its_quad_or_a_component_listed_with_versions_is_a_version(text, value, address):
    start = text.index(value)
    assert networks.ip_in_context(text, start, start + len(value)) is address


@pytest.mark.parametrize("text, version", [
    ("Windows build 10.0.19045.3803 is affected; upgrade the agent to 7.3.0.112 and restart.", True),
    ("bumped nginx to 1.25.3.1 on Friday", True),
    ("update the DNS record to 23.94.12.7 today", False),
    ("upgrade the gateway to 23.94.12.7", False),
    ("we moved the agent to 7.3.0.112", False),
    ("upgrade the agent to 10.20.0.4", False),  # a private address stays masked
])
def test_a_quad_an_update_brings_something_to_is_a_version(text, version):
    view = canonical_view(text).text
    quad = re.search(r"\d+(?:\.\d+){3}(?=\D*$)", view)
    assert version_quads.read_as_version(view, quad.start(), quad.end()) is version


@pytest.mark.parametrize("text, values", [
    ("10:22:33.123456 IP 10.0.0.5.53422 > 10.0.0.1.53: 12345+ A? example.com. (29)", ["10.0.0.5", "10.0.0.1"]),
    ("10:22:34.000812 IP6 fe80::1c2d:3e4f:5a6b:7c8d.546 > fe80::1.547: dhcp6 solicit",
     ["fe80::1c2d:3e4f:5a6b:7c8d", "fe80::1"]),
    ("14:02:11 ip 192.168.1.20.https > 10.1.1.1.51234: Flags [P.]", ["192.168.1.20", "10.1.1.1"]),
])
def test_the_ends_of_a_packet_as_tcpdump_prints_them_are_addresses(text, values):
    found = [(hit.start, hit.end) for hit in networks.ip_addresses(text)]
    spans = [(text.index(value + "."), text.index(value + ".") + len(value)) for value in values]
    assert set(spans) <= set(found)
    assert all(networks.ip_in_context(text, start, end) for start, end in spans)


def test_a_five_part_dotted_run_outside_a_packet_is_still_no_address():
    text = "build 10.0.0.5.53422 shipped to the fleet"
    start = text.index("10.0.0.5")
    assert not networks.ip_in_context(text, start, start + len("10.0.0.5"))
    assert networks.ip_addresses(text) == []
