"""The words around a name: the cues that announce one, the particles inside one, and the
words and entity labels that say a capitalised run is something else."""

from __future__ import annotations

# Words that announce a name outright: an introduction, a greeting or sign-off, a name field.
ANNOUNCING = (
    "my name is", "name is", "name's", "names are", "named", "i'm", "i am", "this is", "it's", "it is",
    "call me", "hi", "hello", "hey", "dear", "thanks", "thank you", "thx", "cheers", "regards", "best",
    "sincerely", "love", "xoxo", "yours", "signed", "cc", "attn", "attention", "name", "first name",
    "happy birthday", "congratulations to", "congrats to", "congratulations", "congrats", "welcome back",
    "thanks so much", "thank you so much", "many thanks", "apologies from", "regrets from", "goodbye",
    "good morning", "good night", "bye",
    "miss", "sir", "madam", "sr", "m.", "mx", "dona", "don", "sig", "sig.ra", "pan", "pani",  # titles that are words too
    "last name", "surname", "family name", "given name", "full name", "maiden name", "contact name",
    # greetings, sign-offs and name fields of other languages
    "hola", "bonjour", "hallo", "ciao", "olá", "hej", "hei", "salut", "saludos", "cordialement", "grüße",
    "gruesse", "groeten", "groetjes", "pozdrawiam", "saluti", "cumprimentos", "atenciosamente", "abraços",
    "merci", "gracias", "danke", "obrigado", "obrigada", "grazie", "mahalo", "kia ora", "ngā mihi", "g'day",
    "nombre", "apellido", "naam", "nom", "prénom", "nome", "cognome", "imię", "nazwisko", "imię i nazwisko",
    "beneficiario", "titular", "kontoinhaber", "destinatario", "empfänger", "holder", "account holder",
    # "is called" and "my name is" of other languages
    "se llama", "me llamo", "s'appelle", "m'appelle", "si chiama", "mi chiamo", "se chama", "me chamo",
    "ich heiße", "er heißt", "sie heißt", "ik heet", "hij heet", "zij heet", "jag heter", "jeg heter",
    "nazywa się", "nazywam się", "adım", "adı", "меня зовут", "его зовут", "её зовут", "ее зовут",
)
# Titles: what follows one is a name even when it is also a place or a programming language
# ("Ms. Villanueva", "Ms. Haskell"), unless a number comes shortly before ("500 ms", "12 Oak Dr.").
TITLES = ("mr", "mrs", "ms", "dr", "prof", "señor", "señora", "sra", "herr", "frau", "mme", "mlle", "dott", "dott.ssa",
          "dottoressa", "avv", "srta", "doña")
# Roles and relations that a name often follows ("patient Jane Doe", "my sister Amara"); a lone
# word after one must be a known name.
RELATIONS = (
    "patient", "traveller", "traveler", "passenger", "guest", "employee", "candidate", "applicant",
    "beneficiary", "cardholder", "recipient", "sender", "tenant", "landlord", "customer",
    "client", "caller", "member", "student", "pupil", "visitor", "driver", "owner", "signatory", "witness",
    "mum", "mom", "mother", "mama", "mam", "dad", "father", "papa", "sister", "brother", "sibling", "son",
    "daughter", "kid", "child", "baby", "wife", "husband", "partner", "spouse", "boyfriend", "girlfriend",
    "fiance", "fiancé", "fiancée", "ex", "friend", "bestie", "buddy", "roommate", "flatmate", "housemate",
    "boss", "manager", "supervisor", "colleague", "coworker", "co-worker", "teammate", "neighbour", "neighbor",
    "aunt", "auntie", "uncle", "cousin", "niece", "nephew", "grandma", "grandpa", "granny", "grandmother",
    "grandfather", "nan", "nana", "gran", "grandson", "granddaughter", "in-law", "stepmom", "stepdad",
    "stepson", "stepdaughter", "doctor", "gp", "dentist", "therapist", "counsellor", "counselor", "lawyer",
    "solicitor", "attorney", "accountant", "pharmacist", "vet", "nurse", "midwife", "nanny", "babysitter",
    "tutor", "teacher", "coach", "trainer", "mentor", "assistant", "pa", "realtor", "agent", "broker",
    "advisor", "adviser", "caseworker", "carer", "caregiver", "contact", "rep", "representative",
    "cleaner", "plumber", "electrician", "mechanic", "godmother", "godfather", "twin", "twins", "stepsister",
    "stepbrother", "half-sister", "half-brother", "bride", "groom", "wingman", "mate", "pal",
)
# Words a name may follow; it counts only when a speaking verb or a possessive follows too.
WEAK_CUES = (
    "with", "by", "ask", "asked", "tell", "told", "text", "texted", "email", "emailed",
    "ping", "pinged", "message", "messaged", "meet", "met", "spoke", "talked", "called", "call", "phoned",
    "invite", "invited", "thank", "remind", "visit", "visited", "see", "saw", "and", "&", "n", "or", "per",
    "approved", "assigned", "reported", "escalated", "cc'd", "cc:", "@",
)
PARTICLES = frozenset(
    "van der den de del della dela di da das dos do du la le bin binti bint ibn al el abu ben bat ter ten von "
    "zu y e mac mc st san santa".split())

# spaCy labels that say a lone known name is something else (its GPE label is wrong on
# names too often to count: the place list decides places).
NOT_NAME_CONTEXT = frozenset({"product", "work_of_art", "law", "language", "event", "date", "time", "money",
                              "percent", "quantity", "cardinal", "ordinal", "norp"})
# Words that end organisation names: a run ending in one is not a person.
ORG_WORDS = frozenset(
    "inc ltd llc llp plc gmbh ag sa sas sarl bv nv srl spa oy ab as asa kk pty co corp corporation company group "
    "holdings labs lab bank university college school institute hospital clinic foundation trust partners "
    "associates consulting solutions systems technologies tech software studio studios media press airlines "
    "airways motors hotel hotels restaurant cafe café bar pharmacy ministry council agency".split())

# Words a verb of that list often takes that the gazetteer also holds as given names.
NOT_A_NAME_OBJECT = frozenset({"back", "home", "time", "support", "sales", "service", "everyone", "team", "cash",
                               "up", "out", "off", "around"})
# Mentions of a group, not a person ("@here", "@support").
GROUP_MENTIONS = frozenset({"here", "channel", "everyone", "all", "team", "group", "room", "admins", "admin",
                            "oncall", "on-call", "devs", "ops", "support", "mods", "moderators"})
