"""The words of postal addresses in many countries: street types, the words before and after a
street's name, post-office boxes, units, buildings and regions; and the English words that
end an address when prose resumes."""

from __future__ import annotations

STREET_TYPES = (
    "street", "st", "road", "rd", "avenue", "ave", "av", "drive", "dr", "lane", "ln", "boulevard", "blvd",
    "way", "close", "crescent", "cres", "square", "sq", "place", "pl", "court", "ct", "terrace", "tce",
    "grove", "gardens", "gdns", "parkway", "pkwy", "highway", "hwy", "mews", "circle", "cir", "trail", "trl",
    "alley", "marg", "quay", "wharf", "esplanade", "parade", "promenade", "broadway", "expressway",
    "freeway", "turnpike", "pike", "glen", "hollow", "meadows", "orchard", "spur", "terr", "wynd", "brae",
    "salai", "nagar", "chowk", "colony", "enclave", "cove", "plaza", "row", "hill", "walk", "rise",
    "vale", "green", "circus", "embankment", "approach", "bypass", "causeway", "crossing", "ridge",
    "heights", "landing", "glade", "dale", "mount",
    "пр.", "проспект", "ул.", "улица", "пер.", "переулок", "ш.", "шоссе", "наб.", "набережная", "бул.", "бульвар",
)
# Words that come before the street's name ("rue", "calle", "ul."): the number follows the name.
STREET_PREFIXES = (
    "rue", "avenue", "av", "av.", "avda", "avda.", "avenida", "calle", "c/", "carrer", "via", "viale", "corso",
    "piazza", "piazzale", "largo", "vicolo", "rua", "travessa", "paseo", "plaza", "praça", "praca", "ul.", "ul",
    "ulica", "al.", "aleja", "jl.", "jl", "jalan", "odos", "odós", "leoforos", "caddesi", "cad.", "cd.", "sokak",
    "sk.", "sokağı", "strada", "bulevardul", "calea", "allée", "allee", "boulevard", "bd", "bd.", "chemin",
    "impasse", "place", "quai", "cours", "route", "rambla", "camino", "ronda", "travesía", "estrada",
    "alameda", "số", "đường", "phố", "ngõ", "rodovia", "carretera", "passeig", "vía", "rúa", "praia",
    "am", "an der", "auf der", "im", "in der", "zum", "zur", "hinter der", "unter den",
    "street", "road", "lorong", "soi", "thanon", "gali", "marg", "pasaje", "psje.", "bv.", "bulevar", "carrera",
    "cra.", "kr.", "cl.", "diagonal", "transversal", "os.", "osiedle", "lieu-dit", "kampung", "kg.", "jln", "jln.",
    "ulitsa", "prospekt", "pr-t", "naberezhnaya", "pereulok", "per.", "shosse", "vulytsia", "vul.", "trav.",
    "tv.", "rruga", "str-da", "sos.", "șos.", "str.", "ул.", "улица", "вул.", "вулиця", "просп.",
    "проспект", "пер.", "переулок", "бул.", "бульвар", "наб.", "רחוב", "רח'", "שדרות", "شارع",
    "derech", "sderot", "rehov", "rechov", "pje.", "pje", "cra", "gg.", "derb", "пр.", "jr.", "jirón", "jiron", "cll",
    "λεωφόρος", "λεωφ.", "οδός", "οδος",
)
# Prefixes that are no English word: their street may give its number after a comma
# ("Rua Augusta, 150", "C/ Mayor, 23", "ul. Tverskaya, d. 15").
FOREIGN_PREFIXES = (
    "rue", "avenida", "av.", "avda", "avda.", "calle", "c/", "carrer", "viale", "corso", "rua", "travessa", "paseo",
    "praça", "praca", "ul.", "ulica", "al.", "aleja", "jl.", "jalan", "jln", "jln.", "caddesi", "cad.", "strada",
    "calea", "rambla", "camino", "ronda", "travesía", "estrada", "alameda", "rodovia", "carretera", "passeig",
    "rúa", "pasaje", "bv.", "bulevar", "carrera", "cra.", "os.", "osiedle", "ulitsa", "prospekt", "vul.",
    "vulytsia", "rruga", "bulevardul", "sos.", "șos.", "str.", "ул.", "улица", "вул.", "вулиця", "просп.",
    "проспект", "пер.", "переулок", "бульвар", "наб.", "רחוב", "שדרות", "شارع",
    "derech", "sderot", "rehov", "rechov", "pje.", "cra", "gg.", "пр.", "jr.", "jirón", "jiron", "cll", "λεωφόρος",
    "λεωφ.", "οδός", "οδος",
)
# Compound street names of Germanic and Nordic languages end in one of these.
STREET_SUFFIXES = (
    "straße", "strasse", "str.", "gasse", "weg", "allee", "platz", "ring", "damm", "ufer", "steig", "pfad",
    "gatan", "vägen", "väg", "gata", "gränd", "gade", "vej", "veien", "vegen", "gate", "gracht", "laan",
    "straat", "steenweg", "kade", "singel", "dreef", "plein", "markt", "dijk", "kaai", "plads", "torget",
    "torg", "tie", "katu", "kuja", "polku", "utca", "ulica", "cesta", "ulice", "náměstí", "gässli", "gässchen",
    "caddesi", "cad.", "cd.", "sokak", "sokağı", "sk.", "bulvarı", "mahallesi", "mah.", "allé", "stræde",
    "veg", "vei", "backe", "stig", "tori", "dori", "jie", "lu", "xiang", "hutong", "marg", "salai",
    "sok.", "yokuşu", "çıkmazı",
    "str", "sugárút", "körút", "út", "tér", "fasor",
)
BOXES = ("p.o. box", "p. o. box", "po box", "p.o.box", "pobox", "post office box", "postfach", "postbus",
         "caixa postal", "apartado postal", "apartado de correos", "apartado", "apdo.", "bp", "b.p.",
         "boîte postale", "private bag", "pmb", "p.m.b.", "gpo box", "locked bag", "postboks", "postbox", "cp",
         "c.p.", "casilla", "casilla de correo", "casella postale", "skrytka pocztowa", "pf", "p.b.", "p.o.b.",
         "postnet suite")
BOX_ABBREVIATIONS = frozenset({"bp", "cp", "pf", "pmb"})
UNITS = ("flat", "apt", "apt.", "apartment", "unit", "suite", "ste", "ste.", "room", "rm", "office", "house",
         "house no", "house no.", "h.no.", "bldg", "building", "floor", "fl", "level", "lvl", "blk", "block",
         "plot", "lot", "no.", "no", "door", "door no", "sc.", "bl.", "ap.", "et.", "bât.", "bat.", "bâtiment",
         "escalier", "esc.", "piso",
         "planta", "puerta", "depto", "depto.", "dpto", "dpto.", "departamento", "apto", "apto.", "andar", "sala",
         "casa", "lgh", "lok.", "m.", "int.", "interno", "scala", "whg", "whg.", "og", "eg", "stock", "tür",
         "top", "bus", "bte", "boîte", "#", "pmb", "dept", "dept.", "po", "shop", "kiosk", "stall", "villa",
         "wing", "tower", "residency", "chome", "ku", "-ku", "số", "wohnung", "zimmer", "etage", "kat",
         "daire", "oficina", "torre", "bloco", "кв.", "корп.", "д.")
BUILDINGS = ("villas", "towers", "tower", "apartments", "apts", "house", "court", "heights", "plaza", "mansions",
             "residency", "residences", "mansion", "complex", "centre", "center", "building", "block", "hall", "lodge",
             "manor", "cottage", "cottages", "estate", "gardens", "park", "square", "maltings", "wharf", "quarter",
             "arcade", "chambers", "exchange", "place", "point", "view", "nagar", "enclave", "society",
             "hinterhaus", "vorderhaus", "seitenflügel", "chs", "compound")
# Words before a city's, a neighbourhood's or a street's name ("г. Москва", "حي الروضة", "خیابان ولیعصر"): a part
# they begin belongs to the address before its street line too.
LOCALITY_PREFIXES = frozenset({"г.", "гор.", "город", "пос.", "обл.", "حي", "مدينة", "kota", "kel.", "kec.", "شارع",
                               "خیابان", "کوچه", "بلوار", "میدان", "محله"})
# Parts that may follow a street line and still belong to the address.
REGION_WORDS = ("co.", "county", "district", "province", "prov.", "state", "region", "dept", "city", "town",
                "village", "borough", "ward", "col.", "colonia", "barrio", "bairro", "quận", "phường",
                "cdmx", "nsw", "vic", "qld", "wa", "sa", "tas", "act", "nt", "on", "qc", "bc", "ab", "mb", "sk",
                "ns", "nb", "nl", "pe", "yt", "nu", "uk", "usa", "us", "uae", "england", "scotland", "wales",
                "stn", "station", "main", "cedex", "rm", "mi", "bo", "jal.", "q.", "roo", "sp", "rj", "df", "mg",
                "dto", "esq.", "izq.", "dcha.", "bis", "ter", "г.", "tambon", "amphoe", "khet", "khwaeng")
# English words of prose: a part holding one is no longer the address.
FUNCTION_WORDS = frozenset(
    "a an and are as at be been being but by can could did do does for from had has have he her here his how i "
    "if in is it its me my near behind next of off on or our per she should so than that the their them then there "
    "they "
    "this to too until up us was we were what when where which while who will with would you your also just "
    "please pls plz thanks thank thx asap today tonight tomorrow tmrw yesterday week weeks month months year "
    "soon now later lives live living moved moving send sent ship shipped deliver delivered delivery post posted "
    "mail mailed address is at u ur im i'm it's its i'll we'll you'll he's she's they're don't can't won't lol "
    "monday tuesday wednesday thursday friday saturday sunday am pm morning evening night weekend not no yes "
    "need needs want wants get got go going come coming call called email phone number my mine "
    "approx approximately roughly circa".split())
# Small words inside street and place names ("Rue de la Paix", "Unter den Linden").
ADDRESS_PARTICLES = frozenset(
    "de la del los las le les du des da do dos das di dei della van der den von zu am an im auf the of y e et "
    "sur sous en lès bis ter".split())
# Two letters after four digits that are a word or a unit, not the letters of a Dutch postcode.
NOT_POSTCODE_LETTERS = frozenset(
    "de da di du do el la le en et il em um im am an as at by in is it of on or to up we he me my no so us "
    "iu mg ml kg km cm mm ms kb mb gb tb hz db ft lb oz pc kl tl po".split())
# Words that name the number after them: no place, no state code, whatever their case.
NUMBER_NAMES = frozenset({"id", "pin", "passcode", "password", "otp", "code", "ext", "extension", "meeting",
                           "order", "invoice", "ticket", "ref", "account", "acct", "customer", "booking", "case",
                           "numara", "numarası", "numarasi", "numaranız", "numaraniz", "hsn", "sac", "lot", "batch",
                           "reserva", "reservation", "pedido", "lote"})
# Units that make "<number> <unit> ..." a quantity, not a house number.
QUANTITIES = frozenset("""
second seconds sec secs minute minutes min mins hour hours hr hrs h day days week weeks wk month months year years
yr yrs mile miles mi km kms kilometre kilometres kilometer kilometers metre metres meter meters m cm mm foot feet ft
inch inches lb lbs kg kgs g gram grams ton tons times people person persons users items pcs pieces units steps
lane lanes floor floors storey storeys point points percent pct % x
mbps gbps kbps mb gb kb tb mhz ghz hz rpm mph kph kmh btu gal gallon gallons ml mg kw kwh psi dpi fps px
nm um µm db dbm gbit mbit kbit mah wh mw litre litres liter liters kcal ohm
eur euro euros usd dollars gbp pounds chf sek nok dkk kr pln zł zl czk kč huf ft tl try lira kuna ron lei bgn
inr rupees jpy yen cny rmb yuan krw won thb baht myr idr rp zar rand ngn naira kes ksh aed dirham sar riyal
adet stk stück szt uds pz
""".split())
ENGLISH_JOINERS = frozenset({"the", "of", "and", "at", "on", "in", "to"})
# Prefixes that are everyday words too ("via email", "am Montag", "place 3 orders").
AMBIGUOUS_PREFIXES = frozenset({"via", "am", "im", "an der", "in der", "auf der", "zum", "zur", "place",
                                "route", "cours"})

# United States state and territory codes, as a regular-expression alternation.
US_STATES = ("al|ak|az|ar|ca|co|ct|de|dc|fl|ga|hi|id|il|in|ia|ks|ky|la|me|md|ma|mi|mn|ms|mo|mt|ne|nv|nh|nj|nm|ny|"
             "nc|nd|oh|ok|or|pa|ri|sc|sd|tn|tx|ut|vt|va|wa|wv|wi|wy|pr|gu|vi")
# Address words that are also English function words ("no. 23", "co. Galway", "unit 6").
NOT_PROSE = frozenset(ADDRESS_PARTICLES | set(REGION_WORDS) | set(UNITS) | set(BUILDINGS))

# An amount in its currency's code ("kart bedeli 245 TL", "1.200 SEK"): a price, not an address part.
CURRENCY_CODES = ("eur|usd|gbp|chf|sek|nok|dkk|pln|czk|huf|tl|try|ron|bgn|inr|jpy|cny|rmb|krw|thb|myr|idr|zar|ngn|"
                  "kes|aed|sar")
