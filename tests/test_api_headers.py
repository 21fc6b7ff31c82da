"""Every response carries the security headers: a strict content security policy on the pages
and the API (scripts, styles and requests from this server only, nothing inline), framing by
this server only, no type sniffing, no referrer; uploads wait in a folder only the server's
user may open."""

from __future__ import annotations

import re
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from coursetutor.api.middleware import PAGE_POLICY
from coursetutor.retrieval import EmbeddingModel

from .api_support import COURSE, PDF_DOC, Api, open_api
from .support import Sample

STATIC = Path(__file__).resolve().parents[1] / "coursetutor" / "api" / "static"


@pytest.fixture
def api(sample: Sample, embedder: EmbeddingModel, tmp_path: Path) -> Iterator[Api]:
    with open_api(sample, embedder, tmp_path / "data", api_secret="test-secret") as found:
        yield found


def _common(headers: object) -> None:
    h = dict(headers)  # type: ignore[call-overload]
    assert h["x-content-type-options"] == "nosniff"
    assert h["referrer-policy"] == "no-referrer"
    assert h["x-frame-options"] == "SAMEORIGIN"
    assert "frame-ancestors 'self'" in h["content-security-policy"]


@pytest.mark.parametrize("path", ["/", "/teacher", "/static/app.js", "/healthz",
                                  "/v1/courses", "/v1/no-such-route"])
def test_pages_and_api_answers_carry_the_strict_policy(api: Api, path: str) -> None:
    response = api.call("student", "GET", path)
    _common(response.headers)
    policy = response.headers["content-security-policy"]
    assert policy == PAGE_POLICY
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert "script-src 'self'" in policy and "object-src 'none'" in policy


def test_a_course_file_may_be_framed_by_the_page_only(api: Api) -> None:
    response = api.call("teacher", "GET", f"/v1/documents/{COURSE}:{PDF_DOC}/file")
    assert response.status_code == 200
    _common(response.headers)
    assert response.headers["content-security-policy"] == "frame-ancestors 'self'"


def test_the_pages_need_nothing_inline() -> None:
    """What the policy forbids is not in the pages: no inline script or style, no handler
    attributes, no style attribute set from a script."""
    for page in STATIC.glob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", text), page.name
        assert "<style" not in text and " style=" not in text, page.name
        assert not re.search(r"\son[a-z]+=", text), page.name
    for script in STATIC.glob("*.js"):
        text = script.read_text(encoding="utf-8")
        assert not re.search(r"\bstyle:\s*[`'\"]", text), script.name
        assert "innerHTML" not in text and "eval(" not in text, script.name


def test_keys_live_in_the_tab_only() -> None:
    common = (STATIC / "common.js").read_text(encoding="utf-8")
    assert "sessionStorage.setItem(KEY_PREFIX" in common
    assert "localStorage.setItem(KEY_PREFIX" not in common


def test_uploads_wait_in_a_private_folder(api: Api) -> None:
    uploads = Path(api.settings.data_dir) / "uploads"
    uploads.mkdir(mode=0o755, exist_ok=True)
    uploads.chmod(0o755)  # as an earlier version left it
    response = api.call("teacher", "POST", f"/v1/courses/{COURSE}/documents",
                        files=[("files", ("note.md", b"# Note\n\nA short note.\n",
                                          "text/markdown"))])
    assert response.status_code == 202, response.text
    assert stat.S_IMODE(uploads.stat().st_mode) == 0o700
