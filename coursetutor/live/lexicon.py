"""The course lexicon: course terms that speech-to-text gets wrong, put right in incoming text.

The lexicon is built from the course's own documents: every word with its count and most
frequent spelling, the words and word pairs the course uses (never corrected), and the terms a
near-miss may be corrected to (words of at least `MIN_TERM` letters, not stop words, seen at
least twice or spelt as a proper name). A correction is made only when it is hard to be wrong:

- **join**: words the recogniser split ("eigen vector") whose letters together are a course
  term, when the course never writes them apart, none is a stop word, the last is a word of
  the course and one before it is not ("data set" stays: English writes compounds apart);
- **sound**: two or three words that sound like one term ("I can vector" -> "eigenvector": the
  same consonant skeleton word by word, letters at least `MIN_SIMILARITY` alike), the last
  word the longest and inside the term, the others small words or words the course never
  uses, the term at least `MIN_SOUND_TERM` letters and more frequent in the course than that
  last word ("in homogeneous" stays where the course says "homogeneous" more often);
- **near**: one word of at least `MIN_WORD` letters the course never uses, that sounds like
  a term and is within a letter or two of it ("Nakamotto" -> "Nakamoto"), not another form
  of a word the course uses and not differing only in its ending.

A contraction ("we'll") is never part of a correction.
The raw text is kept by the caller; `correct` returns the corrected text and each change.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable

from ..retrieval.language import ANY_STOPWORD
from ..retrieval.tokenize import stemmer_for

MIN_TERM = 6  # letters of a term a near-miss may be corrected to
MIN_WORD = 8  # letters of a single unknown word worth correcting ("become" is no "became")
MIN_SIMILARITY = 0.7  # letters alike (1 - edit distance / longer length) for a sounds-like span
MAX_SPAN = 3  # words joined into one term at most
MIN_SOUND_TERM = 9  # letters of a term a sounds-like span may become ("the rough" != "through")
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?", re.UNICODE)
_GAP = re.compile(r"^[ \t-]*$")  # only spaces or a hyphen between two words of one span
_ALL_STOP = ANY_STOPWORD | frozenset(
    "i you he she we they me my our your a an so if but at no yes oh ok um uh".split())


@dataclasses.dataclass(frozen=True)
class Correction:
    """One change: the characters [start, end) of the raw text, what they were and became."""

    start: int
    end: int
    raw: str
    replacement: str
    rule: str  # join, sound or near


def fold(word: str) -> str:
    """Case-folded, accents removed, apostrophes dropped."""
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(ch for ch in decomposed if ch.isalpha())


_DIGRAPHS = (("sch", "sk"), ("ph", "f"), ("ck", "k"), ("qu", "kw"), ("sh", "x"), ("ch", "x"),
             ("th", "0"), ("gh", ""), ("wh", "w"), ("x", "ks"))
_SOUNDS = {"b": "P", "p": "P", "f": "F", "v": "F", "k": "K", "q": "K", "g": "K", "j": "K",
           "c": "K", "s": "S", "z": "S", "d": "T", "t": "T", "m": "N", "n": "N", "l": "L",
           "r": "R", "x": "X", "0": "0"}


def sound_key(word: str) -> str:
    """A rough consonant skeleton: letters that sound alike share a symbol, vowels go (a
    leading one is kept as 'A'), repeats collapse. 'eigenvector' and 'I can vector' share
    'AKNFKTR'."""
    w = fold(word)
    if not w:
        return ""
    w = re.sub(r"c(?=[eiy])", "s", w)
    for old, new in _DIGRAPHS:
        w = w.replace(old, new)
    key = "A" if w[0] in "aeiouy" else ""
    for ch in w:
        symbol = _SOUNDS.get(ch, "")
        if symbol and not key.endswith(symbol):
            key += symbol
        elif not symbol and ch in "aeiouy" and key and key[-1] != "|":
            key += "|"  # a vowel keeps two equal consonants apart ('tot' is not 't')
    return key.replace("|", "")


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance with adjacent transpositions (optimal string alignment)."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[-1]


def similarity(a: str, b: str) -> float:
    """1 - edit distance over the longer length."""
    return 1.0 - edit_distance(a, b) / max(len(a), len(b), 1)


@dataclasses.dataclass
class Lexicon:
    """What the course says and how it spells it."""

    counts: Counter[str]  # folded word -> occurrences
    spelling: dict[str, str]  # folded term -> its most frequent written form
    pairs: frozenset[str]  # "word word" folded, as the course writes them
    terms: dict[str, list[str]]  # sound key -> folded terms
    stems: frozenset[str]
    lowercase: frozenset[str] = frozenset()  # folded words the course also writes lower-case
    language: str = "en"

    @classmethod
    def from_texts(cls, texts: Iterable[str], language: str = "en") -> Lexicon:
        """The lexicon of a course from the texts of its documents."""
        counts: Counter[str] = Counter()
        forms: Counter[tuple[str, str]] = Counter()
        pairs: set[str] = set()
        for text in texts:
            words = [m.group() for m in _WORD.finditer(text)]
            folded = [fold(w) for w in words]
            counts.update(folded)
            forms.update(zip(folded, words, strict=True))
            pairs.update(f"{a} {b}" for a, b in itertools.pairwise(folded))
        spelling: dict[str, str] = {}
        for (word, form), _n in forms.most_common():
            spelling.setdefault(word, form)
        terms: dict[str, list[str]] = {}
        for word, n in counts.items():
            proper = spelling[word][:1].isupper() and not spelling[word].isupper()
            if len(word) >= MIN_TERM and word not in _ALL_STOP and (n >= 2 or proper):
                terms.setdefault(sound_key(word), []).append(word)
        stem = stemmer_for(language)
        stems = frozenset(stem(list(counts)) if stem else counts)
        lowercase = frozenset(w for w, form in forms if form[:1].islower())
        return cls(counts, spelling, frozenset(pairs), terms, stems, lowercase, language)

    def __len__(self) -> int:
        return sum(len(v) for v in self.terms.values())

    def correct(self, text: str) -> tuple[str, list[Correction]]:
        """`text` with near-misses of course terms corrected, and the corrections made."""
        words = list(_WORD.finditer(text))
        found: list[Correction] = []
        i = 0
        while i < len(words):
            fix = None
            for n in range(min(MAX_SPAN, len(words) - i), 0, -1):
                span = words[i : i + n]
                if n > 1 and not all(_GAP.match(text[a.end() : b.start()])
                                     for a, b in itertools.pairwise(span)):
                    continue
                if any("'" in m.group() or "’" in m.group() for m in span):
                    continue  # a contraction ("we'll come") is never part of a term
                fix = self._span(text, span)
                if fix is not None:
                    i += n
                    break
            if fix is None:
                i += 1
            else:
                found.append(fix)
        out, pos = [], 0
        for c in found:
            out.append(text[pos : c.start] + c.replacement)
            pos = c.end
        return "".join(out) + text[pos:], found

    def _span(self, text: str, span: list[re.Match[str]]) -> Correction | None:
        """The correction of these adjacent words, if one is safe."""
        folded = [fold(m.group()) for m in span]
        joined = "".join(folded)
        if len(span) > 1:
            if any(f"{a} {b}" in self.pairs for a, b in itertools.pairwise(folded)):
                return None
            term = self._join(folded, joined) or self._sounds(folded, joined)
            rule = "join" if joined == term else "sound"
        else:
            term, rule = self._near(joined), "near"
        if term is None:
            return None
        raw = text[span[0].start() : span[-1].end()]
        return Correction(span[0].start(), span[-1].end(), raw, self._written(term, raw), rule)

    def _join(self, folded: list[str], joined: str) -> str | None:
        """The term the words spell together, when the last is a word of the course and one
        before it is not ('eigen vector'; 'data set' stays, a split ending in a word the
        course does not use is how English writes compounds)."""
        if any(w in _ALL_STOP or len(w) < 2 for w in folded) or joined not in self.counts:
            return None
        if folded[-1] not in self.counts or all(w in self.counts for w in folded[:-1]):
            return None
        return joined if len(joined) >= MIN_TERM and self.is_term(joined) else None

    def _sounds(self, folded: list[str], joined: str) -> str | None:
        """A term the words sound like as a whole, each word sounding like a part of it.

        The last word must be the longest, inside the term and less frequent in the course
        than the term ('in homogeneous' stays when the course says 'homogeneous' more than
        'inhomogeneous'; 'reaction was' is no 'reactions'); the other words must be small
        words or words the course never uses.
        """
        anchor = folded[-1]
        others = folded[:-1]
        if len(anchor) < max(len(w) for w in folded):
            return None
        if len(anchor) < 4 or not all(w in _ALL_STOP or w not in self.counts for w in others):
            return None
        if not all(sound_key(w) for w in folded):
            return None
        best = None
        for term in self.terms.get("".join(sound_key(w) for w in folded), []):
            alike = similarity(joined, term)
            if (anchor in term and len(term) >= MIN_SOUND_TERM and alike >= MIN_SIMILARITY
                    and self.counts[term] > self.counts.get(anchor, 0)
                    and (best is None or alike > similarity(joined, best))):
                best = term
        return best

    def _near(self, word: str) -> str | None:
        if len(word) < MIN_WORD or word in self.counts or word in _ALL_STOP:
            return None
        stem = stemmer_for(self.language)
        if stem is not None and stem([word])[0] in self.stems:
            return None  # another form of a word the course uses
        best, best_d = None, 0
        for term in self.terms.get(sound_key(word), []):
            if word[:-2] == term[:-2]:
                continue  # only the ending differs: a form of it ('analyses', 'analysis')
            d = edit_distance(word, term)
            if d <= max(1, len(term) // 5) and (best is None or d < best_d or (
                    d == best_d and self.counts[term] > self.counts[best])):
                best, best_d = term, d
        return best

    def is_term(self, word: str) -> bool:
        """Is the folded `word` a term near-misses may be corrected to?"""
        return word in self.terms.get(sound_key(word), [])

    def _written(self, term: str, raw: str) -> str:
        """The course's spelling, capitalised when the raw text was and the course is not."""
        form = self.spelling.get(term, term)
        if raw[:1].islower() and term in self.lowercase:
            return form[:1].lower() + form[1:]
        first = raw.split()[0] if raw.split() else raw
        if raw[:1].isupper() and form[:1].islower() and first != "I":
            return form[:1].upper() + form[1:]
        return form
