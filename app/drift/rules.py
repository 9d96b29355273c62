"""The catalogue of drift rules and of the reasons a comparison stays ``unknown``, kept as data.

A *family* is one kind of constraint (a type, an upper bound, a required member...). A change
in a family is named from the old schema to the new one: the first name of :data:`FAMILIES`
when the new schema is tighter (it rejects something the old one accepted), the second when it
is looser. For a tool's input a tighter change is ``breaking`` (an old call may be rejected); for
its output a looser one is (the new output may not satisfy what a client of the old schema
checks). ``docs/drift.md`` prints both tables; a test holds the document to this module.
"""

from __future__ import annotations

from typing import Literal

#: The verdict on a whole schema, a tool or a tool list.
Verdict = Literal["unchanged", "compatible", "breaking", "unknown"]
#: The verdict of one finding.
FindingVerdict = Literal["compatible", "breaking", "unknown"]

#: family: (rule when the new schema is tighter, rule when it is looser, what the family covers).
FAMILIES: dict[str, tuple[str, str, str]] = {
    "type": ("type_narrowed", "type_widened", "`type` (and `nullable`); `integer` is a subset of `number`"),
    "schema_false": ("schema_false", "schema_true", "a schema that accepts nothing (`false`, `not: {}`)"),
    "enum": ("enum_added", "enum_removed", "an `enum` or `const` where there was none, or none where there was one"),
    "enum_value": ("enum_value_removed", "enum_value_added", "one value of an `enum`"),
    "const": ("const_changed", "const_changed", "a `const` replaced by another value"),
    "value": (
        "value_rejected",
        "value_accepted",
        "one value of an old `enum`, rejected or accepted by another keyword",
    ),
    "minimum": ("minimum_raised", "minimum_lowered", "`minimum`, `exclusiveMinimum` (number or draft-04 boolean)"),
    "maximum": ("maximum_lowered", "maximum_raised", "`maximum`, `exclusiveMaximum` (number or draft-04 boolean)"),
    "multiple_of": ("multiple_of_tightened", "multiple_of_relaxed", "`multipleOf`"),
    "min_length": ("min_length_raised", "min_length_lowered", "`minLength`"),
    "max_length": ("max_length_lowered", "max_length_raised", "`maxLength`"),
    "pattern": ("pattern_added", "pattern_removed", "`pattern` (breaking only with an example that shows it)"),
    "format": ("format_added", "format_removed", "`format`"),
    "min_items": ("min_items_raised", "min_items_lowered", "`minItems`"),
    "max_items": ("max_items_lowered", "max_items_raised", "`maxItems`"),
    "unique_items": ("unique_items_added", "unique_items_removed", "`uniqueItems`"),
    "contains": ("contains_added", "contains_removed", "`contains`, `minContains`, `maxContains`"),
    "required": ("required_added", "required_removed", "one member of `required`"),
    "property": ("property_removed", "property_added", "a member of `properties` a value may (no longer) hold"),
    "additional_properties": (
        "additional_properties_closed",
        "additional_properties_opened",
        "`additionalProperties: false` for members no other keyword names",
    ),
    "min_properties": ("min_properties_raised", "min_properties_lowered", "`minProperties`"),
    "max_properties": ("max_properties_lowered", "max_properties_raised", "`maxProperties`"),
    "property_names": ("property_names_added", "property_names_removed", "`propertyNames`"),
    "dependent_required": (
        "dependent_required_added",
        "dependent_required_removed",
        "`dependentRequired` (and the array form of draft-07 `dependencies`)",
    ),
}

#: Annotation-only keywords (JSON Schema 2020-12 meta-data vocabulary, section 9 of the validation
#: spec, and the common extras): a change is ``compatible`` and named by the rule given here.
ANNOTATIONS: dict[str, str] = {
    "title": "annotation_changed",
    "description": "annotation_changed",
    "examples": "annotation_changed",
    "deprecated": "annotation_changed",
    "readOnly": "annotation_changed",
    "writeOnly": "annotation_changed",
    "$comment": "annotation_changed",
    "default": "default_changed",
}

#: Rules a comparison may name besides those of :data:`FAMILIES`.
OTHER_RULES: dict[str, str] = {
    "annotation_changed": "`title`, `description`, `examples`, `deprecated`, `readOnly`, `writeOnly`, `$comment`",
    "default_changed": "`default` (an annotation: a call that omits the member may now mean something else)",
}

#: Why a comparison (or one finding) is ``unknown``: reason key -> meaning.
REASONS: dict[str, str] = {
    "ref_unresolved": "a `$ref` that does not point into the schema itself (`#`, `#/$defs/...`, `#/definitions/...`)",
    "ref_cycle": "a `$ref` that comes back to itself without descending into a member or an item",
    "dynamic_ref": "`$dynamicRef` or `$recursiveRef`, whose target depends on the evaluation path",
    "pattern_changed": "a `pattern` added or changed and no example found that it rejects",
    "pattern_properties": "`patternProperties` that differ, where it cannot be told which member names they share",
    "regex_unsupported": "a regular expression this checker does not run (syntax, backreferences, nested repeats)",
    "format_changed": "a `format` added or changed: an annotation in 2020-12, an assertion in many servers",
    "not_keyword": "a `not` that the old schema does not share and that could not be shown to exclude it",
    "if_then_else": "`if`/`then`/`else` that the old schema does not share",
    "dependent_schemas": "`dependentSchemas` (or the schema form of `dependencies`) that the old schema does not share",
    "unevaluated": "`unevaluatedProperties` or `unevaluatedItems` that the old schema does not share",
    "contains_changed": "a `contains` the old schema neither shares nor implies, without an example",
    "one_of_overlap": "a new `oneOf` whose other branches could not be shown disjoint from an old value",
    "one_of_exclusive": "an old `oneOf`: the value that would show a break could not be checked against it",
    "any_of_split": "old values that no single new `anyOf` branch admits, without an example",
    "invalid_schema": 'a keyword whose value the specification does not allow (`type: "strnig"`, `minimum: "1"`)',
    "not_canonical": "a schema with no canonical form (`docs/fingerprints.md`): NaN, huge integers, colliding keys",
    "too_deep": "deeper than the bounds (`app.drift.limits`)",
    "too_large": "more nodes, alternatives or steps than the bounds (`app.drift.limits`)",
    "list_too_large": "a schema left unjudged: the comparisons of the whole tool list ran past their time bound",
}


def rule(family: str, *, new_tighter: bool) -> str:
    """The rule of ``family`` for a change where the new schema is tighter (or looser)."""
    tight, loose, _covers = FAMILIES[family]
    return tight if new_tighter else loose


def rule_keys() -> set[str]:
    """Every rule a finding may carry (without the reason keys of ``unknown`` findings)."""
    keys = {name for tight, loose, _ in FAMILIES.values() for name in (tight, loose)}
    return keys | set(OTHER_RULES)
