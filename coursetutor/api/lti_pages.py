"""The pages the LTI routes render themselves: the teacher's choice of a course (or one of its
documents or live classes) for a deep link, the form that carries the signed answer back to the
LMS (lti.js submits it; the button is there for a browser without scripts), the end of a dynamic
registration, and a refused launch as a person in the LMS frame reads it; with the platform's
storage (LTI Client Side postMessages), the login's page that keeps its state and nonce there
and the launch's page that finds them again. Strings carry data-i18n keys for i18n.js."""

from __future__ import annotations

import json
from html import escape

from ..lti.focus import Choices
from ..lti.launch import Login, Verified
from ..lti.storage import nonce_key, state_key
from ..store.lti import Platform

_HEAD = ('<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
         '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
         '<title>coursetutor</title>\n<link rel="stylesheet" href="/static/style.css">\n'
         '<script type="module" src="/static/lti.js"></script>\n</head>\n')


def _options(found: list[Choices], kind: str) -> str:
    """The documents (or live classes) of every course, each marked with its course."""
    rows = []
    for entry in found:
        items = ([(d.id, d.title or d.id) for d in entry.documents] if kind == "document"
                 else [(k.id, k.title or k.id) for k in entry.classes])
        rows += [f'<option value="{escape(value)}" data-course="{escape(entry.course.id)}">'
                 f'{escape(entry.course.title or entry.course.id)}: {escape(text)}</option>'
                 for value, text in items]
    return "".join(rows)


def choose_course(found: list[Choices], session: str, context_title: str,
                  check: str = "") -> str:
    """The deep linking page: one course to link, maybe one of its documents or live classes,
    and whether mastery goes to the grade book. lti.js offers only the chosen course's
    documents and classes; the server checks the choice either way. With `check` (see
    `storage_check`) the page shows the form once lti.js found the login in the platform's
    storage."""
    options = "\n".join(
        f'<label><input type="radio" name="course" value="{escape(e.course.id)}"'
        f'{" checked" if i == 0 else ""}> {escape(e.course.title or e.course.id)}</label><br>'
        for i, e in enumerate(found))
    if not found:
        options = '<p data-i18n="lti.no_courses">This tenant has no course yet.</p>'
    return (f'{_HEAD}<body data-page="lti-deep-link"{check}>\n'
            f'<main{" hidden" if check else ""}>\n'
            f'<h1 data-i18n="lti.choose_title">Choose the course this link opens</h1>\n'
            f'<p>{escape(context_title)}</p>\n'
            f'<form method="post" action="/lti/deep-link">\n'
            f'<input type="hidden" name="session" value="{escape(session)}">\n'
            f'<fieldset>{options}</fieldset>\n'
            f'<p data-i18n="lti.choose_focus">Or open one of its documents or live classes '
            f'(optional):</p>\n'
            f'<label><span data-i18n="lti.document">Document</span> '
            f'<select name="document" id="lti-document"><option value="" '
            f'data-i18n="lti.whole_course">The whole course</option>'
            f'{_options(found, "document")}</select></label><br>\n'
            f'<label><span data-i18n="lti.live_class">Live class</span> '
            f'<select name="live_class" id="lti-live-class"><option value="" '
            f'data-i18n="lti.whole_course">The whole course</option>'
            f'{_options(found, "class")}</select></label><br>\n'
            f'<label><input type="checkbox" name="grades" value="mastery"> '
            f'<span data-i18n="lti.send_grades">Send each student\'s mastery to the grade '
            f'book</span></label><br>\n'
            f'<button type="submit" id="lti-choose" data-i18n="lti.add_link"'
            f'{" disabled" if not found else ""}>Add the link</button>\n'
            f'</form>\n</main>\n{_UNBOUND if check else ""}</body>\n</html>\n')


def post_back(return_url: str, token: str) -> str:
    """The page that posts the deep linking response (`JWT`) to the platform."""
    return (f'{_HEAD}<body data-page="lti-return">\n<main>\n'
            f'<form method="post" id="lti-autopost" action="{escape(return_url)}">\n'
            f'<input type="hidden" name="JWT" value="{escape(token)}">\n'
            f'<button type="submit" data-i18n="lti.return">Back to the LMS</button>\n'
            f'</form>\n</main>\n</body>\n</html>\n')


RETRY_LAUNCH = ("lti.refused_retry", "Open the link again from your course page; if this keeps "
                "happening, tell your teacher or the platform's administrator.")
RETRY_REGISTRATION = ("lti.register_retry", "Ask the tutor's administrator for a new "
                      "registration URL, or register the platform by hand.")


def refusal(message: str, reason: str, retry: tuple[str, str] = RETRY_LAUNCH) -> str:
    """A refused login, launch, deep link or registration: what happened, what to do, and the
    reason code the tool's log has, for the administrator."""
    key, advice = retry
    return (f'{_HEAD}<body data-page="lti-refused">\n<main class="card">\n'
            f'<h1 data-i18n="lti.refused_title">The tutor could not be opened</h1>\n'
            f'<p>{escape(message[:1].upper() + message[1:])}.</p>\n'
            f'<p data-i18n="{key}">{escape(advice)}</p>\n'
            f'<p><small><span data-i18n="lti.refused_reason">Reason:</span> '
            f'<code>{escape(reason)}</code></small></p>\n</main>\n</body>\n</html>\n')


def registered(platform: Platform) -> str:
    """The end of a dynamic registration: what was registered; lti.js then tells the platform
    to close its registration window (`org.imsglobal.lti.close`)."""
    return (f'{_HEAD}<body data-page="lti-registered">\n<main class="card">\n'
            f'<h1 data-i18n="lti.registered_title">The tutor is registered</h1>\n'
            f'<p><span data-i18n="lti.registered_issuer">Platform:</span> '
            f'<code>{escape(platform.issuer)}</code></p>\n'
            f'<p><span data-i18n="lti.registered_client">Client id:</span> '
            f'<code>{escape(platform.client_id)}</code></p>\n'
            f'<p data-i18n="lti.registered_close">You can close this window.</p>\n'
            f'</main>\n</body>\n</html>\n')


def _storage(found: Login | Verified, items: dict[str, str]) -> str:
    """The body's attribute that tells lti.js the platform's storage and what to put there or
    find there."""
    assert found.storage is not None
    data = {"target": found.storage.target, "origin": found.storage.origin,
            "origins": list(found.storage.origins), "items": items}
    return f' data-lti-storage="{escape(json.dumps(data))}"'


def keep_login(found: Login) -> str:
    """The login's page with the platform's storage: lti.js puts the state and nonce there,
    then goes on to the platform's auth URL (to the fallback, whose state and nonce are not
    kept there, if the storage does not answer; the link is for a browser without scripts)."""
    items = {state_key(found.login): found.state, nonce_key(found.login): found.nonce}
    return (f'{_HEAD}<body data-page="lti-login"{_storage(found, items)} '
            f'data-next="{escape(found.redirect)}" data-fallback="{escape(found.fallback)}">\n'
            f'<main class="card">\n<p data-i18n="lti.opening">Opening the tutor…</p>\n'
            f'<p><a href="{escape(found.fallback)}" data-i18n="lti.continue">Continue</a></p>\n'
            f'</main>\n</body>\n</html>\n')


def storage_check(found: Verified, state: str) -> str:
    """The body's attributes of a launch's page whose login kept its state and nonce in the
    platform's storage: lti.js finds them there before it opens anything."""
    items = {state_key(found.login): state, nonce_key(found.login): str(found.claims["nonce"])}
    return _storage(found, items)


_UNBOUND = ('<main class="card" id="lti-unbound" hidden>\n'
            '<h1 data-i18n="lti.refused_title">The tutor could not be opened</h1>\n'
            '<p data-i18n="lti.unbound">This launch did not start in this browser: the '
            'platform\'s storage does not hold its login.</p>\n'
            f'<p data-i18n="{RETRY_LAUNCH[0]}">{escape(RETRY_LAUNCH[1])}</p>\n'
            '<p><small><span data-i18n="lti.refused_reason">Reason:</span> '
            '<code>unbound_state</code></small></p>\n</main>\n')


def find_login(next_page: str, check: str) -> str:
    """The launch's page when its login kept state and nonce in the platform's storage: lti.js
    opens `next_page` once it found them there (the same as the launch's), else shows why
    not."""
    return (f'{_HEAD}<body data-page="lti-check"{check} data-next="{escape(next_page)}">\n'
            f'<main class="card">\n<p data-i18n="lti.opening">Opening the tutor…</p>\n'
            f'</main>\n{_UNBOUND}</body>\n</html>\n')
