"""The opt-in model judge of ``tried --llm URL``: an OpenAI-compatible chat endpoint asked to place
each candidate in a tier, its answer validated, the built-in judge kept wherever it is not usable.

One request per question: the idea, and for each candidate (the built-in judge's answer, best
first) its kind, outcome, experiment (``experiment.Experiment``) and full text. The model answers
JSON under a schema (``response_format: json_schema``): for each candidate id its tier (same /
other / related / unrelated) and, in plain words, how the idea differs. The answer is checked
(JSON, every id one of ours, a known tier, short words); anything else -- an error, a timeout, a
refusal, text that is not the schema's -- leaves the built-in judge's tiers as they were and says
why in a note. Nothing is sent unless ``--llm`` is given; ``DBGLOG_LLM_API_KEY``, when set, is sent
as the bearer token.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from dbglog.kb import search
from dbglog.util import jsonsafe, redact

TIERS = ("same", "other", "related", "unrelated")
CANDIDATES = 6  # the first candidates of the built-in answer the model is asked about
TEXT_CHARS = 1500  # of each candidate's full text
TIMEOUT_S = 60.0  # for the whole exchange with the endpoint, the model's answer included
WORDS_CHARS = 300

SCHEMA = {
    "type": "object",
    "properties": {"verdicts": {"type": "array", "items": {
        "type": "object",
        "properties": {"id": {"type": "integer"}, "tier": {"type": "string", "enum": list(TIERS)},
                       "differs": {"type": "string"}},
        "required": ["id", "tier", "differs"], "additionalProperties": False}}},
    "required": ["verdicts"], "additionalProperties": False,
}

SYSTEM = (
    "You judge whether an engineer's idea for fixing a bug was already tried. For each prior record, "
    "answer one tier: 'same' (the record ran the idea's experiment: the same knob or change, turned the "
    "same way, on the same thing), 'other' (the same knob or change, turned another way, set to another "
    "value, or applied to something else), 'related' (same topic, or the record only mentions or proposes "
    "the idea), 'unrelated'. A setting that only appears in a log, a plan or a suggestion was not tried. "
    "Options of the dbglog tool itself (--timeout, --repeat) are not part of an experiment. In 'differs', "
    "say in a short plain sentence which knob matched and how the idea differs (empty for unrelated)."
)


def candidates(res) -> list:
    """The hits the model is asked about: the built-in answer's, in its order."""
    hits = res.close + res.another + res.mentioned
    hits += [h for h in res.result.hits if h not in hits]
    return hits[:CANDIDATES]


def request_body(idea: str, hits: list, model: str) -> dict:
    items = []
    for i, h in enumerate(hits):
        items.append({"id": i, "kind": h.kind, "title": h.title, "outcome": h.outcome,
                      "experiment": h.experiment.to_dict() if h.experiment is not None else None,
                      "text": search.record_text(h, full=True)[:TEXT_CHARS]})
    # (the idea redacted as the records are: nothing secret leaves the machine)
    user = json.dumps(redact.clean_obj({"idea": idea, "records": items}), ensure_ascii=False)
    return {"model": model, "temperature": 0,
            "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
            "response_format": {"type": "json_schema",
                                "json_schema": {"name": "tried_verdicts", "strict": True, "schema": SCHEMA}}}


def validate(content: str, n: int) -> dict[int, tuple[str, str]]:
    """{candidate id: (tier, differs)} from the model's message, or ValueError saying what is wrong."""
    try:
        data = jsonsafe.loads(content)
    except (TypeError, ValueError):
        raise ValueError("the answer is not JSON") from None
    verdicts = data.get("verdicts") if isinstance(data, dict) else None
    if not isinstance(verdicts, list):
        raise ValueError("the answer has no 'verdicts' list")
    out = {}
    for v in verdicts:
        if not isinstance(v, dict) or not isinstance(v.get("id"), int) or isinstance(v.get("id"), bool):
            raise ValueError("a verdict without an integer id")
        if not 0 <= v["id"] < n or v["id"] in out:
            raise ValueError(f"a verdict for an unknown or repeated candidate id {v['id']}")
        if v.get("tier") not in TIERS:
            raise ValueError(f"an unknown tier {v.get('tier')!r}")
        differs = v.get("differs", "")
        if not isinstance(differs, str):
            raise ValueError("'differs' is not text")
        out[v["id"]] = (v["tier"], " ".join(differs.split())[:WORDS_CHARS])
    return out


def ask(url: str, body: dict, timeout: float | None = None) -> str:
    """The first choice's message content of a chat completion at ``url`` (``util/llmchat.py``, shared with
    ``import --llm``)."""
    from dbglog.util.llmchat import chat

    return chat(url, body, timeout or TIMEOUT_S)


def judge(res, url: str, model: str = "default", timeout: float | None = None) -> str:
    """Re-judge ``res`` (``search.TriedResult``) with the model; "" when its answer was used, else the
    note saying why the built-in judge's answer stands."""
    hits = candidates(res)
    if not hits:
        return ""
    try:
        verdicts = validate(ask(url, request_body(res.result.query.text, hits, model), timeout), len(hits))
    except (OSError, urllib.error.URLError, ValueError, TimeoutError) as e:
        from dbglog.util.redact import sanitize  # (the server's reason phrase may hold terminal escapes)

        return f"--llm: {' '.join(sanitize(str(e)).split())}; the built-in judge's answer is shown"
    for i, (tier, differs) in verdicts.items():
        h = hits[i]
        h.tier, h.judged_by = tier, "model"
        h.differs = differs or h.differs
        h.exact = tier == "same"
        if tier == "same":
            h.verdict = ""
        elif not h.verdict:
            h.verdict = "model-" + tier
    res.close = [h for h in hits if h.tier == "same"]
    res.another = [h for h in hits if h.tier == "other"]
    res.mentioned = [h for h in res.mentioned if h.tier == "related"]
    return ""
