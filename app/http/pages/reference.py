"""``GET /api``: the API reference for people, rendered on the server from ``openapi.yaml``.

The page is the document this instance serves at ``/openapi.yaml`` and ``/openapi.json`` (live
values included, :mod:`app.http.openapi`), both linked from its head: each tag with its
operations (method, path, summary, description, parameters, request body, responses with
their headers and schemas, the x402 price where one is set), then every component schema with
its properties. Descriptions are the document's CommonMark (:mod:`app.http.pages.prose`);
schemas are summarised in words (:mod:`app.http.pages.shapes`) with links between them. No
script and nothing from another origin: the page is plain HTML under the pages' CSP.

The view is built once per document (the document is fixed when the service starts).
"""

from __future__ import annotations

from typing import Any, Final

from starlette.requests import Request
from starlette.responses import Response

from app.http.pages.prose import markdown
from app.http.pages.render import page
from app.http.pages.shapes import anchor, properties, shape

METHODS: Final = ("get", "put", "post", "delete", "patch")


def _resolve(document: dict[str, Any], item: object) -> dict[str, Any]:
    """``item``, or the component its local ``$ref`` names (one level at a time, at most 5)."""
    for _ in range(5):
        if not isinstance(item, dict) or not isinstance(item.get("$ref"), str):
            break
        node: Any = document
        for part in item["$ref"].removeprefix("#/").split("/"):
            node = node.get(part, {}) if isinstance(node, dict) else {}
        item = node
    return item if isinstance(item, dict) else {}


def _media(document: dict[str, Any], content: object) -> list[dict[str, Any]]:
    if not isinstance(content, dict):
        return []
    return [{"type": media, "shape": shape(_resolve(document, body).get("schema"))} for media, body in content.items()]


def _operation(document: dict[str, Any], path: str, method: str, operation: dict[str, Any]) -> dict[str, Any]:
    parameters = []
    for given in operation.get("parameters") or ():
        parameter = _resolve(document, given)
        parameters.append(
            {
                "name": parameter.get("name", ""),
                "in": parameter.get("in", ""),
                "required": bool(parameter.get("required")),
                "shape": shape(parameter.get("schema")),
                "description": markdown(parameter.get("description")),
            }
        )
    body = _resolve(document, operation.get("requestBody"))
    responses = []
    for status, given in (operation.get("responses") or {}).items():
        response = _resolve(document, given)
        responses.append(
            {
                "status": str(status),
                "description": markdown(response.get("description")),
                "media": _media(document, response.get("content")),
                "headers": list((response.get("headers") or {}).keys()),
            }
        )
    payment = operation.get("x-payment-info")
    price = payment.get("price", {}).get("usd") if isinstance(payment, dict) and payment.get("enabled") else None
    return {
        "anchor": anchor("op", str(operation.get("operationId") or f"{method}-{path}")),
        "method": method.upper(),
        "path": path,
        "summary": operation.get("summary", ""),
        "description": markdown(operation.get("description")),
        "parameters": parameters,
        "request": {"required": bool(body.get("required")), "media": _media(document, body.get("content"))}
        if body
        else None,
        "responses": responses,
        "price_usd": price,
    }


def view_of(document: dict[str, Any]) -> dict[str, Any]:
    """The page's data for the served ``document``."""
    operations: dict[str, list[dict[str, Any]]] = {}
    for path, item in (document.get("paths") or {}).items():
        for method in METHODS:
            operation = item.get(method) if isinstance(item, dict) else None
            if isinstance(operation, dict):
                tag = (operation.get("tags") or ["other"])[0]
                operations.setdefault(str(tag), []).append(_operation(document, str(path), method, operation))
    declared = [t for t in document.get("tags") or () if isinstance(t, dict)]
    names = [str(t.get("name")) for t in declared] + [
        t for t in operations if t not in {t.get("name") for t in declared}
    ]
    words = {str(t.get("name")): t.get("description") for t in declared}
    tags = [
        {
            "name": name,
            "anchor": anchor("tag", name),
            "description": markdown(words.get(name)),
            "operations": operations[name],
        }
        for name in names
        if name in operations
    ]
    schemas = [
        {
            "name": name,
            "anchor": anchor("schema", name),
            "description": markdown(schema.get("description")) if isinstance(schema, dict) else markdown(""),
            "shape": shape({k: v for k, v in schema.items() if k != "description"}) if isinstance(schema, dict) else [],
            "properties": [{**row, "description": markdown(row["description"])} for row in properties(schema)],
        }
        for name, schema in ((document.get("components") or {}).get("schemas") or {}).items()
    ]
    info = document.get("info") or {}
    return {
        "title": info.get("title", "API"),
        "version": info.get("version", ""),
        "summary": info.get("summary", ""),
        "description": markdown(info.get("description")),
        "tags": tags,
        "schemas": schemas,
    }


async def api_page(request: Request) -> Response:
    """``GET /api`` (see the module docs)."""
    state = request.app.state
    view = getattr(state, "api_reference", None)
    if view is None:
        view = state.api_reference = view_of(state.openapi)
    return page(request, "api.html", view, headers={"Cache-Control": "public, max-age=3600"})
