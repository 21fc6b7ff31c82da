"""Every string the pages show exists in each of the pages' languages: the markup's data-i18n
keys, the scripts' t("…") calls, the codes the server sends for the page to translate, and no
visible text in the markup without a key."""

from __future__ import annotations

import html.parser
import json
import re
from pathlib import Path

import pytest

from coursetutor.api.app import STATIC
from coursetutor.health.course import NOT_FOUND
from coursetutor.store.classes import SLIDE_SOURCES
from coursetutor.tutor import garble
from coursetutor.tutor.tiers import TIER_LABELS
from coursetutor.types import DOC_TYPES

from .codes import server_codes

LANGUAGES = ("en", "it", "de", "fr", "zh", "ko")  # the tutor answers in these
ENTRY = re.compile(r'^\s*("(?:[^"\\]|\\.)+"):\s*("(?:[^"\\]|\\.)*"),\s*$', re.MULTILINE)
CALL = re.compile(r'\bt\(\s*"([^"]+)"')
CHOICE = re.compile(r'\bt\(\s*[^()"]+\?\s*"([^"]+)"\s*:\s*"([^"]+)"')
KEYED = re.compile(r'"((?:profile|check|class|live|tier|course|courses|sessions)\.[a-z0-9_]+)"')
MARKUP = re.compile(r'data-i18n(?:-[a-z-]+)?="([^"]+)"')
PLACEHOLDER = re.compile(r"\{(\w+)\}")
# text in the markup that is no sentence to translate: the brand mark, a close sign, digits,
# and each language's own name in the course form's list of languages
UNTRANSLATED = {"ct", "×", "—", "1", "2", "3", "4", "5", "English", "Italiano", "Deutsch",
                "Français", "Español", "中文", "한국어"}


def strings(lang: str) -> dict[str, str]:
    text = (STATIC / "lang" / f"{lang}.js").read_text(encoding="utf-8")
    found = {json.loads(k): json.loads(v) for k, v in ENTRY.findall(text)}
    assert found, f"no strings read from lang/{lang}.js"
    return found


def used_keys() -> set[str]:
    keys: set[str] = set()
    for path in sorted(STATIC.glob("*.js")):
        text = path.read_text(encoding="utf-8")
        keys |= set(CALL.findall(text)) | set(KEYED.findall(text))
        for pair in CHOICE.findall(text):
            keys |= set(pair)
    for path in sorted(STATIC.glob("*.html")):
        keys |= set(MARKUP.findall(path.read_text(encoding="utf-8")))
    return keys


def server_keys() -> set[str]:
    """Keys of what the server sends as codes, and of its fixed phrases the page maps."""
    return ({f"tier.{code}" for code, _ in TIER_LABELS}
            | {f"live.source_{source}" for source in SLIDE_SOURCES}
            | {f"type.{doc_type}" for doc_type in DOC_TYPES}
            | {f"check.verdict_{v}" for v in ("ok", "weak", "missed")}
            | {f"error.{code}" for code in server_codes()})


def test_the_page_languages_are_the_tutors() -> None:
    shipped = {p.stem for p in (STATIC / "lang").glob("*.js")}
    assert shipped == set(LANGUAGES)
    i18n = (STATIC / "i18n.js").read_text(encoding="utf-8")
    assert re.search(r"const STRINGS = \{ (.*) \};", i18n).group(1).split(", ") == list(LANGUAGES)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_key_in_every_language(lang: str) -> None:
    english, here = strings("en"), strings(lang)
    needed = used_keys() | server_keys()
    assert sorted(needed - set(english)) == []
    assert sorted(set(english) - set(here)) == [], f"missing in {lang}"
    assert sorted(set(here) - set(english)) == [], f"unknown keys in {lang}"
    for key, text in here.items():
        assert text.strip(), f"{lang}: {key} is empty"
        assert set(PLACEHOLDER.findall(text)) == set(PLACEHOLDER.findall(english[key])), (
            f"{lang}: {key} names other placeholders than English")


def test_the_server_codes_are_read_from_the_code() -> None:
    codes = server_codes()
    # a class's own code, a raise site's, a report line's, the HTTP layer's and a job's
    assert codes["not_found"] == set()
    assert codes["course_not_found"] == {"course"}
    assert codes["file_too_large"] == {"file", "size", "limit"}
    assert codes["same_document_id"] == {"file", "document", "other"}
    assert codes["upload_too_many_pages"] == codes["upload_too_many_chunks"] == {
        "file", "count", "limit"}
    assert codes["validation"] == {"fields"}
    assert codes["method_not_allowed"] == set()
    assert codes["no_file_ingested"] == set()
    # a code both a class's and a raise site's names nothing: its class raised alone sends none
    assert codes["job_cancelled"] == set()


@pytest.mark.parametrize("code", sorted(server_codes()))
def test_every_server_code_has_a_sentence_with_the_params_it_is_sent(code: str) -> None:
    english = strings("en")
    assert f"error.{code}" in english, f"the server sends {code!r}: no sentence for it"
    named = set(PLACEHOLDER.findall(english[f"error.{code}"]))
    assert named <= server_codes()[code], (
        f"error.{code} names {sorted(named)}; the server sends {sorted(server_codes()[code])}")


def test_the_check_reports_phrases_are_translated() -> None:
    check = (STATIC / "check.js").read_text(encoding="utf-8")
    phrases = dict(re.findall(r'^\s*"([^"]+)": "(check\.[a-z_]+)",$', check, re.MULTILINE))
    sent = {NOT_FOUND, garble.PRIVATE_USE, garble.REPLACEMENT, garble.GAPS, garble.FEW_LETTERS,
            "the tutor did not answer it"}
    assert sent <= set(phrases)
    assert set(phrases.values()) <= set(strings("en"))


class VisibleText(html.parser.HTMLParser):
    """Text in the markup whose element carries no data-i18n key."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, bool]] = []
        self.bare: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("meta", "link", "input", "br", "img"):
            return
        keyed = any(name == "data-i18n" for name, _ in attrs)
        self.stack.append((tag, keyed))

    def handle_endtag(self, tag: str) -> None:
        while self.stack and self.stack.pop()[0] != tag:
            pass

    def handle_data(self, data: str) -> None:
        text = data.strip()
        if not text or not self.stack or self.stack[-1][0] in ("title", "script", "style"):
            return
        if not self.stack[-1][1] and text not in UNTRANSLATED:
            self.bare.append(text)


@pytest.mark.parametrize("page", ["index.html", "teacher.html"])
def test_no_visible_text_without_a_key(page: str) -> None:
    parser = VisibleText()
    parser.feed(Path(STATIC / page).read_text(encoding="utf-8"))
    assert parser.bare == []
