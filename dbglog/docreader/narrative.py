"""Attempts told as a story: "I first tried X, which ... Then I switched to Y and it worked."

Blog posts, forum threads and notes write what was tried as sentences inside paragraphs, with
the verdict in the same sentence, the next one ("This made no difference."), or the next
paragraph after a code block ("Even after this, nslookup was still resolving ..."). This module
reads that shape from the sentence structure, not from one document's words:

- an **action start** is a first-person past-tense clause ("I reverted ...", "we then vendored
  ...", "I've tried to use ...", "So I got rid of ..."), a sentence that opens on a past-tense
  verb with no subject ("Bumped the version ...", log style), a gerund subject ("Clearing
  DynamoDB didn't help"), an action noun ("A quick revert to the plist and ..."), or "The fix
  was to ..." (the fix: worked unless the text says otherwise);
- an attempt runs from its action start to the next one; its verdict is the first sentence in
  that span (the action's own sentence first) that says what happened, looking at most a few
  units (paragraphs, list items) ahead;
- no verdict, no attempt: a story's other sentences ("I went to bed", "I opened lldb") stay
  text. Thinking and looking verbs ("assumed", "noticed", "found", "checked") are not actions,
  a clause after "if/when/until ..." is no action done, and quotes (other people's words) and
  questions are skipped.

The reader keeps every paragraph as written; the attempts are read out of it, not cut from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from dbglog.kb import outcome as outcomes

# Verbs of thinking, looking and measuring: a first-person past tense that changed nothing.
_NOT_ACTIONS = {
    "assumed", "figured", "noticed", "decided", "wanted", "hoped", "thought", "guessed", "believed", "realized",
    "realised", "suspected", "wondered", "learned", "learnt", "searched", "looked", "googled", "needed", "expected",
    "managed", "started", "asked", "posted", "mentioned", "said", "waited", "reported", "imagined", "felt", "liked",
    "loved", "planned", "intended", "considered", "discovered", "observed", "noted", "confirmed", "verified",
    "checked", "compared", "identified", "found", "saw", "got", "had", "was", "were", "went", "read", "followed",
    "continued", "ended", "worked", "spent", "sneaked", "attempted", "ran", "reran", "re-ran", "measured",
    "benchmarked", "profiled", "inspected", "examined", "investigated", "opened", "printed", "logged", "traced",
    "dumped", "knew", "seemed", "appeared", "happened", "used", "preferred", "agreed", "recommended",
    "suggested", "explained", "described", "documented", "wrote", "blogged", "answered", "replied", "tested",
    "reproduced", "isolated", "narrowed", "tracked", "did", "made", "came", "became", "heard", "told", "called",
    "meant", "missed", "failed", "succeeded", "stumbled", "struggled", "faced", "encountered", "hit", "ran into",
    "guess", "think", "believe", "assume", "want", "need", "hope", "suspect", "wonder", "see", "know", "mean",
    "received", "experienced", "obtained", "lost", "scoped", "based", "tired", "excited", "surprised", "stuck",
    "returned", "appreciated", "enjoyed", "hated", "regretted", "understood", "remembered", "forgot",
}
# "What I did was do a killall", "What we did was to pin ...": an action told as what was done.
_WHAT_I_DID = re.compile(r"\b[Ww]hat (?:I|we) (?:then |finally |eventually )?did was\s+(?:to\s+|do\s+|just\s+)?\S", re.I)
# "I gave it a few minutes": waiting, not a change.
_WAITED = re.compile(r"^(?:I|[Ww]e)\s+(?:\w+ly\s+)?gave (?:it|them|the \w+) (?:a (?:few|couple(?: of)?)|some|another|an?|\d+)"
                     r"\s+(?:\w+\s+)?(?:seconds?|minutes?|hours?|days?|time|while|reboots?)\b")
# Irregular past tenses of changes ("set", "rebuilt"); regular ones are any other "-ed" word.
_IRREGULAR = r"set|unset|reset|rebuilt|built|put|gave|took|cut|threw|bound|rebound|rewrote|split|shut (?:off|down)|spun up|swapped|stripped|dropped|pinned|got rid of|" \
             r"tore down|rolled back|turned (?:off|on)|switched (?:off|on|to|back)|did (?:a|an|another|yet another|one more) (?:full |clean |fresh |new )?\w+"
_ADVERB = r"(?:\w+ly|then|first|also|already|since|next|now|just|even|again|later|once|still|finally|eventually|instead|" \
          r"ultimately|quickly|simply|manually|temporarily|initially)"
_VERB = rf"(?:{_IRREGULAR}|[a-z][a-z-]{{2,}}ed)"
# "I reverted", "we then vendored", "I've tried", "So I got rid of"
_FIRST_PERSON = re.compile(rf"\b(?P<subj>I|[Ww]e)(?:'ve|'d| have| had)?(?:\s+{_ADVERB}){{0,2}}\s+(?P<verb>{_VERB})\b")
# "Bumped the version requirement ...", "Reinstalled proprietary and graphics are back again."
_SUBJECTLESS = re.compile(rf"^[^\w*_]{{0,3}}(?:(?:then|also|and|first|finally)\s+)?(?P<verb>(?:{_IRREGULAR}|[A-Za-z][a-z-]{{2,}}ed))"
                          rf"\s+(?!(?:to|by|in|on|at|as|that|with|from|for|out|up|is|was|are|were)\b)[\w`(\"']", re.I)
_CONJ_PAST = re.compile(rf"^\W{{0,3}}(?:but|and|so|then|also)\s+(?P<verb>{_IRREGULAR}|[a-z][a-z-]{{2,}}ed)\s+"
                        r"(?!(?:to|by|in|on|at|as|that|with|from|for|out|up|is|was|are|were|it|this|that|the problem)\b)[\w`(\"']", re.I)
# "Clearing DynamoDB didn't help", "Adding a delay between calls didn't help either"
# (a spoken lead first: "Well, reinstalling GRUB didn't fix it either")
_GERUND = re.compile(r"^\W{0,3}(?:(?:well|ok(?:ay)?|unfortunately|sadly|alas|anyway|also|even|then|and|so|but)\b,?\s+){0,2}(?P<verb>(?!(?:no|some|every|any)thing\b|during\b|being\b|"
                     r"according\b|regarding\b|including\b|following\b|interesting\b|morning\b|evening\b)"
                     r"[A-Za-z][a-z]+ing)\b(?! (?:is|was|are|were|to)\b)", re.I)
# ... whose sentence says what the action did, not what the system does ("Serving a 14B model hangs" is
# the symptom; "Running with --flag fixed the hang" is an attempt).
_EFFECT = re.compile(r"\bwith(?:out)? (?:no|any|little|some|partial|limited) (?:success|luck|improvement|effect)\b|"
                     r"\b(?:did|does|do)(?: not|n'?t) (?:help|fix|work|change|matter|do (?:anything|much)|make (?:a|any) "
                     r"difference|solve|resolve)|\b(?:made|makes|had|has) (?:no|little) (?:difference|effect|impact)|"
                     r"\bno (?:effect|difference|dice|joy|luck|change|improvement)\b|\b(?:fixed|fixes|solved|solves|resolved|"
                     r"resolves|cured|helped|helps|did the trick)\b|\bwork(?:s|ed)? (?:fine|again|now)\b|"
                     r"\b(?:made|makes|causes|caused) (?:it|things|the \w+) (?:to )?(?:worse|better|go away|disappear)\b|^\W*[A-Za-z]+ing\b[^;,]{0,80}\s(?:works|worked)\W*$|\bdid (?:a |the )?workaround\b|\bwork(?:s|ed)? around\b", re.I)
# "I still get this error ... even after making sure X and setting Y": the changes, and that they failed
_STILL_EVEN_AFTER = re.compile(r"\bstill\b[^;]{0,160}?\beven after\s+(?:\w+ly\s+)?(?P<what>(?!(?:that|this|all|which)\b)[a-z]{3,}ing\b)", re.I)
# "A quick revert to the plist and everything worked": an action named by its noun.
_ACTION_NOUN = re.compile(r"^\W{0,3}(?:a|an|the|one)\s+(?:\w+\s+)?(?P<verb>revert|rollback|roll-back|downgrade|upgrade|"
                          r"reinstall|re-install|rebuild|restart|reboot|reset|patch|bump|switch|fresh install|"
                          r"clean install)\s+(?:to|of|from|and|back)\b", re.I)
# "The fix was to disable it", "So to fix the issue, I simply gave ...": the fix that worked.
_THE_FIX = re.compile(r"^\W{0,3}(?:(?:so|and|hence|thus|therefore|finally|in the end)[,\s]+)?(?:the\s+(?:\w+\s+)?(?:fix|solution|workaround|answer|cure)\b[^.]{0,40}?"
                      r"\b(?:was|is)\s+(?:to\b|simply\b|(?:easy|simple|straightforward|obvious|trivial)?\s*:)|to (?:fix|solve|resolve|work around) (?:it|this|that|the (?:issue|"
                      r"problem|crash|error|bug|hang)),)", re.I)
# "I finally got it working by building NMSlib from source first", "Finally got it working by removing
# Courier": the means of a success told after it, anywhere in the sentence (a thanks or a date may lead).
_GOT_IT = re.compile(r"\b(?:got|gotten|have|had) (?:it|this|that|things|everything|\w+) (?:all )?(?:working|to work|"
                     r"running|going|fixed|solved|sorted(?: out)?) (?:again )?by \w+ing\b", re.I)
# "That gave me two options: Quick repair and Online repair. I tried both, and ...": the action's object
# is the sentence before.
_BACK_OBJECT = re.compile(r"^\W*(?:(?:so|and|then|but)\s+)?(?:I|we)(?:'ve| have)?(?:\s+\w+ly|\s+then|\s+also)?\s+"
                          r"(?:tried|did|applied|ran|used|installed|attempted)\s+(?:both|them all|all of them|each of them|"
                          r"all three|all four|them|those|these)\b", re.I)
# "Sure enough, when I removed the X keys, both the apps opened": the clause after the comma is the result.
# "After downgrading HPC-X to 2.14, I tried NCCL-test and it worked well": the change is the clause after
# "after", the main clause says what it did.
_AFTER_ING = re.compile(r"^\W*(?:[\w ]{0,20},\s*)?(?:after|once|by)\s+(?:\w+ly\s+)?(?P<verb>[a-z]{3,}ing)\b[^,]{3,},\s*"
                        r"(?P<main>.+)$", re.I | re.S)
# "One day I decided to install the 515-open driver": a decision told as done (its verdict must follow).
_DECIDED = re.compile(r"\b(?:I|[Ww]e)\s+(?:\w+ly\s+|then\s+|finally\s+)?(?:decided|chose|opted|went ahead)\s+(?:and|to)\s+"
                      r"(?!(?:look|check|see|investigate|search|read|ask|wait|think|google|dig|learn|find)\b)[a-z]{3,}\b")
# "I ended up removing it completely and installing ...": the change settled on, told as where it ended
_ENDED_UP = re.compile(r"\b(?:I|[Ww]e)\s+(?:\w+ly\s+)?ended up\s+(?!(?:being|having|getting|spending|waiting|looking)\b)[a-z]{3,}ing\b")
# "I followed the plan by installing X and ...", "We started by removing Y": the means is the action.
_BY_GERUND = re.compile(r"\b(?:I|[Ww]e)\s+(?:\w+ly\s+)?(?:followed|started|began|continued|finished|ended|proceeded)\b"
                        r"[^.]{0,40}?\bby\s+[a-z]{3,}ing\b")
# "I avoided X by running Y", "We worked around the hang by pinning Z": a problem got rid of, and how.
_FIXED_BY = re.compile(r"\b(?:I|[Ww]e)\s+(?:\w+ly\s+)?(?:(?:avoided|fixed|solved|resolved|worked around|got around|"
                       r"stabili[sz]ed|eliminated|prevented|bypassed|sidestepped|side-stepped|circumvented)\b"
                       r"[^.]{0,80}?\bby\s+(?:\w+ly\s+)?[a-z]{3,}ing\b|"
                       # "I managed to run it on ROCm 5.2 using HSA_OVERRIDE_GFX_VERSION=10.3.0": got it going, and how
                       r"(?:finally\s+)?managed to (?:get|run|make|build|start|load|train|boot)\b(?:[^.]|\.(?=\d)){0,160}?"
                       r"\b(?:using|with|by|after)\s+\S)")
# "Workaround:" + the command, "Actual fix: Update the GPU driver": a labelled remedy in a thread or story.
_REMEDY_LABEL = re.compile(r"^\W{0,3}(?:(?:the|actual|real|final|permanent|proper|quick|temporary)\s+)?"
                           r"(?P<kind>fix|solution|workaround|resolution)\W{0,3}:", re.I)
# "I 1) disabled VT-d 2) randomly changed ...": inline enumeration inside a sentence, blanked for reading.
_INLINE_ENUM = re.compile(r"(?<=\s)\(?\d{1,2}\)(?=\s)")
_WHEN_DONE = re.compile(r"^\W*(?:[\w ]{0,20},\s*)?(?:when|after|once|as soon as)\s+(?:I|we)\s+(?:\w+ly\s+)?"
                        rf"(?:[a-z-]{{3,}}ed|{_IRREGULAR})\b[^,]{{3,}},\s*(?P<main>.+)$", re.I | re.S)
# "I fixed my problem." says it worked, not how: the rest of its paragraph and the code under it do.
_BARE_FIX = re.compile(r"^\W*(?:(?:so|and|finally|ok(?:ay)?|well)\W+)?(?:I|we)(?:'ve| have)?\s+(?:\w+ly\s+)?"
                       r"(?:fixed|solved|resolved|sorted(?: out)?)\s+(?:(?:my|the|this|our)\s+(?:\w+\s+)?(?:problems?|issues?)|"
                       r"it)(?:\s+(?:for good|at last|now|finally|myself))?\W*$", re.I)
# "so far so good the killall worked for me": another reader applied the named thing.
# "this does not work for me see: <trace>" opening a reply: the fix above, tried by another reader, failed.
_NOT_FOR_ME = re.compile(r"^\W*(?:this|that|it|the (?:fix|workaround|same)|same)(?: (?:one|fix|trick|workaround|solution))? "
                         r"(?:does|did|do)(?: not|n'?t) (?:work|help|fix (?:it|this|anything))(?: \w+)? for (?:me|us)\b", re.I)
NOT_FOR_ME = _NOT_FOR_ME  # also read by ``reader``: the reply's change may be the quote above it
_WORKED_FOR_ME = re.compile(r"\b(?:the|that|this|your|his|her) (?:[\w-]+ ){1,3}(?:worked|did the trick|fixed it) for (?:me|us)\b",
                            re.I)
# A change named as the condition of an effect: "after restarting my machine, X seems to be working",
# "when turning it off, the loss is fine", "NaN did not occur when the amp was turned off", "this worked
# with `amp=False`", "work fine without torch.cuda.amp". The condition is what was changed; the clause
# around it says what it did. (The verbs are changes, not operations: "it hangs when running on 8 GPUs"
# is the symptom's condition, not a try.)
_CHANGE_ING = (r"(?:turning (?:\w+ ){0,2}(?:off|on)|disabling|enabling|unsetting|removing|adding|restarting|rebooting|"
               r"reinstalling|re-installing|downgrading|upgrading|replacing|switching (?:off|on|to|back)|lowering|raising|"
               r"reducing|increasing|decreasing|reverting|rolling back|pinning|forcing|patching|rebuilding|recompiling|"
               r"deleting|clearing|commenting out|uninstalling|swapping)")
_CHANGE_PP = (r"(?:turned (?:off|on)|disabled|enabled|unset|removed|restarted|rebooted|reinstalled|downgraded|upgraded|"
              r"replaced|switched (?:off|on|to)|lowered|raised|reduced|increased|decreased|reverted|rolled back|pinned|"
              r"forced|patched|rebuilt|deleted|cleared|uninstalled|swapped)")
_COND_CHANGE = re.compile(
    rf"(?<=\w)[,\s]+(?:after|once|when(?:ever)?|upon|by)\s+(?:\w+ly\s+)?{_CHANGE_ING}\b|"
    # "it went away after I removed the patch": a change of one's own, named after its effect
    r"(?<=\w)[,\s]+(?:after|once)\s+(?:I|we)\s+(?:\w+ly\s+)?(?:removed|reverted|disabled|deleted|dropped|commented out|"
    r"rolled back|pinned|set|changed|applied|patched|rebuilt|cleared|added)\b|"
    rf"\b(?:when|after|once|if)\s+(?:the\s+|my\s+|our\s+)?[\w`.'-]+(?:\s+[\w`.'-]+){{0,4}}\s+(?:is|are|was|were|got|has been|"
    rf"have been)\s+{_CHANGE_PP}\b|"
    r"(?<=\w)[,\s(]+with(?:out)?\s+`[^`]*(?:=|\b(?:false|true|off|none|0)\b)[^`]*`|\bwithout\s+(?:`[^`]+`|[a-z_]+\.[\w.]+)", re.I)
# "I am having a similar problem right after upgrading the kernel": an upgrade that brought the failure on is
# the bug's onset, not a try -- unless the failure is said to persist ("still", "same", "didn't help").
_ONSET = re.compile(r"\b(?:after|since|once|when)\s+(?:\w+ly\s+)?(?:upgrading|updating|installing|moving to|switching to)\b", re.I)
_PERSISTS = re.compile(r"\b(?:still|same|again|no (?:change|difference|luck)|did(?: not|n'?t) (?:help|fix|change))\b", re.I)
# "Try setting the HSA override to a lower version, this fixed the core dump error on my RX 470": advice
# backed by the writer's own result.
_TRY_MINE = re.compile(r"^\W*(?:(?:you (?:can|could|may|might) )?try|just)\b[^.]{3,160}?\b(?:this|that|it) (?:fixed|solved|"
                       r"resolved|worked|helped|did the trick)\b[^.]{0,80}?\b(?:for me|for us|on my|on our|in my|in our)\b", re.I)
# "i try to make max_seq_length smaller but it can't not work": a try told in the present (plain or
# second-language English); a verdict in the same sentence is required.
_TRY_PRESENT = re.compile(r"^\W*(?:(?:so|and|then|but|also)\s+)?(?:[Ii]|[Ww]e)\s+(?:also\s+|then\s+)?try\s+(?:to\s+)?[a-z]{3,}\b")


# "Perhaps this will work:" + code ... "This did not work either.": a plan that was then tried.
_TRY_THIS = re.compile(r"^\W*(?:perhaps|maybe|hopefully|let'?s see if)\b[^.]{0,40}\b(?:will|would|might|should|can)?\s*"
                       r"(?:work|fix (?:it|this)|help|do (?:it|the trick))\W*:\W*$", re.I)
# A subordinate clause does not say the action was done: "if I set X", "until we pinned".
_SUBORDINATE = re.compile(r"\b(?:if|when|whenever|unless|until|before|after|once|because|since|as|that|whether|"
                          r"where|which|who|what|how|why|while|though|although)\s+(?:\w+\s+){0,2}$", re.I)
_SENTENCE = re.compile(r"(?:(?<=[.!?])|(?<=:\(|:\)))[\"')\]*_]*\s+(?=[A-Z`\"'(*_\[@])|(?<=:)\s+(?=[A-Z])")
# "A follow-up pass then vendored `vtkio`": a sequence word before a past tense, whatever the subject.
_THEN_VERB = re.compile(r"(?<![Aa]nd )\bthen\s+(?P<verb>[a-z][a-z-]{2,}ed)\b")
# A sentence that only wonders is no verdict: "I figured if I could get the path, it would work".
_HYPOTHETICAL = re.compile(r"\b(?:would|could|might|may|should|will)\b(?! not\b)|\bif\b[^.]*\bthen\b|^\W*if\b|\bto see (?:if|whether)\b", re.I)
# A plan is no verdict: "Still to look at: whether ...", "Next step: ...".
_PLAN = re.compile(r"^\W*(?:still to\b|to ?do\b|next steps?\b|next:|later:|open questions?\b|left to\b)", re.I)
# A sentence that points back at the action: "This made no difference.", "That attempt was reverted.",
# "After rebuilding without the cache everything worked."
_BACK = re.compile(r"^\W{0,3}(?:(?:this|that|it|these|those|they|again|even after|even with|the (?:attempt|change|fix|patch|"
                   r"result|difference))\b|(?:after|with|once|since)\s+(?P<what>\w+))", re.I)
# A sentence that asks or wishes is not a verdict ("Any ideas?").
_QUESTION = re.compile(r"\?\s*$")
_LOOKAHEAD = 3  # units (paragraphs, list items) after an action's own unit searched for its verdict
# With no verdict, a change named concretely is still an attempt done ("I updated to the latest Docker,
# 1.1", "I updated the Dockerfile to append `priority=1`"): a change verb and a version or a code span.
_CHANGE_VERB = re.compile(r"\b(?:updated|upgraded|downgraded|pinned|bumped|set|disabled|enabled|reverted|patched|rebuilt|"
                          r"reinstalled|installed|uninstalled|removed|replaced|changed|switched|added|appended|vendored|"
                          r"rolled back|turned (?:off|on)|lowered|raised|increased|decreased|reduced)\b", re.I)
# A setting by name: an env var assignment, a command-line flag (also read by ``reader``).
CHANGE_VERB = _CHANGE_VERB  # also read by ``reader``
KNOB = re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+=\S+|(?<![\w-])--[a-z][\w-]{2,}")
_CONCRETE = re.compile(rf"`[^`]+`|\b\d+\.\d+(?:\.\d+)?\b|{KNOB.pattern}")


@dataclass
class Unit:
    """One paragraph or list item, in order; ``text`` None for a code block or table between them."""
    text: str | None
    lines: list[int]
    code: str = ""  # a code block's text: what an action ending in ":" did ("I first tried setting it via netplan:")
    lead: str = ""  # a log entry's heading: "fix" ("KEY FIX (21:22): X") or "entry" ("UPDATE 22:06: X")


@dataclass
class Story:
    title: str
    did: str
    result: str
    verdict: str
    lines: list[int] = field(default_factory=list)
    kind: str = "first"  # how the action was told: first | bare | gerund | noun | fix | try


@dataclass
class _Start:
    unit: int
    pos: int
    kind: str  # first | bare | gerund | noun | fix | try | still | cond | shown
    joined: bool = False  # "I tried both": the sentence before names what was tried


def _starts(k: int, text: str) -> list[_Start]:
    out: list[_Start] = []
    # HTML exports ("<strong><span ...>So to fix the issue, ...") read as their text; blanks keep offsets.
    text = re.sub(r"<[^<>\n]{1,200}>", lambda m: " " * len(m.group(0)), text)
    text = _INLINE_ENUM.sub(lambda m: " " * len(m.group(0)), text)
    spans = _sentence_spans(text)
    for m in _FIRST_PERSON.finditer(text):
        verb = m.group("verb").lower()
        if (verb.split()[0] in _NOT_ACTIONS and " " not in verb) or verb in _NOT_ACTIONS:
            continue
        before = text[max(0, m.start() - 40):m.start()]
        sent = next(((a, b) for a, b in spans if a <= m.start() < b), (0, len(text)))
        w = _WHEN_DONE.match(text[sent[0]:sent[1]])
        if w and not _HYPOTHETICAL.search(text[sent[0]:sent[1]]) and \
                re.search(r"\b(?:when|after|once|as soon as)\s+$", text[sent[0]:m.start()], re.I) and \
                outcomes.classify(w.group("main")) in ("worked", "failed") and not any(st.pos == sent[0] for st in out):
            # "when I removed X, both apps opened": done, and judged. A mixed result ("When we turned on X,
            # latency dropped, but ...") is more often the story's setting than a fix tried.
            out.append(_Start(k, sent[0], "first"))
            continue
        if _WAITED.match(text[m.start():m.start() + 80]):
            continue
        pw = re.search(r"(\w+)\s+$", before)
        if m.group(0).split()[1:2] == ["had"] and pw and pw.group(1).islower() and pw.group(1) not in \
                {"and", "so", "then", "but", "also", "first", "finally", "already", "yesterday", "today", "now"}:
            continue  # "the instance I had installed on another server": a relative clause, background
        if re.search(r"\b(?:I|[Ww]e)\s+(?:\w+ly\s+)?(?:think|believe|guess|suppose|reckon|feel like|am pretty sure|'m pretty sure)"
                     r"(?: that)?\s+$", before):
            continue  # "I think I eliminated all possible factors": a belief about the work, not a change made
        if _SUBORDINATE.search(before) or re.search(r"(?:^|\W)(?:I|[Ww]e)\s+(?:would|will|could|should|might|may|"
                                                    r"can|must|need to|want to|plan to)\W*$", before):
            continue
        # "so I" / "and I": the clause starts at its conjunction
        pre = re.search(r"(?:\b(?:so|and|then|but)\s+|,\s*)$", before)
        pos = m.start() - (len(pre.group(0)) if pre and not pre.group(0).startswith(",") else 0)
        n_s = next((i for i, (a, b) in enumerate(spans) if a <= pos < b), 0)
        if n_s and _BACK_OBJECT.match(text[pos:spans[n_s][1]]) and not any(
                spans[n_s - 1][0] <= st.pos < spans[n_s - 1][1] for st in out):
            out.append(_Start(k, spans[n_s - 1][0], "first", joined=True))
            continue
        out.append(_Start(k, pos, "first"))
    for m in _WHAT_I_DID.finditer(text):
        if not any(abs(st.pos - m.start()) < 30 for st in out):
            out.append(_Start(k, m.start(), "first"))
    for m in _THEN_VERB.finditer(text):
        if m.group("verb") not in _NOT_ACTIONS and outcomes.verdict_word(m.group("verb")) is None \
                and not any(abs(st.pos - m.start()) < 30 for st in out):  # "then import error, then fixed": a result
            out.append(_Start(k, m.start(), "first"))
    for n_s, sm in enumerate(spans):
        s = text[sm[0]:sm[1]]
        if _GOT_IT.search(s) and not _HYPOTHETICAL.search(s[:_GOT_IT.search(s).start()]) and not _QUESTION.search(s):
            # "I finally got it working by adding X, ... but I have added it to the wiki": one fix, told whole
            out = [st for st in out if not sm[0] <= st.pos < sm[1]] + [_Start(k, sm[0], "fix")]
            continue
        a = _AFTER_ING.match(s)
        if a and not _HYPOTHETICAL.search(s) and not _QUESTION.search(s) and a.group("verb").lower() not in (
                "doing", "being", "having", "reading", "looking", "checking", "googling", "searching",
                # "After overcoming multiple challenges, training is now RUNNING": a summary of the work, no change
                "overcoming", "struggling", "fighting", "spending", "debugging", "investigating", "working") \
                and outcomes.classify(a.group("main")) in ("worked", "failed"):
            out = [st for st in out if not sm[0] <= st.pos < sm[1]] + [_Start(k, sm[0], "first")]
            continue
        rl = _REMEDY_LABEL.match(s) if n_s == 0 else None
        if rl:
            kind = "workaround" if rl.group("kind").lower() == "workaround" else "fix"
            out = [st for st in out if not sm[0] <= st.pos < sm[1]] + [_Start(k, sm[0], kind)]
            continue
        fb = _FIXED_BY.search(s)
        if fb and not _HYPOTHETICAL.search(s[:fb.end()]) and not _QUESTION.search(s):
            # "I avoided Docker port publishing by running containers with --network host": the means is the fix
            out = [st for st in out if not sm[0] <= st.pos < sm[1]] + [_Start(k, sm[0] + fb.start(), "fix")]
            continue
        bg = _BY_GERUND.search(s)
        if bg and not _HYPOTHETICAL.search(s[:bg.end()]) and not _QUESTION.search(s):
            # "I followed the plan by installing X and I basically restored the broken setup": one action,
            # the rest of its sentence is what came of it
            out = [st for st in out if not sm[0] <= st.pos < sm[1]] + [_Start(k, sm[0] + bg.start(), "first")]
            continue
        em = _ENDED_UP.search(s)
        if em and not _HYPOTHETICAL.search(s[:em.end()]) and not _QUESTION.search(s):  # ("so I could ...": its purpose)
            # "I ended up removing it and installing a raw build from upstream": what was settled on, the fix
            out = [st for st in out if not sm[0] <= st.pos < sm[1]] + [_Start(k, sm[0] + em.start(), "fix")]
            continue
        dm = _DECIDED.search(s)
        if dm and not any(sm[0] <= st.pos < sm[1] for st in out) and not _HYPOTHETICAL.search(s) \
                and not _QUESTION.search(s) and not _SUBORDINATE.search(s[:dm.start()]):
            out.append(_Start(k, sm[0] + dm.start() - len(re.search(r"(?:\b(?:so|and|then|but)\s+)?$", s[:dm.start()]).group(0)),
                              "first"))
            continue
        if _THE_FIX.match(s.lstrip()):
            # "So to fix the issue, I simply gave ...": the fix, though its clause reads as a plain action
            out = [st for st in out if not sm[0] <= st.pos < sm[1]] + [_Start(k, sm[0], "fix")]
            continue
        if any(sm[0] <= st.pos < sm[1] for st in out):
            continue
        cj = _CONJ_PAST.match(s)
        if cj and cj.group("verb").lower() not in _NOT_ACTIONS and _EFFECT.search(" ".join(s.split())) \
                and not _QUESTION.search(s):
            # "But downgraded triton to 3.3.0 solved this problem.": a change told without its subject, and what it did
            out.append(_Start(k, sm[0], "bare"))
            continue
        m = _SUBJECTLESS.match(s)
        # Log style ("Bumped the version ...") opens a paragraph or follows its bold lead; mid-story a
        # capitalised participle is more often an adjective ("Scoped tests pass").
        lead = n_s == 0 or re.fullmatch(r"\W*(?:\*\*|__).+(?:\*\*|__)\W*", text[spans[n_s - 1][0]:sm[0]].strip())
        if m and lead and m.group("verb").lower().split()[0] not in _NOT_ACTIONS and len(s.split()) >= 4 \
                and outcomes.verdict_word(m.group("verb")) is None:
            out.append(_Start(k, sm[0], "bare"))
            continue
        if _ACTION_NOUN.match(s) or _WORKED_FOR_ME.search(s) or (n_s == 0 and _NOT_FOR_ME.match(s)):
            out.append(_Start(k, sm[0], "noun"))
            continue
        if _TRY_THIS.match(s) and n_s == len(spans) - 1:
            out.append(_Start(k, sm[0], "try"))
            continue
        if not _QUESTION.search(s) and (cond := _cond_effect(s)):
            out.append(_Start(k, sm[0], cond))
            continue
        g = _GERUND.match(s) or _LEAD_GERUND.match(s)
        if g and (_EFFECT.search(" ".join(s.split())) or (_CHANGE_GERUND.match(g.group("verb"))
                                                          and not _MODAL.search(s))) \
                and outcomes.classify(s) != "inconclusive":
            # ("Trying the rocm-gfx803 build ... fails with OSError": a change as the subject, what came of it;
            # "Running on 8 GPUs fails" is the symptom -- running is no change)
            out.append(_Start(k, sm[0], "gerund"))
            continue
        # "We are clipping gradients; clipping it to tiny values does not help.": the try is the clause after ";"
        semi = next((c for c in re.finditer(r";\s+", s) if _GERUND.match(s[c.end():])
                     and _EFFECT.search(" ".join(s[c.end():].split())) and outcomes.classify(s[c.end():]) != "inconclusive"), None)
        if semi:
            out.append(_Start(k, sm[0] + semi.end(), "gerund"))
            continue
        if _STILL_EVEN_AFTER.search(s) and not _HYPOTHETICAL.search(s) and not _QUESTION.search(s):
            out.append(_Start(k, sm[0], "still"))
    return sorted(out, key=lambda s: s.pos)


# "I still get the same bug with NCCL 2.19.4", "I'm also seeing it on v0.27.9": the same failure under a named
# version or setting -- that setting was tried, and failed.
_SAME_WITH = re.compile(r"^\W*(?:(?i:but|and|so|unfortunately|sadly)\W+)?(?:I|[Ww]e)(?:'m|'ve| am| was| have| are| were)?\s+"
                        r"(?:\w+\s+){0,2}?(?:still|also|too)\b[^.]{0,80}?\b(?:get|gets|getting|got|see|seeing|saw|hit|"
                        r"hitting|have|having|had)\b[^.]{0,60}?\b(?:with|on|in|under|using)\s+(?:the\s+)?[^.]{0,30}?"
                        rf"(?:{_CONCRETE.pattern})")
# "I've verified that pytorch 2.0.1 didn't show the bug": another version or setting checked, and clean.
_CLEAN_WITH = re.compile(r"\b(?:I|[Ww]e)(?:'ve| have)?\s+(?:\w+ly\s+)?(?:verified|confirmed|checked|tested)\s+(?:that\s+)?"
                         r"[^.]{0,40}?(?:\d+\.\d+(?:\.\d+)?|`[^`]+`)[^.]{0,20}?\b(?:does ?n[o']t|did ?n[o']t|does not|did not|"
                         r"never)\s+(?:show|have|hit|reproduce|trigger|produce)\b")
# "On my setup, setting `pin_memory = False` and `num_workers = 4` the example hangs": a short setting phrase, then
# the change as the subject of what happened
_LEAD_GERUND = re.compile(r"^\W{0,3}(?:on|in|with|for|at) (?:my|our|this|that|the) [\w -]{1,24},\s+(?P<verb>[a-z]+ing)\b", re.I)
_CHANGE_GERUND = re.compile(rf"(?i)^(?:{_CHANGE_ING}|trying|following|applying|adding|setting|installing|"
                            r"updating|changing|moving|replacing|limiting|capping|wrapping|calling|passing)$")
def _clauses(s: str) -> list[str]:
    """The sentence's clauses at ", but" / ";" / " -- ", then at a bare " but" ("I had the same problem but it went
    away after I removed X"): the coarse cut first, so "I try X but it can't work" keeps its verdict."""
    coarse = re.split(r",\s+but\b|;\s+|\s+--\s+", s)
    return coarse + [c for part in coarse for c in re.split(r"\s+but\s+", part)[1:]]


_EVEN_ING = re.compile(rf"\b(?:even|despite)\s+(?:after\s+|when\s+|with\s+)?(?:{_CHANGE_ING}|setting|using|adding|changing|"
                       r"trying|updating|installing|applying)\b")
_MODAL = re.compile(r"\b(?:would|could|might|may|should|will)\b(?! not\b)|\bto see (?:if|whether)\b", re.I)


def _cond_verdict(s: str) -> str:
    """What the change did: the clause from the change on ("NaN losses with X, when turning it off, the
    loss is fine": worked), else the whole clause ("NaN did not occur when the amp was turned off")."""
    if _CLEAN_WITH.search(s):
        return "worked"  # the other version did not show the bug
    for clause in reversed(_clauses(s)):  # the finest clause that holds the change speaks for it
        m = _COND_CHANGE.search(clause) or _TRY_PRESENT.search(clause)
        if m:
            said = _effect_of(clause, m)
            if said != "inconclusive":
                return said
    return outcomes.classify(s)


def _effect_of(clause: str, m) -> str:
    """The verdict around a change named as a condition: the words after it ("when turning it off, the loss is
    fine"), else those before it ("it went away after I removed the patch"), else the clause."""
    for part in (clause[m.start():], clause[:m.start()], clause):
        said = outcomes.classify(part) if part.strip() else "inconclusive"
        if said != "inconclusive":
            return said
    return "inconclusive"


# "`rwkv-fla` works.", "`--enforce-eager` did not help": a named thing as the subject of its verdict.
_CODE_SUBJECT = re.compile(r"^\W{0,3}(?:(?:and|but|also|so)\s+)?`[^`]{2,80}`\s+(?:(?:also|still|alone|again)\s+)?(?:works?|worked|"
                           r"fixe[sd] (?:it|this|the \w+)|did the trick|helps|helped|(?:does|did)(?: not|n'?t) (?:work|help|fix))\b",
                           re.I)
# "Fixed in https://github.com/o/r/commit/e1e9...", "Fixed by #1234": the maintainer's fix, named by its change.
_FIXED_IN = re.compile(r"^\W{0,3}(?:this (?:is|was|has been|should be) )?(?:fixed|resolved|addressed)\s+(?:in|by|with|via)\s+"
                       r"(?:https?://\S+/(?:commit|pull|commits)/\S+|#\d{1,7}\b|PR\s*#?\d{1,7}\b|(?:commit\s+)?[0-9a-f]{7,40}\b)",
                       re.I)


# "However when I use the same `export HSA_OVERRIDE_GFX_VERSION=10.3.0` now I get this message:" + the output
# shown under it: the setting tried, and the output is its verdict.
_WHEN_USE_SHOWN = re.compile(r"\bwhen (?:I|we) (?:use|set|add|export|enable|disable|apply|pass|switch to)\b[^.]{0,100}?"
                             rf"(?:{_CONCRETE.pattern})[^.]{{0,60}}?\b(?:I|we) (?:get|got|see|saw|hit)\b[^.]{{0,40}}:\s*$")


def _cond_effect(s: str) -> str | None:
    """The start kind of a sentence that names a change and what it did in one breath (see
    ``_COND_CHANGE``, ``_TRY_MINE``, ``_TRY_PRESENT``, ``_SAME_WITH``, ``_CLEAN_WITH``), else None."""
    if _FIXED_IN.match(s) and not _MODAL.search(s):
        return "fix"
    if _WHEN_USE_SHOWN.search(s):
        return "shown"
    if _CODE_SUBJECT.match(s) and not _MODAL.search(s):
        return "cond"
    if _EVEN_ING.search(s) and not _MODAL.search(s) and outcomes.classify(s) in ("failed", "partial"):
        return "still"  # "I got the NaN issue, even reducing the learning rate to 1e-5": tried, and it failed
    if _TRY_MINE.match(s) or ((_SAME_WITH.match(s) or _CLEAN_WITH.search(s)) and not _MODAL.search(s)
                              and outcomes.classify(s) in ("worked", "failed")):
        return "cond"
    # the clause that holds the change: "I may have set the lr too high, but this worked with `amp=False`"
    for clause in _clauses(s):
        m = _COND_CHANGE.search(clause) or _TRY_PRESENT.search(clause)
        # ("If NCCL is disabled, Caffe2 hangs": an observation under a condition; a modal makes it a guess)
        said = _effect_of(clause, m) if m else "inconclusive"
        if said == "failed" and _ONSET.search(clause) and not _PERSISTS.search(clause):
            continue
        if said == "failed" and m and re.match(r"[,\s]+(?:after|once)\s+(?:I|we)\b", m.group(0)):
            continue  # "problems started when I upgraded": the onset; only a change that helped is read this way
        if m and not _MODAL.search(clause) and said in ("worked", "failed"):
            return "cond"
    return None


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    spans, at = [], 0
    for m in _SENTENCE.finditer(text):
        spans.append((at, m.start()))
        at = m.end()
    spans.append((at, len(text)))
    return [(a, b) for a, b in spans if text[a:b].strip()]


def _sentences(text: str) -> list[str]:
    return [text[a:b].strip() for a, b in _sentence_spans(text)]


sentences = _sentences  # also read by ``reader``


# Where the action's own sentence turns to what happened: "..., and they made no difference",
# "... and the run went through", "... but it did not help", "... - no dice".
_RESULT_TURN = re.compile(r"(?:,?\s+(?:and|but|which|so|yet)\s+(?:\w+ly\s+)?(?:it|the|this|that|they|everything|nothing|"
                          r"now|still|i|we|there (?:is|was|are|were))\b|,\s*which\s+(?:\w+ly\s+)?(?:did|does|made|makes|fixed|fixes|solved|helped|"
                          r"worked|had|was)\b|[,;:—–-]\s+(?:\w+ly\s+)?(?:it|the|this|that|they|everything|nothing|no|"
                          r"still|same|but)\b|,?\s+and\s+(?:\w+ly\s+)?(?:found|saw|noticed|confirmed|observed)\s+(?:that\s+)?)", re.I)


def _own_result(action: str) -> str:
    """What the action's own sentence says happened; "" when it only says what was done
    ("I rolled back to the previous kernel" is no verdict, whatever "back to the previous" sounds like)."""
    bare = re.sub(r"\([^()]*\)", " ", action)  # "removed `--x` (falls back to ...)": the aside explains
    w = _WHEN_DONE.match(bare) or _AFTER_ING.match(bare)
    if w:
        return w.group("main")
    m = _RESULT_TURN.search(bare)
    if m:
        return bare[m.start():]
    return bare if _EFFECT.search(bare) else ""


def _verdict(sentences: list[str], own: bool = True, strict: bool = False) -> tuple[str, str]:
    """The sentence that says what happened, and its verdict: the first that points back at the
    action ("That didn't help either", "After rebuilding ... it worked"), else the first at all."""
    action = set(re.findall(r"[a-z]{4,}", sentences[0].lower())) if sentences else set()
    for s in sentences[1:]:
        if re.match(r"^\W{0,3}(?:results?|outcome|verdict)\W{0,3}\s*[:—–-]", s, re.I):
            v = outcomes.classify(s)  # "- Result: 3 evals per hour, no hang": the author's own label
            if v != "inconclusive":
                return v, s
    said = []
    for s in sentences:
        # The action's own sentence is judged by its result part only: "I tried to remove my profile to see
        # if ... but that didn't help either" wonders before its turn, not in it.
        said_part = _own_result(s) if s is sentences[0] else s
        if _QUESTION.search(s) or _HYPOTHETICAL.search(said_part) or _PLAN.match(s):
            continue
        if s is not sentences[0] and re.match(r"^\W*(?:(?:so as |in order )?to|before|while)\s+[a-z]+", s, re.I) \
                and not re.search(r"\b(?:it|this|that|they)\s+(?:\w+\s+)?(?:work|fix|help|fail|crash|hang|made)", s):
            continue  # "To narrow down the problem, ...": a purpose, no verdict
        if s is sentences[0]:
            v = outcomes.classify(said_part) if own else "inconclusive"
            if v != "inconclusive" and (_WHEN_DONE.match(s) or _AFTER_ING.match(s)):
                return v, s  # "when I removed X, both apps opened": cause and effect in one sentence
        else:
            v = outcomes.classify(s)
        if v == "inconclusive":
            continue
        b = _BACK.match(s)
        points = b and (not b.group("what") or b.group("what").lower()[:5] in {w[:5] for w in action})
        if s is not sentences[0] and re.search(r"\b(?:there|on (?:that|the other) (?:machine|box|system|node|host|vm)|"
                                               r"in (?:that|the other) (?:case|setup|scenario|vm))\s*[.!]?$", s, re.I):
            continue  # "It worked fine there.": the other setup the author compares with, not this try
        if strict and not points:
            continue  # under "The fix was ...": the text explains the bug; only a sentence about the fix judges it
        said.append((v, s))
        if s is not sentences[0] and points:
            return v, s
    return said[0] if said else ("inconclusive", "")


def nxt_unit_ok(st: _Start, nxt: _Start | None) -> bool:
    """The action is the last thing its unit says (its code block below belongs to it)."""
    return nxt is None or nxt.unit != st.unit


# A timestamped log entry's heading: "## UPDATE 22:06: BLACKLISTED node -0", "## CRITICAL FIX (18:52): ...".
LOG_ENTRY = re.compile(r"^\W*(?P<kind>(?:[A-Z][\w-]* ){0,3}(?:FIX|UPDATE|EDIT|PIVOT|CHANGE|WORKAROUND))\b\s*"
                       r"\(?\d{1,2}:\d{2}\)?\s*[:—–-]\s*(?P<rest>\S.*)$", re.I)


def _lead_start(k: int, u: Unit) -> list[_Start]:
    """A log entry's heading is an action when it says a fix, or names a change concretely."""
    text = u.text or ""
    if u.lead == "fix":
        return [_Start(k, 0, "fix")]
    if u.lead != "entry" or _REFUTED.search(text):
        return []  # "UPDATE 23:54: --flag did NOT fix the hang": the verdict on an earlier entry, no new action
    caps = [w for w in re.findall(r"\b[A-Z]{4,}ED\b", text) if w.lower() not in _NOT_ACTIONS]
    if _CHANGE_VERB.search(text) or caps or re.search(r"(?<![\w-])--[a-z][\w-]{2,}|\bpivot\w*\b|\bswitch\w* to\b",
                                                       text, re.I):
        return [_Start(k, 0, "bare")]
    return []


# "I added" / "options aic7xxx debug:0xffff" / "to modprobe.conf, but that didn't help either.": a sentence
# broken around the line it set apart, its first part ending on the action's verb.
_CUT_AFTER_VERB = re.compile(rf"\b(?:I|[Ww]e)(?:'ve| have)?\s+(?:\w+ly\s+)?{_VERB}\s*$")


def _rejoin(units: list[Unit]) -> list[Unit]:
    out: list[Unit] = []
    k = 0
    while k < len(units):
        u = units[k]
        nxt = [v for v in units[k + 1:k + 3]]
        if u.text and not u.lead and _CUT_AFTER_VERB.search(u.text) and len(nxt) == 2 \
                and all(v.text and v.text[:1].islower() and not v.lead for v in nxt) \
                and re.search(r"[.!?]\W*$", nxt[1].text):
            out.append(Unit(" ".join([u.text, nxt[0].text, nxt[1].text]), u.lines + nxt[0].lines + nxt[1].lines))
            k += 3
            continue
        out.append(u)
        k += 1
    return out


def read(units: list[Unit]) -> list[Story]:
    """The attempts a run of paragraphs and list items tells, with their verdicts."""
    units = _rejoin(units)
    starts = [st for k, u in enumerate(units) if u.text
              for st in (_lead_start(k, u) or (_starts(k, u.text) if not u.lead else []))]
    stories: list[Story] = []
    for j, st in enumerate(starts):
        nxt = starts[j + 1] if j + 1 < len(starts) else None
        own = units[st.unit].text or ""
        end = nxt.pos if nxt and nxt.unit == st.unit else len(own)
        span = own[st.pos:end]
        parts = [span]
        last = nxt.unit if nxt else len(units)
        seen = 0
        for k in range(st.unit + 1, min(last + 1, len(units))):
            u = units[k]
            if u.text is None:
                continue
            seen += 1
            if seen > (_LOOKAHEAD + 2 if st.kind == "try" else _LOOKAHEAD):  # a plan's code may take a few captions
                break
            if nxt and k == nxt.unit:
                if nxt.pos:
                    parts.append(u.text[:nxt.pos])  # "Even after this, X still failed. The fix was to ..."
                break
            parts.append(u.text)
        sents = [s for p in parts for s in _sentences(p)]
        if st.joined and len(sents) > 1:
            sents = [f"{sents[0]} {sents[1]}"] + sents[2:]  # "Two options: A and B. I tried both, ..."
        action = sents[0] if sents else span.strip()
        after = next((u for u in units[st.unit + 1:st.unit + 2] if u.text is None), None)
        if st.kind in ("fix", "workaround") and len(sents) > 1 and _REMEDY_LABEL.match(action) \
                and not action[_REMEDY_LABEL.match(action).end():].strip():
            # "Actual fix: Update the GPU driver to the latest.": the label and what it names are one action
            sents = [f"{action} {sents[1]}"] + sents[2:]
            action = sents[0]
        if _BARE_FIX.match(action):
            rest = own[st.pos:end].strip()[len(action):].strip()
            code = after.code if after is not None and nxt_unit_ok(st, nxt) else ""
            if not rest and not code:
                continue  # "I'm just glad I solved the problem.": a summary, no attempt
            said_of_fix = outcomes.classify(action)  # "I fixed it" says worked unless its words say otherwise
            stories.append(Story(title=action.strip(), did="\n\n".join(x for x in (own[st.pos:end].strip(), code) if x),
                                 result="", verdict=said_of_fix if said_of_fix != "inconclusive" else "worked",
                                 lines=sorted(set(units[st.unit].lines) | set(after.lines if code else [])), kind="fix"))
            continue
        verdict, said = _verdict(sents, own=st.kind not in ("fix", "try", "workaround"),
                                 strict=st.kind in ("fix", "try", "workaround"))  # "The fix was to pin X until the deadlock fix lands"
        if st.kind == "still":
            verdict, said = "failed", action  # "I still get the error even after X": its own sentence says so
        if st.kind == "shown":
            shown_out = after.code if after is not None and after.code else ""
            verdict, said = (outcomes.classify(shown_out), action) if shown_out else ("inconclusive", action)
        if st.kind == "cond" and _cond_verdict(action) != "inconclusive":
            verdict, said = _cond_verdict(action), action  # the change and its effect are one sentence
        if verdict == "inconclusive" and st.kind == "gerund":
            verdict, said = outcomes.classify(action), action  # "Setting X did workaround but the rate dropped to a crawl"
        if verdict == "inconclusive" and st.kind in ("fix", "workaround"):
            verdict, said = ("worked" if st.kind == "fix" else "partial"), action
        said_is_action = said == action  # a default verdict names no sentence of its own
        shown = action.rstrip().endswith(":") and after is not None and bool(after.code)  # "Reduced it to 128:" + config
        if verdict == "inconclusive" and units[st.unit].lead:
            pass  # a log entry that names a change is one, whatever it says of the result
        elif verdict == "inconclusive" and not (st.kind in ("first", "bare") and _CHANGE_VERB.search(action)
                                              and (_CONCRETE.search(action) or shown)
                                              and not _HYPOTHETICAL.search(action)):
            continue  # a story's other sentences: no verdict, no attempt
        title = re.sub(r"^\W*(?:(?:so|and|then|but|[Ww]ell|[Oo]k(?:ay)?|[Aa]nyway|[Aa]las)\b,?\s+)+", "", action).strip()
        if st.kind == "still" and (sm := _STILL_EVEN_AFTER.search(title)):
            title = title[sm.start("what"):]  # the changes made are the title; the sentence stays in "did"
        title = re.sub(r"[:,;]\s*$", "", title)
        title = re.sub(r"\[([^\]]+)\]\([^)\s]+\)", r"\1", title)  # a link reads as its text in a title
        # Only the lines up to the verdict belong to the attempt.
        cut = next((i for i, p in enumerate(parts) if said and said in " ".join(_sentences(p))), len(parts) - 1)
        keep_units = cut + 1
        used = list(units[st.unit].lines)
        k, n_text = st.unit, 1
        while n_text < keep_units and k + 1 < len(units):
            k += 1
            if units[k].text is not None:
                n_text += 1
            used += units[k].lines
        if st.kind == "try":  # "Perhaps this will work:" then the code tried, up to the verdict
            shown_code = [u for u in units[st.unit + 1:k + 1] if u.text is None and u.code]
            if shown_code:
                action = "\n\n".join([action] + [u.code for u in shown_code])
                used = sorted(set(used).union(*[set(u.lines) for u in shown_code]))
        if shown and nxt_unit_ok(st, nxt):
            action = f"{action}\n\n{after.code}"  # the config or command shown under "I first tried X:"
            used = sorted(set(used) | set(after.lines))
        stories.append(Story(title=title, did=action, result="" if said_is_action or said == action else said, verdict=verdict,
                             lines=used, kind=st.kind))
    return stories


# "So NOT node-specific, NOT dirty-handoff": a later line that rules the thing out by name.
_REFUTED = re.compile(r"\bNOT\s+(?:the\s+)?(?P<what>[\w-]{4,})|(?P<flag>`?--?[\w-]{3,}`?|[\w-]{4,})\s+did\s+(?:NOT|n'?t)\s+"
                      r"(?:fix|help|change|solve|resolve)\b")


def refuted(name: str, later: str) -> bool:
    """Whether a later text rules the action out by one of its distinctive words ("DIRTY-HANDOFF settle-wait"
    ... "NOT dirty-handoff"; "--disable-custom-all-reduce did NOT fix the hang")."""
    keys = {w.lower().strip("`") for w in re.findall(r"`?--[\w-]{3,}`?|\b[A-Za-z]+-[\w-]+\b|\b[A-Z][A-Z_]{3,}\b", name)}
    keys = {k for k in keys if len(k) >= 5}
    if not keys:
        return False
    for m in _REFUTED.finditer(later):
        said = (m.group("what") or m.group("flag") or "").lower().strip("`")
        if said in keys:
            return True
    return False
