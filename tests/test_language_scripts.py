"""Language detection for every script the embedding model reads, and the unknown path.

The sentences written here always run; the public datasets under ../shared/datasets (XQuAD-R in
whatever languages are there, SQuAD-it, KorQuAD, DRCD, the MaViLS transcripts) add one table
row per file when that folder exists.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from coursetutor.retrieval.function_words import WORDS
from coursetutor.retrieval.language import (
    LANGUAGE_NAMES,
    STOPWORDS,
    UNKNOWN,
    detect_language,
    language_script,
    majority,
    majority_language,
    script_language,
    search_language,
)
from coursetutor.retrieval.scripts import SOLE_LANGUAGE
from coursetutor.retrieval.tokenize import stemmer_for, tokenize
from coursetutor.tutor.replies import language_name

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"

# (language, a statement, a question): the same few facts about root finding in each
WRITTEN = [
    ("en", "The secant method converges faster than bisection but needs two starting points.",
     "What is the order of convergence of Newton's method?"),
    ("it", "Il metodo delle secanti converge più rapidamente della bisezione.",
     "Qual è l'ordine di convergenza del metodo di Newton?"),
    ("de", "Das Sekantenverfahren konvergiert schneller als das Bisektionsverfahren.",
     "Wie schnell konvergiert das Newton-Verfahren?"),
    ("fr", "La méthode de la sécante converge plus vite que la dichotomie.",
     "Quel est l'ordre de convergence de la méthode de Newton ?"),
    ("es", "El método de la secante converge más rápido que la bisección.",
     "¿Cuál es el orden de convergencia del método de Newton?"),
    ("pt", "O método da secante converge mais rapidamente do que a bisseção.",
     "Qual é a ordem de convergência do método de Newton?"),
    ("nl", "De secantmethode convergeert sneller dan de bisectiemethode, maar heeft twee "
           "startwaarden nodig.",
     "Wat is de orde van convergentie van de methode van Newton?"),
    ("sv", "Sekantmetoden konvergerar snabbare än bisektionsmetoden, men den behöver två "
           "startvärden.", "Hur snabbt konvergerar Newtons metod och varför?"),
    ("da", "Sekantmetoden konvergerer hurtigere end bisektionsmetoden, men den kræver to "
           "startværdier.", "Hvad er konvergensordenen for Newtons metode?"),
    ("no", "Sekantmetoden konvergerer raskere enn halveringsmetoden, men den trenger to "
           "startverdier.", "Hva er konvergensordenen til Newtons metode?"),
    ("fi", "Sekanttimenetelmä suppenee nopeammin kuin puolitusmenetelmä.",
     "Miksi Newtonin menetelmä suppenee niin nopeasti?"),
    ("hu", "A szelőmódszer gyorsabban konvergál, mint a felezési módszer.",
     "Miért konvergál ilyen gyorsan a Newton-módszer?"),
    ("ro", "Metoda secantei converge mai repede decât metoda bisecției.",
     "Care este ordinul de convergență al metodei lui Newton?"),
    ("tr", "Kiriş yöntemi ikiye bölme yönteminden daha hızlı yakınsar.",
     "Newton yöntemi neden bu kadar hızlı yakınsar?"),
    ("vi", "Phương pháp dây cung hội tụ nhanh hơn phương pháp chia đôi.",
     "Tại sao phương pháp Newton hội tụ nhanh như vậy?"),
    ("pl", "Metoda siecznych jest zbieżna szybciej niż metoda bisekcji.",
     "Dlaczego metoda Newtona jest tak szybko zbieżna?"),
    ("cs", "Metoda sečen konverguje rychleji než metoda půlení intervalu.",
     "Proč metoda Newtonova konverguje tak rychle?"),
    ("id", "Metode secant konvergen lebih cepat daripada metode biseksi.",
     "Mengapa metode Newton konvergen dengan sangat cepat?"),
    ("ru", "Метод секущих сходится быстрее, чем метод деления отрезка пополам.",
     "Почему метод Ньютона сходится так быстро?"),
    ("uk", "Метод січних збігається швидше, ніж метод поділу відрізка навпіл.",
     "Чому метод Ньютона збігається так швидко?"),
    ("bg", "Методът на секущите се сближава по-бързо от метода на разполовяването.",
     "Защо методът на Нютон се сближава толкова бързо?"),
    ("sr", "Метода сечице ће конвергирати брже од методе половљења интервала.",
     "Зашто Њутнова метода конвергира тако брзо?"),
    ("kk", "Қиюшылар әдісі екіге бөлу әдісінен жылдамырақ жинақталады.",
     "Ньютон әдісі неге соншалықты жылдам жинақталады?"),
    ("ar", "تتقارب طريقة القاطع أسرع من طريقة التنصيف.",
     "لماذا تتقارب طريقة نيوتن بهذه السرعة؟"),
    ("fa", "روش وتری سریع‌تر از روش دوبخشی همگرا می‌شود.",
     "چرا روش نیوتن این‌قدر سریع همگرا می‌شود؟"),
    ("ur", "سیکنٹ کا طریقہ دو حصوں میں تقسیم کے طریقے سے تیز تر ہے۔",
     "نیوٹن کا طریقہ اتنی تیزی سے کیوں ملتا ہے؟"),
    ("hi", "छेदक विधि द्विभाजन विधि से तेज़ी से अभिसरित होती है।",
     "न्यूटन विधि इतनी तेज़ी से क्यों अभिसरित होती है?"),
    ("mr", "छेदिका पद्धत द्विभाजन पद्धतीपेक्षा वेगाने अभिसरित होते आणि ती सोपी आहे.",
     "न्यूटनची पद्धत इतक्या वेगाने का अभिसरित होते?"),
    ("ne", "सेकेन्ट विधि द्विविभाजन विधिभन्दा छिटो अभिसरण हुन्छ।",
     "न्युटन विधि किन यति छिटो अभिसरण हुन्छ?"),
    ("el", "Η μέθοδος της τέμνουσας συγκλίνει ταχύτερα από τη διχοτόμηση.",
     "Γιατί η μέθοδος του Νεύτωνα συγκλίνει τόσο γρήγορα;"),
    ("he", "שיטת המיתר מתכנסת מהר יותר משיטת החצייה.", "מדוע שיטת ניוטון מתכנסת כל כך מהר?"),
    ("th", "วิธีเซแคนต์ลู่เข้าเร็วกว่าวิธีแบ่งครึ่ง", "ทำไมวิธีของนิวตันจึงลู่เข้าเร็วมาก"),
    ("ja", "割線法は二分法より速く収束します。", "ニュートン法はなぜ速く収束するのですか？"),
    ("zh", "割线法比二分法收敛得更快。", "牛頓法為什麼收斂得這麼快？"),
    ("ko", "할선법은 이분법보다 빠르게 수렴한다.", "뉴턴 방법은 왜 이렇게 빨리 수렴하나요?"),
    ("hy", "Նյուտոնի մեթոդը արագ է զուգամիտում։", "Ինչու է Նյուտոնի մեթոդը այդքան արագ?"),
    ("ka", "ნიუტონის მეთოდი სწრაფად კრებადია.", "რატომ კრებადობს ნიუტონის მეთოდი ასე სწრაფად?"),
    ("bn", "সেক্যান্ট পদ্ধতি দ্বিখণ্ডন পদ্ধতির চেয়ে দ্রুত।", "নিউটনের পদ্ধতি কেন এত দ্রুত?"),
    ("ta", "நியூட்டன் முறை வேகமாக ஒருங்குகிறது.", "நியூட்டன் முறை ஏன் இவ்வளவு வேகமாக ஒருங்குகிறது?"),
    ("te", "న్యూటన్ పద్ధతి వేగంగా కలుస్తుంది.", "న్యూటన్ పద్ధతి ఎందుకు అంత వేగంగా కలుస్తుంది?"),
    ("kn", "ನ್ಯೂಟನ್ ವಿಧಾನ ವೇಗವಾಗಿ ಒಮ್ಮುಖವಾಗುತ್ತದೆ.", "ನ್ಯೂಟನ್ ವಿಧಾನ ಏಕೆ ಅಷ್ಟು ವೇಗವಾಗಿ?"),
    ("ml", "ന്യൂട്ടൺ രീതി വേഗത്തിൽ സംയോജിക്കുന്നു.", "ന്യൂട്ടൺ രീതി എന്തുകൊണ്ട് ഇത്ര വേഗത്തിൽ?"),
    ("gu", "ન્યૂટનની પદ્ધતિ ઝડપથી અભિસરિત થાય છે.", "ન્યૂટનની પદ્ધતિ આટલી ઝડપથી કેમ?"),
    ("pa", "ਨਿਊਟਨ ਦੀ ਵਿਧੀ ਤੇਜ਼ੀ ਨਾਲ ਮਿਲਦੀ ਹੈ।", "ਨਿਊਟਨ ਦੀ ਵਿਧੀ ਇੰਨੀ ਤੇਜ਼ ਕਿਉਂ ਹੈ?"),
    ("or", "ନ୍ୟୁଟନ ପଦ୍ଧତି ଶୀଘ୍ର ଅଭିସାରୀ ହୁଏ।", "ନ୍ୟୁଟନ ପଦ୍ଧତି କାହିଁକି ଏତେ ଶୀଘ୍ର?"),
    ("si", "නිව්ටන් ක්‍රමය වේගයෙන් අභිසාරී වේ.", "නිව්ටන් ක්‍රමය මෙතරම් වේගවත් ඇයි?"),
    ("lo", "ວິທີຂອງນິວຕັນລູ່ເຂົ້າໄວ", "ເປັນຫຍັງວິທີຂອງນິວຕັນຈຶ່ງລູ່ເຂົ້າໄວ?"),
    ("km", "វិធីសាស្ត្ររបស់ញូតុនបង្រួមលឿន។", "ហេតុអ្វីបានជាវិធីសាស្ត្ររបស់ញូតុនលឿន?"),
    ("my", "နယူတန်နည်းလမ်းသည် မြန်မြန် ပေါင်းစည်းသည်။", "နယူတန်နည်းလမ်းသည် အဘယ်ကြောင့် မြန်သနည်း။"),
    ("am", "የኒውተን ዘዴ በፍጥነት ይሰበሰባል።", "የኒውተን ዘዴ ለምን በጣም ፈጣን ነው?"),
]


@pytest.mark.parametrize(("lang", "statement", "question"), WRITTEN,
                         ids=[row[0] for row in WRITTEN])
def test_written_sentences(lang: str, statement: str, question: str) -> None:
    # with no course language to lean on, and with one of another script
    assert [detect_language(t) for t in (statement, question)] == [lang, lang]
    other = "zh" if language_script(lang) != "han" else "en"
    assert [detect_language(t, default=other) for t in (statement, question)] == [lang, lang]


def test_every_label_is_written_and_named() -> None:
    labels = {lang for langs in WORDS.values() for lang in langs} | set(SOLE_LANGUAGE.values())
    assert labels - {lang for lang, _s, _q in WRITTEN} == {"mk", "be", "mn"}
    # a prompt names every label, unknown included ("Reply in ... only.")
    assert labels | {UNKNOWN} <= set(LANGUAGE_NAMES)
    assert language_name("ar") == "Arabic (العربية)"
    assert language_name(UNKNOWN) == "the language the student's message is written in"


# -- the public datasets --------------------------------------------------------------------

def _squad(path: Path) -> Iterator[str]:
    for article in json.loads(path.read_text(encoding="utf-8"))["data"]:
        for paragraph in article["paragraphs"]:
            yield from paragraph.get("sentences") or [paragraph["context"]]
            yield from (q["question"] for q in paragraph["qas"])


def _mavils(folder: Path) -> Iterator[str]:
    for path in sorted(folder.glob("*/transcript.json")):
        yield from (s["text"] for s in json.loads(path.read_text(encoding="utf-8"))["segments"])


def _dataset_rows() -> list[tuple[str, str]]:
    """(file, language) of each dataset present: XQuAD-R's language is its name's suffix."""
    named = {"squadit-dev.json": "it", "korquad-dev-ko.json": "ko", "drcd-dev-zh.json": "zh",
             "mavils-dev": "en"}
    rows = [(p.name, p.stem.rsplit("-", 1)[1]) for p in sorted(DATASETS.glob("xquadr-*.json"))]
    return rows + [(name, lang) for name, lang in named.items() if (DATASETS / name).exists()]


SAMPLE = 3000  # texts per file: every kind of text of each, a few seconds in all


def _texts(name: str) -> list[str]:
    path = DATASETS / name
    texts = _mavils(path) if path.is_dir() else _squad(path)
    return [t for t in texts if t.strip()][:SAMPLE]


@pytest.mark.skipif(not DATASETS.is_dir(), reason=f"{DATASETS} is absent (a fresh clone)")
@pytest.mark.parametrize(("name", "lang"), _dataset_rows() if DATASETS.is_dir() else [])
def test_dataset_sentences(name: str, lang: str) -> None:
    texts = _texts(name)
    cold = Counter(detect_language(t) for t in texts)
    warm = Counter(detect_language(t, default=lang) for t in texts)
    # in a course of that language (how a question is asked): at most 1 in 200 otherwise
    assert warm[lang] >= 0.995 * len(texts), warm.most_common(4)
    # with nothing to lean on, a text may stay unknown but is rarely another language
    wrong = sum(n for label, n in cold.items() if label not in (lang, UNKNOWN))
    assert wrong <= 0.01 * len(texts), cold.most_common(4)
    assert cold[lang] >= 0.9 * len(texts), cold.most_common(4)


def test_datasets_are_found_when_present() -> None:
    if not DATASETS.is_dir():
        pytest.skip(f"{DATASETS} is absent (a fresh clone)")
    assert {"en", "de", "zh"} <= {lang for _name, lang in _dataset_rows()}


# -- unknown --------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "", "12345 ...", "x_n = 3.5", "∫ f(x) dx = 42", "!!! ??? ---", "α = β + 2γ",
])
def test_no_letters_to_tell_from(text: str) -> None:
    assert detect_language(text) == UNKNOWN
    assert detect_language(text, default="it") == "it"  # the course's, as before


@pytest.mark.parametrize(("text", "default"), [
    ("abc абв αβγ אבג ابت", "en"),  # a soup of five scripts
    ("Ελληνικά русский עברית", "en"),  # three scripts, none a majority
    ("བོད་ཡིག་ནི་སྐད་ཡིག་ཞིག་ཡིན།", "en"),  # Tibetan: no script the detector knows
    ("ⴰⵎⴰⵣⵉⵖ ⵜⴰⵎⴰⵣⵉⵖⵜ", "zh"),  # Tifinagh
])
def test_mixed_or_unknown_scripts(text: str, default: str) -> None:
    assert detect_language(text, default=default) == UNKNOWN


def test_a_course_language_decides_only_what_the_text_leaves_open() -> None:
    # Latin words of no language (names, terms): the course's language
    assert detect_language("Newton Raphson", default="it") == "it"
    assert detect_language("Newton Raphson", default="zh") == "zh"
    assert detect_language("Newton Raphson") == UNKNOWN
    # a script the course's language does not write is never taken for it
    assert detect_language("Почему метод Ньютона сходится?", default="en") == "ru"
    assert detect_language("מדוע השיטה מתכנסת?", default="en") == "he"
    # a Cyrillic text with no word or letter of another language is Russian, unless the
    # course writes Cyrillic too
    assert detect_language("Метод Ньютона") == "ru"
    assert detect_language("Метод Ньютона", default="bg") == "bg"
    # Chinese with an English term, English with a Chinese one
    assert detect_language("什么是gradient descent？") == "zh"
    assert detect_language("What is 导数?") == "en"
    # half Korean, half an English title: the course's language breaks the tie
    assert detect_language("blues in the night 을 부른 가수가 누구인가요?") == "ko"


@pytest.mark.parametrize(("text", "lang"), [
    # only words several languages share ("de", "dan": Dutch, Indonesian, Romance languages)
    ("De secantmethode convergeert sneller dan de bisectiemethode.", "nl"),
    # Serbian or Macedonian: neither's own letters (ћ ђ; ѓ ќ ѕ) nor words
    ("Метода сечице конвергира брже од методе половљења интервала.", "sr"),
    ("Tesla died on 7 January 1943.", "en"),  # "on": English, French, Finnish
])
def test_text_of_shared_words_only_leans_on_the_course(text: str, lang: str) -> None:
    assert detect_language(text) == UNKNOWN
    assert detect_language(text, default=lang) == lang


def test_maths_variables_are_not_elided_words() -> None:
    # x_n, d, t and l are variables, not the French "n'", "d'" or the Italian "l'"
    working = ("I took f(x) = cos(x) - x and f'(x) = -sin(x) - 1, so x_{n+1} = x_n - "
               "(cos(x_n) - x_n) / (-sin(x_n) - 1). I am still stuck")
    assert detect_language(working) == "en"
    assert detect_language("l'uomo n'est pas là, c'est la vie d'un homme") == "fr"


def test_script_language() -> None:
    assert [script_language(t) for t in ("牛顿法", "ニュートン法は", "뉴턴", "Νεύτων", "abc",
                                         "Ньютон", "12345 ...")] == [
        "zh", "ja", "ko", "el", None, None, None]


def test_unknown_means_no_stemming_and_no_stop_words() -> None:
    assert stemmer_for(UNKNOWN) is None and UNKNOWN not in STOPWORDS
    assert tokenize("the methods converging", UNKNOWN) == ["the", "methods", "converging"]
    assert tokenize("the methods converging", "en") == ["the", "method", "converg"]
    # a language with no Snowball stemmer keeps its words as written
    assert tokenize("طرق التقارب", "ar") == ["طرق", "التقارب"]


def test_a_course_of_unknown_language_is_searched_as_asked() -> None:
    assert search_language("en", UNKNOWN, {UNKNOWN: 12}) == "en"
    assert search_language(UNKNOWN, UNKNOWN, {UNKNOWN: 12}) == UNKNOWN
    assert search_language(UNKNOWN, "en", {"en": 12}) == "en"  # translated into English


@pytest.mark.parametrize(("votes", "expected"), [
    ({"en": 3, UNKNOWN: 2}, "en"),
    ({"en": 2, UNKNOWN: 2}, "en"),  # a tie goes to a language
    ({"en": 2, UNKNOWN: 3, "it": 1}, UNKNOWN),
    ({UNKNOWN: 1}, UNKNOWN),
    ({}, "it"),
])
def test_majority(votes: dict[str, int], expected: str) -> None:
    assert majority(Counter(votes), "it") == expected


def test_majority_language_of_a_document() -> None:
    chunks = ["Метод Ньютона сходится квадратично.", "x = 1", "Метод секущих сходится быстрее."]
    assert majority_language(chunks, default="en") == "ru"
    assert majority_language(["12 + 3", "x"], default="en") == "en"



@pytest.mark.parametrize(("text", "lang"), [
    # "mi" and "con" are Spanish too: the request's own words decide
    ("Mi aiuti con l'esercizio 3?", "it"),
    ("Aiutami con l'esercizio 3", "it"),
    ("¿Me ayudas con el ejercicio 3?", "es"),
    ("Kannst du mir bei Aufgabe 3 helfen?", "de"),
    ("Peux-tu m'aider avec l'exercice 3 ?", "fr"),
])
def test_a_short_request_for_help_is_read_in_its_language(text: str, lang: str) -> None:
    assert detect_language(text, default="en") == lang
