"""Reciprocal-rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009).

score(c) = Σ_lists 1 / (k + rank_list(c)), ranks starting at 1; a list that
does not hold c adds nothing. Only ranks matter, so BM25 scores and cosine
similarities need no normalisation.
"""

from __future__ import annotations

from collections.abc import Sequence

from retriever.search.repository import ScoredChunk


def reciprocal_rank_fusion(
    lists: Sequence[Sequence[ScoredChunk]], *, k: float
) -> list[ScoredChunk]:
    """Fused ranking, best first; ties go to the lower chunk id, so results are stable."""
    fused: dict[int, float] = {}
    for ranked in lists:
        for rank, hit in enumerate(ranked, start=1):
            fused[hit.chunk_id] = fused.get(hit.chunk_id, 0.0) + 1.0 / (k + rank)
    order = sorted(fused.items(), key=lambda item: (-item[1], item[0]))
    return [ScoredChunk(chunk_id, score) for chunk_id, score in order]


def best_ranks(lists: Sequence[Sequence[ScoredChunk]]) -> dict[int, int]:
    """Each chunk's best (lowest) rank over ``lists``."""
    ranks: dict[int, int] = {}
    for ranked in lists:
        for rank, hit in enumerate(ranked, start=1):
            if rank < ranks.get(hit.chunk_id, rank + 1):
                ranks[hit.chunk_id] = rank
    return ranks
