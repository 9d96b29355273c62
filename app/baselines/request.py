"""What a check is compared with, as its caller names it: a stored run, a fingerprint, or a tool list.

The ``baseline`` member of a check request (``POST /v1/mcp/check`` and the MCP tool) takes
exactly one of the three; :mod:`app.checking.comparison` finds the baseline it names before
the check runs.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

Hex64 = Annotated[str, StringConstraints(strict=True, pattern=r"^[0-9a-f]{64}$")]
#: Tools a baseline in the body may list (as many as a tool list keeps).
BASELINE_TOOLS = 2000


class ToolEntry(BaseModel):
    """A ``tools/list`` entry given as a baseline: a string ``name``; the rest as listed."""

    model_config = ConfigDict(extra="allow")
    name: Annotated[str, StringConstraints(strict=True, min_length=1, max_length=1024)]


class BaselineRequest(BaseModel):
    """What a check is compared with: exactly one of the three."""

    model_config = ConfigDict(extra="forbid")
    run_id: Hex64 | None = None
    schema_fingerprint: Hex64 | None = None
    tools: list[ToolEntry] | None = Field(default=None, max_length=BASELINE_TOOLS)

    @model_validator(mode="after")
    def _exactly_one(self) -> BaselineRequest:
        if sum(value is not None for value in (self.run_id, self.schema_fingerprint, self.tools)) != 1:
            raise ValueError("exactly one of run_id, schema_fingerprint or tools")
        return self

    def entries(self) -> list[dict[str, Any]]:
        """The tools as given (raw ``tools/list`` entries)."""
        return [tool.model_dump() for tool in self.tools or ()]
