"""Lining line B up with line A by token id: the one rule both /api/compare (its `alignment`, which the page
draws A − B by) and the verdicts (their `aligned`) read, so the page and the server cannot disagree.

By id, not by character: the model reads every character outside the vocabulary as the one unknown id, so
白日依山Q and Z白日依山 are the same characters to it (Q and Z are both the unknown id)."""


def alignment(ids_a: list[int], ids_b: list[int]) -> list[int] | None:
    """For each position of A, the position of B holding the same id (the k-th occurrence of an id in A meets
    its k-th occurrence in B); None unless B is a reordering of A (the same ids, as many times each)."""
    if sorted(ids_a) != sorted(ids_b):
        return None
    slots: dict[int, list[int]] = {}
    for j, token in enumerate(ids_b):
        slots.setdefault(token, []).append(j)
    seen: dict[int, int] = {}
    order = []
    for token in ids_a:
        order.append(slots[token][seen.get(token, 0)])
        seen[token] = seen.get(token, 0) + 1
    return order
