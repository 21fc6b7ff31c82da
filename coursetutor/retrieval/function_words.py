"""The words and letters that tell apart the languages sharing one script.

Function words (articles, prepositions, pronouns, auxiliaries, question words) are the most
frequent words of any text and differ between languages; a few letters belong to one language
or a few (ß, ñ, ã, ı, ő; ы, ї; پ, ے; ळ). Written from grammars and checked on the
development sets (tests/test_language_scripts.py), not learned from a corpus.
The Latin languages are those with a Snowball stemmer (tokenize.SNOWBALL) and a few large ones
the embedding model reads (Vietnamese, Polish, Czech, Indonesian).
"""

from __future__ import annotations

WORDS: dict[str, dict[str, str]] = {
    "latin": {
        "en": "the of and to in is are was were be been being it its that this these those with "
              "for from by on at as an a or not but what which who whom whose how why when "
              "where does do did has have had can could will would should there their they them "
              "we you he she his her than then also into about s t ll re ve many much more most "
              "some any all each other such only very just so no nor after before over under "
              "between through during while because if since until one our your my me us i am "
              "now here per",
        "de": "der die das den dem des ein eine einer eines einem einen und oder aber ist sind "
              "war waren wird werden wurde wurden hat haben hatte wie was wer wen wem welche "
              "welcher welches warum wann wo nicht auch sich als mit von zu zum zur im auf für "
              "bei nach aus dass es sie er wir ich ihr ihre sein seine kann können nur noch "
              "über unter durch viele viel welchem welchen wieso weshalb wodurch womit wofür "
              "worauf worüber woran worum wozu wohin woher heißt gibt gab man am vom beim ins "
              "ans um so sehr mehr wieder hier dort diese dieser dieses diesem diesen jeder "
              "jede jedes alle allem allen ihm ihn ihnen uns euch mich dich mir dir worden bis "
              "gegen ohne während zwischen seit sowie hatten sei wäre würde könnte kein keine "
              "keinen",
        "it": "il lo la le gli i di del dello della dei degli delle da dal dalla dai dalle in "
              "nel nello nella nei nelle su sul sulla con per tra fra un uno una che è e ed o "
              "ma non si anche come cosa chi quale quali perché quando dove sono era erano "
              "essere stato stata ha hanno più questo questa questi queste quello quella suo "
              "sua suoi loro l dell nell all sull alle agli sui sulle dagli quanto quanta "
              "quanti quante cui ci ne vi c lui lei noi voi mi ti essa esso qual viene vengono "
              "fu furono stati state sia siano aveva avevano molto dopo prima senza sotto sopra "
              "durante mentre poi già ancora così tutto tutti tutta tutte ogni",
        "fr": "le la les l des du de d et est sont était étaient été être a ont avait qui que "
              "qu quoi comment pourquoi quand où un une avec pour dans sur par pas ne n au aux "
              "ce cet cette ces il elle ils elles on nous vous se s son sa ses leur leurs plus "
              "mais ou très aussi entre comme quel quelle quels quelles combien lequel laquelle "
              "lesquels duquel dont y en lui eux je tu me te mon ma mes ton notre votre nos vos "
              "sans sous après avant pendant depuis chez fait peut tout tous toute toutes autre "
              "autres même donc alors ainsi encore déjà si",
        "es": "el la los las lo le les de del al y e o u es son era eran fue fueron ser ha han "
              "había que qué quién quiénes cómo cuál cuáles cuándo dónde por para con sin en un "
              "una unos unas no se su sus más pero muy este esta estos estas ese esa como "
              "también entre sobre hay cuánto cuánta cuántos cuántas quien quienes cuando donde "
              "cual cuales porque sí ya nos me te mi tu nuestro todo todos toda todas otro otra "
              "otros otras hasta desde durante después antes bajo tras habían está están estaba "
              "estaban sido siendo tiene tienen tenía a si sino cada según",
        "pt": "o a os as do da dos das de ao aos à às e é são era eram foi foram ser que quem "
              "como qual quais quando onde por para pelo pela pelos pelas com sem em no na nos "
              "nas num numa um uma uns umas não se seu sua seus suas mais mas muito este esta "
              "estes estas esse essa isso isto também entre sobre há quanto quanta quantos "
              "quantas porque cujo cuja dele dela deles delas nele nela neste nesta nesse nessa "
              "está estão estava estavam sido tem têm tinha tinham todo todos toda todas outro "
              "outra outros outras até desde durante depois antes sob após já ainda você eles "
              "elas ele ela",
        "nl": "de het een en van is zijn was waren wordt worden werd werden heeft hebben had "
              "wat wie welke hoe waarom wanneer waar die dat deze dit met voor op in aan te "
              "niet ook als er maar om door bij naar uit of dan nog geen zich hun hij zij ze we "
              "wij je over tot welk hoeveel wiens waarvan waarin waarmee waardoor waarop hem "
              "haar ons mijn jouw uw zo zeer meer veel na sinds zonder tegen tussen boven alle "
              "elk elke zou zouden kunnen moet moeten wel al nu hier daar dus toen",
        "sv": "och att det som en ett i på är av för med till den de var inte har hade om från "
              "men sig vid eller så kan när vad hur varför vem vilken vilket vilka också efter "
              "under detta denna dessa ska skulle finns blev blir han hon deras sin sitt sina "
              "många mycket vars där här nu då sedan utan mot mellan genom över alla varje hans "
              "hennes dess vi ni dem oss varit vara ha skall kunde måste bara även redan än",
        "da": "og at det som en et i på er af for med til den de var ikke har havde om fra men "
              "sig ved eller så kan når hvad hvordan hvorfor hvem hvilken hvilket hvilke også "
              "efter under dette denne disse skal skulle findes blev bliver han hun deres sin "
              "sit sine meget nogle hvor hvornår mange hvis der her nu da siden uden mod mellem "
              "gennem over alle hver hans hendes dens vi jer dem os været være have kunne måtte "
              "kun allerede end",
        "no": "og at det som en et i på er av for med til den de var ikke har hadde om fra men "
              "seg ved eller så kan når hva hvordan hvorfor hvem hvilken hvilket hvilke også "
              "etter under dette denne disse skal skulle finnes ble blir han hun deres sin sitt "
              "sine mye noen hvor mange hvis der her nå da siden uten mot mellom gjennom over "
              "alle hver hans hennes dens vi dere dem oss vært være ha kunne måtte bare "
              "allerede enn",
        "fi": "ja on ei se että oli olivat ovat olla ole mikä mitkä mitä kuka ketkä miten miksi "
              "milloin missä kun tai mutta myös joka jotka jonka tämä tuo nämä ne hän he sekä "
              "kuin niin jo vain voi sen sitä siitä tässä kuinka monta paljon mistä mihin minkä "
              "joita jossa josta niiden heidän hänen ollut olleet eikä kanssa ennen jälkeen "
              "aikana mukaan kautta vuonna",
        "hu": "a az és hogy nem is egy van volt vannak voltak vagy de mi mit ki kik hogyan "
              "miért mikor hol ez azt ezt meg csak már még mint el fel pedig lehet kell között "
              "amely amelyek után szerint hány mennyi melyik milyen honnan hova lesz ezek azok "
              "ahol amikor aki akik amit ami mely nagyon sok minden során alatt által óta",
        "ro": "și şi în de la cu pe un o unui unei este sunt era erau a al ale ai care ce cine "
              "cum când unde din pentru nu se mai sau dar acest această aceasta acestea fost fi "
              "prin lui ei lor fie după câți câte cât au avea aveau sa său sale acesta aceștia "
              "acestui acestei într dintre despre între până fără foarte mult mulți toate toți",
        "tr": "ve bir bu da de için ile ne mi mı mu mü nasıl neden niçin kim kimin hangi nerede "
              "olan olarak olduğu daha en çok gibi ama veya ya değil var yok her o şu sonra "
              "kadar ki göre tarafından kaç nedir midir neyi neye kime kimi nereye nereden hem "
              "ise bunlar onlar onun bunun oldu olmuştur önce arasında üzerinde içinde bazı tüm",
        "vi": "của và là có không các những được một trong cho với người này đã để khi thì ra "
              "đến cũng như từ tại về sau nào gì sao bao nhiêu ai đâu nhất theo bị năm đó",
        "pl": "i w we na z ze że się nie to jest są był była było do jak co czy ale o od po a "
              "przez dla jego jej ich tak też który która które którzy jaki jaka dlaczego kiedy "
              "gdzie oraz lub tylko już może niż",
        "cs": "a v ve na s se z ze že to je jsou byl byla bylo do jak co ale o od po k pro jeho "
              "její jejich tak také který která které kteří jaký proč kdy kde není nebo jen už "
              "může než",
        "id": "yang dan di ini itu dengan untuk dari dalam pada adalah tidak akan ke atau juga "
              "oleh karena sebagai bisa apa siapa bagaimana mengapa kapan ada telah sudah "
              "tersebut lebih daripada sangat",
    },
    "cyrillic": {
        "ru": "и в во не на что это как с со по из у к о об а но для от же все всё так его её "
              "она он они быть был была было были который которая которое которые когда где "
              "почему кто чем при также или только то этот эта эти какой какая какое какие "
              "каком каких каким какую какого сколько чей чья чьё чьи ли бы уже ещё очень более "
              "между через после до перед над под без этого этой этом этих том тем те свой "
              "своей их ему им нее них него будет является являются",
        "uk": "і й та в у не на що це як з із зі по до від для але його її вона він вони бути "
              "був була було були який яка яке які коли де чому хто чим при також або тільки то "
              "цей ця ці є скільки котрий яку якого якій якому яких чий чия чиє чиї чи вже ще "
              "дуже більш між через після перед над під без цього цієї цьому цих той ті свій "
              "своєї їх йому їм неї них нього буде ніж так",
        "bg": "и в във не на че това как с със по от за да се е са бе беше като но който която "
              "което които кога къде защо кой какво при също или само то този тази тези към "
              "колко какъв каква какви коя кое кои чий чия чие чии дали вече още много между "
              "през след преди над под без той тя те им него нея тях бил била било били ще",
        "sr": "и у не на да је се су са од за као што то али који која које када где зашто ко "
              "из по бити био била било колико какав каква какво ком чији чија већ још веома "
              "између после пре над под без при овај ова ово ови тај та они она он ће",
        "mk": "и во не на дека тоа како со од за да се е но кој која кое кои кога каде зошто "
              "што по колку каков каква какво чиј чија веќе уште многу помеѓу пред над под без "
              "при овој оваа ова овие тој таа тие беше бил била било ќе",
        "be": "і ў не на што гэта як з па да ад для але яго яе яна ён яны быць быў была было "
              "які калі дзе чаму хто",
        "kk": "және мен бұл осы ол олар деп үшін бар жоқ емес болып болды туралы қалай неге "
              "қашан кім қандай",
        "mn": "нь бол юм байна байсан энэ тэр ба болон гэж гэсэн юу яагаад хэзээ хэн ямар",
    },
    "arabic": {
        "ar": "في من على إلى الى عن أن ان التي الذي الذين هذا هذه ذلك تلك ما ماذا متى أين كيف "
              "لماذا كم هل هو هي هم كان كانت مع بين أو ثم قد لا لم لن كل بعد قبل حتى عند أي منذ "
              "خلال حول ضد لدى عليه فيه منه إليه به له لها كانوا يكون تكون ليس غير أيضا أكثر",
        "fa": "و در به از که این آن را با برای است هست بود می های یک تا هم اما یا چه چرا چگونه "
              "کجا کی شد شده چند کدام آیا نیز اند بودند شود هر همه ولی زیرا",
        "ur": "اور میں سے کے کی کا کو نے ہے ہیں تھا تھی تھے یہ وہ پر بھی نہیں کیا کیوں کیسے کب "
              "کون ایک لیے کتنا کتنے کتنی کونسا کس جس جو تو ان اس کہ گیا گئے تک",
    },
    "devanagari": {
        "hi": "है हैं था थी थे के की का में और से को पर यह वह ये वे एक भी नहीं लिए क्या कौन "
              "कैसे क्यों कब कहाँ जो ने हो होता होती गया गई तथा कितना कितने कितनी किस किसने "
              "किसे जिस जिसे जिन उस उन इस इन तक लेकिन या अपने अपनी अपना द्वारा साथ बाद पहले गए "
              "रहा रही रहे करता करते करने किया",
        "mr": "आहे आहेत होते होता होती आणि व या हे ही हा ते ती त्या च्या चा ची चे ला ने मध्ये "
              "नाही काय कसे का कोण कधी कुठे म्हणून केले किती कोणता कोणती कोणते किंवा पण तर "
              "त्याने तिने त्यांनी आपल्या झाले झाला झाली",
        "ne": "छ छन् थियो थिए र को का की मा हो यो त्यो यी ती पनि भएको गरेको गर्न लागि के कसरी "
              "किन कहिले कहाँ कुन एक नै कति कसले कस कसको तर वा उनी उनको आफ्नो भयो गरे गर्छ "
              "हुन्छ",
    },
}

# besides function words, the words a student's short request for help is made of: "Mi aiuti
# con l'esercizio 3?" has only "mi" and "con", which Spanish writes too, and was answered in
# the English of the course
REQUESTS: dict[str, str] = {
    "en": "help exercise exercises explain please",
    "it": "aiuti aiuta aiutami aiutare puoi potresti spiegami spiega dammi esercizio esercizi",
    "es": "ayuda ayúdame ayudar puedes podrías explícame dame ejercicio ejercicios",
    "fr": "aide aidez aider peux pouvez explique expliquez donne exercice exercices",
    "de": "hilf hilfe helfen kannst könntest erkläre erklär gib übung übungen aufgabe aufgaben",
    "pt": "ajuda ajude ajudar podes explique dá exercício exercícios",
}
for _language, _words in REQUESTS.items():
    WORDS["latin"][_language] += " " + _words

# letters that only some languages of a script write: letter -> those languages
LETTERS: dict[str, dict[str, str]] = {
    "latin": {
        "ß": "de", "ä": "de sv fi", "ö": "de sv fi hu tr", "ü": "de hu tr", "ñ": "es",
        "ã": "pt vi", "õ": "pt vi", "ç": "fr pt tr", "œ": "fr", "è": "fr it", "ê": "fr pt vi",
        "ë": "fr nl", "î": "fr ro", "ï": "fr nl", "ô": "fr pt vi", "û": "fr", "ù": "fr it",
        "à": "fr it pt vi", "â": "fr pt ro tr vi", "ì": "it", "ò": "it", "á": "es pt hu cs vi",
        "é": "fr es pt it hu cs vi", "í": "es pt hu cs vi", "ó": "es pt pl hu cs vi",
        "ú": "es pt hu cs vi", "å": "sv da no",
        "æ": "da no", "ø": "da no", "ő": "hu", "ű": "hu", "ă": "ro vi", "ș": "ro", "ş": "ro tr",
        "ț": "ro", "ţ": "ro", "ı": "tr", "ğ": "tr", "ơ": "vi", "ư": "vi", "đ": "vi",
        "ą": "pl", "ę": "pl", "ł": "pl", "ś": "pl", "ź": "pl", "ż": "pl", "ń": "pl", "ć": "pl",
        "ř": "cs", "ě": "cs", "ů": "cs", "ď": "cs", "ť": "cs", "ň": "cs", "č": "cs",
        "š": "cs", "ž": "cs",
        # Vietnamese's tone marks: the vowels of Latin Extended Additional (U+1EA0-U+1EF9)
        **{chr(c): "vi" for c in range(0x1EA0, 0x1EFA)},
    },
    "cyrillic": {
        "ы": "ru be kk", "э": "ru be", "ё": "ru be", "ъ": "bg", "і": "uk be kk", "ї": "uk",
        "є": "uk", "ґ": "uk", "ў": "be", "ђ": "sr", "ћ": "sr", "ј": "sr mk", "љ": "sr mk",
        "њ": "sr mk", "џ": "sr mk", "ѓ": "mk", "ќ": "mk", "ѕ": "mk",
        "ә": "kk", "ғ": "kk", "қ": "kk", "ң": "kk", "ұ": "kk", "һ": "kk", "ө": "kk mn",
        "ү": "kk mn",
    },
    "arabic": {
        # Arabic's yeh and kaf (ي ك) against the Persian forms (ی ک) Persian and Urdu write
        "ة": "ar", "ى": "ar", "ي": "ar", "ك": "ar",
        "ی": "fa ur", "ک": "fa ur", "پ": "fa ur", "چ": "fa ur", "ژ": "fa ur", "گ": "fa ur",
        "ے": "ur", "ں": "ur", "ٹ": "ur", "ڈ": "ur", "ڑ": "ur", "ہ": "ur", "ھ": "ur",
    },
    "devanagari": {"ळ": "mr", "ऱ": "mr"},
}
