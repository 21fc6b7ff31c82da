"""The pages the LTI routes render themselves: the teacher's choice of a course (or one of its
documents or live classes) for a deep link, the form that carries the signed answer back to the
LMS (lti.js submits it; the button is there for a browser without scripts), the end of a dynamic
registration, and a refused launch as a person in the LMS frame reads it. Strings carry
data-i18n keys for i18n.js."""

from __future__ import annotations

from html import escape

from ..lti.focus import Choices
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


def choose_course(found: list[Choices], session: str, context_title: str) -> str:
    """The deep linking page: one course to link, maybe one of its documents or live classes,
    and whether mastery goes to the grade book. lti.js offers only the chosen course's
    documents and classes; the server checks the choice either way."""
    options = "\n".join(
        f'<label><input type="radio" name="course" value="{escape(e.course.id)}"'
        f'{" checked" if i == 0 else ""}> {escape(e.course.title or e.course.id)}</label><br>'
        for i, e in enumerate(found))
    if not found:
        options = '<p data-i18n="lti.no_courses">This tenant has no course yet.</p>'
    return (f'{_HEAD}<body data-page="lti-deep-link">\n<main>\n'
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
            f'</form>\n</main>\n</body>\n</html>\n')


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
