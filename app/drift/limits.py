"""The bounds on a comparison, so a hostile schema costs milliseconds and never the stack.

Policy: a schema is measured before anything else looks at it (iteratively, without recursion):
more than :data:`MAX_NODES` JSON values or deeper than :data:`MAX_SCHEMA_DEPTH` levels and the
verdict is ``unknown`` with ``too_large`` or ``too_deep``. The comparison itself descends at most
:data:`MAX_DEPTH` instance levels (properties, items) and spends one step of a :class:`Budget`
per schema node it expands, per keyword the validator checks and per example it builds;
:data:`MAX_STEPS` of them, then ``too_large``. Every ``$ref`` followed is a step, so a chain of
references that doubles at each level exhausts the budget instead of the time. At one instance
level a schema expands to at most :data:`MAX_BRANCHES` alternatives (``anyOf``/``oneOf``
products). Findings found before a bound was hit are kept: a ``breaking`` finding with a
checked example stays true whatever the rest of the schema holds.
"""

from __future__ import annotations

from typing import Any

#: JSON values (objects, arrays and scalars) one schema may hold.
MAX_NODES = 2_000
#: Nesting of one schema (the depth of its JSON text).
MAX_SCHEMA_DEPTH = 64
#: Instance levels (object members, array items) a comparison descends.
MAX_DEPTH = 24
#: Steps of one comparison (node expansions, validator keyword checks, examples built).
MAX_STEPS = 2_000
#: Alternatives one schema expands to at one instance level.
MAX_BRANCHES = 64
#: Members of an ``enum`` compared value by value; property names compared one by one.
MAX_VALUES = 256
#: Example instances built and validated in one comparison.
MAX_EXAMPLES = 96
#: Seconds the schema comparisons of one whole tool list may take (2,000 tools at their full
#: per-schema budget would take minutes); tools past it whose schemas differ are ``unknown``
#: with ``list_too_large``.
LIST_SECONDS = 2.0


class Exhausted(Exception):
    """The comparison ran out of budget (``reason`` is ``too_large`` or ``too_deep``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Budget:
    """The steps and examples left to one comparison."""

    __slots__ = ("examples", "steps")

    def __init__(self, steps: int = MAX_STEPS, examples: int = MAX_EXAMPLES) -> None:
        self.steps = steps
        self.examples = examples

    def spend(self, steps: int = 1) -> None:
        """Take ``steps``; :class:`Exhausted` when none are left."""
        self.steps -= steps
        if self.steps < 0:
            raise Exhausted("too_large")


def measure(schema: Any) -> str | None:
    """``too_large`` or ``too_deep`` when ``schema`` exceeds the bounds, else ``None`` (iterative;
    only containers are visited, scalars are counted by their parent)."""
    if type(schema) is not dict and type(schema) is not list:
        return None
    stack: list[tuple[Any, int]] = [(schema, 1)]
    nodes = 1
    while stack:
        value, depth = stack.pop()
        children = value.values() if type(value) is dict else value
        nodes += len(children)
        if nodes > MAX_NODES:
            return "too_large"
        for item in children:
            if type(item) is dict or type(item) is list:
                if depth >= MAX_SCHEMA_DEPTH:
                    return "too_deep"
                stack.append((item, depth + 1))
    return None
