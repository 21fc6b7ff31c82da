"""Vector search: exact below the limit, binary-code prefilter + exact rescoring above it."""

from __future__ import annotations

import numpy as np
import pytest

from coursetutor.scoring.vectors import MIN_CANDIDATES, VectorIndex, sign_codes


def unit_rows(n: int, dim: int = 64, seed: int = 0) -> np.ndarray:
    """Clustered unit vectors with a shared offset, like real sentence embeddings."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(50, dim))
    rows = centres[rng.integers(0, 50, n)] + 0.6 * rng.normal(size=(n, dim)) + 2.0
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_sign_codes_pack_the_centred_signs() -> None:
    m = np.array([[0.5, -1.0, 2.0], [1.5, 1.0, 0.0]], dtype=np.float32)
    mean = m.mean(axis=0)
    assert sign_codes(m, mean).tolist() == [[0b00100000], [0b11000000]]


def test_small_index_is_exact() -> None:
    m = unit_rows(500)
    index = VectorIndex(m, exact_limit=1000)
    scores, rows = index.scores(m[3], 5, None)
    assert not index.approximate
    assert rows.tolist() == list(range(500))
    assert np.allclose(scores, m @ m[3])


def test_large_index_prefilters_and_rescores_exactly() -> None:
    m = unit_rows(20_000)
    index = VectorIndex(m, exact_limit=10_000)
    assert index.approximate
    rng = np.random.default_rng(1)
    recalls = []
    for i in rng.choice(len(m), 50, replace=False):
        q = m[i] + rng.normal(scale=0.05, size=m.shape[1]).astype(np.float32)
        q /= np.linalg.norm(q)
        scores, rows = index.scores(q, 20, None)
        assert rows.shape == (MIN_CANDIDATES,)
        assert np.allclose(scores, m[rows] @ q)  # candidates are rescored exactly
        exact = set(np.argsort(-(m @ q))[:20].tolist())
        approx = set(rows[np.argsort(-scores)[:20]].tolist())
        recalls.append(len(exact & approx) / 20)
    assert float(np.mean(recalls)) >= 0.95


def test_masked_rows_are_never_preferred() -> None:
    m = unit_rows(20_000)
    index = VectorIndex(m, exact_limit=10_000)
    mask = np.zeros(len(m), dtype=bool)
    mask[::7] = True
    _, rows = index.scores(m[0], 10, mask)
    assert mask[rows].all()


@pytest.mark.parametrize("limit", [0, -1])
def test_exact_limit_zero_or_less_never_approximates(limit: int) -> None:
    assert not VectorIndex(unit_rows(100), exact_limit=limit).approximate
