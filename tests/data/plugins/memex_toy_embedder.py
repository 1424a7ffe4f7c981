"""A small, deterministic embedding model for the semantic lane's tests (memex.embeddingModel =
python:memex_toy_embedder:provider): each dimension pair stands for a concept, and a text's
vector holds +1/-1 by which concepts its words name, so "feline" finds "cat" without sharing
a word. Loaded through the same provider interface a user's bigger local model would use."""

from __future__ import annotations

import re

CONCEPTS = [
    {"cat", "cats", "feline", "kitten"},
    {"timeout", "timeouts", "slow", "gives", "waiting", "wait"},
    {"database", "postgres", "sql", "db"},
    {"deploy", "deploys", "release", "ship", "shipping"},
    {"tabs", "indentation", "spaces", "whitespace"},
    {"sleep", "sleeps", "napping", "nap", "rest"},
    {"keyboard", "keys", "typing"},
    {"proxy", "gateway", "kestrel"},
]
DIM = 64  # 8 concepts x 8 dimensions


class Toy:
    name = "toy/concepts-v1"
    dim = DIM

    def _vec(self, text: str) -> list[float]:
        words = set(re.findall(r"[a-z]+", text.lower()))
        out = []
        for c in CONCEPTS:
            on = 1.0 if words & c else -1.0
            out.extend([on] * (DIM // len(CONCEPTS)))
        return out

    def passages(self, texts):
        return [self._vec(t) for t in texts]

    def query(self, text):
        return self._vec(text)


def provider() -> Toy:
    return Toy()
