"""JSON Schema in words for the API reference page."""

from __future__ import annotations

from app.http.pages.shapes import properties, shape


def test_a_reference_is_a_link_to_the_named_schema_and_an_array_says_its_items() -> None:
    assert shape({"type": "array", "items": {"$ref": "#/components/schemas/Tool"}}) == [
        ("array of ", None),
        ("Tool", "#schema-Tool"),
    ]


def test_types_enums_formats_and_bounds_are_said_and_a_foreign_ref_is_not_a_link() -> None:
    assert shape({"type": ["string", "null"], "format": "uri", "maxLength": 2048}) == [
        ("string or null", None), (" (uri)", None), (", at most 2048 characters", None)]  # fmt: skip
    assert shape({"type": "string", "enum": ["ok", "auth"]}) == [("string", None), (", one of: ok, auth", None)]
    assert shape({"const": True}) == [("exactly true", None)]
    assert shape({"$ref": "https://elsewhere.example/x"}) == [("https://elsewhere.example/x", None)]
    assert shape({"oneOf": [{"type": "integer"}, {"type": "null"}]}) == [
        ("integer", None),
        (" or ", None),
        ("null", None),
    ]


def test_properties_of_an_object_and_of_its_inline_all_of_parts() -> None:
    schema = {
        "required": ["a"],
        "properties": {"a": {"type": "string", "description": "A."}},
        "allOf": [{"$ref": "#/components/schemas/X"}, {"properties": {"b": {"type": "integer"}}}],
    }
    rows = properties(schema)
    assert [(r["name"], r["required"], r["description"]) for r in rows] == [("a", True, "A."), ("b", False, "")]
