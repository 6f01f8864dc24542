"""forge's configuration, resolved once and passed down.

Sources, strongest first: command-line options, environment variables
(``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, ``FORGE_MODEL``), then
``$FORGE_HOME/config.json``. ``FORGE_HOME`` defaults to the per-user app
directory (``click.get_app_dir("forge")``); it holds ``forge.db``, the config
file and an optional ``prices.json`` that extends the price table.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

import click


class ConfigError(ValueError):
    """Configuration that cannot work; the message says how to fix it, in one line."""


def forge_home() -> str:
    return os.environ.get("FORGE_HOME") or click.get_app_dir("forge")


def db_path() -> str:
    return os.path.join(forge_home(), "forge.db")


def load_config_file() -> dict:
    path = os.path.join(forge_home(), "config.json")
    if not os.path.exists(path):
        return {}
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object")
    return data


@dataclass
class LLMSettings:
    model: str
    base_url: str | None
    api_key: str
    timeout_s: float = 300.0
    max_retries: int = 2


@dataclass
class OptimizeSettings:
    coder: LLMSettings
    judge: LLMSettings
    backend: str = "triton"  # triton | cuda | cupy
    device: str = "cuda"
    size: str = "auto"
    rounds: int = 10
    candidates: int = 1
    patience: int = 4  # stop after this many rounds without improvement
    max_cost_usd: float | None = None
    max_time_s: float | None = None
    eval_timeout_s: float = 600.0
    profile: bool = True  # Nsight Compute on each passing candidate (CUDA only)
    temperature: float | None = None
    extra: dict = field(default_factory=dict)


def resolve_llm(model: str | None, base_url: str | None, api_key: str | None = None, **kw) -> LLMSettings:
    """The model, endpoint and key to use, or a ConfigError saying how to configure them."""
    cfg = load_config_file()
    model = model or os.environ.get("FORGE_MODEL") or cfg.get("model")
    base_url = base_url or os.environ.get("OPENAI_BASE_URL") or cfg.get("base_url")
    api_key = api_key or os.environ.get("OPENAI_API_KEY") or cfg.get("api_key")
    if not api_key and not base_url:
        raise ConfigError(
            "no LLM configured: set OPENAI_API_KEY for OpenAI, or pass --base-url for a local OpenAI-compatible "
            f"server (vLLM, SGLang, Ollama), or write them to {os.path.join(forge_home(), 'config.json')}"
        )
    if not model:
        raise ConfigError("no model named: pass --model (or set FORGE_MODEL, or 'model' in config.json)")
    # Local servers ignore the key, but the SDK insists on one.
    return LLMSettings(model=model, base_url=base_url, api_key=api_key or "not-needed", **kw)
