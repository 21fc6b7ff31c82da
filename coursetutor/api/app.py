"""The app factory: `create_app(settings)` builds the API and the web pages."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import AsyncIterator
from importlib import resources
from pathlib import Path
from typing import Any

import anyio.to_thread
from fastapi import Depends, FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool
from threadpoolctl import threadpool_limits

from .. import __version__
from ..config import Settings, load_settings
from ..live.session import LiveClasses
from ..llm.router import Router
from ..lti.tool import LtiTool
from ..memory.retention import purge_all_tenants
from ..store.redis import RedisLink, connect, need_rq
from ..workspace import Workspace
from . import (
    errors,
    routes_admin,
    routes_check,
    routes_classes,
    routes_courses,
    routes_lti,
    routes_lti_admin,
    routes_lti_register,
    routes_memory,
    routes_openai,
    routes_students,
    routes_tutor,
)
from .budget import MemoryComputeBudget
from .budget_redis import RedisComputeBudget
from .deps import State
from .errors import scrub
from .fair_turns import FairSlots
from .jobs import IngestJobs, recover, uploads_folder
from .logs import setup
from .metrics import Metrics
from .middleware import BodyLimits, RequestContext, SecurityHeaders
from .pump import AskPool
from .ratelimit import MemoryRateLimiter, RateLimiter
from .ratelimit_redis import RedisRateLimiter
from .signing import Signer, load_secret
from .state import AppState
from .validate import check_params

STATIC = Path(str(resources.files("coursetutor.api") / "static"))
READY_CACHE_SECONDS = 5.0


def ask_workers(settings: Settings) -> int:
    """Turns run at once: one local model answers one student at a time; servers batch."""
    if settings.api_ask_workers:
        return settings.api_ask_workers
    return 1 if settings.llm_backend == "local" else 8


def build_state(settings: Settings, workspace: Workspace | None = None,
                router: Router | None = None,
                limiter: RateLimiter | None = None) -> AppState:
    """Everything the app shares between requests."""
    ws = workspace or Workspace(settings)
    metrics = Metrics()
    # with Redis, limits and ingest jobs are shared by every process of the deployment
    link: RedisLink | None = connect(settings) if settings.redis else None
    metrics.gauge_function("store_connections", "Database connections the store holds open",
                           lambda: float(ws.store.connections()))
    metrics.job_queue(ws.store.job_queue)
    searches = FairSlots(settings.api_search_slots or os.cpu_count() or 1)
    jobs = _jobs(settings, link, metrics)
    jobs.searches = searches  # an ingest batch lets this process's searches go first
    return AppState(
        settings=settings, workspace=ws, router=router or Router(settings),
        limiter=limiter or (RedisRateLimiter(link) if link else MemoryRateLimiter()),
        metrics=metrics,
        signer=Signer(load_secret(settings), settings.api_url_seconds),
        asks=AskPool(ask_workers(settings), metrics),
        jobs=jobs,
        budget=RedisComputeBudget(link) if link else MemoryComputeBudget(),
        live=LiveClasses(ws, link, on_lag=metrics.transcript_lag.observe,
                         on_slide=lambda source: metrics.slide_changes.labels(source).inc()),
        searches=searches,
        lti=LtiTool(ws.store, load_secret(settings)),
    )


def _jobs(settings: Settings, link: RedisLink | None, metrics: Metrics) -> IngestJobs:
    """Jobs on this process's ingest thread, or with Redis on the workers' queue."""
    if link is None:
        return IngestJobs(uploads_folder(settings), metrics)
    need_rq()
    from .jobs_rq import RedisIngestJobs

    return RedisIngestJobs(link, settings, metrics)


def from_environment() -> FastAPI:
    """The app of one of several worker processes, from COURSETUTOR_* (set by `serve`)."""
    settings = load_settings()
    setup(settings.log_level)
    return create_app(settings, recover_jobs=False)


def create_app(settings: Settings, workspace: Workspace | None = None,
               router: Router | None = None, limiter: RateLimiter | None = None,
               recover_jobs: bool = True) -> FastAPI:
    """The API and web pages over one workspace (built from `settings` when not given).

    `recover_jobs` puts the jobs a stopped process left running back in the queue and removes
    staged folders no job owns at start-up (only right when no other process of the deployment
    is running jobs).
    """
    state = build_state(settings, workspace, router, limiter)
    owns_workspace = workspace is None

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if recover_jobs and not settings.redis:  # with Redis, workers run the jobs
            recover(state.workspace.store, state.jobs.uploads)
        state.jobs.start(state.workspace)
        purge_all_tenants(state.workspace.store)  # turns past their course's retention
        # each request computes on a thread of its own: a few threads, each with a
        # single-threaded BLAS, beat dozens of threads each starting a team of BLAS threads
        # (7x the search throughput at 50 concurrent clients on 2 cores)
        anyio.to_thread.current_default_thread_limiter().total_tokens = settings.api_threads
        blas = threadpool_limits(limits=1, user_api="blas")
        yield
        blas.restore_original_limits()
        state.asks.shutdown()
        state.jobs.shutdown()
        state.checks.shutdown()
        if state.live is not None:
            state.live.close()
        if state.lti is not None:
            state.lti.close()
        state.limiter.close()
        if owns_workspace:
            state.workspace.close()

    app = FastAPI(title="coursetutor", version=__version__, lifespan=lifespan,
                  dependencies=[Depends(check_params)],
                  description="A tutor that answers only from a course's own material, "
                              "with citations. Keys: `Authorization: Bearer ct_...`.")
    app.state.coursetutor = state
    errors.install(app)
    for module in (routes_admin, routes_courses, routes_check, routes_tutor, routes_openai,
                   routes_students, routes_memory):
        app.include_router(module.router)
    app.include_router(routes_classes.router)
    app.include_router(routes_lti.router)
    app.include_router(routes_lti_admin.router)
    app.include_router(routes_lti_register.router)
    _ops_routes(app)
    _pages(app)
    if settings.api_cors_origins:
        app.add_middleware(CORSMiddleware, allow_methods=["*"], allow_headers=["*"],
                           allow_origins=[o.strip() for o in
                                          settings.api_cors_origins.split(",")])
    app.add_middleware(BodyLimits, max_bytes=settings.api_max_json_bytes,
                       max_depth=settings.api_max_json_depth)
    app.add_middleware(SecurityHeaders, framers=lambda: (
        state.lti.frame_origins() if state.lti is not None else ()))
    app.add_middleware(RequestContext, metrics=state.metrics,
                       reconnect_every=settings.api_reconnect_every)
    return app


def _ops_routes(app: FastAPI) -> None:
    ready: dict[str, Any] = {"at": 0.0, "body": None, "status": 503}

    @app.get("/healthz", tags=["ops"])
    def healthz() -> dict[str, str]:
        """The process is up."""
        return {"status": "ok"}

    @app.get("/readyz", tags=["ops"])
    async def readyz(state: State) -> JSONResponse:
        """200 when the store, Redis (if set) and the generation backend answer, else 503
        saying what."""
        if time.monotonic() - ready["at"] > READY_CACHE_SECONDS:
            body = await run_in_threadpool(_readiness, state)
            ready.update(at=time.monotonic(), body=body,
                         status=200 if body["status"] == "ready" else 503)
        return JSONResponse(ready["body"], ready["status"])

    @app.get("/metrics", tags=["ops"])
    def metrics(state: State) -> Response:
        """Prometheus metrics (text format)."""
        return Response(state.metrics.render(),
                        media_type="text/plain; version=0.0.4; charset=utf-8")


def _readiness(state: AppState) -> dict[str, Any]:
    checks: dict[str, str] = {}
    try:
        state.workspace.store.list_tenants()
        checks["store"] = "ok"
    except Exception as exc:
        checks["store"] = scrub(str(exc))
    link = getattr(state.jobs, "link", None)  # the Redis of a deployment that has one
    if link is not None:
        try:
            with link.reached():
                link.client.ping()
            checks["redis"] = "ok"
        except Exception as exc:
            checks["redis"] = scrub(str(exc))
    if state.router.enabled:
        try:
            state.router.llm("answer").check()
            checks["llm"] = "ok"
        except Exception as exc:
            checks["llm"] = scrub(str(exc))
    else:
        checks["llm"] = "off (llm_backend = none: passages only)"
    ok = all(v == "ok" or v.startswith("off") for v in checks.values())
    return {"status": "ready" if ok else "not ready", **checks}


def _pages(app: FastAPI) -> None:
    app.mount("/static", StaticFiles(directory=STATIC, check_dir=False), name="static")

    @app.get("/", include_in_schema=False)
    def student_page() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    @app.get("/teacher", include_in_schema=False)
    def teacher_page() -> FileResponse:
        return FileResponse(STATIC / "teacher.html", headers={"Cache-Control": "no-cache"})
