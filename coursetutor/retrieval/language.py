"""A small, dependency-free language guesser: the script first, then words and letters.

A script one language writes names it (Greek, Thai, Hebrew, Hangul, kana, Chinese characters,
the Indic scripts, ...). Where several languages share a script (Latin, Cyrillic, Arabic,
Devanagari) their function words and letters vote (`function_words.py`). Text that nothing
decides is `UNKNOWN`, which means no stemming and no stop words, never English's.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping

from ..errors import InputError
from .function_words import LETTERS, WORDS
from .scripts import OTHER, SHARED, SOLE_LANGUAGE, WORD, script_mass, word_script

UNKNOWN = "unknown"
MAJORITY = 0.5  # share of the letters the language found must pass (else: mixed text)
MIN_VOTE = 1.0  # a shared script's winner: at least one word of its own, or several letters
MARGIN = 1.5  # ... and this many times the runner-up's vote, or a word more
DENSITY = 0.1  # ... and, in Latin text, a tenth of the words its own (by word or letter)
LETTER_VOTE = 0.5  # one letter of a few languages, against one function word
PRIOR = 0.5  # the head start of the default (or of the script's primary language)
# the language a script stands for when no other language's words or letters show: Russian's
# Cyrillic has none of the letters Ukrainian (і ї є), Bulgarian (ъ), Serbian (ј ђ ћ) or
# Kazakh (ә қ ө) write at every other word, Persian and Urdu write ی and ک for Arabic's ي and
# ك, Marathi and Nepali have their own auxiliaries (आहे, छ)
LATIN_VOWELS = frozenset("aeiouyàèéò")  # single letters that are words ("a", "e", "y", "è")
PRIMARY = {"cyrillic": "ru", "arabic": "ar", "devanagari": "hi"}

STOPWORDS: dict[str, frozenset[str]] = {
    "en": frozenset(
        "the of and to in is are was were what which who how why when does do did that this "
        "with for from by on as be it an or not can".split()
    ),
    "de": frozenset(
        "der die das und ist sind war waren wie was wer welche welcher warum wann den dem des "
        "ein eine einer mit von zu im auf für nicht auch sich als wird wurde".split()
    ),
    "it": frozenset(
        "il lo la le gli di che è sono era erano come cosa chi quale quali perché quando del "
        "della dei delle un una con per non si anche nel nella al alla "
        # what an apostrophe leaves of an elided article or preposition ("l'estremo")
        "l dell nell all dall sull quest quell".split()
    ),
    "fr": frozenset(
        "le la les des du de et est sont était qui que quoi comment pourquoi quand un une avec "
        "pour dans sur pas ne au aux l qu".split()
    ),
    "es": frozenset(
        "el la los las de del y es son era que qué quién cómo por qué cuándo un una con para "
        "en no se al lo".split()
    ),
}
# a stop word of any language (a claim or reply may mix them)
ANY_STOPWORD: frozenset[str] = frozenset().union(*STOPWORDS.values())

# the native name too: small models follow "Korean (한국어)" better than "Korean"
LANGUAGE_NAMES = {
    "en": "English", "it": "Italian (italiano)", "de": "German (Deutsch)",
    "fr": "French (français)", "es": "Spanish (español)", "pt": "Portuguese (português)",
    "zh": "Chinese (简体中文)", "ko": "Korean (한국어)", "ja": "Japanese (日本語)",
    "nl": "Dutch (Nederlands)", "sv": "Swedish (svenska)", "da": "Danish (dansk)",
    "no": "Norwegian (norsk)", "fi": "Finnish (suomi)", "hu": "Hungarian (magyar)",
    "ro": "Romanian (română)", "tr": "Turkish (Türkçe)", "vi": "Vietnamese (Tiếng Việt)",
    "pl": "Polish (polski)", "cs": "Czech (čeština)", "id": "Indonesian (Bahasa Indonesia)",
    "ru": "Russian (русский)", "uk": "Ukrainian (українська)", "bg": "Bulgarian (български)",
    "sr": "Serbian (српски)", "mk": "Macedonian (македонски)", "be": "Belarusian (беларуская)",
    "kk": "Kazakh (қазақ тілі)", "mn": "Mongolian (монгол)", "ar": "Arabic (العربية)",
    "fa": "Persian (فارسی)", "ur": "Urdu (اردو)", "hi": "Hindi (हिन्दी)", "mr": "Marathi (मराठी)",
    "ne": "Nepali (नेपाली)", "el": "Greek (Ελληνικά)", "he": "Hebrew (עברית)",
    "th": "Thai (ไทย)", "hy": "Armenian (հայերեն)", "ka": "Georgian (ქართული)",
    "bn": "Bengali (বাংলা)", "pa": "Punjabi (ਪੰਜਾਬੀ)", "gu": "Gujarati (ગુજરાતી)",
    "or": "Odia (ଓଡ଼ିଆ)", "ta": "Tamil (தமிழ்)", "te": "Telugu (తెలుగు)", "kn": "Kannada (ಕನ್ನಡ)",
    "ml": "Malayalam (മലയാളം)", "si": "Sinhala (සිංහල)", "lo": "Lao (ລາວ)", "km": "Khmer (ខ្មែរ)",
    "my": "Burmese (မြန်မာ)", "am": "Amharic (አማርኛ)",
    # a prompt's "Reply in {language} only." for a message whose language was not told
    UNKNOWN: "the language the student's message is written in",
}


Votes = dict[str, tuple[tuple[str, float], ...]]


@functools.cache
def language_code(name: str) -> str:
    """'Korean (한국어)' -> 'ko': the code of one of LANGUAGE_NAMES ("" when none)."""
    return next((code for code, known in LANGUAGE_NAMES.items() if known == name), "")


def _votes(script: str) -> tuple[Votes, Votes]:
    """Each function word's and letter's vote per language of `script`, split evenly among
    the languages that share it (a word of every Romance language says little)."""
    words: dict[str, list[str]] = {}
    for lang, listed in WORDS[script].items():
        for w in listed.split():
            if script == "latin" and len(w) == 1 and w not in LATIN_VOWELS:
                continue  # "n", "l", "d", "s" of an elision are maths' x_n, d, t just as often
            words.setdefault(w, []).append(lang)
    letters = {ch: langs.split() for ch, langs in LETTERS.get(script, {}).items()}
    return ({w: tuple((lang, 1 / len(langs)) for lang in langs) for w, langs in words.items()},
            {ch: tuple((lang, LETTER_VOTE / len(langs)) for lang in langs)
             for ch, langs in letters.items()})


def vote(script: str, words: Counter[str], default: str = "") -> str | None:
    """The language of `words` (lower-cased, with their counts, all in `script`, one the
    languages of `function_words` share), or None when no language wins clearly. Undecided,
    the default (where it writes `script`, else the script's `PRIMARY` language) is taken if
    it leads."""
    by_word, by_letter = _votes(script)
    scores: dict[str, float] = {}
    hits: dict[str, int] = {}  # words that vote for a language, by their word or letters
    for w, n in words.items():
        found = by_word.get(w, ())
        if not w.isascii():
            found += tuple(v for ch in w if ch in by_letter for v in by_letter[ch])
        for lang, weight in found:
            scores[lang] = scores.get(lang, 0.0) + weight * n
        for lang in {lang for lang, _weight in found}:
            hits[lang] = hits.get(lang, 0) + n
    fallback = default if default in WORDS[script] else PRIMARY.get(script)
    if script == "latin" and fallback not in scores:
        fallback = None  # Latin words no language claims are names and terms, not the default's
    if fallback is not None:
        scores[fallback] = scores.get(fallback, 0.0) + PRIOR
    if not scores:
        return None
    best = max(scores, key=scores.__getitem__)
    top = scores[best]
    second = max((v for lang, v in scores.items() if lang != best), default=0.0)
    dense = script != "latin" or hits.get(best, 0) >= DENSITY * words.total()
    if top >= MIN_VOTE and (top >= MARGIN * second or top - second >= MIN_VOTE) and dense:
        return best
    return fallback if best == fallback else None


def detect_language(text: str, default: str = UNKNOWN) -> str:
    """Guess the language of `text` (ISO 639-1 code, or `UNKNOWN`).

    `default` (a course's language) is taken when the text has no letters or only Latin
    words no language claims (names and terms: "Newton Raphson"), and where the words of a
    script it writes leave the choice open or lean its way. Mixed text with no language on
    more than `MAJORITY` of its letters is `UNKNOWN`, or the default where that is one of its
    languages; so is text in a script the default does not write that nothing decides."""
    text = unicodedata.normalize("NFKC", text).lower()
    words = Counter(WORD.findall(text))
    if text.isascii():  # the common case, English words or names only: Latin alone votes
        found = vote("latin", words, default) if any(len(w) > 1 for w in words) else None
        return found or default
    mass = script_mass(words.elements())
    if not mass:
        return default
    shared: dict[str, Counter[str]] = {}
    if any(script in SHARED for script in mass):
        for w, n in words.items():
            shared.setdefault(word_script(w) or OTHER, Counter())[w] = n
    evidence: Counter[str] = Counter()  # language, or the script no language of won
    for script, weight in mass.items():
        found = SOLE_LANGUAGE.get(script)
        if found is None and script in SHARED:
            found = vote(script, shared.get(script, Counter()), default)
        if found is not None:
            evidence[found] += weight
        elif script != "latin":  # Latin words of no language are names and terms
            evidence[script] += weight
    if not evidence:
        return default
    best, weight = evidence.most_common(1)[0]
    if weight <= MAJORITY * sum(evidence.values()):
        return default if default in evidence else UNKNOWN
    if best in SHARED or best == OTHER:
        return default if language_script(default) == best else UNKNOWN
    return best


def language_script(language: str) -> str | None:
    """The script `language` is written in ('latin', 'cyrillic', 'han', ...), None when the
    detector does not know the language."""
    for script, languages in WORDS.items():
        if language in languages:
            return script
    return next((s for s, lang in SOLE_LANGUAGE.items() if lang == language), None)


def script_language(text: str) -> str | None:
    """The language the text's script alone names ('zh', 'ja', 'ko', 'el', 'th', ...), None
    when the script is shared by several languages or the text has no letters."""
    mass = script_mass(WORD.findall(unicodedata.normalize("NFKC", text)))
    if not mass:
        return None
    script, weight = mass.most_common(1)[0]
    return SOLE_LANGUAGE.get(script) if weight > MAJORITY * sum(mass.values()) else None


_CODE = re.compile(r"^[a-z]{2,3}$")


def check_language(value: str) -> str:
    """A language code as the store keeps it: 'zh-CN' -> 'zh', 'IT' -> 'it'."""
    code = value.strip().replace("_", "-").split("-", 1)[0].lower()
    if not _CODE.match(code):
        raise InputError(f"language must be a language code such as en, it or zh, got {value!r}",
                         code="invalid_language", value=value)
    return code


def majority_language(texts: Iterable[str], default: str) -> str:
    """The language most of `texts` are in (one vote per text that can be told), else
    `default` (`majority`)."""
    return majority(Counter(lang for lang in (detect_language(t, default="") for t in texts)
                            if lang), default)


def majority(votes: Counter[str], default: str) -> str:
    """The language with most `votes`, ties going to the one met first; `UNKNOWN` only with
    more votes than any language; `default` when nothing voted."""
    languages = Counter({lang: n for lang, n in votes.items() if lang != UNKNOWN and n > 0})
    if not languages:
        return UNKNOWN if votes.get(UNKNOWN, 0) > 0 else default
    best, n = languages.most_common(1)[0]
    return UNKNOWN if votes.get(UNKNOWN, 0) > n else best


def search_language(question: str, course: str, languages: Mapping[str, int]) -> str:
    """The language to search a course in for a question in `question`: the question's own
    when the course has chunks in it (no translation then), else the course's language; a
    course of no known language is searched with the question as asked (nothing to
    translate into).

    `languages` is the course's chunks per language (Store.course_languages)."""
    if languages.get(question, 0) > 0 or course == UNKNOWN:
        return question
    return course
