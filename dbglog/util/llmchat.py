"""One chat completion from an OpenAI-compatible endpoint (a vLLM, SGLang, llama.cpp or Ollama server), stdlib only.

Shared by the opt-in model paths (``import --llm``, ``tried --llm``): the address rule, the optional key
(``DBGLOG_LLM_API_KEY``), the reply's first message, a fenced answer unwrapped. Failures are the caller's to turn into
its fallback: ``OSError`` (``urllib.error.URLError`` included) and ``ValueError``.
"""

from __future__ import annotations

import json
import os
import urllib.request
from dbglog.util import jsonsafe


def endpoint(url: str) -> str:
    """A base URL, one ending in /v1, or the full .../chat/completions."""
    u = url.rstrip("/")
    if u.endswith("/chat/completions"):
        return u
    return u + ("/chat/completions" if u.endswith("/v1") else "/v1/chat/completions")


def chat(url: str, body: dict, timeout: float) -> str:
    """The first choice's message content (a ```-fenced answer unwrapped)."""
    headers = {"Content-Type": "application/json"}
    key = os.environ.get("DBGLOG_LLM_API_KEY")
    if key:
        headers["Authorization"] = f"Bearer {key}"
    req = urllib.request.Request(endpoint(url), data=json.dumps(body).encode(), headers=headers, method="POST")
    with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - the user's own endpoint
        reply = jsonsafe.loads(resp.read(4 << 20).decode("utf-8", "replace"))
    try:
        content = reply["choices"][0]["message"]["content"] or ""
    except (KeyError, IndexError, TypeError):
        raise ValueError("the reply has no choices[0].message.content") from None
    if not isinstance(content, str):  # (an object or a number where the model's text should be)
        raise ValueError("the reply's message content is not text")
    content = content.strip()
    if content.startswith("```"):  # (a model that fences its JSON)
        content = content.split("\n", 1)[-1].rsplit("```", 1)[0]
    return content
