"""LLM access through the official openai SDK, for OpenAI or any OpenAI-compatible server.

A call never raises for the server's faults: timeouts, HTTP errors, refusals
and empty answers come back as a :class:`CallRecord` with ``error`` set, so the
loop can count a failed attempt and go on. The SDK retries connection errors,
408, 429 and 5xx itself (``max_retries``), with backoff.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field

import openai

from forge.config import ConfigError, LLMSettings, forge_home

# USD per million tokens (input, output): list prices published by OpenAI. Extend or
# override them in $FORGE_HOME/prices.json, e.g. {"my-model": [0.5, 1.5]}. A model
# that matches nothing has an unknown cost (None), never a cost of zero.
DEFAULT_PRICES = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "o3": (2.00, 8.00),
    "o4-mini": (1.10, 4.40),
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
}


def price_table() -> dict:
    prices = dict(DEFAULT_PRICES)
    path = os.path.join(forge_home(), "prices.json")
    if os.path.exists(path):
        try:
            with open(path) as f:
                extra = json.load(f)
            prices.update({k: (float(v[0]), float(v[1])) for k, v in extra.items()})
        except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError):
            raise ConfigError(f'{path}: expected {{"model": [input_usd_per_1M, output_usd_per_1M], ...}}') from None
    return prices


def price_for(model: str, prices: dict) -> tuple[float, float] | None:
    """The exact name, or a dated snapshot of a listed model (gpt-4o-2024-08-06); nothing else.

    o3-pro is not o3, and gpt-5-nano is not gpt-5: a prefix alone says nothing about a price.
    """
    if model in prices:
        return prices[model]
    dated = re.fullmatch(r"(.+)-\d{4}-\d{2}-\d{2}", model)
    return prices.get(dated.group(1)) if dated else None


@dataclass
class CallRecord:
    model: str
    messages: list
    text: str = ""
    parsed: dict | None = None  # set by the caller once the answer is validated
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    cached_tokens: int | None = None
    cost_usd: float | None = None
    duration_s: float = 0.0
    error: str | None = None
    finish_reason: str | None = None
    extra: dict = field(default_factory=dict)


class LLMClient:
    def __init__(self, settings: LLMSettings, prices: dict | None = None) -> None:
        self.settings = settings
        self.prices = price_table() if prices is None else prices
        self.client = openai.OpenAI(
            api_key=settings.api_key,
            base_url=settings.base_url,
            timeout=settings.timeout_s,
            max_retries=settings.max_retries,
        )

    def chat(
        self, messages: list, *, temperature: float | None = None, response_format: dict | None = None
    ) -> CallRecord:
        record = CallRecord(model=self.settings.model, messages=messages)
        kwargs = {"model": self.settings.model, "messages": messages}
        if temperature is not None:
            kwargs["temperature"] = temperature
        if response_format is not None:
            kwargs["response_format"] = response_format
        start = time.perf_counter()
        try:
            response = self.client.chat.completions.create(**kwargs)
        except openai.APITimeoutError:
            record.error = f"timeout: no answer within {self.settings.timeout_s:g} s"
        except openai.APIStatusError as exc:
            record.error = f"HTTP {exc.status_code}: {_short(exc.message)}"
            record.extra["status_code"] = exc.status_code
        except openai.APIConnectionError as exc:
            record.error = f"connection failed: {_short(str(exc.__cause__ or exc))}"
        except openai.OpenAIError as exc:  # malformed responses and the like
            record.error = f"{type(exc).__name__}: {_short(str(exc))}"
        else:
            self._read(response, record)
        record.duration_s = time.perf_counter() - start
        return record

    def _read(self, response, record: CallRecord) -> None:
        choices = getattr(response, "choices", None) or []
        if not choices or getattr(choices[0], "message", None) is None:
            record.error = "the server answered with no choices"
            return
        message = choices[0].message
        content = message.content
        if isinstance(content, list):  # content parts, as some servers send them
            content = "".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content)
        if content is not None and not isinstance(content, str):
            record.error = f"the answer's content is a {type(content).__name__}, not text"
            content = ""
        record.text = content or ""
        record.finish_reason = choices[0].finish_reason
        refusal = getattr(message, "refusal", None)
        if refusal:
            record.error = f"refused: {_short(refusal)}"
        elif not record.text.strip() and not record.error:
            record.error = "empty answer"
        usage = getattr(response, "usage", None)
        if usage is not None:
            record.prompt_tokens = usage.prompt_tokens
            record.completion_tokens = usage.completion_tokens
            details = getattr(usage, "completion_tokens_details", None)
            record.reasoning_tokens = getattr(details, "reasoning_tokens", None) if details else None
            cached = getattr(usage, "prompt_tokens_details", None)
            record.cached_tokens = getattr(cached, "cached_tokens", None) if cached else None
            price = price_for(self.settings.model, self.prices)
            if price is not None and record.prompt_tokens is not None and record.completion_tokens is not None:
                record.cost_usd = (record.prompt_tokens * price[0] + record.completion_tokens * price[1]) / 1e6


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
