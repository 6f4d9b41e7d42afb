"""The share rule of torchrun's ranks (``engine.distributed.share``): a function of a text's key
and the world size only. Cost: < 1 s."""

from __future__ import annotations

import hashlib

from hypothesis import given
from hypothesis import strategies as st

from chemteb_eval.engine.cache import text_key
from chemteb_eval.engine.distributed import owner, share

KEYS = st.lists(st.text(max_size=30).map(lambda t: text_key("", t)), max_size=200)


@given(KEYS, st.integers(1, 9))
def test_the_shares_partition_the_keys_in_order(keys: list[str], world: int) -> None:
    shares = [share(keys, world, rank) for rank in range(world)]
    assert sorted(k for s in shares for k in s) == sorted(keys)  # each key once, none lost
    for rank, mine in enumerate(shares):
        assert mine == [k for k in keys if owner(k, world) == rank]  # in the given order


@given(KEYS, st.integers(1, 9))
def test_a_key_s_rank_does_not_depend_on_the_other_keys(keys: list[str], world: int) -> None:
    # a rank that sees a shorter todo list (it looked later) still takes exactly its own keys
    keys = list(dict.fromkeys(keys))
    for rank in range(world):
        assert share(keys[::2], world, rank) == [
            k for k in share(keys, world, rank) if k in keys[::2]
        ]


def test_the_rule_by_hand_and_its_balance() -> None:
    key = hashlib.sha256(b"\x00CCO").hexdigest()  # text_key("", "CCO")
    assert key == text_key("", "CCO")
    assert owner(key, 3) == int(key[:16], 16) % 3
    keys = [text_key("", f"text {i}") for i in range(30_000)]
    counts = [len(share(keys, 3, r)) for r in range(3)]
    assert sum(counts) == 30_000 and max(counts) - min(counts) < 600  # ~2% of a share
