"""Words around a dotted quad that say whether it is a host's address or a version: the
vocabulary of ``networks`` and ``version_quads``, compared in lower case (see ``context``)."""

from __future__ import annotations

import re

from ibex_worker.pii.context import Cues

# Words that name a quad a version, a section or an item right before it.
NOT_AN_IP = Cues.of(["version", "ver", "v", "build", "release", "firmware", "rev", "revision", "oid", "section",
                     "sec", "§", "clause", "chapter", "paragraph", "step", "rule", "table", "figure", "fig", "item",
                     "kernel", "patch", "bios", "driver", "sdk", "api", "appendix", "annex", "article", "art", "fw",
                     "requirement", "uefi", "baseline", "пункт", "раздел", "правило", "статья", "статьи",
                     "artikel", "abschnitt", "absatz", "artículo", "apartado", "articolo", "sezione", "sección",
                     "seção", "madde", "البند", "بند", "第", "조", "항", "changelog", "pack", "fixpack", "level",
                     "сборка", "сборки", "сборку", "билд"])
# A version's own words in English: a few words before the quad they still name it ("the version stays ...").
NOT_AN_IP_VERSIONS = Cues.of(["version", "firmware", "fw", "bios"])
# A version's word in other languages, or glued to what it versions ("Firmware-Version",
# "服务版本"): they decide only where no word of hosts is in the clause ("Login desde la versión").
OTHER_VERSION_WORDS = Cues.of(["versión", "versione", "versão", "versao", "versie", "wersja", "wersji", "wersję",
                               "verze", "verzió", "versio", "versjon", "sürüm", "sürümü", "versiyon", "versiyonu",
                               "версия", "версии", "версию", "прошивка", "прошивки", "прошивку", "прошивкой",
                               "バージョン", "ファーム", "ファームウェア", "版本", "固件", "버전", "펌웨어", "الإصدار", "إصدار",
                               "الاصدار", "النسخة", "संस्करण", "更新到", "更新至", "升级到", "升级至", "升級到", "升級至"])
VERSION_SUFFIXES = ("-version", "-firmware", "-fw", "版本", "固件", "バージョン", "ファーム", "ファームウェア", "버전", "펌웨어")
# A version's word after the quad, in languages that put it there ("8.1.0.44 sürümüne geçti").
VERSION_AFTER = re.compile(r"\s*(?:sürüm|versiyon|バージョン|版)", re.IGNORECASE)
# A version's key glued to another word, as build files write it ("versionName 4.8.12.1",
# "minSdkVersion"): "conversion" or "subversion" name no version.
GLUED_VERSION_KEY = re.compile(r"version(?:name|code|number|string|tag|id)|[a-z]*(?:sdk|app|client|server|file|"
                               r"assembly|product|current|installed|latest|firmware|fw|os|api|agent|package|"
                               r"schema|binary|component|build|engine|plugin|runtime|kernel|driver|bios|target|"
                               r"min|max|old|new|release)version")
# Words that ship a build right before its number, when an environment follows it ("Deploy
# 5.9.1.204 to staging"): hosts are deployed too ("redeployed 10.0.0.7 after the crash").
DEPLOYS = Cues.of(["deploy", "deploys", "deployed", "deploying", "redeploy", "redeployed", "promote", "promoted"])
ENVIRONMENT_AFTER = re.compile(r"\s+(?:to|on|in|into)\s+(?:the\s+)?(?:staging|stage|production|prod|canary|qa|uat|"
                               r"preprod|pre-prod|sandbox|beta)(?![\w])", re.IGNORECASE)
# A container image's flavour or a pre-release glued after the quad ("1.27.4.0-alpine", "3.2.1.4-rc2").
BUILD_TAG_AFTER = re.compile(r"-(?:alpine|slim|bookworm|bullseye|buster|jammy|focal|noble|ubi\d*|rc\d+|beta\d*|"
                             r"alpha\d*|snapshot)(?![\w])", re.IGNORECASE)
# An image's tag: the quad right after a registry's path and a colon
# ("registry.example.com/billing:2.14.3.1", "ghcr.io/acme/api:"): a host with a dot, or two slashes.
IMAGE_TAG_BEFORE = re.compile(r"(?<![\w.\-/])(?:[\w\-]+(?:\.[\w\-]+)+(?::\d+)?/[\w.\-/]+|[\w\-]+/[\w.\-]+/[\w.\-/]+):$")
IP_CUES = Cues.of(["ip", "ips", "ipv4", "address", "addr", "host", "hosts", "hostname", "server", "servers",
                   "gateway", "gateways", "gw", "dns", "router", "ping", "from", "to", "src", "dst", "source",
                   "destination", "client", "peer", "peers", "subnet", "connect", "connected", "connection", "login",
                   "logged", "blocked", "allow", "deny", "proxy", "vpn", "remote", "origin", "forwarded",
                   "x-forwarded-for", "@", "nameserver", "nameservers", "resolver", "resolvers", "upstream", "inet",
                   "outbound", "inbound", "egress", "ingress", "box", "backend", "backends", "vip", "lb"])
# Words of networks that, anywhere in a clause, keep a version change from explaining a quad
# ("moved the build agent to 10.120.3.8": a host that moved).
NETWORK_WORDS = Cues.of(["resolver", "nameserver", "firewall", "allowlist", "whitelist", "blocklist", "blacklist",
                         "dhcp", "lease", "static", "route", "nat", "endpoint", "ssh", "rdp", "port", "ports",
                         "lan", "wan", "wifi", "wi-fi", "network", "interface", "assigned", "device", "machine",
                         "laptop", "phone", "user", "customer", "visitor", "attacker", "block", "ban", "banned",
                         "move", "moving", "moved", "migrated", "pointed"])
# Words of a version change ("upgraded the firmware from 9.3.10.1 to 9.3.12.4"): before a
# dotted quad, with no word of networks in the clause, they make the quads of it versions.
UPGRADES = Cues.of(["version", "versions", "firmware", "release", "releases", "build", "upgrade", "upgraded",
                    "upgrading", "update", "updated", "updates", "updater", "downgrade", "downgraded", "patched",
                    "bumped", "pinned", "rolled back", "kernel", "bios", "bump", "rollback", "roll back", "revert",
                    "reverted", "aggiornato", "aggiornamento", "actualizado", "actualización", "aktualisiert",
                    "atualizado", "mis à jour", "bijgewerkt"])
# Words that name a quad an address outright ("the ip is 10.20.4.77, the version is 10.20.4").
ADDRESS_WORDS = Cues.of(["ip", "ips", "ipv4", "address", "addr", "host", "hostname"])
# A dotted number of two or more parts; a wildcard part ("10.1.2.x") makes it a range, no version.
DOTTED = re.compile(r"(?<![\w.])\d+(?:\.\d+)+(?![\w]|\.[\w*])")
