"""What a student's own answer shows: right or wrong on a topic and, if wrong, the
misconception in one sentence; recorded as a mastery observation (Bayesian Knowledge Tracing)
and as a weak area that repeated evidence strengthens and later right answers weaken.

The model's verdict is read here (`parse_diagnosis`): JSON, validated field by field; anything
else is no diagnosis, never an error. The tutor's turn stage (`tutor/diagnosis.py`) asks the
model; this module decides when to ask and what to store.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence

from ..config import Settings
from ..store import Store
from ..store.mastery import TopicMastery, WeakArea
from . import bkt

__all__ = ["DIAGNOSED_INTENTS", "Diagnosis", "Recorded", "asks_back", "looks_like_work",
           "parse_diagnosis", "record", "same_misconception", "should_diagnose"]

DIAGNOSED_INTENTS = frozenset({"exercise", "concept"})
MAX_SENTENCE = 300  # characters of a misconception kept
STRENGTHEN = 1.0  # a repeated misconception's weak area gains this
WEAKEN = 0.5  # a right answer on the topic takes this from each of its weak areas
SIMILAR = 0.5  # share of the shorter sentence's content words two misconceptions share

# the student writing their own working or answer: formulas, results, first-person attempts
_FORMULA = re.compile(r"(?:[\d)]|\b[a-zA-Z])\s*[=<>^*/+\u2212]\s*[\w(]"
                      r"|[\w)]\s*[=<>^*/+\u2212]\s*[\d(]|\d\s*-\s*\d")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
# a number that names an item of the course, not a student's result: "exercise 1 of sheet 9",
# "esercizio 3", "section 2.3", "练习1", "第3题", "연습 문제 1", "3장"
_REFERENCE = re.compile(
    r"\b(?:exercises?|sheets?|problems?|questions?|parts?|pages?|p\.|chapters?|sections?|"
    r"lectures?|slides?|units?|weeks?|esercizi[oa]?|fogli[oa]?|problemi|pagin[ae]|capitol[oi]|"
    r"sezion[ei]|lezion[ei]|aufgaben?|übungs?(?:blatt)?|blatt|seiten?|kapitel|abschnitt|"
    r"exercices?|feuilles?|chapitres?|ejercicios?|hojas?|capítulos?|secci[oó]n)\s*\d+(?:\.\d+)*"
    r"|(?:练习|习题|作业|연습\s?문제|문제|第)\s*\d+(?:\.\d+)*\s*[题章节页]?"
    r"|\d+(?:\.\d+)*\s*(?:장|번|페이지|题|章|节|页)", re.IGNORECASE)
_ATTEMPT = re.compile(
    r"\b(?:i think|i got|i get|i found|i tried|i did|i used|i calculated|i computed|i believe|"
    r"i guess|my answer|my result|my solution|so it'?s|so the answer|it should be|is it|"
    r"would it be|because|penso|credo|ho ottenuto|ho trovato|la mia risposta|ich denke|"
    r"ich habe|meine antwort|je pense|j'ai trouvé|ma réponse|creo que|mi respuesta|"
    r"我觉得|我认为|我算出|我的答案|제 생각|제 답)", re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_]{4,}")


@dataclasses.dataclass(frozen=True)
class Diagnosis:
    """The model's verdict on a student's answer."""

    correct: bool
    topic: str
    misconception: str = ""  # one sentence; empty when correct


@dataclasses.dataclass(frozen=True)
class Recorded:
    """What a diagnosis changed: the topic's estimate and the weak area it made or fed."""

    diagnosis: Diagnosis
    mastery: TopicMastery
    weak_area: WeakArea | None = None
    weakened: tuple[WeakArea, ...] = ()


def looks_like_work(message: str) -> bool:
    """The message carries the student's own working or answer (a formula, two numbers or
    more, or a first-person attempt such as "I think" or "I got"); the numbers of the
    course's items it names are none ("Which loss does exercise 1 of sheet 9 minimise?" was
    diagnosed as an answer, and its "misconception" recorded as a weak area)."""
    message = _REFERENCE.sub(" ", message)
    return bool(_FORMULA.search(message) or len(_NUMBER.findall(message)) >= 2
                or _ATTEMPT.search(message))


def asks_back(reply: str) -> bool:
    """The tutor's reply ends by asking the student something (a check for understanding)."""
    tail = reply.strip()[-240:]
    return "?" in tail or "？" in tail


def should_diagnose(mode: str, intent: str, answered: bool, message: str,
                    previous_reply: str) -> bool:
    """Whether to ask the model about this turn: an exercise or concept turn the tutor
    answered, where (mode "auto") the student shows their work or answers the tutor's
    question; "always" asks on every such turn, "off" never."""
    if mode == "off" or intent not in DIAGNOSED_INTENTS or not answered:
        return False
    if mode == "always":
        return True
    return looks_like_work(message) or (asks_back(previous_reply)
                                        and not message.rstrip().endswith(("?", "？")))


def _first_sentence(text: str) -> str:
    text = " ".join(text.split())
    match = re.match(r"(.+?[.!?。！？])(?:\s|$)", text)
    return (match.group(1) if match else text)[:MAX_SENTENCE].strip()


def _topic(value: object, topics: Sequence[str], fallback: str) -> str:
    if isinstance(value, str):
        wanted = " ".join(value.split()).casefold()
        for topic in topics:
            if topic.casefold() == wanted:
                return topic
    return fallback


def parse_diagnosis(raw: str, topics: Sequence[str], fallback_topic: str) -> Diagnosis | None:
    """The model's JSON verdict, validated: {"answered": bool, "correct": bool,
    "misconception": str, "topic": one of `topics`}. None when the student gave no answer,
    the JSON is unreadable or a field is missing or of the wrong type; a wrong answer needs a
    misconception. A topic outside the list becomes `fallback_topic`."""
    match = re.search(r"\{.*\}", raw, re.DOTALL)
    try:
        data = json.loads(match.group(0)) if match else None
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict) or data.get("answered") is not True:
        return None
    correct = data.get("correct")
    if not isinstance(correct, bool):
        return None
    topic = _topic(data.get("topic"), topics, fallback_topic)
    if not topic:
        return None
    if correct:
        return Diagnosis(True, topic)
    text = data.get("misconception")
    sentence = _first_sentence(text) if isinstance(text, str) else ""
    if len(sentence.split()) < 2:
        return None
    return Diagnosis(False, topic, sentence)


def _words(text: str) -> set[str]:
    return {w.casefold().rstrip("s") for w in _WORD.findall(text)}


def same_misconception(a: str, b: str) -> bool:
    """Two sentences name the same misconception: they share at least half of the shorter
    one's content words (words of four letters or more)."""
    wa, wb = _words(a), _words(b)
    if not wa or not wb:
        return " ".join(a.casefold().split()) == " ".join(b.casefold().split())
    return len(wa & wb) / min(len(wa), len(wb)) >= SIMILAR


def record(store: Store, settings: Settings, tenant: str, course: str, student: str,
           turn_id: str, diagnosis: Diagnosis) -> Recorded:
    """Store a diagnosis: the BKT update of the topic's estimate; a wrong answer strengthens
    the weak area with the same misconception on the topic or opens one, a right answer
    weakens the topic's weak areas."""
    params = bkt.course_params(store, settings, tenant, course)
    mastery = store.mastery.observe(
        tenant, course, student, diagnosis.topic, diagnosis.correct, turn_id,
        lambda known: bkt.update(known, diagnosis.correct, params))
    if diagnosis.correct:
        weakened = store.mastery.weaken(tenant, course, student, diagnosis.topic, turn_id,
                                        WEAKEN)
        return Recorded(diagnosis, mastery, weakened=tuple(weakened))
    same = next((w for w in store.mastery.weak_areas(tenant, course, student)
                 if w.topic == diagnosis.topic
                 and same_misconception(w.misconception, diagnosis.misconception)), None)
    if same is not None:
        area = store.mastery.strengthen(tenant, course, student, same.id, turn_id, STRENGTHEN)
    else:
        area = store.mastery.add_weak_area(tenant, course, student, diagnosis.topic,
                                           diagnosis.misconception, turn_id)
    return Recorded(diagnosis, mastery, area)
