"""What a local model folder's card (``README.md``) declares about the model: its licence."""

from __future__ import annotations

from pathlib import Path

__all__ = ["card_licence"]


def card_licence(source: str) -> str | None:
    """The licence the card's front matter declares (``license:`` in the folder's README.md),
    as written; ``None`` when there is no card, or it is unreadable, not UTF-8, bad YAML, huge,
    or its licence is not a short printable id (a card is untrusted)."""
    card = Path(source) / "README.md"
    import yaml
    from huggingface_hub.repocard import metadata_load  # the front matter as the Hub reads it

    try:
        front = metadata_load(card) if card.is_file() and card.stat().st_size < 2**20 else None
    except (OSError, ValueError, yaml.YAMLError):
        front = None
    licence = front.get("license") if isinstance(front, dict) else None
    if isinstance(licence, str) and 0 < len(licence) <= 64 and licence.isprintable():
        return licence
    return None
