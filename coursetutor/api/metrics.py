"""Prometheus metrics of one API process (names documented in docs/metrics.md)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from ..store.base import QueueDepth
from ..types import Answer

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120,
                   300)
# the tutor's timings (ms) reported as stages of an ask
STAGES = {"memory": "memory", "rewrite": "rewrite", "retrieve": "retrieve", "rerank": "rerank",
          "grade": "grade", "check": "check", "first_token": "first_token", "total": "total"}
SESSION_WINDOW = 15 * 60.0  # a session with a turn in the last 15 minutes is active


def os_threads() -> float:
    """Threads of this process as the OS counts them (native ones included)."""
    try:
        return float(len(os.listdir("/proc/self/task")))
    except OSError:
        return float(threading.active_count())


class Metrics:
    """Every metric the API exports, in a registry of its own (one per app)."""

    def __init__(self) -> None:
        r = self.registry = CollectorRegistry()
        ProcessCollector(registry=r)
        p = "coursetutor_"
        self.requests = Counter(p + "http_requests", "HTTP requests by route and status",
                                ["method", "route", "status"], registry=r)
        self.request_seconds = Histogram(p + "http_request_seconds",
                                         "HTTP request latency (to the response head)",
                                         ["route"], buckets=LATENCY_BUCKETS, registry=r)
        self.ask_seconds = Histogram(p + "ask_stage_seconds",
                                     "Ask latency by stage: memory, rewrite, retrieve, rerank, "
                                     "grade, check, first_token, total",
                                     ["stage"], buckets=LATENCY_BUCKETS, registry=r)
        self.queue_seconds = Histogram(p + "ask_queue_seconds",
                                       "Time an ask waited for a free tutor worker",
                                       buckets=LATENCY_BUCKETS, registry=r)
        self.queue_depth = Gauge(p + "ask_queue_depth", "Asks waiting for a free tutor worker",
                                 registry=r)
        self.active_streams = Gauge(p + "active_streams", "Answers being streamed now",
                                    registry=r)
        self.active_sessions = Gauge(p + "active_sessions",
                                     "Sessions with a turn in the last 15 minutes", registry=r)
        self.tokens = Counter(p + "llm_tokens", "Model tokens by model, task and direction",
                              ["model", "task", "direction"], registry=r)
        self.cost = Counter(p + "llm_cost", "Estimated model cost by model and task",
                            ["model", "task"], registry=r)
        self.retrievals = Counter(p + "retrievals",
                                  "Retrievals by result (hits or empty) and route",
                                  ["route", "result"], registry=r)
        self.over_budget = Counter(p + "context_over_budget",
                                   "Answers whose retrieved material did not fit the budget",
                                   registry=r)
        self.contexts = Counter(p + "contexts", "Answers built from course material",
                                registry=r)
        self.grades = Counter(p + "evidence_grades", "Evidence grades of asks", ["grade"],
                              registry=r)
        self.rate_limited = Counter(p + "rate_limited", "Requests refused by a rate limit",
                                    ["role"], registry=r)
        self.jobs = Counter(p + "ingest_jobs", "Finished ingest jobs by status", ["status"],
                            registry=r)
        self.budget_refused = Counter(
            p + "budget_refused", "Requests refused by a compute budget, by request kind "
            "(search, ask) and bucket (key, tenant)", ["kind", "bucket"], registry=r)
        self.transcript_lag = Histogram(
            p + "transcript_lag_seconds", "Live classes: a transcript event's arrival to its "
            "text being searchable", buckets=LATENCY_BUCKETS, registry=r)
        self.slide_changes = Counter(p + "slide_changes", "Slide changes of live classes by "
                                     "source (tracked, teacher)", ["source"], registry=r)
        self.tiers = Counter(p + "class_tiers", "Asks during a live class by the tier their "
                             "passages came from (class, course)", ["tier"], registry=r)
        self.threads = Gauge(p + "threads", "Threads of this process", registry=r)
        self.threads.set_function(os_threads)
        self._sessions: dict[str, float] = {}
        self._lock = threading.Lock()
        self.active_sessions.set_function(self._count_sessions)

    def job_queue(self, fn: Callable[[], list[QueueDepth]]) -> None:
        """Per-tenant gauges of the ingest queue, read from the store at scrape time."""
        self.registry.register(_QueueCollector(fn))

    def gauge_function(self, name: str, doc: str, fn: Callable[[], float]) -> None:
        """A gauge read at scrape time (the store's open connections, say)."""
        Gauge("coursetutor_" + name, doc, registry=self.registry).set_function(fn)

    def observe_answer(self, answer: Answer) -> None:
        """Book one finished ask: stage latencies, tokens, cost, grade and context use."""
        for name, stage in STAGES.items():
            if name in answer.timings:
                self.ask_seconds.labels(stage).observe(answer.timings[name] / 1000)
        for call in answer.calls:
            model, task = str(call["model"]), str(call["task"])
            self.tokens.labels(model, task, "in").inc(float(str(call["prompt_tokens"])))
            self.tokens.labels(model, task, "out").inc(float(str(call["completion_tokens"])))
            self.cost.labels(model, task).inc(float(str(call["cost"])))
        if answer.grade:
            self.grades.labels(answer.grade).inc()
        self.retrievals.labels("ask", "empty" if answer.grade == "" and answer.category in (
            "lecture", "followup") else "hits").inc()
        if answer.context:
            self.contexts.inc()
        if answer.context_over_budget:
            self.over_budget.inc()
        if answer.tier:
            self.tiers.labels(answer.tier).inc()
        if answer.session_id:
            with self._lock:
                self._sessions[answer.session_id] = time.monotonic()

    def _count_sessions(self) -> float:
        cutoff = time.monotonic() - SESSION_WINDOW
        with self._lock:
            for sid in [s for s, t in self._sessions.items() if t < cutoff]:
                del self._sessions[sid]
            return float(len(self._sessions))

    def render(self) -> bytes:
        return generate_latest(self.registry)


class _QueueCollector(Collector):
    """Unfinished ingest jobs by tenant: queued, running, and the age of the oldest."""

    def __init__(self, fn: Callable[[], list[QueueDepth]]) -> None:
        self._fn = fn

    def collect(self) -> Iterator[Metric]:
        depth = GaugeMetricFamily("coursetutor_ingest_queue_depth",
                                  "Ingest jobs not finished, by tenant and status",
                                  labels=["tenant", "status"])
        age = GaugeMetricFamily("coursetutor_ingest_job_age_seconds",
                                "Age of the oldest unfinished ingest job, by tenant",
                                labels=["tenant"])
        now = time.time()
        for q in self._fn():
            depth.add_metric([q.tenant, "queued"], q.queued)
            depth.add_metric([q.tenant, "running"], q.running)
            age.add_metric([q.tenant], max(0.0, now - q.oldest))
        yield depth
        yield age
