"""Properties of the classifier over generated schemas, checked against the jsonschema package.

- ``admits(s, s)`` is always yes, also when equal subschemas are not taken as a shortcut (the
  whole comparison runs and must find nothing).
- A change and its inverse are never both ``compatible`` unless the schemas are equal: the edits
  here always change the set of instances (``tests/drift/strategies.py``).
- Soundness: when a change is ``compatible``, instances valid under the old schema are valid
  under the new one; every example a ``breaking`` finding shows is valid under the old schema and
  invalid under the new one (Draft202012Validator).
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from app.canonical import canonical_bytes
from app.drift import admits, classify
from app.drift.model import Reading, SchemaDiff
from app.drift.notes import answer
from app.drift.schema import _notes
from tests.drift.strategies import edited, instances, referenced, schemas


def _valid(schema: Any, instance: Any) -> bool:
    return bool(Draft202012Validator(schema).is_valid(instance))


def _examples_hold(old: Any, new: Any, diff: SchemaDiff) -> None:
    for finding in diff.findings:
        if finding.example is not None:
            assert finding.verdict == "breaking"
            assert _valid(old, finding.example.instance), (finding, old)
            assert not _valid(new, finding.example.instance), (finding, new)


@settings(max_examples=300, deadline=None)
@given(schemas(depth=3), st.sampled_from(["declared", "strict"]))
def test_a_schema_admits_itself(schema: dict[str, Any], reading: Reading) -> None:
    assert admits(schema, copy.deepcopy(schema), reading=reading).answer == "yes"
    notes = _notes(schema, copy.deepcopy(schema), sup_is_new=True, reading=reading, shortcuts=False)
    assert answer(notes) == "yes", notes


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_a_change_and_its_inverse_are_not_both_compatible(data: st.DataObject) -> None:
    closed = data.draw(st.booleans())
    reading: Reading = data.draw(st.sampled_from(["declared", "strict"])) if closed else "strict"
    old = data.draw(schemas(depth=3, closed=closed))
    new = data.draw(edited(old, closing=reading == "strict"))
    assert canonical_bytes(old) != canonical_bytes(new)
    forward, backward = classify(old, new, reading=reading), classify(new, old, reading=reading)
    assert (forward.verdict, backward.verdict) != ("compatible", "compatible"), (old, new)
    _examples_hold(old, new, forward)
    _examples_hold(new, old, backward)


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_compatible_changes_keep_every_old_instance(data: st.DataObject) -> None:
    reading: Reading = data.draw(st.sampled_from(["declared", "strict"]))
    old = data.draw(schemas(depth=3).flatmap(lambda s: st.just(s) | referenced(s)))
    new = data.draw(edited(old) | edited(old).flatmap(edited) | referenced(old).flatmap(edited) | schemas(depth=2))
    diff = classify(old, new, reading=reading)
    _examples_hold(old, new, diff)
    if diff.verdict not in ("compatible", "unchanged"):
        return
    for instance in data.draw(st.lists(instances(old, extra=reading == "strict"), min_size=20, max_size=20)):
        if _valid(old, instance):
            assert _valid(new, instance), (instance, old, new)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_breaking_changes_of_simple_schemas_come_with_an_example(data: st.DataObject) -> None:
    old = data.draw(schemas(depth=3, closed=True))
    new = data.draw(edited(old))
    diff = classify(old, new, reading="strict")
    if diff.verdict == "breaking":
        assert any(f.example is not None for f in diff.findings if f.verdict == "breaking"), (old, new, diff)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_a_subschema_moved_behind_a_reference_means_the_same(data: st.DataObject) -> None:
    reading: Reading = data.draw(st.sampled_from(["declared", "strict"]))
    old = data.draw(schemas(depth=3, closed=reading == "declared"))
    new = data.draw(referenced(old))
    assert classify(old, new, reading=reading).verdict == "compatible"
    assert classify(new, old, reading=reading).verdict == "compatible"
    changed = data.draw(edited(new, closing=reading == "strict"))
    forward, backward = classify(new, changed, reading=reading), classify(changed, new, reading=reading)
    assert (forward.verdict, backward.verdict) != ("compatible", "compatible"), (new, changed)
    _examples_hold(new, changed, forward)
    _examples_hold(changed, new, backward)
