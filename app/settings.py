"""The one typed settings object, read from the environment once.

Every setting has a default that works on a fresh machine. Environment variables use the
prefix ``MCP_SONDE_`` (for example ``MCP_SONDE_PROBE_TIMEOUT_S=10``). Units are in the names:
``_s`` is seconds, ``_bytes`` is bytes.

Policy: :func:`get_settings` builds the object on first use and caches it; code that needs a
variant (tests, the CLI's ``--allow-private``) builds its own with ``Settings(...)`` or
``settings.model_copy(update=...)`` and passes it down explicitly.
"""

from __future__ import annotations

import functools
from pathlib import Path

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Runtime settings for the probe and the service.

    Attributes are documented by their ``Field`` descriptions; the README lists them all.
    """

    model_config = SettingsConfigDict(env_prefix="MCP_SONDE_", extra="ignore", frozen=True)

    allow_private: bool = Field(
        default=False,
        description="Development switch: allow http, loopback/private addresses, IP literals and any port. "
        "For local servers and tests only; never enable on a public deployment.",
    )
    info_url: str = Field(
        default="https://github.com/mcp-sonde/mcp-sonde",
        description="URL put in the probe's User-Agent so server operators can find out who is calling.",
    )
    probe_timeout_s: float = Field(default=15.0, gt=0, le=120, description="Budget for one whole probe.")
    light_probe_timeout_s: float = Field(default=5.0, gt=0, le=60, description="Budget for one light (badge) probe.")
    dns_timeout_s: float = Field(default=3.0, gt=0, le=30, description="Budget for resolving the target host.")
    connect_timeout_s: float = Field(default=5.0, gt=0, le=30, description="Budget for one TCP+TLS connect.")
    step_timeout_s: float = Field(
        default=8.0, gt=0, le=60, description="Budget for one HTTP exchange, headers and body together."
    )
    session_end_timeout_s: float = Field(default=2.0, gt=0, le=10, description="Budget for the closing DELETE.")
    reply_cap_bytes: int = Field(
        default=256 * 1024, ge=1024, le=16 * 1024 * 1024, description="Largest decoded reply body read, in bytes."
    )
    tools_max_pages: int = Field(default=5, ge=1, le=50, description="Most tools/list pages followed per probe.")
    ca_bundle: str | None = Field(
        default=None, description="Path of a PEM file whose CAs are trusted in addition to the system roots."
    )

    @field_validator("ca_bundle")
    @classmethod
    def _ca_bundle_is_a_pem_file(cls, value: str | None) -> str | None:
        if value is None:
            return None
        path = Path(value)
        if not path.is_file():
            raise ValueError(f"CA bundle {value!r} is not a readable file")
        if b"-----BEGIN CERTIFICATE-----" not in path.read_bytes()[: 1024 * 1024]:
            raise ValueError(f"CA bundle {value!r} holds no PEM certificate")
        return value


@functools.cache
def get_settings() -> Settings:
    """Return the process-wide :class:`Settings`, read from the environment on first call."""
    return Settings()
