"""About: what is scored, how models are ranked, how sure a rank is, speed, the analysis
views, and how to submit results."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gradio as gr
from state import AppState

from .base import Layout, Tab

ABOUT = """
### What is scored
ChemTEB asks how well a text embedding model serves chemistry. Each task type has one metric:
**classification** — macro F1 of a logistic-regression probe on the embeddings (10 experiments of
8 samples per label, MTEB's protocol; MTEB's ChemTEB reports accuracy); **clustering** — V-measure
of mini-batch k-means; **pair classification** — the best F1 over thresholds on cosine, dot,
Euclidean and Manhattan scores (`max_f1`; MTEB 2.x reports `max_ap`); **bitext mining** — F1 of
nearest-neighbour matching between SMILES and names, descriptions or formulas; **retrieval** —
nDCG@10. Column headers name the key each task is scored by. The numbers are computed by
chemteb-eval, which reproduces MTEB's evaluators exactly.

### How models are ranked
Per task type, a model's score is the mean of its task scores, and complete models are ranked per
type. **ChemTEB(paper)** fuses those ranks by **Reciprocal Rank Fusion**: RRF = Σ over types of
1 / (10 + rank), so a model must do well on every kind of task to lead. **ChemTEB** and
**ChemTEB(v1.1)** rank by the mean over tasks, as MTEB's leaderboard does; RRF is still shown.
**Borda** counts, over all tasks, the models each model beats (its rank among complete models is
*Borda rank*). Models without every task of a benchmark are marked ⚠ and listed after the
ranked models, without a rank, an RRF or Borda points: their figures cover fewer tasks and
are not comparable.

### How sure is a rank?
*Rank 95%* is the range of ranks a model takes in 95% of 1,000 resamples of the benchmark's tasks
(drawn with replacement within each task type, the aggregate recomputed each time; for runs that
wrote per-item evidence, the items of retrieval and accuracy tasks are resampled too). *≈ #1*
marks the models that rank first in at least 2.5% of resamples: not separable from the top. Per-task
tables show a *95% CI* of the score where the run's items allow it. Method and assumptions:
`docs/uncertainty.md` in the repository.

### Speed
*Samples per second* is the sum of the tasks' sizes (as their references state them) over the
sum of the result files' `evaluation_time`. That time is MTEB's: encoding the task's texts plus
scoring them (chemteb-eval's runs record each vector's encoding cost in their cache, so a rerun
served from the cache reports what encoding cost, and split the cost of a text several tasks share
between them; earlier chemteb-eval files that timed scoring alone are left out). Speeds are only
comparable on the same machine: the plot has one panel per hardware (the paper's files: one V100;
our runs: the GPU or CPU model that the run's record in `runs.jsonl` names), each with its own Pareto front. API
models' times are network calls.

### ChemTEB vs MTEB, and the correlations
*ChemTEB vs MTEB* puts each model's general-domain MTEB(eng, v1) mean next to its ChemTEB mean,
per task type both benchmarks have (the paper's Figure 3), with the same metric on both axes —
MTEB's leaderboard metric for the type: accuracy, V-measure, AP, nDCG@10 — and Spearman's rho
between the two rankings with a 95% bootstrap interval (1,000 resamples of the models). A model
is plotted only with every ChemTEB task of the type and every MTEB task of the type; the others
are listed with what they lack. *Correlations* shows how the models' scores on two tasks move
together (task × task, grouped by type: a negative value inside a type means its tasks reward
different abilities) and how two models' scores over the tasks move together (model × model,
ordered by hierarchical clustering, families named). Both follow the filters, and
`chemteb compare-domains` / `chemteb rank --correlations` compute the same numbers.

### Submitting results
Run `pip install "chemteb-eval[run]" && chemteb run --model <your model> --benchmark "ChemTEB(paper)"`
(or `ChemTEB`), which writes `results/<org__model>/<revision>/<Task>.json` in MTEB's layout with a
`model_meta.json`. Open a pull request adding that folder to the results dataset repo this Space
reads (named in its settings as `CHEMTEB_RESULTS_REPO`); once merged and the Space's pinned
revision moves, your model appears here. MTEB result folders are read as they are.
"""


def layout(state: AppState, default: Mapping[str, Any]) -> Layout:
    gr.Markdown(ABOUT)
    return Layout()


TAB = Tab(id="about", label="About", layout=layout)
