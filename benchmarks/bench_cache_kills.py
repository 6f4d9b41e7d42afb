"""What a killed writer leaves in the embedding cache (issue 45): a writer putting blocks of
``--block`` x ``--dim`` float32 vectors is SIGKILLed at a random moment ``--kills`` times; after
each kill the bytes that no committed block holds (part files) are counted, then once more after
the next open (which reclaims them). Before issue 45, 10 kills left 8.65 MB of dead bytes for
0.79 MB of committed rows, never reclaimed.

    python benchmarks/bench_cache_kills.py [--kills 10] [--block 4096] [--dim 384]

Writes benchmarks/out/cache_kills.json.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
WRITER = """
import sys, numpy as np
sys.path.insert(0, {repo!r})
from pathlib import Path
from chemteb_eval.engine import EmbeddingCache, text_key
cache = EmbeddingCache(Path({folder!r}), "bench/kills", "0" * 40, "bench")
print("ready", flush=True)
rng = np.random.default_rng({seed})
for block in range(10_000):
    keys = [text_key("", f"{seed} {{block}} {{i}}") for i in range({size})]
    cache.put(keys, rng.standard_normal(({size}, {dim})).astype(np.float32) + 1)
"""


def _dead(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.glob("*/*") if f.suffix != ".block")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--block", type=int, default=4096)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument(
        "--out", type=Path, default=REPO / "benchmarks" / "out" / "cache_kills.json"
    )
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from chemteb_eval.engine import EmbeddingCache

    rng = np.random.default_rng(0)
    dead_after_kills = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for kill in range(args.kills):
            code = WRITER.format(
                repo=str(REPO), folder=tmp, seed=kill, size=args.block, dim=args.dim
            )
            proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            time.sleep(float(rng.uniform(0.2, 1.5)))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            dead_after_kills.append(_dead(folder))
        blocks = sum(f.stat().st_size for f in folder.glob("*/*.block"))
        cache = EmbeddingCache(folder, "bench/kills", "0" * 40, "bench")  # the next open
        stored = len(cache)
        cache.close()
        out = {
            "kills": args.kills,
            "block_bytes": args.block * (args.dim * 4 + 8 + 8 + 64),
            "committed_bytes": blocks,
            "committed_vectors": stored,
            "dead_bytes_before_next_open_max": max(dead_after_kills),
            "dead_bytes_after_next_open": _dead(folder),
        }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(
        f"{args.kills} kills: {out['committed_bytes'] / 1e6:.1f} MB committed "
        f"({stored:,} vectors); dead bytes after a kill at most "
        f"{out['dead_bytes_before_next_open_max'] / 1e6:.2f} MB (one block is "
        f"{out['block_bytes'] / 1e6:.2f} MB), after the next open {out['dead_bytes_after_next_open']}"
    )


if __name__ == "__main__":
    main()
