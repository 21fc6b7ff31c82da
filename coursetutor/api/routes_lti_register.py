"""LTI Dynamic Registration: the registration URL an admin hands the LMS, and the page the LMS
opens with its OpenID configuration (`lti/dynamic.py` does the work)."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from ..errors import CoursetutorError, InputError
from ..lti import dynamic, registry
from ..store.lti import Platform
from .deps import CallerDep, State, require_admin
from .errors import status_of
from .lti_pages import RETRY_REGISTRATION, refusal, registered
from .middleware import page_policy
from .routes_lti import lti_tool, reason, refused, wants_page
from .routes_lti_admin import platform_json
from .state import AppState

router = APIRouter(tags=["lti"])


URL_HOURS = dynamic.URL_SECONDS // 3600


class RegistrationUrlIn(BaseModel):
    hours: int = Field(URL_HOURS, ge=1, le=dynamic.MAX_URL_SECONDS // 3600,
                       description="how long the URL works")


@router.post("/v1/lti/registration-url")
def registration_url(request: Request, caller: CallerDep, state: State,
                     body: RegistrationUrlIn | None = None) -> dict[str, Any]:
    """A URL that registers an LMS for the caller's tenant by LTI Dynamic Registration."""
    require_admin(caller)
    seconds = (body.hours if body else URL_HOURS) * 3600
    url = dynamic.registration_url(str(request.base_url), lti_tool(state).secret,
                                   caller.tenant, seconds)
    return {"url": url, "expires": int(time.time()) + seconds, "tenant": caller.tenant}


def _framers(params: dict[str, str]) -> tuple[str, ...]:
    """The origin of the configuration URL the platform sent: its page frames this one."""
    try:
        return (registry.origin(registry.check_url("openid_configuration",
                                                   params.get("openid_configuration", ""))),)
    except InputError:
        return ()


@router.get("/lti/register", name="lti_register")
async def register(request: Request, state: State) -> Response:
    """The platform's dynamic registration: `openid_configuration`, `registration_token` and
    the registration URL's `tenant_token`."""
    params = dict(request.query_params)
    tool_url = str(request.base_url)
    headers = {"Cache-Control": "no-store",
               "Content-Security-Policy": page_policy(_framers(params))}
    try:
        if not params.get("openid_configuration"):
            raise InputError("a registration needs the platform's openid_configuration URL")
        platform = await run_in_threadpool(_register, state, params, tool_url)
    except CoursetutorError as exc:
        refused(request, state, "registration", exc)
        if wants_page(request):  # the LMS's registration window: a page, not JSON
            return HTMLResponse(refusal(str(exc), reason(exc), RETRY_REGISTRATION),
                                status_code=status_of(exc), headers=headers)
        raise
    if not wants_page(request):
        return JSONResponse({"platform": platform_json(platform)}, headers=headers)
    return HTMLResponse(registered(platform), headers=headers)


def _register(state: AppState, params: dict[str, str], tool_url: str) -> Platform:
    tool = lti_tool(state)
    tenant = dynamic.tenant_of(tool.secret, params.get("tenant_token", ""))
    platform = dynamic.register(state.workspace.store.lti, tool.http, tenant, tool_url,
                                params["openid_configuration"],
                                params.get("registration_token", ""))
    tool.forget_origins()
    return platform
