import math

import pytest
import torch

from model.rope import apply_rope, rope_angles, rope_frequencies


def rotate_pair(x0, x1, angle):
    """A plain 2x2 rotation, written independently of model/rope.py."""
    c, s = math.cos(angle), math.sin(angle)
    return c * x0 - s * x1, s * x0 + c * x1


def rotate_by_hand(vec, position, base=10000.0):
    out = []
    d = len(vec)
    for i in range(d // 2):
        angle = position * base ** (-2 * i / d)
        out.extend(rotate_pair(vec[2 * i], vec[2 * i + 1], angle))
    return out


def rotate(x, positions, base=10000.0):
    angles = rope_angles(torch.tensor(positions), x.size(-1), base)
    return apply_rope(x, angles.cos().float(), angles.sin().float())


def test_angles_follow_the_formula():
    angles = rope_angles(torch.arange(6), 32)
    assert angles.shape == (6, 16)
    for p in range(6):
        for i in range(16):
            assert angles[p, i].item() == pytest.approx(p * 10000 ** (-2 * i / 32), rel=1e-12)
    assert rope_frequencies(32)[0].item() == 1.0


def test_apply_rope_equals_a_plain_rotation_of_each_interleaved_pair():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(1, 1, 4, 8, generator=gen)
    got = rotate(x, [0, 1, 5, 77])
    for t, p in enumerate([0, 1, 5, 77]):
        expected = rotate_by_hand(x[0, 0, t].tolist(), p)
        torch.testing.assert_close(got[0, 0, t], torch.tensor(expected), rtol=1e-5, atol=1e-5)


def test_rope_keeps_norms():
    x = torch.randn(2, 4, 9, 32, generator=torch.Generator().manual_seed(1))
    torch.testing.assert_close(rotate(x, list(range(9))).norm(dim=-1), x.norm(dim=-1))


def test_score_depends_only_on_the_distance():
    gen = torch.Generator().manual_seed(2)
    q, k = torch.randn(1, 1, 1, 32, generator=gen), torch.randn(1, 1, 1, 32, generator=gen)

    def score(m, n):
        return (rotate(q, [m]) * rotate(k, [n])).sum().item()

    for m, n in [(3, 1), (10, 8), (50, 48), (2, 0)]:
        assert score(m, n) == pytest.approx(score(3, 1), abs=1e-4)
    assert score(5, 1) != pytest.approx(score(3, 1), abs=1e-3)


def test_odd_head_dim_is_refused():
    with pytest.raises(ValueError, match="even"):
        rope_frequencies(7)
