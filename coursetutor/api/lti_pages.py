"""The pages the LTI routes render themselves: the teacher's choice of a course for a deep
link, the form that carries the signed answer back to the LMS (lti.js submits it; the button
is there for a browser without scripts), and a refused launch as a person in the LMS frame
reads it. Strings carry data-i18n keys for i18n.js."""

from __future__ import annotations

from html import escape

from ..types import Course

_HEAD = ('<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
         '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
         '<title>coursetutor</title>\n<link rel="stylesheet" href="/static/style.css">\n'
         '<script type="module" src="/static/lti.js"></script>\n</head>\n')


def choose_course(courses: list[Course], session: str, context_title: str) -> str:
    """The deep linking page: one course to link, and whether mastery goes to the grade book."""
    options = "\n".join(
        f'<label><input type="radio" name="course" value="{escape(c.id)}"'
        f'{" checked" if i == 0 else ""}> {escape(c.title or c.id)}</label><br>'
        for i, c in enumerate(courses))
    if not courses:
        options = '<p data-i18n="lti.no_courses">This tenant has no course yet.</p>'
    return (f'{_HEAD}<body data-page="lti-deep-link">\n<main>\n'
            f'<h1 data-i18n="lti.choose_title">Choose the course this link opens</h1>\n'
            f'<p>{escape(context_title)}</p>\n'
            f'<form method="post" action="/lti/deep-link">\n'
            f'<input type="hidden" name="session" value="{escape(session)}">\n'
            f'<fieldset>{options}</fieldset>\n'
            f'<label><input type="checkbox" name="grades" value="mastery"> '
            f'<span data-i18n="lti.send_grades">Send each student\'s mastery to the grade '
            f'book</span></label><br>\n'
            f'<button type="submit" id="lti-choose" data-i18n="lti.add_link"'
            f'{" disabled" if not courses else ""}>Add the link</button>\n'
            f'</form>\n</main>\n</body>\n</html>\n')


def post_back(return_url: str, token: str) -> str:
    """The page that posts the deep linking response (`JWT`) to the platform."""
    return (f'{_HEAD}<body data-page="lti-return">\n<main>\n'
            f'<form method="post" id="lti-autopost" action="{escape(return_url)}">\n'
            f'<input type="hidden" name="JWT" value="{escape(token)}">\n'
            f'<button type="submit" data-i18n="lti.return">Back to the LMS</button>\n'
            f'</form>\n</main>\n</body>\n</html>\n')


def refusal(message: str, reason: str) -> str:
    """A refused login, launch or deep link: what happened, what to do, and the reason code
    the tool's log has, for the administrator."""
    return (f'{_HEAD}<body data-page="lti-refused">\n<main class="card">\n'
            f'<h1 data-i18n="lti.refused_title">The tutor could not be opened</h1>\n'
            f'<p>{escape(message[:1].upper() + message[1:])}.</p>\n'
            f'<p data-i18n="lti.refused_retry">Open the link again from your course page; if '
            f'this keeps happening, tell your teacher or the platform\'s administrator.</p>\n'
            f'<p><small><span data-i18n="lti.refused_reason">Reason:</span> '
            f'<code>{escape(reason)}</code></small></p>\n</main>\n</body>\n</html>\n')
