"""Opt-in model-assisted reading: a document's units sent to any OpenAI-compatible endpoint (a vLLM, SGLang,
llama.cpp or Ollama server), asked for the attempts with a JSON schema, the answer validated.

The default install never calls this: ``import --llm URL`` does. The model sees the units with their ids and
the built-in labels and answers with attempts that cite unit ids; ``review.from_extraction`` checks every id
and outcome. Any failure (no answer, not JSON, a cited unit that does not exist) is a ``ModelError`` and the
caller falls back to the built-in reader. The request itself is ``util/llmchat.py`` (stdlib only), shared with
``tried --llm``.
"""

from __future__ import annotations

import json

from dbglog.docreader.review import READING_GUIDE, Corrections, from_extraction, units_for_agents
from dbglog.util.errors import DbglogError
from dbglog.util.llmchat import chat
from dbglog.util import jsonsafe, redact

SCHEMA = {
    "type": "object",
    "properties": {"attempts": {"type": "array", "items": {
        "type": "object",
        "properties": {"units": {"type": "array", "items": {"type": "integer"}},
                       "title": {"type": "string"},
                       "outcome": {"type": "string", "enum": ["worked", "failed", "partial", "inconclusive", "untested"]},
                       "who": {"type": "string"}},
        "required": ["units", "title", "outcome"]}}},
    "required": ["attempts"],
}

TIMEOUT_S = 120.0  # for the whole exchange with the endpoint, the model's answer included

PROMPT = ("You read a debugging write-up cut into numbered units. " + READING_GUIDE
          + " Cite unit ids only from the list. Answer with JSON only.")


class ModelError(Exception):
    """The model's answer could not be used (said in one line; the built-in reader reads the file)."""


def extract(url: str, model: str, text: str, path: str, timeout: float | None = None) -> Corrections:
    from dbglog.docreader.read import check_homes, read_document
    from dbglog.docreader.units import segment

    doc = segment(text)
    parsed, _ = read_document(text, path, explain=True)
    # (secrets as the database keeps them, redacted: nothing secret leaves the machine)
    units = redact.clean_obj(units_for_agents(doc, parsed))
    body = {"model": model or "default", "temperature": 0,
            "messages": [{"role": "system", "content": PROMPT},
                         {"role": "user", "content": json.dumps({"document": redact.clean(path), "units": units})}],
            "response_format": {"type": "json_schema",
                                "json_schema": {"name": "attempts", "schema": SCHEMA, "strict": True}}}
    try:
        answer = jsonsafe.loads(chat(url, body, timeout or TIMEOUT_S))
    except (OSError, ValueError) as e:  # (urllib's errors are OSErrors; a reply that is no JSON a ValueError)
        raise ModelError(f"{type(e).__name__}: {str(e)[:120]}") from None
    try:
        out = from_extraction(doc, answer, "the model's answer")
        # (checked here, not when the file is read for the import: there it would stop every file's import)
        check_homes(out, 1 if out.one else len(parsed))
        return out
    except DbglogError as e:
        raise ModelError(str(e)) from None
