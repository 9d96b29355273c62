"""Members no name covers, and member names (JSON Schema 2020-12 core 10.3.2.2 to 10.3.2.4).

Each old ``patternProperties`` entry, and the old ``additionalProperties`` when the old schema
allows members beyond those it names, is one *entry*: the members under it must be admitted by
every new entry that may apply to the same names. A new entry with an identical pattern surely
applies (and then the new ``additionalProperties`` does not); one whose pattern may share names
(not shown disjoint by literal prefixes) may apply, and a break it seems to show stands only with
an example (else ``pattern_properties``). A new ``propertyNames`` must accept every name the old
schema allows: each named member when the old object allows no others, else a comparison of the
name schemas (names are strings).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from app.drift import regex
from app.drift.branches import Branch
from app.drift.document import Conj, Ref
from app.drift.notes import Note, Place, brief, caution
from app.drift.sample import NoInstance

if TYPE_CHECKING:
    from app.drift.checker import Checker

#: Member names are strings (the implicit schema of ``propertyNames``).
STRING = Ref({"type": "string"}, "")


def place_for(check: Checker, place: Place, old: Branch, key: str | None) -> Place:
    outer = place.embed
    if outer is None or key is None:
        return Place(place.depth + 1, None, caution(place, old))

    def embed(value: Any) -> Any:
        return outer(check.sampler.object(old, place.depth, members={key: value}))

    return Place(place.depth + 1, embed, caution(place, old))


def values_of(check: Checker, conj: Conj, depth: int) -> Iterator[Any]:
    yield check.sampler.value(conj, depth + 1)


def holding(check: Checker, old: Branch, depth: int, key: str, absent: str | None = None) -> Iterator[Any]:
    conj = check.sampler.member(old, key)
    if conj is not None:
        value = check.sampler.value(conj, depth + 1)
        yield check.sampler.object(old, depth, without=absent, members={key: value})


def lacking(check: Checker, old: Branch, depth: int, key: str) -> Iterator[Any]:
    yield check.sampler.object(old, depth, without=key)


def entries(check: Checker, old: Branch) -> list[tuple[str | None, Conj, str]]:
    """The old members no name covers: one entry per pattern, one for the rest (if allowed)."""
    entries: list[tuple[str | None, Conj, str]] = [
        (pattern, (ref,), ref.pointer) for shape in old.shapes for pattern, ref in shape.patterns
    ]
    closed = (check.closed_records and old.is_record()) or any(
        shape.additional is not None and shape.additional.node is False for shape in old.shapes
    )
    if not closed:
        extra = tuple(
            shape.additional
            for shape in old.shapes
            if shape.additional is not None and not shape.patterns and shape.additional.node is not True
        )
        at = extra[0].pointer if extra else (old.shapes[0].pointer if old.shapes else "")
        entries.append((None, extra, at))
    return entries


def _relevant(
    shape_patterns: tuple[tuple[str, Ref], ...], extra: Ref | None, pattern: str | None, old_patterns: set[str]
) -> list[tuple[Ref, bool]]:
    """The new entries that may apply to the names of one old entry, each with whether it surely does."""
    if pattern is not None:
        direct = [(ref, True) for mine, ref in shape_patterns if mine == pattern]
        cross = [(ref, False) for mine, ref in shape_patterns if mine != pattern and not regex.disjoint(mine, pattern)]
        if not direct and extra is not None:
            cross.append((extra, not cross))
        return direct + cross
    out = [(ref, False) for mine, ref in shape_patterns if mine not in old_patterns]
    if extra is not None:
        out.append((extra, not out))
    return out


def others(check: Checker, new: Branch, old: Branch, keys: list[str], place: Place, sink: list[Note]) -> None:
    found = entries(check, old)
    old_patterns = {pattern for shape in old.shapes for pattern, _ in shape.patterns}
    opened = all(shape.additional is None or shape.additional.node is True for shape in new.shapes)
    for shape in old.shapes:
        if shape.additional is not None and shape.additional.node is False and opened:
            check.relax(sink, "additional_properties", sup_at=None, sub_at=shape.additional.pointer, sub_val=False)
    if not found and all(shape.additional is None or shape.additional.node is not False for shape in old.shapes):
        closing = "additional_properties_closed" if check.sup_is_new else "additional_properties_opened"
        for shape in new.shapes:
            if shape.additional is not None and shape.additional.node is False:
                check.relax(
                    sink,
                    "additional_properties",
                    sup_at=shape.additional.pointer,
                    sub_at=None,
                    sup_val=False,
                    name=closing,
                )
    for pattern, theirs, at in found:
        key = check.sampler.fresh_key(old, keys, pattern)
        where = place_for(check, place, old, key)
        for shape in new.shapes:
            for ref, sure in _relevant(shape.patterns, shape.additional, pattern, old_patterns):
                if ref.node is True:
                    continue
                unconfirmed = None if sure else "pattern_properties"
                if ref.node is False:
                    check.fail(
                        sink,
                        "additional_properties",
                        where,
                        sup_at=ref.pointer,
                        sub_at=at,
                        sup_val=False,
                        sub_val=brief(theirs[0].node) if theirs else True,
                        candidates=values_of(check, theirs, place.depth),
                        branch=old,
                        unconfirmed=unconfirmed,
                    )
                    continue
                notes = check.admits((ref,), theirs, where)
                for note in notes:
                    if not sure and note.verdict == "breaking" and note.example is None:
                        note.verdict, note.reason = "unknown", "pattern_properties"
                sink.extend(notes)


def names(check: Checker, new: Branch, old: Branch, keys: list[str], place: Place, sink: list[Note]) -> None:
    for schema in new.names:
        if any(check.same(schema.node, mine.node) for mine in old.names):
            continue
        if entries(check, old):
            outer = place.embed

            def embed(key: Any, outer: Any = outer) -> Any:
                conj = check.sampler.member(old, key) if isinstance(key, str) else None
                if conj is None or outer is None:
                    return _no_instance()
                value = check.sampler.value(conj, place.depth + 1)
                return outer(check.sampler.object(old, place.depth, members={key: value}))

            where = Place(place.depth + 1, embed, caution(place, old))
            sink.extend(check.admits((schema,), (*old.names, STRING), where))
            continue
        for key in keys:
            if check.sampler.member(old, key) is None:
                continue
            allowed = check.sup_names(schema, key)
            if allowed is None:
                check.undecided(sink, "regex_unsupported", schema.pointer, family="property_names", sub_val=key)
            elif not allowed:
                check.fail(
                    sink,
                    "property_names",
                    place,
                    sup_at=schema.pointer,
                    sub_at=None,
                    sup_val=schema.node,
                    sub_val=key,
                    candidates=holding(check, old, place.depth, key),
                    branch=old,
                )
    for mine in old.names:
        if not any(check.same(schema.node, mine.node) for schema in new.names):
            check.relax(sink, "property_names", sup_at=None, sub_at=mine.pointer, sub_val=mine.node)


def _no_instance() -> Any:
    raise NoInstance
