"""Write datasets the way the Hub holds them: Parquet files plus a README card with ``configs:``.

``datasets`` >= 4 no longer runs loading scripts, so a Hub dataset is Parquet plus a card whose
YAML ``configs:`` block names the files. Writing our own datasets in that layout means they load
through the very same ``load_dataset`` call as BASF-AI's, from a folder or once pushed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["write_hub_dataset"]


def _yaml_str(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_hub_dataset(
    root: Path,
    configs: Mapping[str, Mapping[str, Mapping[str, Sequence[Any]]]],
    *,
    pretty_name: str,
    license: str,
    card: str,
    tags: Sequence[str] = (),
) -> Path:
    """Write one Hub-layout dataset repository.

    Args:
        root: the repository folder (created; files in it are overwritten).
        configs: ``{config: {split: {column: values}}}``; every config is Parquet.
        pretty_name: the card's title.
        license: an SPDX-style licence id for the card (e.g. ``mit``, ``cc-by-sa-4.0``).
        card: the card's Markdown body (what it is, built from what, how).
        tags: extra card tags.

    Returns:
        ``root``.
    """
    root.mkdir(parents=True, exist_ok=True)
    lines = ["---", f"license: {license}", f"pretty_name: {_yaml_str(pretty_name)}"]
    if tags:
        lines.append("tags:")
        lines += [f"- {t}" for t in tags]
    lines.append("configs:")
    for config, splits in configs.items():
        lines += [f"- config_name: {config}", "  data_files:"]
        for split, columns in splits.items():
            rel = f"{config}/{split}-00000-of-00001.parquet"
            table = pa.table({k: list(v) for k, v in columns.items()})
            (root / config).mkdir(parents=True, exist_ok=True)
            # Fixed writer options: the same table always gives the same bytes.
            pq.write_table(table, root / rel, compression="zstd", write_statistics=False)
            lines += [f"  - split: {split}", f"    path: {rel}"]
    lines.append("---")
    (root / "README.md").write_text(
        "\n".join(lines) + "\n\n" + card.strip() + "\n", encoding="utf-8"
    )
    return root
