"""Classifying a change of a JSON Schema by what it does to the instances a client relied on.

For a tool's ``inputSchema`` (``direction="input"``) the question is whether a call valid under
the old schema is still accepted by the new one; for an ``outputSchema`` (``"output"``) whether
an output valid under the new schema still satisfies the old one, which a client may check.
Both are one subsumption check, :func:`admits` (``admits(new, old)`` for inputs,
``admits(old, new)`` for outputs). Verdicts:

- ``unchanged``: the canonical forms are equal (:mod:`app.canonical`, Unicode NFC then
  RFC 8785); no findings.
- ``compatible``: every instance of the relied-on schema is admitted (shown, never assumed); the
  findings list what changed (``maximum_raised``, ``property_added``, ``annotation_changed``...).
- ``breaking``: a finding shows an instance that may now be rejected. With an ``example`` the
  instance was checked against both whole schemas; without one the finding was judged keyword by
  keyword (a new ``maximum`` below the old one is breaking even if a ``pattern`` happens to
  exclude every value between them).
- ``unknown``: something could not be decided (``reason`` keys, :data:`app.drift.rules.REASONS`);
  a breaking finding still makes the verdict ``breaking``.

Policy, keyword by keyword (JSON Schema 2020-12: core draft-bhutton-json-schema-01, validation
draft-bhutton-json-schema-validation-01; the draft-07 and draft-04 forms seen in the wild too):

- A missing schema is ``{}`` and accepts everything; ``true``/``false`` are the boolean schemas
  (core 4.3.2); an unknown keyword is an annotation (core 6.5) and changes nothing.
- ``type`` (validation 6.1.1) as sets of atoms where ``integer`` is within ``number`` (core 4.2.1);
  OpenAPI's ``nullable: true`` beside a ``type`` adds ``null``. ``enum``/``const`` (6.1.2, 6.1.3)
  make a finite piece, decided value by value with JSON equality (core 4.2.2).
- Numbers (6.2), strings (6.3), arrays (6.4; core 10.3.1), objects (6.5; core 10.3.2): see
  :mod:`app.drift.scalars`, :mod:`app.drift.arrays`, :mod:`app.drift.objects`. Draft-04 boolean
  ``exclusiveMinimum``/``exclusiveMaximum``, draft-07 ``items: [...]``/``additionalItems`` and
  ``dependencies`` are read as what they meant.
- ``format`` (validation 7): added or changed is ``unknown`` (``format_changed``), dropped compatible.
- ``allOf``/``anyOf``/``oneOf`` (core 10.2.1): compared by subsumption of branches
  (:mod:`app.drift.checker`). An old ``oneOf`` is read as its ``anyOf`` (a superset, so
  ``compatible`` stays sound) and a break it seems to show stands only with an example valid
  under the old ``oneOf`` (else ``one_of_exclusive``). A new ``oneOf`` admits an old value only if
  exactly one branch does: the other branches must be shown disjoint from it (different types,
  ``const``/``enum`` discriminators, ranges; :mod:`app.drift.disjoint`), or the old value must
  come from the same alternative of the same ``oneOf``; else ``one_of_overlap``.
- ``not`` (10.2.1.4), ``if``/``then``/``else`` (10.2.2), ``dependentSchemas`` (10.2.2.4),
  ``unevaluatedItems``/``unevaluatedProperties`` (core 11), ``$dynamicRef`` (8.2.3.2): a new one
  must appear unchanged in the old schema (a new ``not`` may instead be shown disjoint from the
  old values), else ``unknown`` with its reason. An old one is ignored (the old set is then
  over-approximated: sound for ``compatible``), and an unchecked break below it is ``unknown``.
- ``$ref`` (core 8.2.3.1) to ``#``, ``#/$defs/...``, ``#/definitions/...`` or any pointer into the
  document (:mod:`app.drift.document`); a cycle that never descends is ``ref_cycle``, recursion
  through members or items is followed level by level (coinductively).
- Annotations (validation 9: ``title``, ``description``, ``default``, ``examples``,
  ``deprecated``, ``readOnly``, ``writeOnly``; ``$comment``) are compatible changes.

Members an old object does not declare (the room left where the specification leaves room):
with ``reading="declared"`` (the default) an old *record* (``properties`` named, and no
``additionalProperties`` that admits other members, that is, absent or ``false``) is taken to
hold only its declared members (named in ``properties``/``required`` or matched by
``patternProperties``): a client sends what a schema describes, and most servers ignore or
refuse the rest. So a new optional property on such a record is ``compatible``, and so is
closing it with ``additionalProperties: false``. An explicit ``additionalProperties: true`` (or
a schema), or an object with no ``properties`` at all (a free-form map), keeps its undeclared
members: a new typed property there is ``breaking`` (an old call may have sent it with another
type). With ``reading="strict"`` every object keeps its undeclared members, as plain JSON Schema
semantics say, so the verdict is exact subsumption (a new optional ``{"type": "string"}``
member of an open object is then breaking: the old schema allowed ``{"q": 5}``).

Bounds (:mod:`app.drift.limits`): schemas over 5,000 values or 64 levels, comparisons over their
step budget or 24 instance levels are ``unknown`` (``too_large``, ``too_deep``), in milliseconds.
"""

from __future__ import annotations

import json
from typing import Any

from app.canonical import CanonicalFormError, canonical_text
from app.drift.checker import Checker
from app.drift.document import Document
from app.drift.limits import Budget, Exhausted, measure
from app.drift.model import Admission, Answer, Direction, Example, Finding, Reading, SchemaDiff
from app.drift.notes import Note, answer, unique
from app.drift.rules import Verdict

#: The verdict of a comparison from its answer.
VERDICTS: dict[Answer, Verdict] = {"no": "breaking", "unknown": "unknown", "yes": "compatible"}


def _notes(sup: Any, sub: Any, *, sup_is_new: bool, reading: Reading, shortcuts: bool = True) -> list[Note]:
    """The findings of ``sup`` admitting ``sub`` (schemas, ``None`` meaning missing)."""
    sup, sub = ({} if sup is None else sup), ({} if sub is None else sub)
    for schema in (sup, sub):
        if not isinstance(schema, dict | bool):
            return [Note("", "unknown", "invalid_schema", reason="invalid_schema")]
        too_big = measure(schema)
        if too_big is not None:
            return [Note("", "unknown", too_big, reason=too_big)]
    budget = Budget()
    checker = Checker(
        Document(sup),
        Document(sub),
        sup_is_new=sup_is_new,
        closed_records=reading == "declared",
        budget=budget,
        shortcuts=shortcuts,
    )
    try:
        return unique(checker.run())
    except Exhausted as exc:
        return unique([*checker.shown, Note("", "unknown", exc.reason, reason=exc.reason)])
    except RecursionError:
        return unique([*checker.shown, Note("", "unknown", "too_deep", reason="too_deep")])


def _finding(note: Note) -> Finding:
    example = None if note.example is None else Example(instance=note.example[0])
    return Finding(
        pointer=note.pointer,
        verdict=note.verdict,
        rule=note.rule,
        old=note.old,
        new=note.new,
        reason=note.reason,
        example=example,
    )


def _canonical(old: Any, new: Any) -> bool | str:
    """Whether the two canonical forms are equal, or the reason key when one has none.

    Equal JSON texts (members sorted) are equal values, so equal forms; otherwise the forms are
    compared from the texts (:func:`~app.canonical.canonical_text`, written at C speed
    when the text allows).
    """
    try:
        texts = [
            json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
            for value in (old, new)
        ]
    except RecursionError:
        return "too_deep"
    except (TypeError, ValueError):
        return "not_canonical"
    if texts[0] == texts[1]:
        return True
    try:
        return canonical_text(texts[0].encode()) == canonical_text(texts[1].encode())
    except CanonicalFormError as exc:
        return "too_deep" if exc.reason == "too_deep" else "not_canonical"
    except (RecursionError, ValueError):
        return "not_canonical"


def classify(old: Any, new: Any, *, direction: Direction = "input", reading: Reading = "declared") -> SchemaDiff:
    """The verdict on changing a tool's ``inputSchema`` (or ``outputSchema``) from ``old`` to ``new``."""
    same = next(filter(None, map(measure, (old, new))), None) or _canonical(
        {} if old is None else old, {} if new is None else new
    )
    if same is True:
        return SchemaDiff(verdict="unchanged", direction=direction)
    if isinstance(same, str):
        finding = Finding(pointer="", verdict="unknown", rule=same, reason=same)
        return SchemaDiff(verdict="unknown", direction=direction, findings=[finding], reasons=[same])
    if direction == "input":
        notes = _notes(new, old, sup_is_new=True, reading=reading)
    else:
        notes = _notes(old, new, sup_is_new=False, reading=reading)
    verdict = VERDICTS[answer(notes)]
    reasons = sorted({note.reason for note in notes if note.verdict == "unknown" and note.reason})
    return SchemaDiff(verdict=verdict, direction=direction, findings=[_finding(n) for n in notes], reasons=reasons)


def admits(sup: Any, sub: Any, *, reading: Reading = "declared") -> Admission:
    """Whether every instance valid under ``sub`` is valid under ``sup`` (rules named as ``sub`` -> ``sup``)."""
    notes = _notes(sup, sub, sup_is_new=True, reading=reading)
    result = answer(notes)
    findings = [_finding(note) for note in notes]
    witness = next((f for f in findings if f.verdict == "breaking"), None) if result == "no" else None
    reason = next((f.reason for f in findings if f.verdict == "unknown"), None) if result == "unknown" else None
    return Admission(answer=result, witness=witness, reason=reason, findings=findings)
