"""Words that announce a business number, not a person's: records ("order", "ticket"), and,
for phone-shaped numbers, the registers a company is entered in ("VAT", "KvK", "REGON"),
bank routing codes and a record's own compound name ("Buchungsnr.", "klantnummer").
"""

from __future__ import annotations

import re

from ibex_worker.pii.context import Cues

_WORDS = [
    "order", "orders", "invoice", "inv", "ticket", "tickets", "case", "incident", "inc", "ref", "reference",
    "tracking", "track", "shipment", "parcel", "awb", "isbn", "sku", "part", "item", "model", "serial", "sn",
    "batch", "lot", "build", "version", "ver", "v", "release", "rev", "revision", "po", "purchase",
    "confirmation", "booking", "reservation", "receipt", "transaction", "txn", "tx", "job", "run", "pipeline",
    "commit", "pr", "issue", "bug", "story", "epic", "task", "request", "req", "trace", "span", "session",
    "build", "port", "pid", "uid", "gid", "error", "code", "status", "http", "exit", "errno", "kb",
    "customer id", "account id", "tenant", "org", "workspace", "project", "cluster", "node", "instance",
    "policy", "claim", "quote", "contract", "member", "membership", "loyalty", "voucher", "coupon", "promo",
    "gift card", "flight", "seat", "room", "table", "container", "asset", "license key", "product key",
    "checksum", "hash", "sha", "md5", "digest", "etag", "nonce", "block", "height", "id", "no", "#", "№",
    "account", "acct", "timestamp", "epoch", "unix", "rgb", "hex", "isbn-10", "isbn-13", "ein", "ean", "upc",
    "pedido", "factura", "bestellung", "rechnung", "commande", "facture", "ordine", "fattura", "pedido nº",
    "manuscript", "doi", "pmid", "arxiv", "rule", "cve", "sample", "plate", "well", "lane", "slot", "shelf",
    "customer number", "customer no", "client number", "client no", "abn", "acn", "company number", "crn",
    "loan", "mortgage", "zip", "zip+4", "zipcode", "postcode", "offset", "partition", "inode", "inodes", "sscc",
    "gtin", "siren", "siret", "cnpj", "lottery", "draw", "timeticks", "ticks", "retweet_count", "favorite_count",
    "sendung", "sendungsnummer", "beleg", "beleg-nr", "signatur", "auftrag", "auftragsnummer", "kundennummer",
    "vorgang", "vorgangsnr", "aktenzeichen", "rechnungsnummer", "bestellnummer", "colis", "suivi", "envío",
    "rastreo", "guía", "resi", "pesanan", "kenmerk", "ordernummer", "bestelnummer", "numero ordine", "protocollo",
    "referenz", "référence", "referencia", "referência", "riferimento", "referentie", "pratica", "fascicolo",
    "dossier", "expediente", "ports", "issn", "eissn", "art nr", "artikel", "euromillions", "powerball", "jackpot",
    "kostenstelle", "cost centre", "cost center", "seed value", "random seed", "waybill", "freight bill",
    "customs declaration", "bestelling", "pn", "p/n", "pdr", "entidade", "consignment", "işlem", "islem", "배송",
    "조회", "운송장", "주문", "الضريبي", "فاتورة",
    "bill of lading", "pnr", "pakket", "zending", "zamówienie", "zamowienie", "zamówienia", "zamowienia", "przesyłka",
    "przesylka", "paczka", "faktura", "faktury", "đơn hàng", "don hang", "mã đơn", "seguimiento", "rastreamento",
    "till number", "till no", "paybill", "meter", "zähler", "zählerstand", "compteur", "contador",
    "gz", "entreprise", "d'entreprise", "bankgiro", "plusgiro", "postgiro", "vergi", "sicil", "nota fiscal", "série",
    "serie", "značka", "control number", "control no", "record", "monitor", "xid", "imei", "iccid", "meid",
    "factuur", "cartella", "apólice", "apolice", "felanmälan", "ärende", "call id", "πρωτοκόλλου", "πρωτόκολλο",
    "art no", "call ref", "call reference", "mid", "tid", "rrn", "merchant id", "terminal id", "auth code",
    "complaint", "mandate", "opportunity", "badge", "contrat", "contrato", "contratto", "póliza", "poliza",
    "polizza", "sinistre", "siniestro", "sinistro", "protocolo", "meterstand", "licznika", "mätarställning",
    "contatore", "leitura", "spedizione", "przesyłki", "przesylki", "commessa", "encomenda", "call-id",
    # meter points of electricity and gas supplies (UK, Ireland, Australia, France)
    "mpan", "mprn", "nmi", "pdl", "tracciamento", "folio", "frequent flyer", "vận đơn", "mã vận đơn",
    # parcel carriers: the number after one is its tracking number
    "fedex", "ups", "usps", "dhl", "dpd", "gls", "seur", "tnt", "postnl", "colissimo", "chronopost", "correos",
    "aramex", "purolator", "inpost", "bpost", "evri", "parcelforce", "royal mail", "yamato", "sagawa",
]

# Registers a company, not a person, is entered in, and codes that route to a bank branch.
_REGISTERS = [
    "vat", "vat no", "vat reg", "vat number", "tva", "iva", "p.iva", "piva", "partita iva", "ust-idnr", "ust-id",
    "ust", "rcs", "nip", "regon", "krs", "kvk", "orgnr", "company no", "company registration", "business number",
    "employer number", "hrb", "hra", "duns", "d-u-n-s", "lei", "rea", "aba", "routing", "swift", "bic",
    "consignment", "rma", "pin", "ts", "lotto", "sipariş", "siparis", "barcode", "barras", "boleto", "iata",
    "charity", "registration", "cvr", "gst", "hst", "nipc", "nif da empresa", "y-tunnus", "ytunnus", "alv", "кпп",
    "огрн",
]

# Records of other languages, as documents: invoices, delivery notes, contracts, waybills,
# policies, serial and article numbers, receipts. They name only the number right after them,
# or after their number word ("Lieferschein 0049 1762 2849 915", "Счёт № 118"), and only where
# no phone word stands earlier in the clause ("Bitte Rückruf zum Vertrag: 030 12345678").
RECORDS_RIGHT_BEFORE = Cues.of([
    "накладная", "накладной", "договор", "договора", "договору", "счёт", "счет", "счета", "квитанция", "квитанции",
    "трек-номер", "полис", "полиса", "серийный", "заводской", "артикул", "рахунок", "рахунку", "договір", "накладна",
    "smlouva", "smlouvy", "fatura", "faturası", "poliçe", "sözleşme", "فاتورة", "الفاتورة", "العقد", "بوليصة",
    "avtal", "avtalet", "kvitto", "lasku", "laskun", "sopimus", "számla", "szerződés", "factură", "τιμολόγιο",
    "τιμολογίου", "σύμβαση", "faktur", "tagihan", "kontrak", "bolla", "ddt", "bon de livraison", "bon de commande",
    "albarán", "albaran", "lieferschein", "vertrag", "delivery note", "dispatch note", "packing slip", "token",
    "terminal", "vertragskonto", "vrachtbrief", "segnacollo", "счётчик", "счетчик", "подписка", "subscription", "मीटर",
    "उपभोक्ता", "العداد", "dosya", "dosyası", "billete", "bilhete", "biglietto",
])
# Orders' words that name the number right after them whatever follows ("заказ 916 123 45 68",
# "주문 010-1234-5679"): no one labels a line to call with them (shipments' words do).
ORDERS_RIGHT_BEFORE = frozenset({
    "заказ", "заказа", "заказу", "замовлення", "objednávka", "objednávku", "takip", "الطلب", "طلبك",
    "beställning", "ordre", "bestilling", "tilaus", "rendelés", "comanda", "comandă", "παραγγελία", "주문", "注文",
    "订单", "ऑर्डर",
})
# Shipments and other records of other languages: words that also label the line for them
# ("Telefon für die Lieferung", "Tel. pro objednávky"), so they name a record only beside a
# number word ("Номер заказа 916-427-18-55", "Objednávka č. 603 218 447", "takip numarası",
# "رقم التتبع", "رقم الشكوى", "पॉलिसी नंबर"); orders' words do there too.
ORDERS_BESIDE_NUMBER_WORD = ORDERS_RIGHT_BEFORE | frozenset({
    "отправление", "отправления", "посылка", "посылки", "посилка", "objednávky", "zásilka", "zásilky", "kargo",
    "gönderi", "التتبع", "طلب", "الشحنة", "شحنة", "beställningen", "leverans", "försändelse", "forsendelse",
    "tilauksen", "lähetys", "colet", "παραγγελίας", "pengiriman", "levering", "livraison", "envoi", "envio",
    "lieferung", "荷物", "お荷物", "الشكوى", "البوليصة", "المرجع", "التذكرة", "المطالبة", "الوثيقة", "الاشتراك",
    "पॉलिसी", "ट्रैकिंग", "पार्सल", "शिकायत", "seri", "tiket", "الحساب", "الحجز", "التسلسلي",
    "الملف", "umowy", "zamówienia", "avoir", "संदर्भ", "बिल", "شحنتك",
})

# Video meetings' ids ("meeting ID 891 2345 6780"); a dial-in number is written with a phone
# word or a "+". "Zoom" alone is decided right before the number (``phone_vetoes.named_kind``).
_MEETINGS = ["meeting id", "meeting-id", "meeting number", "conference id", "passcode", "teams meeting"]

# A record's own name glued to "number" ("Buchungsnr.", "klantnummer", "Org.nr"), unless the
# record is a phone ("Telefonnummer", "Handynr.", "Festnetznummer") or names a person's
# identifier ("Steueridentifikationsnummer", "Sozialversicherungsnummer", "Personnummer").
_COMPOUND = re.compile(r"(?P<stem>[^\W\d_][\w.\-]*?[^\W\d_][.\-]?)(?:nummer|nummern|nr|numer|number|numero)")
_PHONE_STEMS = ("tel", "handy", "ruf", "rückruf", "ruckruf", "rueckruf", "mobil", "fax", "gsm", "notruf", "durchwahl",
                "kontakt", "contact", "service", "anschluss", "zweit", "terugbel", "hem", "jobb", "arbets",
                "hotline", "support", "phone", "fon", "cell", "festnetz", "privat", "private", "home", "notfall",
                "emergency", "büro", "buero", "office", "zentrale", "direkt")
_IDENTIFIER_STEMS = ("steuer", "ident", "sozial", "versicherung", "ausweis", "pass", "führer", "fuehrer", "burger",
                     "person", "fødsel", "fodsel", "sofi", "pps", "ahv", "renten", "kranken", "patient", "licen",
                     "social", "insurance", "national", "tax", "citizen", "bsn", "secu", "sécu", "svnr", "pesel",
                     "medicare", "nhs", "health", "geburt", "birth", "bürger", "versicher", "cpr", "dni", "nie", "nif",
                     "karte", "kaart", "kort", "card", "tarjeta", "carte", "carta", "cartão", "cartao", "konto",
                     "account", "iban", "matrikel", "student", "rijks")
# Chinese record words, glued to the words before them and to a following 为 or 是 ("is"):
# 订单 (order), 单号 (waybill number), 编号 (serial number), 运单 (waybill), 快递 (parcel); Japanese
# order, receipt, slip, booking, enquiry and file numbers; Korean receipt, order, invoice,
# booking and registration numbers.
_CJK_RECORDS = ("订单", "订单号", "单号", "编号", "运单", "快递", "注文番号", "受付番号", "伝票番号", "予約番号",
                "問い合わせ番号", "管理番号", "整理番号", "出荷番号", "請求番号", "批次", "접수번호", "주문번호", "송장번호", "예약번호", "등록번호",
                "户号", "序列号", "工单号", "合同号", "保单号", "계약번호", "일련번호", "운송장번호", "쿠폰번호")


class _RecordCues(Cues):
    def found_in(self, words: list[str]) -> bool:
        return super().found_in(words) or any(record_compound(word) for word in words)


def record_compound(word: str) -> bool:
    """A record's own name glued to "number" ("Dossiernummer", "Buchungsnr.", 注文番号)."""
    if word.rstrip("为是：:").endswith(_CJK_RECORDS):
        return True
    match = _COMPOUND.fullmatch(word)
    if match is None:
        return False
    stem = match.group("stem")
    return not stem.startswith(_PHONE_STEMS) and not any(part in stem for part in _IDENTIFIER_STEMS)


BUSINESS = Cues.of(_WORDS)
# What a phone-shaped number may be instead: any business word, a company register, a
# record's compound name. Only phone numbers are decided by these (a card or a national id
# after "PIN" or "Kartennummer" is still one).
RECORDS = _RecordCues.of(_WORDS + _REGISTERS + _MEETINGS)

# Words of products, stock, orders and tickets, under which no one files a person's SSN
# (member, account, claim, case, policy and record numbers are where SSNs are filed, so they
# are not here).
PRODUCT_RECORDS = frozenset({"lot", "batch", "sku", "part", "model", "serial", "item", "pn", "upc", "ean", "gtin",
                             "dpci", "asin", "catalog", "catalogue", "style", "order", "invoice", "ticket", "tracking",
                             "shipment", "po", "rma", "quote", "booking", "reservation", "voucher", "coupon", "parcel",
                             "apn"})
# Words between a record's word and its number ("Parcel ID 231-04-5567", "order no. 600-22-7781").
RECORD_CONNECTORS = frozenset({"#", "id", "no", "nr", "number", "num"})
SSN_WORDS = Cues.of(["ssn", "ss", "social", "security", "itin", "taxpayer", "tin"])


# A UPS tracking number's start ("1Z 4E7 712 68 0412 5512"): eighteen letters and digits, often grouped.
_UPS_BEFORE = re.compile(r"(?<![\w\-])1Z(?: ?[A-Z\d]){3,9}\s$", re.IGNORECASE)


def ups_tracking_before(text: str, start: int) -> bool:
    """The digits at ``start`` continue a UPS tracking number begun right before them."""
    return _UPS_BEFORE.search(text[max(0, start - 24):start]) is not None
