"""JSON Schema in a few words, for the API reference page: "array of `Tool`", "string, one of …".

Policy: a schema (JSON Schema 2020-12, as OpenAPI 3.1 uses it) is summarised by its ``$ref``
(a link to the named schema on the page), ``type`` (a list read as "or"), ``items``,
``oneOf``/``anyOf``/``allOf``, ``enum``/``const``, ``format`` and the bounds people look for
(``minimum``, ``maximum``, ``maxLength``, ``maxItems``, ``pattern``). A summary is a list of
pieces, each text with an optional link, so the template escapes every piece and builds every
link; nothing here is markup. Only local references (``#/components/...``) are followed.
"""

from __future__ import annotations

from typing import Any, Final

#: How many enum values are named before "…".
ENUM_SHOWN: Final = 16
BOUNDS: Final = (
    ("minimum", "≥ {}"),
    ("maximum", "≤ {}"),
    ("minLength", "at least {} characters"),
    ("maxLength", "at most {} characters"),
    ("minItems", "at least {} items"),
    ("maxItems", "at most {} items"),
    ("pattern", "matching {}"),
)

Piece = tuple[str, str | None]


def ref_name(ref: str) -> str:
    """``#/components/schemas/CheckResult`` -> ``CheckResult``."""
    return ref.rsplit("/", 1)[-1]


def anchor(kind: str, name: str) -> str:
    """The page's anchor of a component: ``schema-CheckResult``."""
    return f"{kind}-{name}"


def _joined(parts: list[list[Piece]], word: str) -> list[Piece]:
    out: list[Piece] = []
    for i, part in enumerate(parts):
        if i:
            out.append((f" {word} ", None))
        out.extend(part)
    return out


def _type_words(value: object) -> str:
    if isinstance(value, list):
        return " or ".join(str(v) for v in value)
    return str(value)


def shape(schema: object, depth: int = 0) -> list[Piece]:
    """``schema`` in words (see the module docs)."""
    if not isinstance(schema, dict):
        return [("any", None)]
    if depth > 4:
        return [("…", None)]
    ref = schema.get("$ref")
    if isinstance(ref, str):
        name = ref_name(ref)
        return [(name, "#" + anchor("schema", name))] if ref.startswith("#/components/schemas/") else [(ref, None)]
    for keyword, word in (("oneOf", "or"), ("anyOf", "or"), ("allOf", "and")):
        options = schema.get(keyword)
        if isinstance(options, list) and options:
            return _joined([shape(option, depth + 1) for option in options], word)
    if "const" in schema:
        return [(f"exactly {_literal(schema['const'])}", None)]
    kind = schema.get("type")
    out: list[Piece] = [(_type_words(kind) if kind is not None else "any", None)]
    if kind == "array" and "items" in schema:
        out = [("array of ", None), *shape(schema["items"], depth + 1)]
    if isinstance(schema.get("format"), str):
        out.append((f" ({schema['format']})", None))
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        named = ", ".join(_literal(v) for v in enum[:ENUM_SHOWN]) + (", …" if len(enum) > ENUM_SHOWN else "")
        out.append((f", one of: {named}", None))
    bounds = [words.format(schema[key]) for key, words in BOUNDS if key in schema]
    if bounds:
        out.append((", " + ", ".join(bounds), None))
    return out


def _literal(value: object) -> str:
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def properties(schema: object) -> list[dict[str, Any]]:
    """The named properties of an object schema (those of its inline ``allOf`` parts too): name,
    shape, whether required, description."""
    if not isinstance(schema, dict):
        return []
    parts = [schema, *(p for p in schema.get("allOf") or () if isinstance(p, dict) and "$ref" not in p)]
    rows = []
    for part in parts:
        required = set(part.get("required") or ())
        for name, sub in (part.get("properties") or {}).items():
            description = sub.get("description", "") if isinstance(sub, dict) else ""
            rows.append(
                {"name": str(name), "shape": shape(sub), "required": name in required, "description": description}
            )
    return rows
