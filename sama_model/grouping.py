"""Items joined into groups by a pairwise link (union-find), used wherever pieces of evidence that
touch form one thing: corner trajectories that move rigidly together (one object), boxes that stack
(one tower)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def linked_groups(items: Sequence[T], linked: Callable[[T, T], bool]) -> list[list[T]]:
    """The connected groups of ``items`` under ``linked`` (asked once per pair, earlier item first),
    each in input order, groups ordered by their first item."""
    parent = list(range(len(items)))

    def root(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for i, a in enumerate(items):
        for j in range(i + 1, len(items)):
            if linked(a, items[j]):
                parent[root(i)] = root(j)
    groups: dict[int, list[T]] = {}
    for i, item in enumerate(items):
        groups.setdefault(root(i), []).append(item)
    return list(groups.values())
