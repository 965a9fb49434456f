"""Words that are not people's names though recognizers take them for some: languages and
software, brands named after people, calendar words. Used to refine PERSON findings."""

from __future__ import annotations

# Languages, frameworks and products that spaCy sometimes tags as people ("prefers Kotlin").
NOT_A_PERSON = frozenset("""
ada agda alexa algol android angular ansible apl apache arduino assembly atlas aurora awk azure bash basic
blazor bootstrap c cassandra chef ckan clojure cobol coffeescript cordova cortana crystal csharp cuda d dart
debian delphi deno django docker drupal elasticsearch electron elixir elm ember erlang excel express fastapi
figma firebase flask flutter fortran gatsby gemini gerrit git gleam go golang grafana gradle groovy hack
hadoop haskell haxe helm heroku hive idris ionic java javascript jenkins jira julia jupyter kafka keras
kibana kotlin kubernetes laravel linux lisp logstash lua mariadb matlab maven mercurial mojo mongo mongodb
mysql neovim nest netlify next nginx nim node nomad notion nuxt ocaml octave odin oracle outlook pandas
pascal perl phoenix php podman pony postgres postgresql powershell prolog prometheus puppet purescript
pytest python pytorch qt quarkus racket rails raku react reason redis rexx rollup ruby rust sas sass scala
scheme scratch selenium sentry siri slack solidity spark spring sql sqlite svelte swift symfony tableau tcl
tensorflow terraform trello typescript ubuntu unity vagrant vala vault vercel verilog vhdl vim vue wasm
webpack windows wordpress xcode yarn zendesk zig zoom
""".split())
# Companies and products named after people, which read as names: not a person.
BRANDS = frozenset(line.strip() for line in """
ben & jerry's
dolce & gabbana
ernst & young
goldman sachs
johnson & johnson
lehman brothers
marks & spencer
merrill lynch
morgan stanley
procter & gamble
rolls royce
rolls-royce
tim hortons
trader joe's
wells fargo
calvin klein
hugo boss
louis vuitton
ralph lauren
tommy hilfiger
estée lauder
mercedes benz
mercedes-benz
harley davidson
harley-davidson
ford
tesla
ferrari
porsche
lamborghini
dyson
heinz
kellogg's
getty
disney
boeing
siemens
philips
bosch
nestlé
cadbury
mcdonald's
wendy's
dell
hewlett packard
paypal
unionpay
salesforce
dialogflow
okta
watson
alexa
siri
cortana
bixby
jarvis
firefox
safari
chrome
earl grey
granny smith
caesar
margherita
""".strip().splitlines())
CALENDAR_WORDS = frozenset("""
january february march april may june july august september october november december jan feb mar apr jun jul
aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur
thurs fri sat sun christmas easter ramadan diwali eid hanukkah thanksgiving halloween
""".split())
# Nationality and language adjectives: "Belgian IBAN", "Norwegian passport" name no one.
DEMONYMS = frozenset("""
afghan albanian algerian american andorran angolan argentine argentinian armenian australian austrian
azerbaijani bahraini bangladeshi belarusian belgian bolivian bosnian brazilian british bulgarian burmese
cambodian cameroonian canadian chilean chinese colombian congolese croatian cuban cypriot czech danish dutch
ecuadorian egyptian emirati english estonian ethiopian european filipino finnish french georgian german
ghanaian greek guatemalan haitian honduran hungarian icelandic indian indonesian iranian iraqi irish israeli
italian ivorian jamaican japanese jordanian kazakh kenyan korean kosovar kuwaiti kyrgyz latvian lebanese
libyan lithuanian luxembourgish macedonian malagasy malaysian maltese mexican moldovan mongolian montenegrin
moroccan mozambican namibian nepalese nigerian norwegian omani pakistani palestinian panamanian paraguayan
peruvian polish portuguese qatari romanian russian rwandan saudi scottish senegalese serbian singaporean
slovak slovakian slovenian somali spanish sudanese swedish swiss syrian taiwanese tajik tanzanian thai
tunisian turkish turkmen ugandan ukrainian uruguayan uzbek venezuelan vietnamese welsh yemeni zambian
zimbabwean deutsch deutsche deutscher français française española español italiano italiana portugués
arabic hebrew persian farsi hindi urdu bengali punjabi gujarati marathi tamil telugu kannada malayalam sinhala
pashto swahili yoruba igbo hausa amharic tagalog
""".split())
