"""ChemBench: fraction correct of LLM answers to chemistry questions, with robust answer parsing
and refusal detection (an evaluate module)."""

import json

import datasets
import evaluate

from chemteb_eval import metric_docs  # From: chemteb-eval
from chemteb_eval.chembench.questions import Question  # From: chemteb-eval
from chemteb_eval.chembench.score import check_completions, score_chembench  # From: chemteb-eval
from chemteb_eval.evaluate_support import DirectCompute  # From: chemteb-eval
from chemteb_eval.metric_docs import CHEMBENCH_CITATION  # From: chemteb-eval

_DESCRIPTION = """\
Scores LLM completions against ChemBench questions: reads the answer (answer tags, option
letters, numbers in any notation, number words), detects refusals, and reports fraction correct
overall and by topic, keyword and question type. Multiple choice is correct iff the chosen set
equals the options scored 1; numbers are correct within 1% of |target| (at least 1e-6), or the
question's own relative tolerance. See the card for every parsing rule with an example.
"""

_KWARGS_DESCRIPTION = metric_docs.inputs_description(
    score_chembench,
    """\
    predictions: the model's completions, one per question.
    references: the questions, as question-file dicts (name, keywords, metrics, examples, ...)
        or their JSON strings; the Hub's rows (target_scores as a JSON string) work too.
    prompt_mode: "instruction" (answers in [ANSWER] tags) or "completion" (a leading answer
        is read first); the same as `mode`.""",
    "    main_score (= fraction_correct), fraction_correct_answered, n_questions, n_correct,\n"
    "    n_refusals, n_parse_failures, n_refusal_retries, mcq_{hamming,precision,recall,f1,\n"
    "    multiple_choice_grade}, numeric_mae, by_topic, by_keyword, by_type (and details).",
    """\
    One multiple-choice and one numeric question; ``Chembench()`` stands for
    ``evaluate.load("chemteb/chembench")`` (the class is what that call instantiates; the Hub
    is not needed to run these):

    >>> metric = Chembench()  # evaluate.load("chemteb/chembench")
    >>> mcq = {
    ...     "name": "rate",
    ...     "keywords": ["requires-reasoning", "difficulty-basic"],
    ...     "metrics": ["multiple_choice_grade"],
    ...     "examples": [{
    ...         "input": "To double the rate of radical polymerization, how must the "
    ...         "initiator concentration change?",
    ...         "target_scores": {"doubled": 0, "quadrupled": 1, "tripled": 0},
    ...     }],
    ... }
    >>> num = {
    ...     "name": "atoms",
    ...     "keywords": ["requires-calculation", "difficulty-basic"],
    ...     "metrics": ["mae"],
    ...     "examples": [{"input": "How many atoms are in one water molecule?", "target": 3}],
    ... }
    >>> out = metric.compute(
    ...     predictions=["[ANSWER]B[/ANSWER]", "[ANSWER]3[/ANSWER]"], references=[mcq, num]
    ... )
    >>> out["fraction_correct"], out["n_correct"], out["by_type"]["mcq"]["fraction_correct"]
    (1.0, 2, 1.0)

    Completion prompts (a leading answer is read, number words too), one refusal:

    >>> out = metric.compute(
    ...     predictions=["I cannot help with that.", "The answer is three."],
    ...     references=[mcq, num],
    ...     prompt_mode="completion",
    ... )
    >>> out["fraction_correct"], out["n_refusals"], out["fraction_correct_answered"]
    (0.5, 1, 1.0)
""",
)
DEFAULTS = metric_docs.keyword_defaults(score_chembench)


def _as_json(question):
    return question if isinstance(question, str) else json.dumps(question, sort_keys=True)


def _checked(predictions, references):
    """The function's own checks, before Arrow (which would turn bytes or numbers into text)."""
    if predictions is not None:
        check_completions(predictions)
    if references is not None:
        for question in references:
            if not isinstance(question, Question):
                Question.from_dict(question)
        return [_as_json(r) for r in references]
    return None


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Chembench(DirectCompute, evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=CHEMBENCH_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            # Both are strings: question dicts are serialised before they reach Arrow, whose
            # schema inference would otherwise choke on the varying target/target_scores.
            features=datasets.Features(
                {"predictions": datasets.Value("string"), "references": datasets.Value("string")}
            ),
            reference_urls=["https://github.com/lamalab-org/chembench"],
        )

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add a batch of completions and questions (dicts or JSON strings)."""
        refs = _checked(predictions, references)
        return super().add_batch(predictions=predictions, references=refs, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Add one completion and its question (a dict or a JSON string)."""
        _checked([prediction], [reference])
        ref = None if reference is None else _as_json(reference)
        return super().add(prediction=prediction, reference=ref, **kwargs)

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Score completions against questions; see the card for the options."""
        if self.num_process == 1 and self.writer is None:  # straight to the function
            return super().compute(predictions=predictions, references=references, **kwargs)
        refs = _checked(predictions, references)
        return super().compute(predictions=predictions, references=refs, **kwargs)

    def _compute(
        self,
        predictions,
        references,
        prompt_mode=DEFAULTS["mode"],  # the function's `mode`
        shuffle_seed=DEFAULTS["shuffle_seed"],
        relative_tolerance=DEFAULTS["relative_tolerance"],
        absolute_floor=DEFAULTS["absolute_floor"],
        detect_refusals=DEFAULTS["detect_refusals"],
        refusal_classifier=DEFAULTS["refusal_classifier"],
        retry=DEFAULTS["retry"],
        max_retries=DEFAULTS["max_retries"],
        llm_extractor=DEFAULTS["llm_extractor"],
        confidences=DEFAULTS["confidences"],
        read_confidence=DEFAULTS["read_confidence"],
        return_details=DEFAULTS["return_details"],
    ):
        return score_chembench(
            list(predictions),
            list(references),
            mode=prompt_mode,
            shuffle_seed=shuffle_seed,
            relative_tolerance=relative_tolerance,
            absolute_floor=absolute_floor,
            detect_refusals=detect_refusals,
            refusal_classifier=refusal_classifier,
            retry=retry,
            max_retries=max_retries,
            llm_extractor=llm_extractor,
            confidences=confidences,
            read_confidence=read_confidence,
            return_details=return_details,
        )
