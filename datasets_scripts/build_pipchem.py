"""Build the PipChem datasets (the offline chemistry suite) as Hub-layout repositories.

    python datasets_scripts/build_pipchem.py --out DIR [--scale full|small]

Writes ``DIR/<TaskName>/`` (Parquet + README card with ``configs:``) for every PipChem task;
each folder loads with ``datasets.load_dataset(folder, config)`` and can be pushed to the Hub as
a dataset repository as it is. ``chemteb`` builds the same suite into its cache on first use.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from chemteb_eval.data import pipchem


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, required=True, help="folder to write the datasets into")
    parser.add_argument("--scale", choices=sorted(pipchem.SCALES), default="full")
    args = parser.parse_args()
    summary = pipchem.build(args.out, scale=args.scale)
    print(json.dumps(summary["sizes"], indent=1))


if __name__ == "__main__":
    main()
