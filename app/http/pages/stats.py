"""``/stats``: the directory's public statistics, the same snapshot ``GET /v1/stats`` answers.

Charts are inline SVG drawn here (:mod:`app.http.pages.charts`), each with a table of its figures; every
figure's definition is shown beside it. Protocol versions are servers' text: shown as data
(escaped). A database that does not answer is the HTML error page (``503 history_unavailable``).
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

import yaml
from starlette.requests import Request
from starlette.responses import Response

from app.checking.errors import ApiError
from app.http.pages.charts import Chart, bars
from app.http.pages.render import error_page, page
from app.http.pages.views import STATUS_WORDS
from app.http.routes.ops import services_of
from app.http.routes.stats import published


def _counted(servers: int, share: float | None) -> str:
    return f"{servers:,}" if share is None else f"{servers:,} ({share * 100:.1f}%)"


def _status_chart(body: dict[str, Any]) -> Chart:
    rows = [(STATUS_WORDS.get(row["status"], row["status"]), row["servers"], _counted(row["servers"], row["share"]))
            for row in body["by_status"]]  # fmt: skip
    return bars("by-status", "Servers by the status of their newest run",
                f"{body['servers']:,} servers; a bar per status class.", rows)  # fmt: skip


def _failure_chart(body: dict[str, Any]) -> Chart:
    failures = body["failures"]
    rows = [(row["label"], row["servers"], _counted(row["servers"], row["share"])) for row in failures["buckets"]]
    return bars("failures", "Failing servers by what went wrong",
                f"{failures['servers']:,} servers whose newest run failed; a bar per bucket.", rows)  # fmt: skip


def _version_chart(path: dict[str, Any], index: int) -> Chart:
    rows = [("(no version sent)" if row["version"] is None else str(row["version"]), row["servers"],
             f"{row['servers']:,}") for row in path["answered"]]  # fmt: skip
    return bars(f"versions-{index}", f"Revisions answered on the {path['path']} path",
                f"The probe offered {path['offered']}; {path['servers']:,} servers answered; a bar per revision.",
                rows)  # fmt: skip


def _tool_chart(body: dict[str, Any]) -> Chart:
    tools = body["tool_counts"]
    rows = [(row["label"], row["servers"], f"{row['servers']:,}") for row in tools["buckets"]]
    return bars("tool-counts", "Servers by how many tools they list",
                f"{tools['servers']:,} servers that are up; a bar per range of tool counts.", rows)  # fmt: skip


@functools.cache
def page_words() -> dict[str, str]:
    """The page's wording of the definitions that name API fields (``stats_words.yaml``)."""
    text = resources.files("app.http.pages").joinpath("stats_words.yaml").read_text(encoding="utf-8")
    words: dict[str, str] = yaml.safe_load(text)
    return words


def context_of(body: dict[str, Any]) -> dict[str, Any]:
    """The page's data from the published statistics."""
    return {
        "stats": body,
        "definitions": body["definitions"] | page_words(),
        "status_chart": _status_chart(body),
        "failure_chart": _failure_chart(body),
        "version_charts": [(path, _version_chart(path, i)) for i, path in enumerate(body["protocol_versions"])],
        "tool_chart": _tool_chart(body),
    }


async def stats_page(request: Request) -> Response:
    """``GET /stats`` (see the module docs)."""
    try:
        body = await published(services_of(request))
    except ApiError as exc:
        return error_page(request, exc)
    return page(request, "stats.html", context_of(body), headers={"Cache-Control": "public, max-age=60"})
