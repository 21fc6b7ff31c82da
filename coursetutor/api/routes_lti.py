"""LTI 1.3 for the browser an LMS sends: the OIDC login, the launch, the tool's key set, deep
linking. A launch opens the student or teacher page with a short-lived key in the URL's
fragment (never sent to a server, never shown), which `static/lti.js` keeps as the page's key.
With the platform's storage (LTI Client Side postMessages) the login and the launch answer
pages whose script keeps the login's state and nonce there and finds them again, and the
fragment names that storage, where the page keeps its key for a reload."""

from __future__ import annotations

import functools
import logging
import re
import time
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from ..errors import CoursetutorError, LaunchError, PermissionDeniedError
from ..lti import claims as c
from ..lti import deep_link, enter, focus, registry, roster, services, tokens, tool_keys
from ..lti import launch as lti_launch
from ..lti.tool import LtiTool
from ..store.lti import Platform
from .access import mint_key
from .deps import State, limit_address
from .errors import error_type, status_of
from .lti_pages import choose_course, find_login, keep_login, post_back, refusal, storage_check
from .middleware import page_policy
from .state import AppState

router = APIRouter(prefix="/lti", tags=["lti"])
log = logging.getLogger("coursetutor.lti")

_CODE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")  # an OAuth error code, echoed only if it is one
SESSION_SECONDS = 2 * 3600  # the key a launch hands its page
EXPIRED_KEPT_SECONDS = 24 * 3600  # expired launch keys are deleted after this


def lti_tool(state: AppState) -> LtiTool:
    assert state.lti is not None  # built by create_app
    return state.lti


async def _params(request: Request) -> dict[str, str]:
    params = dict(request.query_params)
    if request.method == "POST":
        form = await request.form()
        params.update({k: v for k, v in form.items() if isinstance(v, str)})
    return params


def wants_page(request: Request) -> bool:
    """A browser's navigation (an LMS form post), not an API client: it accepts HTML."""
    return "text/html" in request.headers.get("accept", "")


def reason(exc: CoursetutorError) -> str:
    """The refusal's reason code: the failed check's, else the error's type."""
    found = getattr(exc, "reason", "")
    return found if isinstance(found, str) and found else error_type(exc)


def refused(request: Request, state: AppState, step: str, exc: CoursetutorError) -> None:
    """Log a refusal by its reason (never the token) and count it against the address."""
    code = reason(exc)
    log.warning("LTI %s refused (%s): %s", step, code, exc,
                extra={"request_id": getattr(request.state, "request_id", ""),
                       "reason": code})
    if isinstance(exc, LaunchError):
        limit_address(request, state, "failed_auth")


@router.get("/login")
async def login_by_get(request: Request, state: State) -> Response:
    """OIDC third-party login initiation: on to the platform's auth URL with state and nonce."""
    return await _login(request, state)


@router.post("/login")
async def login(request: Request, state: State) -> Response:
    """OIDC third-party login initiation (form-posted)."""
    return await _login(request, state)


async def _login(request: Request, state: AppState) -> Response:
    params = await _params(request)
    tool = lti_tool(state)
    try:
        found = await run_in_threadpool(lti_launch.login, state.workspace.store.lti,
                                        tool.secret, params, str(request.url_for("lti_launch")))
    except CoursetutorError as exc:
        refused(request, state, "login", exc)
        if wants_page(request):  # a person in the LMS frame: a page, not JSON
            return HTMLResponse(refusal(str(exc), reason(exc)), status_code=status_of(exc))
        raise
    if found.storage is not None:  # the page keeps state and nonce in the platform's storage
        return HTMLResponse(keep_login(found), headers={"Cache-Control": "no-store"})
    request.state.allowed_location = found.redirect
    return RedirectResponse(found.redirect, status_code=302)


@router.post("/launch", name="lti_launch")
async def launch(request: Request, state: State) -> Response:
    """The platform's signed launch (`id_token`, `state`, form-posted)."""
    params = await _params(request)
    launch_url = str(request.url_for("lti_launch"))
    try:
        if params.get("error"):
            code = params["error"] if _CODE.match(params["error"]) else "unknown"
            raise LaunchError(f"the platform refused the login ({code})", "platform_refused")
        if not params.get("id_token") or not params.get("state"):
            raise LaunchError("a launch needs id_token and state", "bad_launch")
        return await run_in_threadpool(_launch, state, params["id_token"], params["state"],
                                       launch_url)
    except CoursetutorError as exc:
        refused(request, state, "launch", exc)
        if wants_page(request):  # a person in the LMS frame: a page, not JSON
            return HTMLResponse(refusal(str(exc), reason(exc)), status_code=status_of(exc))
        raise


def _launch(state: AppState, id_token: str, state_token: str, launch_url: str) -> Response:
    tool, store = lti_tool(state), state.workspace.store
    verified = lti_launch.verify(store.lti, tool.keys, tool.secret, id_token, state_token)
    platform, claims = verified.platform, verified.claims
    check = storage_check(verified, state_token) if verified.storage is not None else ""
    found = c.read(claims)
    if found.message_type == c.DEEP_LINK_REQUEST:
        return _deep_link_page(state, platform, found, str(claims.get(c.DEPLOYMENT, "")),
                               check)
    entry = enter.enter(store, platform, found)
    if entry.link is not None and entry.link.memberships_url:
        tool.roster_soon(functools.partial(roster.sync, store, tool.services, entry.link))
    store.lti.remove_expired_keys(time.time() - EXPIRED_KEPT_SECONDS)
    _, secret = mint_key(store, platform.tenant, entry.role, entry.student, name="lti",
                         seconds=SESSION_SECONDS)
    page = "/teacher" if entry.role == "teacher" else "/"
    fields = {"lti_key": secret, "course": entry.course, **entry.focus.custom()}
    if entry.focus.title:
        fields["title"] = entry.focus.title
    if verified.storage is None:
        return RedirectResponse(f"{page}#{urlencode(fields)}", status_code=303)
    # the page keeps its key in the platform's storage too, for a reload in the frame
    fragment = urlencode({**fields, **verified.storage.fields()})
    return HTMLResponse(find_login(f"{page}#{fragment}", check),
                        headers={"Cache-Control": "no-store"})


def _deep_link_page(state: AppState, platform: Platform, found: c.Launch,
                    deployment: str, check: str) -> Response:
    if found.role != "teacher":
        raise PermissionDeniedError("only an Instructor may choose what a link opens")
    if not found.deep_link_return:
        raise LaunchError("the deep linking request has no return URL", "bad_launch")
    session = tokens.issue(lti_tool(state).secret, "deep_link", {
        "platform": platform.id, "tenant": platform.tenant, "deployment": deployment,
        "context": found.context_id, "return_url": found.deep_link_return,
        "data": found.deep_link_data}, tokens.DEEP_LINK_SECONDS)
    found_choices = focus.choices(state.workspace.store, platform.tenant)
    return HTMLResponse(choose_course(found_choices, session, found.context_title, check),
                        headers={"Cache-Control": "no-store"})


@router.post("/deep-link")
async def deep_link_answer(request: Request, state: State) -> Response:
    """The teacher's choice, answered to the platform as a signed deep linking response."""
    params = await _params(request)
    launch_url = str(request.url_for("lti_launch"))
    try:
        return await run_in_threadpool(_deep_link_answer, state, params, launch_url)
    except CoursetutorError as exc:
        refused(request, state, "deep link", exc)
        if wants_page(request):  # a person in the LMS frame: a page, not JSON
            return HTMLResponse(refusal(str(exc), reason(exc)), status_code=status_of(exc))
        raise


def _deep_link_answer(state: AppState, params: dict[str, str], launch_url: str) -> Response:
    tool, store = lti_tool(state), state.workspace.store
    session = tokens.check(tool.secret, "deep_link", params.get("session", ""))
    platform = store.lti.get_platform(str(session["tenant"]), str(session["platform"]))
    course = store.get_course(platform.tenant, params.get("course", ""))
    chosen = focus.check(store, platform.tenant, course.id, params.get("document", ""),
                         params.get("live_class", ""))
    grades = params.get("grades") == "mastery"
    # each link's own `grades` parameter decides for it; the LMS course keeps its choice
    enter.link_course(store, platform, str(session["context"]), course.id)
    item = deep_link.content_item(launch_url, course.id,
                                  chosen.title or course.title or course.id, grades, chosen)
    token = deep_link.response(store.lti, platform, str(session["deployment"]),
                               str(session["data"]), [item])
    return_url = str(session["return_url"])
    policy = page_policy(tool.frame_origins(), (registry.origin(return_url),))
    return HTMLResponse(post_back(return_url, token),
                        headers={"Cache-Control": "no-store", "Content-Security-Policy": policy})


@router.get("/jwks")
async def jwks(state: State) -> dict[str, Any]:
    """The tool's public keys (JWKS): the signing key and recently retired ones."""
    return await run_in_threadpool(tool_keys.key_set, state.workspace.store.lti)


@router.get("/config")
def config(request: Request) -> dict[str, Any]:
    """The URLs to paste into an LMS when registering the tool."""
    base = str(request.base_url).rstrip("/")
    return {"login_url": f"{base}/lti/login", "launch_url": f"{base}/lti/launch",
            "redirect_uris": [f"{base}/lti/launch"], "deep_link_url": f"{base}/lti/launch",
            "jwks_url": f"{base}/lti/jwks", "domain": request.url.netloc,
            "scopes": [services.ROSTER_SCOPE, services.SCORE_SCOPE]}
