"""Every Eval Ever 0.3.0's rules, checked by hand on what ``eee_read`` reads: an aggregate
record (``eval.schema.json``) and a line of its per-item sidecar
(``instance_level_eval.schema.json``). Each check raises ``ValueError`` with the first problem,
named by its place in the record (``evaluation_results[3].score_details.score: ...``).

Written by hand, not with ``jsonschema``: the schema files ship in the ``every-eval-ever``
wheel, which needs Python 3.12, and are never copied into this repository; ``jsonschema`` is a
test-only dependency. What is checked: every field the schema constrains, at every level, but
the LLM-only parts a reader of embedding records never reads (``generation_config``'s and
``llm_scoring``'s insides, ``level_names``), which are checked to be objects or arrays.
``tests/test_eee_read.py`` mutates valid records field by field and holds this checker to the
real schema's verdict in both directions.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from chemteb_eval.errors import short_repr

__all__ = ["SCHEMA_VERSION", "check_instance", "check_record"]

SCHEMA_VERSION = "0.3.0"

_TOP = frozenset(
    {
        "schema_version",
        "evaluation_id",
        "evaluation_timestamp",
        "retrieved_timestamp",
        "source_metadata",
        "eval_library",
        "model_info",
        "evaluation_results",
        "detailed_evaluation_results",
    }
)
_SAMPLES = re.compile(
    r"^data/[^/]+/[^/]+/[^/]+/[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-4[0-9A-Fa-f]{3}-[89ABab][0-9A-Fa-f]{3}"
    r"-[0-9A-Fa-f]{12}_samples\.jsonl$"
)
_INSTANCE = frozenset(
    {
        "schema_version",
        "evaluation_id",
        "model_id",
        "evaluation_name",
        "evaluation_result_id",
        "sample_id",
        "sample_hash",
        "interaction_type",
        "input",
        "output",
        "messages",
        "answer_attribution",
        "evaluation",
        "token_usage",
        "performance",
        "error",
        "metadata",
    }
)


def _fail(where: str, what: str, value: Any) -> ValueError:
    return ValueError(f"{where}: {short_repr(value)} is not {what}")


def _object(value: Any, where: str, required: tuple[str, ...] = ()) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise _fail(where, "an object", value)
    for key in required:
        if key not in value:
            raise ValueError(f"{where}: '{key}' is required")
    return value


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise _fail(where, "a string", value)
    return value


def _number(value: Any, where: str) -> float:
    """A JSON number (not a bool; NaN and infinity are no JSON number either)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _fail(where, "a number", value)
    if not math.isfinite(value):
        raise _fail(where, "a finite number", value)
    return float(value)


def _integer(value: Any, where: str, least: int | None = None) -> int:
    # JSON Schema's integer: a number with no fraction (2.0 is one)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        raise _fail(where, "an integer", value)
    if least is not None and value < least:
        raise _fail(where, f"an integer of at least {least}", value)
    return int(value)


def _one_of(value: Any, where: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise _fail(where, f"one of {', '.join(allowed)}", value)
    return str(value)


def _strings(value: Any, where: str) -> None:
    """EEE's ``additional_details``: an object whose every value is a string."""
    for key, item in _object(value, where).items():
        _string(item, f"{where}.{key}")


def _optional(found: Mapping[str, Any], key: str, check: Any, where: str, *args: Any) -> None:
    if key in found:
        check(found[key], f"{where}.{key}", *args)


def check_record(record: Any) -> None:
    """``record`` as an Every Eval Ever 0.3.0 aggregate record; ``ValueError`` naming its first
    problem otherwise (a ``schema_version`` other than 0.3.0 is one)."""
    top = _object(
        record,
        "record",
        (
            "schema_version",
            "evaluation_id",
            "retrieved_timestamp",
            "source_metadata",
            "model_info",
            "eval_library",
            "evaluation_results",
        ),
    )
    for key in top:
        if key not in _TOP:
            raise ValueError(f"record: '{key}' is not a field of the schema")
    version = _string(top["schema_version"], "schema_version")
    if version != SCHEMA_VERSION:
        raise ValueError(f"schema_version is {version!r}; this reader reads {SCHEMA_VERSION}")
    for key in ("evaluation_id", "retrieved_timestamp"):
        _string(top[key], key)
    _optional(top, "evaluation_timestamp", _string, "record")
    _source_metadata(top["source_metadata"])
    library = _object(top["eval_library"], "eval_library", ("name", "version"))
    _string(library["name"], "eval_library.name")
    _string(library["version"], "eval_library.version")
    _optional(library, "additional_details", _strings, "eval_library")
    _model_info(top["model_info"])
    results = top["evaluation_results"]
    if not isinstance(results, list):
        raise _fail("evaluation_results", "an array", results)
    for i, result in enumerate(results):
        _result(result, f"evaluation_results[{i}]")
    if "detailed_evaluation_results" in top:
        _detailed(top["detailed_evaluation_results"])


def _source_metadata(value: Any) -> None:
    where = "source_metadata"
    found = _object(
        value, where, ("source_type", "source_organization_name", "evaluator_relationship")
    )
    _one_of(found["source_type"], f"{where}.source_type", ("documentation", "evaluation_run"))
    _string(found["source_organization_name"], f"{where}.source_organization_name")
    _one_of(
        found["evaluator_relationship"],
        f"{where}.evaluator_relationship",
        ("first_party", "third_party", "collaborative", "other"),
    )
    for key in ("source_name", "source_organization_url", "source_organization_logo_url"):
        _optional(found, key, _string, where)
    _optional(found, "additional_details", _strings, where)


def _model_info(value: Any) -> None:
    where = "model_info"
    found = _object(value, where, ("name", "id", "additional_details"))
    for key in ("name", "id"):
        _string(found[key], f"{where}.{key}")
    for key in ("developer", "inference_platform"):
        _optional(found, key, _string, where)
    if "inference_engine" in found:
        engine = _object(found["inference_engine"], f"{where}.inference_engine")
        for key in ("name", "version"):
            _optional(engine, key, _string, f"{where}.inference_engine")
    details = _object(
        found["additional_details"],
        f"{where}.additional_details",
        ("deployment_type", "model_availability"),
    )
    _one_of(
        details["deployment_type"],
        f"{where}.additional_details.deployment_type",
        ("self_deployed", "externally_managed", "unknown"),
    )
    _one_of(
        details["model_availability"],
        f"{where}.additional_details.model_availability",
        ("open_weights", "closed_weights", "unknown"),
    )
    _strings(
        {k: v for k, v in details.items() if k not in ("deployment_type", "model_availability")},
        f"{where}.additional_details",
    )


def _source_data(value: Any, where: str) -> None:
    found = _object(value, where, ("dataset_name", "source_type"))
    _string(found["dataset_name"], f"{where}.dataset_name")
    kind = _one_of(found["source_type"], f"{where}.source_type", ("url", "hf_dataset", "other"))
    if kind == "url":
        urls = found.get("url")
        if not isinstance(urls, list) or not urls:
            raise _fail(f"{where}.url", "a non-empty array of strings", urls)
        for i, url in enumerate(urls):
            _string(url, f"{where}.url[{i}]")
    if kind == "hf_dataset":
        for key in ("hf_repo", "hf_split"):
            _optional(found, key, _string, where)
        _optional(found, "samples_number", _integer, where)
        if "sample_ids" in found:
            ids = found["sample_ids"]
            if not isinstance(ids, list):
                raise _fail(f"{where}.sample_ids", "an array", ids)
            for i, item in enumerate(ids):
                _string(item, f"{where}.sample_ids[{i}]")
    _optional(found, "additional_details", _strings, where)


def _bound(value: Any, where: str) -> None:
    if value is None or value in ("Infinity", "-Infinity"):
        return
    _number(value, where)


def _metric_config(value: Any, where: str) -> None:
    found = _object(value, where, ("lower_is_better",))
    if not isinstance(found["lower_is_better"], bool):
        raise _fail(f"{where}.lower_is_better", "true or false", found["lower_is_better"])
    for key in ("evaluation_description", "metric_id", "metric_name", "metric_kind"):
        _optional(found, key, _string, where)
    _optional(found, "metric_unit", _string, where)
    kind = found.get("score_type")
    if "score_type" in found:
        _one_of(kind, f"{where}.score_type", ("binary", "continuous", "levels"))
    wanted = {"levels": ("level_names", "has_unknown_level"), "continuous": ("min_score",
              "max_score")}  # fmt: skip
    required = wanted.get(kind, ()) if isinstance(kind, str) else ()
    _object(found, where, required)
    for key in ("min_score", "max_score"):
        _optional(found, key, _bound, where)
    for key in ("level_names", "level_metadata"):
        if key in found and not isinstance(found[key], list):
            raise _fail(f"{where}.{key}", "an array", found[key])
    if "has_unknown_level" in found and not isinstance(found["has_unknown_level"], bool):
        raise _fail(f"{where}.has_unknown_level", "true or false", found["has_unknown_level"])
    for key in ("metric_parameters", "llm_scoring"):
        _optional(found, key, _object, where)
    _optional(found, "additional_details", _strings, where)


def _uncertainty(value: Any, where: str) -> None:
    found = _object(value, where)
    if "standard_error" in found:
        error = _object(found["standard_error"], f"{where}.standard_error", ("value",))
        _number(error["value"], f"{where}.standard_error.value")
        _optional(error, "method", _string, f"{where}.standard_error")
    if "confidence_interval" in found:
        at = f"{where}.confidence_interval"
        interval = _object(found["confidence_interval"], at, ("lower", "upper"))
        _number(interval["lower"], f"{at}.lower")
        _number(interval["upper"], f"{at}.upper")
        if "confidence_level" in interval:
            level = _number(interval["confidence_level"], f"{at}.confidence_level")
            if not 0 <= level <= 1:
                raise _fail(f"{at}.confidence_level", "within [0, 1]", level)
        _optional(interval, "method", _string, at)
    _optional(found, "standard_deviation", _number, where)
    for key in ("num_samples", "num_bootstrap_samples"):
        _optional(found, key, _integer, where)


def _result(value: Any, where: str) -> None:
    found = _object(value, where, ("evaluation_name", "source_data", "metric_config",
                                    "score_details"))  # fmt: skip
    for key in ("evaluation_result_id", "evaluation_name", "evaluation_timestamp"):
        _optional(found, key, _string, where)
    _source_data(found["source_data"], f"{where}.source_data")
    _metric_config(found["metric_config"], f"{where}.metric_config")
    details = _object(found["score_details"], f"{where}.score_details", ("score",))
    _number(details["score"], f"{where}.score_details.score")
    _optional(details, "details", _strings, f"{where}.score_details")
    _optional(details, "uncertainty", _uncertainty, f"{where}.score_details")
    if "generation_config" in found:
        config = _object(found["generation_config"], f"{where}.generation_config")
        _optional(config, "additional_details", _strings, f"{where}.generation_config")


def _detailed(value: Any) -> None:
    where = "detailed_evaluation_results"
    found = _object(value, where, ("format", "file_path"))
    _one_of(found["format"], f"{where}.format", ("jsonl",))
    path = _string(found["file_path"], f"{where}.file_path")
    if not _SAMPLES.match(path):
        raise _fail(f"{where}.file_path", "data/<a>/<b>/<c>/<uuid>_samples.jsonl", path)
    if "hash_algorithm" in found:
        _one_of(found["hash_algorithm"], f"{where}.hash_algorithm", ("sha256", "md5"))
    _optional(found, "checksum", _string, where)
    _optional(found, "total_rows", _integer, where)
    _optional(found, "additional_details", _strings, where)


def _string_list(value: Any, where: str, nullable: bool = False) -> None:
    if value is None and nullable:
        return
    if not isinstance(value, list):
        raise _fail(where, "an array", value)
    for i, item in enumerate(value):
        _string(item, f"{where}[{i}]")


def _maybe(check: Any) -> Any:
    """``check`` for a field the schema lets be null."""
    return lambda value, where, *args: None if value is None else check(value, where, *args)


def _attribution(value: Any, where: str) -> None:
    if not isinstance(value, list):
        raise _fail(where, "an array", value)
    for i, item in enumerate(value):
        at = f"{where}[{i}]"
        found = _object(item, at, ("turn_idx", "source", "extracted_value", "extraction_method",
                                   "is_terminal"))  # fmt: skip
        _integer(found["turn_idx"], f"{at}.turn_idx", 0)
        for key in ("source", "extracted_value", "extraction_method"):
            _string(found[key], f"{at}.{key}")
        if not isinstance(found["is_terminal"], bool):
            raise _fail(f"{at}.is_terminal", "true or false", found["is_terminal"])


def _usage(value: Any, where: str) -> None:
    found = _object(value, where, ("input_tokens", "output_tokens", "total_tokens"))
    for key in ("input_tokens", "output_tokens", "total_tokens"):
        _integer(found[key], f"{where}.{key}", 0)
    for key in ("input_tokens_cache_write", "input_tokens_cache_read", "reasoning_tokens"):
        _optional(found, key, _maybe(_integer), where, 0)


def _performance(value: Any, where: str) -> None:
    found = _object(value, where)
    for key in ("latency_ms", "time_to_first_token_ms", "generation_time_ms"):
        if found.get(key) is not None and _number(found[key], f"{where}.{key}") < 0:
            raise _fail(f"{where}.{key}", "at least 0", found[key])
    _optional(found, "additional_details", _maybe(_strings), where)


def check_instance(line: Any) -> Mapping[str, Any]:
    """One sidecar line as a 0.3.0 instance record, every field the schema constrains (a
    multi-turn line's ``messages`` only as an array: no embedding record has turns);
    ``ValueError`` naming the first problem otherwise."""
    found = _object(
        line,
        "line",
        (
            "schema_version",
            "evaluation_id",
            "model_id",
            "evaluation_name",
            "sample_id",
            "interaction_type",
            "input",
            "answer_attribution",
            "evaluation",
        ),
    )
    for key in found:
        if key not in _INSTANCE:
            raise ValueError(f"'{key}' is not a field of the instance schema")
    for key in ("schema_version", "evaluation_id", "model_id", "evaluation_name", "sample_id"):
        _string(found[key], key)
    _optional(found, "evaluation_result_id", _string, "line")
    for key in ("sample_hash", "error"):
        _optional(found, key, _maybe(_string), "line")
    kind = _one_of(found["interaction_type"], "interaction_type",
                   ("single_turn", "multi_turn", "agentic"))  # fmt: skip
    given = _object(found["input"], "input", ("raw", "reference"))
    _string(given["raw"], "input.raw")
    _string_list(given["reference"], "input.reference")
    _optional(given, "formatted", _maybe(_string), "input")
    _optional(given, "choices", _string_list, "input", True)
    output: Mapping[str, Any] | None = None
    if kind == "single_turn":
        output = _object(found.get("output"), "output", ("raw",))
        if found.get("messages") is not None:
            raise _fail("messages", "null in a single-turn line", found["messages"])
    else:
        if found.get("output") is not None:
            raise _fail("output", "null in a multi-turn line", found["output"])
        if not isinstance(found.get("messages"), list):
            raise _fail("messages", "an array in a multi-turn line", found.get("messages"))
    if output is not None:
        _string_list(output["raw"], "output.raw")
        _optional(output, "reasoning_trace", _string_list, "output", True)
    _attribution(found["answer_attribution"], "answer_attribution")
    evaluation = _object(found["evaluation"], "evaluation", ("score", "is_correct"))
    _number(evaluation["score"], "evaluation.score")
    if not isinstance(evaluation["is_correct"], bool):
        raise _fail("evaluation.is_correct", "true or false", evaluation["is_correct"])
    _optional(evaluation, "num_turns", _maybe(_integer), "evaluation", 1)
    _optional(evaluation, "tool_calls_count", _maybe(_integer), "evaluation", 0)
    _optional(found, "token_usage", _maybe(_usage), "line")
    _optional(found, "performance", _maybe(_performance), "line")
    _optional(found, "metadata", _maybe(_strings), "line")
    return found
