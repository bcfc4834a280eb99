"""The words people write debug docs in: attempt headings, containers, labels, next-step and
field headings, outcome tags. Data and small pure functions; `reader` decides with them."""

from __future__ import annotations

import re

from dbglog.kb import outcome as outcomes


STRONG_KW = (r"attempt|try|trial|fix|approach|experiment|hypothesis|theory|workaround|idea|solution|attempted fix|"
              r"fix attempt|intento|prueba|versuch|essai|tentative|h(?=\d)")


_WEAK_KW = r"rejection|test|config(?:uration)?|option|phase|step|round|iteration|run|change|candidate|variant|patch|scenario|case|priority|parameter|setting|flag|knob"


_NUM = r"#?\s*(?P<n>\d{1,4}(?:\.\d{1,2})?|[A-Za-z](?=\s*(?:[:.)—–-]|$)))"


DATE_HEAD = re.compile(r"^\W{0,3}\s*(?:\d{4}-\d{2}-\d{2}|\d{1,2} [A-Z][a-z]{2,8} \d{4}|[A-Z][a-z]{2,8} \d{1,2},? \d{4}|"
                        r"day \d{1,3}\b|(?:mon|tue|wed|thu|fri|sat|sun)[a-z]* \d{1,2})", re.I)


_DATE_LEAD = (r"(?:(?:timestamp|date|time|updated?)\s*:\s*)?(?:\[?\d{4}-\d{2}-\d{2}(?:[ T]\d{1,2}:\d{2}(?::\d{2})?Z?(?: ?UTC)?)?\]?"
              r"|day \d{1,3}|\d{1,2}/\d{1,2}(?:/\d{2,4})?)\s*[:—–-]?\s*")


ATTEMPT_HEAD = re.compile(rf"^(?:[^\w\s]{{1,3}}\s*)?(?:{_DATE_LEAD})?(?:[^\w\s]{{1,3}}\s*)?(?P<kw>{STRONG_KW}|{_WEAK_KW})(?![A-Za-z])\s*{_NUM}\s*(?P<sep>[:.)—–-]+)?\s*(?P<rest>.*)$",
                           re.I)


NUMBERED_HEAD = re.compile(r"^(?P<n>\d{1,3})(?:\.\d{1,2})?[a-z]?[.)]?\s+(?P<rest>.+)$")


STRONG_RE = re.compile(rf"^(?:{STRONG_KW})$", re.I)


NEXT_HEAD = re.compile(
    r"\b(?:(?:steps?|checks?|actions?|tests?) (?:needed|required|proposed|planned|to (?:take|run|do))|recommended actions?|"
    r"next steps?|what to try next|try next|to[- ]?do|todos?|things to try|ideas?(?: to try| for next)?|untried|"
    r"still to try|not yet tried|recommend(?:ation|ed)s?|action items?|open questions?|unanswered|follow[- ]?ups?$|follow[- ]?ups? (?:actions?|items?|tasks?|work|steps?|needed|improvements?|fixes|changes)|"
    r"future work|next actions?|what'?s next|to investigate|suggest(?:ed|ions)|"
    r"^(?:(?:action|next|the|debug(?:ging)?|test) )?plan(?: of attack)?$|^questions$|next|loose ends|action plan|pendientes?|pr[oó]ximos pasos|siguientes pasos|"
    r"offene punkte|n[aä]chste schritte|[aà] faire|prochaines [ée]tapes|still open|"
    r"(?:still )?needs? (?:further |more )?investigation|remaining (?:work|questions|issues)|open items|"
    r"future prevention|prevention (?:steps|plan|actions|items|tasks)|"
    r"(?:fix|plan|idea)s? for (?:the )?next (?:attempt|run|try|iteration)|qu[eé] probar|por probar|"
    r"[aà] essayer|als n[aä]chstes|where (?:we'?re|we are|to go) (?:going|next)|going forward|"
    r"(?:critical |key |remaining |open )?questions (?:for|to answer|to resolve)\b|what would (?:probably |likely )?(?:work|help|fix it)|"
    r"future (?:improvements?|ideas|directions|fixes)|nice to have|what would make (?:this|it) better|roadmap|"
    r"files to (?:change|edit|touch)|changes to make|(?:planned|proposed) changes|what(?:'s| is) left|left to do|"
    r"what remains|still to do|(?:options|ways|paths) forward)\b"
    r"|待探索|待办|下一步|后续(?:计划|步骤)?|今後|次のステップ|残課題", re.I)


NEXT_LABELS = {"next": "next", "next steps": "next", "next step": "next", "todo": "next", "to do": "next",
               "to-do": "next", "still to do": "next", "still open": "next", "recommendation": "next",
               "recommendations": "next", "follow-up": "next", "follow-ups": "next", "followup": "next",
               "action items": "next", "action item": "next", "open questions": "next", "next actions": "next",
               "next up": "next", "to try": "next", "plan": "next"}


CHECKBOX = re.compile(r"^\s*(?:[-*+]|\d{1,4}[.)])\s+\[([ xX])\]\s+(.*)$")


TEMPLATE_CHECK = re.compile(r"^\s*(?:\d+[.)]\s*)?(?:i have|i've|i am|i'm|i checked|i searched|i read|i confirm)\b", re.I)


DIFF_HEAD = re.compile(r"\b(?:key differences|differences|diff table|comparison|works? vs\.?|working vs\.?|"
                        r"good vs\.? bad|vs\.?|versus)\b", re.I)


# Headings whose sub-sections, items and rows are attempts. Phrases count anywhere in the heading;
# bare nouns ("Attempts", "Experiments", "Tests") only as the whole heading, so that a finding called
# "2. Multiple runner attempts" is not taken for a container.
STRONG_CONTAINER = re.compile(
    r"\b(?:what (?:we|i|you|they)(?:'ve| have)? (?:already |also )?tried|things (?:we |i )?tried|tried so far|"
    r"(?:solutions?|fixes|approaches|workarounds|changes|ideas|optimi[sz]ations|mitigations|tweaks) (?:attempted|tried)|attempted (?:fixes|solutions)|"
    r"debug(?:ging)? (?:steps|attempts|log|history|journal)(?! (?:analysis|output|excerpts?|snippets?|dump))|"
    r"what didn'?t work|what did not work|"
    r"what (?:has been|was) tried|dead ends|fix attempts|actions taken|steps taken|what (?:i|we) did|things done|"
    r"tests? (?:run|performed|done)|experiments? (?:run|performed|done)|tried|eliminated|ruled out|change ?log|"
    r"(?:changes|fixes|patches|diffs|mitigations?|workarounds?|optimi[sz]ations) (?:implemented|made|applied|deployed)|"
    r"tests? effectu\w+|essais|tentatives|intentos|pruebas realizadas|versuche|investigation steps|"
    r"debugging process|attempted fixes|(?:current |applied )?mitigations|mitigations (?:applied|tried)|"
    r"what (?:we|i) changed|solutions? (?:applied|implemented)|(?:fixes|solutions|changes) (?:we )?(?:applied|implemented))\b"
    r"|試したこと|やったこと|試した(?:方法|対策)|尝试过|已尝试|尝试的|做过的尝试|失败的(?:方案|尝试)"
    r"|^(?:(?:failed|previous|earlier|our|my|all|other|fix|debugging|approaches and) )?"
    r"(?:attempts?|experiments?|approaches|solutions|tests|checks|trials|hypotheses|theories)"
    r"(?: so far| made| log| and results?| tried)?$"
    r"|^[\w-]+ (?:attempts|experiments|trials)(?: log| so far| made| summary)?$"
    r"|^(?:[\w-]+ ){1,2}(?:attempted|tried)$", re.I)


# "What worked" / "What doesn't work": attempts when its entries did something; else facts about the system.
RESULT_CONTAINER = re.compile(r"\b(?:challenges|problems|issues|obstacles|hurdles) (?:overcome|solved|fixed|resolved)\b|"
                               r"\b(?:attempts|approaches|fixes|things|ideas|solutions|changes) that (?:did ?n[o']t|did not|"
                               r"do ?n[o']t|do not|failed to) (?:work|help)\b|"
                               r"\bwhat (?:(?:actually |finally )works?|(?:actually |finally )?(?:worked|helped)|did ?n[o']t (?:work|help)|"
                               r"does ?n[o']t work|didn'?t work|does not work|did not work|fails?)\b|"
                               r"\bthings that (?:helped|didn'?t work|worked)\b|\bfailed (?:attempts|approaches|fixes)\b|"
                               r"\b(?:fix|solution|change|approach) that (?:actually |finally )?(?:worked|works|helped)\b|"
                               r"\bwhy (?:all |the |our |these )?(?:\w+ ){0,2}failed\b|\ball (?:\w+ )?failed\b|"
                               r"\bwhy (?:we|i) (?:can'?t|cannot|couldn'?t) (?:fix|solve|work around)\b|"
                               r"\b(?:flags?|options?|settings?|fixes|approaches) (?:que |that |which )?(?:no|not|don'?t|do not) "
                               r"(?:funcionan|work|help)\b|\bno funcionan?\b|有效的|无效的|失败的",
                               re.I)


WEAK_CONTAINER = re.compile(r"\b(?:investigation|debugging|analysis|diagnosis|timeline|history|log|journal|findings|"
                             r"progress|session|work log|notes)\b", re.I)


FAILED_CONTAINER = re.compile(r"didn'?t work|did not work|doesn'?t work|does not work|failed|dead ends?|rejected|ruled out|eliminated|"
                               r"did(?:n'?t| not) (?:fix|help|solve)|(?:can'?t|cannot|couldn'?t) fix|unhelpful|no effect|"
                               r"not (?:the )?(?:cause|fix)|no funcion\w*|no sirv\w*|funktioniert nicht|ne (?:marche|fonctionne) pas|"
                               r"弃用|失败|无效|没用|失敗|ダメだった|うまくいかなかった", re.I)


WORKED_CONTAINER = re.compile(r"^(?:what (?:finally )?worked|(?:the )?(?:working )?(?:fix|solution)s? that worked)$",
                               re.I)


_FIELD_HEAD = [
    ("symptom", re.compile(r"^(?:the )?(?:symptoms?|problem(?: statement| description| summary)?|(?:the )?issue"
                           r"(?: description| summary)?|description|the bug|bug(?: description)?|observed behaviou?r|"
                           r"what happens|what goes wrong|error(?: message)?s?|summary|tl;?dr|overview|"
                           r"problem summary|bug summary|issue summary|failure|body|issue body|正文|问题描述|症状|"
                           r"síntoma|descripción)$", re.I)),
    ("environment", re.compile(r"^(?:(?:the )?environment|env|hardware|(?:test |hardware |software )?setup|system"
                               r"(?: info(?:rmation)?| details)?|versions?|software(?: versions?)?|platform|"
                               r"machine|specs|configuration|hardware ?/ ?software|environment details|stack)$",
                               re.I)),
    ("root_cause", re.compile(r"^(?:(?:the )?root[- ]?causes?(?: analysis| theory| found| \(confirmed\))?|(?:the )?cause|"
                              r"resolution|(?:the )?(?:final |actual |real )?fix|(?:the )?solution|what fixed it|"
                              r"diagnosis|explanation|why it (?:happened|happens)|answer|verdict|conclusion|"
                              r"conclusions|fix applied|final solution|rca)$", re.I)),
    ("related_files", re.compile(r"^(?:related files|files|relevant files|key files|related code|files changed|"
                                 r"code locations?|files touched|affected files)$", re.I)),
    ("status", re.compile(r"^(?:current )?status$", re.I)),
]


# "## Template", "## Debug Log Template": a blank form to copy. Not "Hypothesis check: chat template".
TEMPLATE = re.compile(r"^\W*(?!.*\b(?:chat|prompt|jinja|kernel|c\+\+|html|class|function)\b)(?:[\w-]+ ){0,3}templates?(?:\s*$|\s*[:(—–-]|\s+(?:for|to)\b)",
                      re.I)


REFERENCE_HEAD = re.compile(r"^(?:artifacts?|references?|links|resources|appendix\b.*|see also|related (?:issues|links|docs)|"
                             r"further reading|files|attachments)$", re.I)


# An H1 that names the document rather than a bug ("DEBUG.md — kernels team", "Debug log").
DOC_TITLE = re.compile(r"^\W*(?:debug\.md\b|debug\b\s*(?:$|[—–:-])|debug(?:ging)?\s+(?:log|notes|journal)s?\b|"
                        r"(?:work|dev|engineering|debug)?\s*log(?:book)?\b|notes\b|journal\b|known (?:issues|problems)\b|"
                        r"issues\b|bugs\b|open bugs\b|troubleshooting\b|.*\b(?:issues|bugs|debug log|worklog|troubleshooting|problems)\s*$)", re.I)


_PLACEHOLDER = re.compile(r"<[A-Za-z][^<>]{0,60}>|\{\{[^}]*\}\}|\bYYYY-MM-DD\b|\bX+\.X+\b")


INV_LABELS = {
    "status": "status", "state": "status", "current status": "status",
    "symptom": "symptom", "symptoms": "symptom", "problem": "symptom", "issue": "symptom", "error": "symptom",
    "environment": "environment", "env": "environment", "setup": "environment", "hardware": "environment",
    "related files": "related_files", "files": "related_files", "relevant files": "related_files",
    "related code": "related_files", "key files": "related_files",
    "root cause": "root_cause", "root-cause": "root_cause", "cause": "root_cause", "resolution": "root_cause",
    "tags": "tags", "labels": "tags",
}


ATTEMPT_LABELS = {
    "title": "title",
    "hypothesis": "hypothesis", "hypotheses": "hypothesis", "theory": "hypothesis", "idea": "hypothesis",
    "assumption": "hypothesis", "assumed": "hypothesis", "why": "hypothesis", "rationale": "hypothesis",
    "the hypothesis": "hypothesis", "suspicion": "hypothesis", "motivation": "hypothesis",
    "what you did": "did", "what we did": "did", "what i did": "did", "what was done": "did",
    "what we tried": "did", "what i tried": "did", "what you tried": "did", "action": "did",
    "actions": "did", "change": "did", "changes": "did", "did": "did", "tried": "did", "steps": "did",
    "command": "did", "commands": "did", "approach": "did", "method": "did", "experiment": "did",
    "fix": "did", "attempted fix": "did", "patch": "did", "test": "did", "setup": "did", "config": "did",
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
    "insight": "conclusion", "root cause": "conclusion", "explanation": "conclusion",
    "rule": "conclusion", "rules": "conclusion",  # lessons logs: Situation / Action / Result / Rule
    "checked": "did", "found": "result", "implication": "conclusion", "implications": "conclusion",
    "savings": "result", "speedup": "result", "gain": "result", "improvement": "result", "actual result": "result",
    "expected outcome": "expected", "expected result": "expected", "expected results": "expected",
    "expected": "expected", "priority": "expected", "why this works": "hypothesis",
    "why this might help": "hypothesis", "why this should work": "hypothesis", "why this might work": "hypothesis",
    "verdict and why": "outcome", "solution": "did", "problem": "hypothesis",
    "resultado": "result", "resultados": "result", "ergebnis": "result", "résultat": "result",
    "sospecha": "hypothesis", "hipótesis": "hypothesis", "hipotesis": "hypothesis", "conclusión": "conclusion",
    "outcome": "outcome", "verdict": "outcome", "status": "outcome", "worked": "outcome", "works": "outcome",
    "state": "outcome",
}


# A label at the start of a line: **Label:**, **Label**:, __Label:__, *Label:*, Label:, Label - (list
# markers and quote marks before it are fine).
LABEL = re.compile(
    r"^\s{0,12}(?:>\s*)?(?:[-*+]\s+|\d{1,3}[.)]\s+)?(?:"
    r"(?P<b>\*\*|__)(?P<l1>[^*_:\n]{1,40}?)\s*(?::(?P=b)|(?P=b)\s*:|(?P=b)\s+[—–-]\s)"
    r"|(?P<i>[*_])(?P<l3>[^*_:\n]{1,40}?)(?::(?P=i)|(?P=i):)"
    r"|(?P<l2>[A-Za-z][A-Za-z '’/()-]{0,40}?)(?::|\s+[—–]\s|\s+-\s)"
    r")(?:[ \t]*(?P<rest>.*))?$"
)


def label_of(line: str, labels: dict[str, str]) -> tuple[str, str] | None:
    m = LABEL.match(line)
    if not m:
        return None
    name = (m.group("l1") or m.group("l3") or m.group("l2") or "").strip().lower().replace("’", "'")
    name = re.sub(r"^[^\w]+\s*", "", name).strip()  # "✅ Result:" -> "result"
    key = labels.get(name)
    if key is None and labels is ATTEMPT_LABELS and re.match(r"^(?:hypothesis|h)\s*#?\d{0,2}\s+(?:update|status|verdict)$", name):
        key = "outcome"  # "**Hypothesis 5 Update:** REJECTED": the verdict on what this entry tested
    if key is None:
        return None
    return key, (m.group("rest") or "").strip()


def heading_key(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s'/.-]", "", text).split()).rstrip(":").strip().lower()


def bare_words(text: str) -> str:
    """Heading words only: no emoji, numbering, outcome tags or trailing colon."""
    t = re.sub(r"[^\w\s'/&.,()-]", " ", text)
    t = re.sub(r"\([^)]*\)|\[[^\]]*\]", " ", t)
    t = re.sub(r"^\s*(?:\d{1,3}(?:\.\d+)*[.)]?|[A-Z][.)])\s+", "", t)
    return " ".join(t.split()).strip(" :.-").lower()


# "Symptom: Boot Failure", "The Root Cause: Unsigned Literal", "Root cause — aplay buffering": a field
# heading that names its content after the colon.
_FIELD_PREFIX = [("symptom", re.compile(r"^\W*(?:the )?symptoms?\s*[:—–]", re.I)),
                 ("root_cause", re.compile(r"^\W*(?:the )?(?:probable |likely |actual |real )?root[- ]?causes?\s*[:—–]", re.I))]


def field_of(text: str) -> str | None:
    b = bare_words(text)
    for key, rx in _FIELD_HEAD:
        if rx.match(b):
            return key
    for key, rx in _FIELD_PREFIX:
        if rx.match(text):
            return key
    return None


# Sections that look back on the work ("Lessons Learned", "Key takeaways"): their numbered
# sub-sections are lessons, not attempts.
LESSONS_HEAD = re.compile(r"^(?:(?:key|main|\d+) )?(?:lessons?(?: learned| learnt)?|takeaways|learnings?|what (?:we|i) learned|"
                          r"insights|retrospective|guidelines for [\w ]+)(?:$|\s(?:from|of|for)\b)", re.I)


# Sections that say where the system still falls short ("What doesn't work well yet", "Known
# limitations", "Persistent issues"): facts about the system, not things that were tried.
LIMITS_HEAD = re.compile(r"\b(?:(?:does ?n[o']t|do ?n[o']t|does not|do not) work (?:well|yet)\b|(?:known |current )?limitations|"
                         r"(?:persistent|current) (?:issues|problems|blockers)$|"
                         r"(?:current )?blockers$)", re.I)


# Sections that say how a change will be checked or rolled out, not what was run.
PLAN_HEAD = re.compile(r"^(?:(?:verification|test(?:ing)?|rollout|rollback|migration|implementation|validation) (?:plan|path|steps)|"
                       r"manual testing|implementation chunks|phasing(?: suggestion)?|estimated scope|risks?)$", re.I)


def is_placeholder(text: str) -> bool:
    t = text.strip()
    if not t:
        return False
    if _PLACEHOLDER.search(t) and not t.startswith("`"):
        return True
    low = t.lower()
    return low.count("/") >= 1 and sum(w in low for w in ("open", "resolved", "won't fix", "wontfix")) >= 2


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
        if w:
            return w
    m = re.match(r"^\s*(?:\[|\()?(FAILED|FAIL|WORKED|FIXED|SOLVED|PARTIAL|WRONG|DEAD END|RESOLVED|REJECTED)\b", text)
    if m:
        return outcomes.verdict_word(m.group(1))
    return None


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


# One post of a thread, by who and when: "alice · comment · 2023-03-20" (an issue exported one post a
# line) or "### Post by alice on 2011-04-13" (a forum archive). The author is group "who".
POST_HEADER = re.compile(r"^[ \t]*(?P<who>[\w][\w.-]{0,38})[ \t]+·[ \t]+(?:comment|description|review|reply)[ \t]+·[ \t]+"
                         r"\d{4}-\d\d-\d\d[ \t]*$|^[ \t]*#{2,5}[ \t]+Post by[ \t]+(?P<who2>\S+)[ \t]+on[ \t]+\d{4}-\d\d-\d\d[ \t]*$",
                         re.I | re.M)


COMMENT = re.compile(r"^\s*(?:👤\s*)?(?:\*\*@?[\w.-]+\*\*|@[\w-]+)\s+(?:commented|wrote|replied|answered)\b|"
                      r"^#{2,5}\s*(?:\W\s*)?(?:comments?|conversation|discussion|replies|评论|コメント|comentarios)(?!\w)",
                      re.I | re.M)


PROSE_CONTAINER = re.compile(r"\b(?:timeline|log|journal|history|comments?|conversation|discussion|thread|updates?|"
                              r"progress|notes|worklog|chronology|what happened)\b", re.I)


_ACTION = (r"tried|retried|tested|attempted|switched|swapped|set|unset|disabled|enabled|turned (?:off|on)|"
           r"added|re-?added|removed|dropped|reverted|rolled back|upgraded|downgraded|updated|updating|"
           r"rebuilt|built|recompiled|reinstalled|installed|pinned|forced|patched|applied|replaced|moved|"
           r"changed|increased|decreased|reduced|raised|lowered|bumped|limited|capped|ran|reran|re-ran|"
           r"compared|bisected|profiled|captured|traced|checked|measured|excluded|isolated|reseated|"
           r"re-?cabled|reflashed|flashed|restarted|rebooted|reloaded|suspected|used|using|with|without|"
           r"lowering|raising|setting|disabling|enabling|adding|removing|switching|downgrading|upgrading|"
           r"building|running|forcing|pinning|reverting|compiling|recompiling|reproduced|"
           r"inspected|examined|investigated|identified|renamed|implemented|rewrote|refactored|migrated|dumped|"
           r"diffed|bisected|instrumented|logged|printed|attached|reran|replayed")


ACTION_LEAD = re.compile(rf"^\s*(?:\*\*[^*]{{1,30}}\*\*\s*[:—–-]?\s*)?(?:[\d:./-]{{3,16}}\s*[:—–-]?\s*)?"
                          rf"(?:(?:i|we|then|also|and|finally|next|so)\s+){{0,2}}(?:{_ACTION})\b", re.I)


# In a thread or log, a sentence that names a flag, an env var or a PR and says what happened is an attempt.
PROSE_LEAD = re.compile(r"^\s*(?:`[^`]{2,120}`|#\d{2,7}\b|PR ?#?\d+|commit [0-9a-f]{7,}|[A-Z][A-Z0-9]*_[A-Z0-9_]+=\S+|"
                         r"--[a-z][\w-]+)", re.I)


SENTENCES = re.compile(r"(?<=[.!?])\s+(?=[A-Z`#\-])")


TRIED_ITEM = re.compile(r"^\s*(?:\[[ xX]\]\s*)?(?:[^\w\s]{1,3}\s*)?(?:\*\*|__)?\s*(?:tried|tested|attempted|"
                         r"experimented with|we tried|i tried|also tried|then tried|retried|trying)\b", re.I)


def attempt_title(text: str, m) -> str:
    """"Attempt 3: Disable graphs" -> "Disable graphs"; other words stay whole ("Fix 2: bump NCCL",
    "Experiment 1 — lower LR"): they are what the author called it, and what people search for."""
    rest = m.group("rest").strip()
    if m.group("kw").lower() == "attempt" and rest:
        tag_only = re.fullmatch(r"[\[(][^\])]*[\])]|[^\w]*", rest) or outcomes.verdict_word(rest)
        if not tag_only:
            return rest
    return text


def bold_attempt(line: str):
    """A paragraph led by "**Attempt 3 (FAILED):**" / "**Option A — ...**" / "Try 1 - prune configs":
    (match, lead, attempt match)."""
    m = re.match(r"^\s*(?:\*\*|__)(.{2,100}?)(?:\*\*|__)\s*[:—–-]?\s*(.*)$", line)
    if m:
        lead = m.group(1).rstrip(":").strip()
        km = ATTEMPT_HEAD.match(lead)
        return (m, lead, km) if km else None
    # Unadorned: only a strong word with a number and a separator ("Try 1 - ...", "Attempt 2: ...").
    km = ATTEMPT_HEAD.match(line.strip())
    if km and STRONG_RE.match(km.group("kw")) and km.group("sep") and km.group("n").isdigit():
        m = re.match(r"^(\s*)(.*)$", line)
        return (_Lead(line.strip(), ""), line.strip(), km)
    return None


class _Lead:
    """A match-like pair for an unadorned lead line: the whole line is the lead, nothing follows."""

    def __init__(self, lead: str, rest: str):
        self._g = (lead, rest)

    def group(self, k: int) -> str:
        return self._g[k - 1]


BOLD_LEAD = re.compile(r"^\s*(?:[^\w\s*_`]{1,3}\s*)?(?:\*\*|__)[^*_]{3,100}(?:\*\*|__)")


PLAN_WORDS = re.compile(r"\((?:if|when|once) [^)]{2,60}\)|\b(?:would|could|might|should|will|plan(?:ned)?|propos\w+|consider\w*|recommend\w*|"
                         r"if (?:this|that|it|we)|needs? to|requires?|feasible|pros?|cons?|effort|risk)\b", re.I)


RAN_WORDS = re.compile(r"\b(?:measured|ran|tested|observed|got|results?|gave|saw|median|p50|p99|→)\b|→", re.I)


ITEM_START = re.compile(r"^\s*(?:[-*+]|\d{1,4}[.)])\s+")


def has_text(buf: list[str]) -> bool:
    return any(x.strip() for x in buf)


INLINE_RESULT = re.compile(r"(?:\*\*|__)?\b(?:result|results|resultado|outcome|verdict|ergebnis|r[ée]sultat|found)"
                            r"(?:\*\*|__)?\s*:(?:\*\*|__)?", re.I)
