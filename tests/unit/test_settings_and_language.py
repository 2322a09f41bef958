"""Settings from the environment and the answer-language choice."""

from __future__ import annotations

import pytest

from api.http.language import resolve_lang
from api.settings import DEFAULT_DATABASE_URL, Settings, SettingsError


def test_defaults_need_no_configuration() -> None:
    settings = Settings.from_env({})
    assert settings.database_url == DEFAULT_DATABASE_URL
    assert settings.redis_url is None and settings.api_keys == ()


def test_values_are_read_and_split() -> None:
    settings = Settings.from_env(
        {
            "DATABASE_URL": "postgresql+asyncpg://u@h/db",
            "REDIS_URL": "redis://h:6379/0",
            "GPU_ADVISOR_API_KEYS": "a, b,,",
            "GPU_ADVISOR_CORS_ORIGINS": "https://portal.example",
            "GPU_ADVISOR_REDIS_TIMEOUT_S": "0.1",
            "GPU_ADVISOR_AUTO_MIGRATE": "false",
        }
    )
    assert settings.api_keys == ("a", "b")
    assert settings.cors_origins == ("https://portal.example",)
    assert settings.redis_timeout_s == 0.1 and settings.auto_migrate is False


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DATABASE_URL": "mysql://x"}, "DATABASE_URL"),
        ({"REDIS_URL": "http://x"}, "REDIS_URL"),
        ({"GPU_ADVISOR_REDIS_TIMEOUT_S": "fast"}, "GPU_ADVISOR_REDIS_TIMEOUT_S"),
        ({"GPU_ADVISOR_CACHE_TTL_S": "-1"}, "must not be negative"),
        ({"GPU_ADVISOR_AUTO_MIGRATE": "maybe"}, "boolean"),
    ],
)
def test_bad_values_are_named(env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        Settings.from_env(env)


@pytest.mark.parametrize(
    ("explicit", "header", "expected"),
    [
        ("en", "zh-CN", "en"),
        (None, "zh-CN,zh;q=0.9,en;q=0.8", "zh"),
        (None, "en-US,zh;q=0.5", "en"),
        (None, "fr-FR, zh;q=0.7", "zh"),
        (None, None, "en"),
        (None, "zh;q=bogus", "en"),
    ],
)
def test_language_choice(explicit: str | None, header: str | None, expected: str) -> None:
    assert resolve_lang(explicit, header) == expected  # type: ignore[arg-type]
