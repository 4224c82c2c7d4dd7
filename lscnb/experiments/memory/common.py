"""The memory chapter's name and the sizes its linear teacher-student figures share (quick and full profiles)."""

from __future__ import annotations

CHAPTER = "memory"

SIZES = {
    "quick": dict(
        lams=[0.9, 0.99, 0.999],
        rhos=[0.0, 0.9, 1.0],
        chains=8192,
        nu0s=[0.68, 0.92, 0.99],
        steps=400,
        batch=64,
        length=300,
        seeds=[0],
        student=64,
        lrs={
            "dense": [1e-3, 3.2e-3],
            "lru": [1e-2, 3.2e-2],
            "block": [1e-3, 3.2e-3],
            "block128": [1e-3, 3.2e-3],
            "complex": [1e-3, 3.2e-3],
            "complex+γ": [1e-3, 3.2e-3],
        },
        hessian_seeds=[0, 1, 2, 3, 4],
        hessian_batch=64,
        adam_steps=600,
        adam_batch=16,
    ),
    "full": dict(
        lams=[0.9, 0.99, 0.999, 0.9999],
        rhos=[0.0, 0.9, 0.99, 1.0],
        chains=65536,
        nu0s=[0.36, 0.68, 0.84, 0.92, 0.96, 0.98, 0.99],
        steps=10_000,
        batch=128,
        length=300,
        seeds=[0, 1, 2],
        student=64,
        lrs={
            "dense": [3.2e-5, 1e-4, 3.2e-4, 1e-3, 3.2e-3],
            "lru": [3.2e-3, 1e-2, 3.2e-2, 0.1, 0.32],
            "block": [3.2e-4, 1e-3, 3.2e-3, 1e-2],
            "block128": [3.2e-4, 1e-3, 3.2e-3, 1e-2],
            "complex": [1e-4, 3.2e-4, 1e-3, 3.2e-3, 1e-2],
            "complex+γ": [1e-4, 3.2e-4, 1e-3, 3.2e-3, 1e-2],
        },
        hessian_seeds=list(range(10)),
        hessian_batch=64,
        adam_steps=10_000,
        adam_batch=128,
    ),
}
