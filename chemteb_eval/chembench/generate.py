"""Text generation for ChemBench: an OpenAI-compatible server, or a local transformers pipeline.

``load_generator("openai:MODEL")`` posts to ``{base}/chat/completions`` (instruction prompts) or
``{base}/completions`` (completion prompts); ``load_generator("transformers:ID")`` runs a
``text-generation`` pipeline. Both return a callable: prompts in, completions out (greedy by
default: temperature 0).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from chemteb_eval.models.backends import BACKEND_TABLE
from chemteb_eval.models.openai_client import OpenAIClient
from chemteb_eval.models.spec import parse_model_spec

from .prompts import Prompt

__all__ = ["EXTRACTION_PROMPT", "Generator", "llm_extractor", "load_generator"]

Generator = Callable[[Sequence[Prompt]], list[str]]


def _openai(
    model: str,
    *,
    mode: str,
    api_base: str | None,
    api_key: str | None,
    max_tokens: int,
    temperature: float,
    max_retries: int,
    timeout: float,
) -> Generator:
    # the embeddings backend's client: root, key, retries and messages are the same
    client = OpenAIClient(
        model, api_base=api_base, api_key=api_key, max_retries=max_retries, timeout=timeout
    )

    # Completion prompts go to /completions (the answer is choices[0].text), instruction
    # prompts to /chat/completions (choices[0].message.content); the rest is shared.
    endpoint, kind = (
        ("completions", "text") if mode == "completion" else ("chat/completions", "message")
    )

    def generate(prompts: Sequence[Prompt]) -> list[str]:
        out = []
        for prompt in prompts:
            body: dict[str, Any] = {
                "model": model,
                "max_tokens": max_tokens,
                "temperature": temperature,
            }
            if kind == "text":
                body["prompt"] = _text_only(prompt, "the completions endpoint")
            else:
                body["messages"] = [{"role": "user", "content": prompt}]
            out.append(_field(client.post(endpoint, body), kind))
        return out

    return generate


def _text_only(prompt: Prompt, where: str) -> str:
    if isinstance(prompt, str):
        return prompt
    raise ValueError(
        f"model: a question with an image cannot go to {where}; use a chat model with vision "
        "(openai:MODEL on an OpenAI-compatible server, or litellm:PROVIDER/MODEL) in "
        "instruction mode."
    )


def _field(payload: Any, kind: str) -> str:
    from chemteb_eval.errors import ChemtebError

    try:
        choice = payload["choices"][0]
        text = choice["message"]["content"] if kind == "message" else choice["text"]
    except (KeyError, IndexError, TypeError) as exc:
        raise ChemtebError(
            f"the generation response is malformed ({exc!r}); is this an OpenAI-compatible server?"
        ) from None
    return str(text or "")


def _transformers(model: str, *, max_tokens: int, temperature: float) -> Generator:
    from chemteb_eval.errors import require_extra

    require_extra("chembench", "torch", "transformers", what="a transformers: generator")
    from transformers import pipeline

    pipe = pipeline("text-generation", model=model)

    def generate(prompts: Sequence[Prompt]) -> list[str]:
        kwargs: dict[str, Any] = {"max_new_tokens": max_tokens, "return_full_text": False}
        if temperature > 0:
            kwargs.update(do_sample=True, temperature=temperature)
        else:
            kwargs.update(do_sample=False)
        texts = [_text_only(p, "a transformers: text-generation pipeline") for p in prompts]
        return [str(pipe(p, **kwargs)[0]["generated_text"]) for p in texts]

    return generate


def _litellm(
    model: str,
    *,
    mode: str,
    api_base: str | None,
    api_key: str | None,
    max_tokens: int,
    temperature: float,
    max_retries: int,
    timeout: float,
) -> Generator:
    from chemteb_eval.errors import ChemtebError, require_extra

    if "/" not in model:
        raise ValueError(f"model: litellm:{model}; name the provider too (litellm:openai/gpt-4o).")
    if mode != "instruction":
        raise ValueError("mode: litellm: models are chat models; use instruction prompts.")
    # tenacity: LiteLLM's own retry loop (num_retries) imports it only when a request fails, so
    # without it the first transient provider error ends the run ("tenacity import failed").
    require_extra("chembench", "litellm", "tenacity", what="a litellm: generator")
    # LiteLLM fetches its model cost map from GitHub on import unless told not to: a network
    # call (with retries and waits when offline) that generation does not need.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    # Its "Give Feedback / Get Help" banner on every failure: the error below is the one line.
    litellm.suppress_debug_info = True

    def generate(prompts: Sequence[Prompt]) -> list[str]:
        out = []
        for prompt in prompts:
            try:
                reply = litellm.completion(
                    model=model,
                    messages=[{"role": "user", "content": prompt}],
                    api_base=api_base,
                    api_key=api_key,
                    temperature=temperature,
                    max_tokens=max_tokens,
                    # LiteLLM retries a transient error (5xx, 429, timeout) num_retries
                    # times; for a provider on the OpenAI SDK it also hands the number to
                    # the SDK, which retries (with backoff) before LiteLLM's loop does.
                    num_retries=max_retries,
                    timeout=timeout,
                )
                out.append(str(reply.choices[0].message.content or ""))
            except Exception as exc:  # LiteLLM raises its own types per provider
                raise ChemtebError(
                    f"litellm:{model}: {type(exc).__name__}: {str(exc)[:300]} (check the "
                    "provider name, --api-base and the provider's API key variable)."
                ) from None
        return out

    return generate


def load_generator(
    spec: str,
    *,
    mode: str = "instruction",
    api_base: str | None = None,
    api_key: str | None = None,
    max_tokens: int = 512,
    temperature: float = 0.0,
    max_retries: int = 6,
    timeout: float = 120.0,
) -> Generator:
    """A generator from ``openai:MODEL``, ``litellm:PROVIDER/MODEL`` or ``transformers:ID``.

    Args:
        spec: the model, with its backend prefix.
        mode: ``instruction`` (chat endpoint) or ``completion`` (completions endpoint).
        api_base: the OpenAI-compatible API root (default ``$OPENAI_BASE_URL``).
        api_key: its key (default ``$OPENAI_API_KEY``).
        max_tokens: the longest completion.
        temperature: 0 for greedy decoding.
        max_retries: retries of one request after a transient error (openai:; litellm: passes
            it to LiteLLM as ``num_retries``).
        timeout: seconds per request.
    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens: must be positive, got {max_tokens}.")
    parsed = parse_model_spec(spec)  # the backend table's prefixes, litellm: among them
    make = _GENERATORS.get(parsed.backend)
    if make is None:
        raise ValueError(
            f"model: {spec!r}; use openai:MODEL (any OpenAI-compatible server), "
            "litellm:PROVIDER/MODEL or transformers:ID."
        )
    return make(
        parsed.name,
        mode=mode,
        api_base=api_base,
        api_key=api_key,
        max_tokens=max_tokens,
        temperature=temperature,
        max_retries=max_retries,
        timeout=timeout,
    )


def _local(model: str, *, max_tokens: int, temperature: float, **_: Any) -> Generator:
    return _transformers(model, max_tokens=max_tokens, temperature=temperature)


# The generator of each backend whose record has the generator role.
_GENERATORS: dict[str, Callable[..., Generator]] = {
    "openai": _openai,
    "litellm": _litellm,
    "transformers": _local,
}
assert set(_GENERATORS) == {b.name for b in BACKEND_TABLE.values() if b.generator is not None}, (
    "every generator backend of the table needs its generator here"
)


# The fallback extractor's prompt (ours): the reply is read by the same rules as any completion.
EXTRACTION_PROMPT = """Below is a model's response to a chemistry question. Extract the final answer it gives.

Response:
{completion}

If the question was multiple choice, give only the letter(s) of the chosen option(s), separated by commas. If the answer is a number, give only that number, without units, using a dot as the decimal separator. If the response gives no answer, write NONE. Put the result inside [ANSWER] and [/ANSWER], for example [ANSWER]B[/ANSWER] or [ANSWER]4.2[/ANSWER]."""
# The end of a long response, where the final answer usually is (a model's context is finite).
EXTRACTION_CHARS = 6000


def llm_extractor(generate: Generator) -> Callable[[str], str | None]:
    """A fallback answer reader for ``score_chembench(llm_extractor=...)``: asks ``generate``
    (any model: the one under test, or another) to restate the answer of a completion that no
    rule could read; its reply is parsed with the same rules."""

    def extract(completion: str) -> str | None:
        prompt = EXTRACTION_PROMPT.format(completion=completion[-EXTRACTION_CHARS:])
        reply = generate([prompt])[0]
        return reply if reply.strip() else None

    return extract
