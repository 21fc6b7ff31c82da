"""Vector search over a row-aligned matrix: exact, or binary-code prefilter + exact rescoring.

Large courses (over `exact_limit` rows) first rank rows by the Hamming distance between sign
codes of mean-centred vectors (Charikar 2002: sign bits of random or centred projections
preserve angular order), keep the `max(candidates_per_result * limit, min_candidates)` closest,
and rescore those exactly with the float32 dot product. The codes are 48 bytes a row against
1,536 for the vectors, so the scan reads 32 times less memory.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]
Mask = npt.NDArray[np.bool_]

EXACT_LIMIT = 50_000
CANDIDATES_PER_RESULT = 100
MIN_CANDIDATES = 2_000


def sign_codes(matrix: Matrix, mean: Matrix) -> npt.NDArray[np.uint8]:
    """Packed sign bits of the mean-centred rows."""
    return np.packbits(matrix - mean > 0, axis=-1)


class VectorIndex:
    """Unit-length vectors of one search scope."""

    def __init__(self, matrix: Matrix, exact_limit: int = EXACT_LIMIT) -> None:
        self.matrix = np.ascontiguousarray(matrix, dtype=np.float32)
        self.approximate = exact_limit > 0 and self.matrix.shape[0] > exact_limit
        if self.approximate:
            self.mean = self.matrix.mean(axis=0).astype(np.float32)
            codes = sign_codes(self.matrix, self.mean)
            pad = (-codes.shape[1]) % 8
            self.codes = np.pad(codes, ((0, 0), (0, pad))).view(np.uint64)

    def __len__(self) -> int:
        return int(self.matrix.shape[0])

    def scores(
        self, query: Matrix, limit: int, mask: Mask | None
    ) -> tuple[Matrix, npt.NDArray[np.int64]]:
        """Cosine scores of candidate rows and their row numbers (all rows when exact)."""
        if not self.approximate:
            return self.matrix @ query, np.arange(len(self), dtype=np.int64)
        code = sign_codes(query, self.mean)
        code = np.pad(code, (0, (-code.shape[0]) % 8)).view(np.uint64)
        distance = np.bitwise_count(self.codes ^ code).sum(axis=1, dtype=np.int32)
        if mask is not None:
            distance[~mask] = np.iinfo(np.int32).max
        keep = min(len(self), max(CANDIDATES_PER_RESULT * limit, MIN_CANDIDATES))
        rows = np.argpartition(distance, keep - 1)[:keep].astype(np.int64)
        return self.matrix[rows] @ query, rows
