"""The words people write debug docs in: attempt headings, containers, labels, next-step and
field headings, outcome tags. Data and small pure functions; `reader` decides with them."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from dbglog.core import outcome as outcomes
from dbglog.util import datacache, recache


#: the HTML tags people write in markdown (cues' placeholder pattern leaves them alone too)
HTML_TAGS = (r"(?:a|abbr|b|big|br|center|code|del|details|div|em|font|h\d|hr|i|img|ins|kbd|li|mark|ol|p|pre|s|small|"
             r"span|strong|sub|summary|sup|table|td|th|tr|u|ul)")

# (a template's "<short description>" stands as a word; "stream:<null>", File "<string>" are a program's output)
# ("Attempt N: [Brief Description]": a bracketed blank of capitalised words after a label's colon or dash; not a
# link's text "[the docs](url)", nor an issue title's tag "[Bug Report] vLLM crashes")
# (an HTML tag is no blank: "## Discussion <a id="discussion"></a>" is an anchor for a table of contents)
_HTML_TAG = rf"(?!{HTML_TAGS}(?:\s+[\w-]+=|\s*/?>))"
_PLACEHOLDER = recache.compile(r"(?<![\w:/\"'=<])<" + _HTML_TAG + r"[A-Za-z][^<>]{0,60}>|\{\{[^}]*\}\}|\bYYYY-MM-DD\b|\bX+\.X+\b|"
                          r"(?<=\S)\s?[:\-–—]\s+\[(?:[A-Z][a-z]+)(?: [A-Za-z][a-z]+){1,4}\](?!\()")


@lru_cache(maxsize=1)
def attempt_head() -> re.Pattern:
    """A numbered try in any language a cue table names its noun for (``[heading] numbered``): "Attempt 3: pin the
    driver", "Versuch 2", "시도1. ...", "試行 4:"; ``n`` its number, ``rest`` what follows."""
    nouns = _heading_words("numbered")
    # (a full-width colon or stop after the number, "尝试2：减小 batch", as in Chinese and Japanese)
    return recache.compile(r"^\W{0,3}(?:" + nouns + r")\s*#?\s*(?P<n>\d{1,4})(?:\.\d{1,2})?(?:\s*[(（][^()（）]{1,30}[)）])?"
                           r"\s*(?:[:.)—–\-：．、）]+\s*(?P<rest>.*))?$", re.I)


@lru_cache(maxsize=1)
def attempt_noun() -> re.Pattern:
    """The word for "attempt" itself in any language a cue table names it for (``[heading] attempt``): "Attempt 3",
    "Versuch 3", "Próba 3", "尝试3" are attempt 3, their title what follows; "Test 3: x" keeps its own word."""
    return recache.compile(r"^\W*(?:" + _heading_words("attempt") + r")(?![^\W\d_])", re.I)


def _heading_words(key: str) -> str:
    """Every cue table's ``[heading] key`` words, as one alternation, the longest first."""
    words: set[str] = set()
    for path in sorted(Path(__file__).with_name("cues").glob("*.toml")):
        words.update(datacache.load(path).get("heading", {}).get(key, []))
    return "|".join(re.escape(w) for w in sorted(words, key=lambda w: (-len(w), w)))


INV_LABELS = {
    "status": "status", "state": "status", "current status": "status",
    "symptom": "symptom", "symptoms": "symptom", "problem": "symptom", "issue": "symptom", "error": "symptom",
    "environment": "environment", "env": "environment", "setup": "environment", "hardware": "environment",
    "related files": "related_files", "files": "related_files", "relevant files": "related_files",
    "related code": "related_files", "key files": "related_files",
    "root cause": "root_cause", "root-cause": "root_cause", "cause": "root_cause", "resolution": "root_cause",
    "tags": "tags", "labels": "tags",
}


# A field labelled as the fix ("**Fix:**", "- Solution:", "Workaround applied:"): by its label, what fixed the problem
FIX_FIELD = recache.compile(r"^[\s>*_\-+]*(?:the\s+)?(?:fix|fixed\s+by|solution|resolution|workaround)(?:\s+applied)?"
                            r"[*_]*\s*:", re.I)

ATTEMPT_LABELS = {
    "title": "title",
    "hypothesis": "hypothesis", "hypotheses": "hypothesis", "theory": "hypothesis", "idea": "hypothesis",
    "assumption": "hypothesis", "assumed": "hypothesis", "why": "hypothesis", "rationale": "hypothesis",
    "the hypothesis": "hypothesis", "suspicion": "hypothesis", "motivation": "hypothesis",
    "what you did": "did", "what we did": "did", "what i did": "did", "what was done": "did",
    "what we tried": "did", "what i tried": "did", "what you tried": "did", "action": "did",
    "actions": "did", "change": "did", "changes": "did", "did": "did", "tried": "did", "steps": "did",
    "command": "did", "commands": "did", "approach": "did", "method": "did", "experiment": "did",
    "fix": "did", "attempted fix": "did", "patch": "did", "edit": "did", "edits": "did", "workaround": "did", "test": "did", "setup": "did", "config": "did",
    "implementation": "did", "code": "did", "how": "did", "check": "did", "procedure": "did", "try": "did",
    "result": "result", "results": "result", "what happened": "result", "observed": "result",
    "observation": "result", "observations": "result", "output": "result", "effect": "result",
    "the result": "result", "finding": "result", "findings": "result", "evidence": "result",
    "error": "result", "outcome details": "result", "behavior": "result", "behaviour": "result",
    "measurement": "result", "measurements": "result", "impact": "result",
    "conclusion": "conclusion", "conclusions": "conclusion", "takeaway": "conclusion",
    "takeaways": "conclusion", "learned": "conclusion", "lesson": "conclusion", "lessons": "conclusion",
    "analysis": "conclusion", "interpretation": "conclusion", "what it means": "conclusion",
    "what this tells us": "conclusion", "why it failed": "conclusion", "why it didn't work": "conclusion",
    "why it worked": "conclusion", "why it works": "conclusion", "reason": "conclusion", "notes": "conclusion",
    "note": "conclusion", "learning": "conclusion", "learnings": "conclusion", "ruled out / undecided": "conclusion",
    "insight": "conclusion", "root cause": "conclusion", "root causes": "conclusion", "explanation": "conclusion",
    "verification": "result", "validation": "result",
    # (a try's fields as sub-headings over their blocks: "#### Command :", "#### Error Log :", "#### Resolution :")
    "error log": "result", "error logs": "result", "error output": "result", "traceback": "result",
    "stack trace": "result", "console output": "result", "log output": "result", "resolution": "did",
    # ("### Configurations" over a run's config, "### Performance" over what it measured, a pair per run)
    "configuration": "did", "configurations": "did", "configs": "did", "performance": "result",
    "rule": "conclusion", "rules": "conclusion",  # lessons logs: Situation / Action / Result / Rule
    "checked": "did", "found": "result", "implication": "conclusion", "implications": "conclusion",
    "savings": "result", "speedup": "result", "gain": "result", "improvement": "result", "actual result": "result",
    "expected outcome": "expected", "expected result": "expected", "expected results": "expected",
    "expected": "expected", "priority": "expected", "why this works": "hypothesis",
    "goal": "expected", "goals": "expected", "objective": "expected", "aim": "expected",  # what is wanted, not done
    "why this might help": "hypothesis", "why this should work": "hypothesis", "why this might work": "hypothesis",
    "verdict and why": "outcome", "solution": "did", "problem": "hypothesis",
    "resultado": "result", "resultados": "result", "ergebnis": "result", "résultat": "result",
    "sospecha": "hypothesis", "hipótesis": "hypothesis", "hipotesis": "hypothesis", "conclusión": "conclusion",
    # the protocol's fields in Chinese, Japanese, Korean, German and French
    "假设": "hypothesis", "假说": "hypothesis", "猜测": "hypothesis", "仮説": "hypothesis", "가설": "hypothesis",
    "hypothese": "hypothesis", "vermutung": "hypothesis", "hypothèse": "hypothesis",
    "操作": "did", "做法": "did", "尝试": "did", "试过": "did", "修改": "did", "解决方法": "did", "试したこと": "did",
    "試したこと": "did", "対応": "did", "対処": "did", "시도": "did", "조치": "did", "versuch": "did",
    "maßnahme": "did", "essai": "did", "tentative": "did",
    "结果": "result", "测试结果": "result", "效果": "result", "证据": "result", "結果": "result",
    "결과": "result", "beobachtung": "result", "observation faite": "result",
    "结论": "conclusion", "結論": "conclusion", "결론": "conclusion", "原因": "conclusion", "fazit": "conclusion",
    "schlussfolgerung": "conclusion",
    "outcome": "outcome", "verdict": "outcome", "status": "outcome", "worked": "outcome", "works": "outcome",
    "state": "outcome",
    # short spellings of the protocol's fields: "**Why:** / **Did:** / **Saw:** / **So:**"
    "saw": "result", "seen": "result", "got": "result", "so": "conclusion", "meaning": "conclusion",
    "done": "did", "what was tried": "did", "run": "did",
}


# A label at the start of a line: **Label:**, **Label**:, __Label:__, *Label:*, Label:, Label - (list
# markers and quote marks before it are fine).
LABEL = recache.compile(
    r"^\s{0,12}(?:>\s*)?(?:[-*+]\s+|\d{1,3}[.)]\s+)?(?:"
    # ("**Fix** (`crates/core/src/groupnorm.rs`):": the label and where the change went)
    r"(?P<b>\*\*|__)(?P<l1>[^*_:：\n]{1,40}?)\s*(?:[:：](?P=b)|(?P=b)\s*[:：]|(?P=b)\s+[—–-]\s|(?P=b)\s*\([^()\n]{1,80}\)\s*:)"
    r"|(?P<i>[*_])(?P<l3>[^*_:：\n]{1,40}?)(?:[:：](?P=i)|(?P=i)[:：])"
    r"|(?P<l2>[A-Za-z][A-Za-z '’/()-]{0,40}?)(?::|\s+[—–]\s|\s+-\s)"
    # (a label in Chinese, Japanese or Korean, with a full-width or ASCII colon: "结果：", "結論:", "결과:")
    r"|(?P<l4>[\u4e00-\u9fff\u3040-\u30ff\uac00-\ud7af]{1,6})\s?[:：]"
    r")(?:[ \t]*(?P<rest>.*))?$"
)


def label_of(line: str, labels: dict[str, str]) -> tuple[str, str] | None:
    m = LABEL.match(line)
    if not m:
        return None
    name = (m.group("l1") or m.group("l3") or m.group("l2") or m.group("l4") or "").strip().lower().replace("’", "'")
    name = re.sub(r"^[^\w]+\s*", "", name).strip()  # "✅ Result:" -> "result"
    key = labels.get(name)
    if key is None and labels is ATTEMPT_LABELS and re.match(r"^(?:hypothesis|h)\s*#?\d{0,2}\s+(?:update|status|verdict)$", name):
        key = "outcome"  # "**Hypothesis 5 Update:** REJECTED": the verdict on what this entry tested
    if key is None:
        return None
    return key, (m.group("rest") or "").strip()


def heading_key(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s'/.-]", "", text).split()).rstrip(":").strip().lower()


def placeholder_free(text: str) -> str:
    """The text with its template placeholders ("<short description>", "{{x}}") blanked."""
    return _PLACEHOLDER.sub(" ", text)


def is_placeholder(text: str) -> bool:
    t = text.strip()
    if not t:
        return False
    if _PLACEHOLDER.search(t) and not t.startswith("`"):
        return True
    low = t.lower()
    return low.count("/") >= 1 and sum(w in low for w in ("open", "resolved", "won't fix", "wontfix")) >= 2


@lru_cache(maxsize=4096)
def heading_outcome(text: str) -> str | None:
    """An outcome tag written into a heading: "(WRONG)", "[FAILED]", "✅", "— didn't help".

    Words in parentheses win over an emoji ("✅ Réduction nœuds (pas d'effet)": the tick says
    done, the words say what happened)."""
    tags = [t[0] or t[1] for t in re.findall(r"\(([^()]{2,60})\)|\[([^\[\]]{2,40})\]", text)]
    for tag in tags:
        w = outcomes.verdict_word(tag)
        if w:
            return w
    for e, o in outcomes.EMOJI.items():
        if e in text:
            return o
    for tag in tags:
        if len(tag.split()) <= 6 and tag.isupper():
            # "(ROOT CAUSE FOUND & FIXED)", "(STILL FAILING)": a shouted status, read as a sentence.
            w = outcomes.classify(tag)
            if w != "inconclusive":
                return w
    m = re.search(r"(?:\s[—–-]{1,2}\s|:\s)([^—–:]{2,60})$", text)
    if m:
        w = outcomes.verdict_word(m.group(1))
        if not w and len(m.group(1).split()) <= 4:  # "xformers - Not Working": a short verdict, in words
            w = outcomes.classify(m.group(1))
            w = w if w in ("worked", "failed", "partial") else None
        if w:
            return w
    m = re.match(r"^\s*(?:\[|\()?(FAILED|FAIL|WORKED|FIXED|SOLVED|PARTIAL|WRONG|DEAD END|RESOLVED|REJECTED)\b", text)
    if m:
        return outcomes.verdict_word(m.group(1))
    # "Fixed: Deterministic subset selection", "**Failed:** pinning NCCL", "Working: basic XPU ops": the verdict first,
    # a participle or a verb
    # (not the noun of a "Fix:" label, which names what is proposed), then what went that way
    m = re.match(r"^[\W_]{0,6}([A-Za-z]{3,12}(?:ed|en|ing|s))[*_]{0,2}\s*[:：][*_]{0,2}\s*\w", text)
    if m is None:
        return None
    said = outcomes.verdict_word(m.group(1)) or outcomes.classify(m.group(1))
    return said if said in ("worked", "failed", "partial") else None


def status_word(text: str) -> str | None:
    t = re.sub(r"[^a-z' ]", " ", text.lower().replace("’", "'")).split()
    s = " ".join(t)
    for prefix, st in (("won't fix", "wontfix"), ("wont fix", "wontfix"), ("wontfix", "wontfix"),
                       ("not a bug", "wontfix"), ("abandoned", "wontfix"), ("by design", "wontfix"),
                       ("resolved", "resolved"), ("fixed", "resolved"), ("closed", "resolved"),
                       ("solved", "resolved"), ("done", "resolved"), ("complete", "resolved"),
                       ("mitigated", "resolved"), ("root caused", "resolved"), ("open", "open"),
                       ("active", "open"), ("in progress", "open"), ("investigating", "open"),
                       ("ongoing", "open"), ("blocked", "open"), ("wip", "open"), ("reopened", "open"),
                       ("unresolved", "open"), ("needs", "open"), ("pending", "open"), ("new", "open"),
                       ("partially", "open"), ("workaround", "open"), ("mitigat", "resolved")):
        if s.startswith(prefix):
            return st
    if "✅" in text or "🟢" in text:
        return "resolved"
    return None


# A verdict mark and the outcome it says ("✅ 2x4090, CUDA 12.0", "❌" alone in a Status cell).
# (the shared marks, and the squares and the cycle a doc's status cell also uses: "🟥", "🔄 pending")
VERDICT_MARKS = {**outcomes.MARKS, "🟥": "failed", "✖️": "failed", "🟩": "worked", "🔄": "untested"}
