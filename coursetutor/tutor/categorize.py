"""What kind of message is this? Cheap multilingual rules first, the model when they are unsure."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Literal

from ..retrieval.language import detect_language

Category = Literal["lecture", "followup", "platform", "off_topic", "unrecognizable"]
Intent = Literal["concept", "exercise", "exam", "definition", "comparison"]
CATEGORIES: tuple[Category, ...] = ("lecture", "followup", "platform", "off_topic",
                                    "unrecognizable")
INTENTS: tuple[Intent, ...] = ("concept", "exercise", "exam", "definition", "comparison")


ANSWERED = ("lecture", "followup")  # the categories the course material answers


@dataclasses.dataclass(frozen=True)
class Categorization:
    """The kind of message, what the student wants, and how sure the rules were."""

    category: Category
    intent: Intent
    wants_answer: bool
    language: str
    sure: bool = True
    source: str = "rules"  # rules, llm, or fallback (the model's JSON was unusable)
    # why or how a method works, asked about an exercise: a concept question about it
    about_exercise: bool = False


def _words(*alternatives: str) -> re.Pattern[str]:
    return re.compile("|".join(alternatives), re.IGNORECASE)


_PLATFORM = _words(
    r"\b(pass ?word|log ?in|log ?out|sign ?(in|up)|account|user ?name|api key|dark mode|"
    r"notification|browser|this (app|website|site|tutor|chat)|the app\b|subscription|"
    r"refund|reset my|upload (a|my) file)", r"\b(accesso|accedere|iscrizione|l'app\b|"
    r"applicazione|piattaforma|anmelden|passwort|konto|mot de passe|compte|contraseña|cuenta)",
    r"密码|登录|账号|账户|注册|应用程序", r"비밀번호|로그인|계정|회원가입|앱",
    r"パスワード|ログイン|アカウント",
)
_GREETING = _words(
    r"^\s*(hi|hello|hey|good (morning|evening|afternoon)|thanks?( you)?|thank you|ciao|"
    r"salve|grazie|buongiorno|hallo|danke|bonjour|merci|hola|gracias|你好|谢谢|안녕하세요|"
    r"안녕|감사합니다|こんにちは|ありがとう)[\s!.,?\u3002\uff01]*$",
)
_SMALL_TALK = _words(
    r"\b(how are you|tell me a joke|a joke|weather|football|soccer|movie|recipe|"
    r"your favou?rite|who (made|created) you|are you (a )?(human|robot|ai)|"
    r"come stai|barzelletta|che tempo|wie geht'?s|witz)\b",
    r"你好吗|笑话|天气|잘 지내|농담|날씨",
)
_FOLLOWUP_START = _words(
    r"^\s*(and|but|what about|how about|why|so|also|ok(ay)?|then|e|ma|perch[eé]|und|aber|"
    r"warum|et|mais|pourquoi|y|pero|por qu[eé]|那|那么|为什么|还有|그럼|그리고|왜)\b",
)
_FOLLOWUP = _words(
    r"\b(the other( one)?|that one|this one|it|its|them|those|these|the same|again|more|"
    r"help( me)?|stuck|hint|next step|what now|don'?t (get|understand)|another example|"
    r"the previous|aiuto|aiutami|bloccat[oa]|hilfe|aide|ayuda|l'altr[oa]|quell[oa]|"
    r"quest[oa]|ancora|"
    r"non ho capito|der andere|die andere|nochmal|l'autre|encore|el otro|otra vez)\b",
    r"另一个|这个|那个|再|다른 것|그거|이거|다시",
)
_EXERCISE = _words(
    r"\b(exercises?|problems?|homework|assignments?|tasks?|worksheet|solve|esercizi[oi]|"
    r"compito|problema|aufgabe|übung|exercice|devoir|ejercicio|tarea)\b",
    # 问题/문제/問題 alone mean "question, problem" ("收敛问题", "수렴 문제"): a concept word;
    # with a number, or "solve this problem", they name an exercise
    r"练习|习题|作业|题目|第\s*\d+\s*[题題]|(?<!问)题|연습|과제|숙제|\d+\s*번\s*문제|"
    r"문제\s*\d+|문제를?\s*풀|演習|宿題|問題\s*\d+|第\s*\d+\s*問|問題を解",
)
# why or how something works, not what its result is: "why is Gauss-Newton used in exercise
# 2?", "how does the method in exercise 1 work?", "perché", "warum", "为什么", "왜"
_WHY_HOW = _words(
    r"\b(why|how come|how (does|do|is|are)\b.*\b(work|works|used|applicable|chosen|"
    r"converge|converges)\b|what is the (idea|reason|"
    r"intuition)|explain (why|how)|perch[eé]|come funziona|come mai|a cosa serve|warum|wieso|"
    r"weshalb|wie funktioniert|pourquoi|comment fonctionne|por qu[eé]|c[oó]mo funciona)",
    r"为什么|为何|怎么工作|如何工作|原理|思路|왜|어떻게 작동|원리|なぜ|どうして|仕組み",
)
_EXAM = _words(
    r"\b(exams?|midterm|final test|quiz|test|revise|revision|prepare for|study for|esame|"
    r"prova|verifica|prüfung|klausur|examen|parcial)\b", r"考试|复习|시험|복습|試験",
)
_DEFINITION = _words(
    r"\b(what is an?|what is the|what are|what's|what does .* mean|define|definition|meaning "
    r"of|cos'è|che cos'è|cosa significa|definizione|was ist|was bedeutet|definition von|"
    r"qu'est-ce que|qué es|definición)\b", r"什么是|是什么|定义|무엇인가|뭐예요|정의|とは",
)
_COMPARISON = _words(
    r"\b(differences?|differ|compare|comparison|versus|vs\.?|better than|worse than|"
    r"faster than|differenza|confronta|rispetto a|unterschied|vergleich|différence|"
    r"comparer|diferencia|comparar)\b", r"区别|比较|不同|차이|비교|違い|比較",
)
_WANTS_ANSWER = _words(
    r"\b(just (give|tell) me|give me the (answer|solution|result)|what('s| is) the (answer|"
    r"result|solution)|final answer|the solution|solve (it|this|exercise \d+) for me|"
    r"do (it|this|my homework) for me|dammi la (soluzione|risposta)|qual è la (risposta|"
    r"soluzione)|risultato finale|gib mir die lösung|die lösung|donne-moi la (réponse|"
    r"solution)|dame la (respuesta|solución))\b",
    r"直接告诉我|给我答案|答案是|最终答案|정답|답을 알려|답만|答えを教えて",
)
# a number or a short calculation, with at most a variable name: "12?", "x = 1.414", "$50"
_ANSWER_ATTEMPT = re.compile(
    r"^\s*(?:[a-z]\s*=\s*)?[-+$€£]?\s*\d[\d\s.,+\-*/×÷=^()%$€£]*[?!.]*\s*$", re.IGNORECASE)
_LATIN_WORD = re.compile(r"[a-zà-ÿ]+", re.IGNORECASE)
_VOWELS = set("aeiouyàèéìòùäöüáíóúâêîôû")


def looks_garbled(text: str) -> bool:
    """True when the text has no letters, or mostly vowel-less or keyboard-mash words."""
    if not re.search(r"[^\W\d_]", text):
        return True
    words = [w.lower() for w in _LATIN_WORD.findall(text)]
    if not words or len(words) * 3 < len(text.split()):
        return False  # mostly another script: leave it to the retriever and the model
    def odd(w: str) -> bool:
        return (len(w) > 3 and not set(w) & _VOWELS) or re.search(
            r"[^aeiouyàèéìòùäöüáíóú\W\d]{7,}", w) is not None

    return sum(map(odd, words)) * 2 > len(words)


def asks_why_or_how(text: str) -> bool:
    """A question about why or how a method works (not for a result): "why Gauss-Newton?"."""
    return bool(_WHY_HOW.search(text)) and not _WANTS_ANSWER.search(text)


def _intent(text: str) -> Intent:
    if _COMPARISON.search(text):
        return "comparison"
    if _WANTS_ANSWER.search(text):
        return "exercise"
    if _EXERCISE.search(text):
        return "concept" if asks_why_or_how(text) else "exercise"
    if _EXAM.search(text):
        return "exam"
    if _DEFINITION.search(text):
        return "definition"
    return "concept"


def categorize_rules(text: str, has_history: bool, course_language: str = "en") -> Categorization:
    """Categorize with keyword rules; `sure` is False when no rule clearly applied."""
    language = detect_language(text, default=course_language)
    intent = _intent(text)
    wants = bool(_WANTS_ANSWER.search(text))

    about = bool(_EXERCISE.search(text)) and asks_why_or_how(text)

    def result(category: Category, sure: bool = True) -> Categorization:
        return Categorization(category, intent, wants, language, sure, about_exercise=about)

    if has_history and _ANSWER_ATTEMPT.match(text):
        return result("followup")  # "12?": the student answers the tutor's last question
    if looks_garbled(text):
        return result("unrecognizable")
    if _GREETING.search(text):
        return result("off_topic")
    # a keyword alone does not make a course question small talk ("weather" in a meteorology
    # course, "account" in accounting): these verdicts wait for the evidence
    if _SMALL_TALK.search(text):
        return result("off_topic", sure=False)
    if _PLATFORM.search(text):
        return result("platform", sure=False)
    n_words = len(text.split())
    if has_history and (
        (n_words <= 6 and _FOLLOWUP_START.search(text))
        or ((n_words <= 10 or len(text) <= 40) and _FOLLOWUP.search(text))
    ):
        return result("followup")
    # a course question is the common case; whether the course covers it is the grader's call
    return result("lecture", sure=intent != "concept" or about or len(text.split()) >= 3)


def parse_llm_categorization(raw: str, fallback: Categorization) -> Categorization:
    """Read the model's JSON verdict; on malformed output keep the rules' answer."""
    match = re.search(r"\{.*\}", raw, re.DOTALL)
    try:
        data = json.loads(match.group(0)) if match else None
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict) or data.get("category") not in CATEGORIES:
        return dataclasses.replace(fallback, source="fallback")
    intent = data.get("intent")
    if fallback.about_exercise and intent == "exercise":
        intent = "concept"  # why or how about an exercise stays a concept question
    return Categorization(
        category=data["category"],
        intent=intent if intent in INTENTS else fallback.intent,
        wants_answer=bool(data.get("wants_answer", fallback.wants_answer)) or fallback.wants_answer,
        language=fallback.language,
        sure=True,
        source="llm",
        about_exercise=fallback.about_exercise,
    )
