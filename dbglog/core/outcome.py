"""What happened, in one word: an attempt's outcome read from the words people write.

People write results as "Still hangs", "No OOM anymore after 5000 steps", "❌ same error",
"Error rate dropped from 30% to 0", "Helps, but still fails 1 run in 10". Reading the first word
is wrong half the time: "No OOM" starts with "no" and means it worked. So the text is read as a
list of *cues*, each a phrase with a meaning:

* **negated failures** ("no OOM", "without a hang", "zero NaNs", "hang disappears", "the
  segfault is gone", "dropped ... to 0") are success cues, and the failure word inside them is
  consumed so it cannot count again;
* **negated successes** ("did not help", "doesn't fix", "no improvement", "not fixed") are
  failure cues, consumed the same way;
* the rest are plain success / failure / partial / unknown words.

Then: a partial cue, or success and failure together ("fixes the crash but still hangs"), is
``partial``; success alone is ``worked``; failure alone is ``failed``; no cue, or only words that
say the result is unknown, is ``inconclusive`` -- a guess never lands as a confident verdict.

Some cues count for nothing: "works without the header" next to "fails with it" is about the
condition that never failed, "without the patch it hangs" is the control run. When no word says,
numbers may: "throughput 410 → 980 tok/s" (the metric's name or unit says which way is better; a
move under 10 % up or 5 % down is noise), "3/20 hangs (was 14/20)" (fewer, not none: partial).

An explicit label ("Outcome: FAILED", "✅", a heading "(WRONG)") wins over the result text.
Pure functions, no I/O; the catalogue is data so it can grow with the field.
"""

from __future__ import annotations

import functools
import operator
import re

from dbglog.util.lazyre import Lazy  # importing this module compiles none of its cues

OUTCOMES = ("worked", "failed", "partial", "inconclusive", "untested")


# Bad things a run can do. "No <bad>" / "<bad> is gone" means the attempt worked.
_BAD = (
    r"(?:oom|ooms|out[- ]of[- ]memory|crash(?:es|ed)?|hang(?:s|ing)?|hung|wedge[sd]?|wedging|deadlock(?:s|ed)?|livelock|"
    r"segfault(?:s|ed)?|seg(?:mentation)? ?fault|nan(?:s)?|inf(?:s)?|errors?|exceptions?|failures?|fails?|"
    r"faults?|timeouts?|time-?outs?|stalls?|freezes?|stuck|leaks?|corruption|mismatch(?:es)?|"
    r"illegal (?:memory )?access(?:es)?|ima|xid|watchdog|aborts?|panics?|traps?|regressions?|"
    r"warnings?|spikes?|divergence|slowdowns?|retries|restarts?|reboots?|flakes?|flakiness|"
    r"repro(?! (?:script|case|steps|command|file|program|notebook)s?\b)|problems?|issues?|bugs?|cliffs?|(?:device )?lost|"
    r"recompil\w*|collaps\w*|errors?)"
)
_GONE = r"(?:disappear(?:s|ed)?|vanish(?:es|ed)?|went away|goes away|go away|gone|is gone|are gone|resolved(?! to\b)|solved|fixed|eliminated|cleared|stopped|stops)"

# Each cue: (regex, meaning). Order matters only inside one meaning; consumption is by span.
_NEGATED_WIN_EXTRA = [
    # "they work even less well", "works worse than before": a comparison that went the wrong way
    r"\b(?:works?|worked|working|runs?|ran) (?:\w+ )?(?:even )?(?:less well|worse)\b",
    # "Same story: fewer recompiles, but ...", "no better than eager", "Not an option.": no way forward
    r"^\W*same story\b|\bno better than\b|\bnot an option\b",
    # "That attempt was reverted.": the change was taken back, whatever it did on the way
    r"\b(?:attempt|change|patch|fix|approach|commit|experiment)s? (?:was|were|got|has been|had to be) "
    r"(?:reverted|rolled back|backed out|abandoned|dropped)\b",
    # "0/29 wins", "0 of 5 runs succeeded": a count of successes that is zero is a failure
    r"\b(?:0|zero|none) ?(?:/|of|out of) ?\d+ (?:\w+ ){0,2}(?:pass(?:ed|es)?|wins?|won|succeed\w*|success\w*|green|clean|ok|work(?:ed|s)?|improved|better|helped|faster)\b",
]
_NEGATED_FAIL = [
    r"\bstill (?:works|working|passes|builds|runs fine|boots)\b",  # "the patched crate still works in practice"
    r"\b(?:green|working|works|worked|fine|ok|back|running|stable|passing|boots?) again\b",  # "green again": recovered
    r"\bno more\b(?: [\w'-]+){0,3}",
    rf"\bnothing (?:\w+ )?{_BAD}",
    r"\b\w+ (?:is|are) (?:now |finally )?gone\b",
    rf"\b(?:don'?t|do not|didn'?t|did not|doesn'?t|does not|never|no longer) (?:get|see|hit|have|run into|got|saw) "
    rf"(?:any(?: more)?|more|the|those|these|that|this)? ?(?:\w+ ){{0,2}}{_BAD}\b",  # not "the NCCL INFO lines"
    # "I have not seen the error since", "haven't had a crash since", "have not yet encountered the error"
    rf"\b(?:have|has|had)(?:n'?t| not)(?: yet| since| once| again)? (?:seen|had|hit|got|gotten|encountered|experienced|"
    rf"observed|noticed|run into) (?:any(?: more)?|more|the|those|these|that|this|an?|one)? ?(?:\w+ ){{0,2}}{_BAD}\b",
    rf"\b{_BAD}\s+(?:\w+ ){{0,2}}(?:no longer|never|not|did not|didn't|does not|doesn't) (?:\w+ ){{0,2}}"
    r"(?:shows? up|appears?|happen\w*|occurs?|reproduc\w*|triggers?|seen|come back|came back|return\w*)",
    r"\b(?:did|does|do) the trick\b|\bsolved it\b|\bnailed it\b",
    # "gradient_checkpointing=True does solve the memory issue": the emphatic "do" before the verb of a fix
    rf"\b(?:did|does|do) (?:indeed |really |actually |in fact )?(?:solve|resolve|fix|cure)\b(?! nothing)"
    rf"(?: (?:my|the|this|our|that|these|those) (?:[\w-]+ ){{0,3}}{_BAD}\w*)?",
    # "it went away after I removed the patch": in a debug story "it" going away is the problem going away
    r"\b(?<!not )(?:it|they|this|that) (?:just |finally |then )?(?:went away|goes away|disappeared|disappears|vanished)\b",
    # "Commenting out the wandb code solved my segmentation fault error": the fault is what got solved
    rf"\b(?<!not )(?:solved|fixed|resolved|cured|eliminated) (?:my|the|this|our|that|these|those) (?:[\w-]+ ){{0,3}}{_BAD}",
    r"\b(?<!not )(?<!n't )(?:makes?|made) (?:it|them|this|that) (?:go away|disappear)\b",  # "Setting X makes it go away"
    r"\b(?:can|could) (?:now )?(?:connect|start|boot|load|launch|reach|bind|attach|mount|compile|build|run)\b"
    r"(?: (?:[\w-]+ ){0,3}again\b)?|\b(?<!not )found (?:by|via|using) (?!no\b)|"
    r"\bnow (?:reach|work|run|pass|compile|load|build|start|connect)(?:es|s|ed)?\b|\b(?:root )?cause found\b|"
    r"\bfound the (?:root )?cause\b",
    # "Now the training can be run.", "Bypassed the errors before": the step that was blocked goes through
    r"\bnow (?:\w+ ){0,3}can (?:be )?(?:run|start|train|load|compile|build|proceed|finish|launch|boot)\b|"
    rf"\bbypass(?:es|ed)? (?:the |all |those |these )?(?:\w+ )?{_BAD}",
    # "flash_attn now installs as the final step", "remains properly installed", "now handles paths correctly"
    r"\bnow (?:install|handle|train|boot|finish|complete|succeed)(?:es|s|ed)?\b|"
    r"\b(?:remains?|stays?|stayed|remained) (?:\w+ )?(?:installed|functional|stable|working|healthy|responsive|correct)\b|"
    r"\b(?:runs?|ran|works?|worked|loads?|behaves?|handles?(?: \w+){0,2}) correctly\b|\bnow (?:\w+ )?compatible\b",
    # "the NaNs followed the card": the swap pinned the fault on the part, the test did its job
    r"\b(?:\w+ ){0,2}(?:follow(?:s|ed)?|moved with) the (?:card|gpu|device|node|cable|dimm|host|riser|slot)\b",
    rf"\bno (?:more |longer |further |new |other |single |additional )?(?:\w+[ -]){{0,2}}{_BAD}\b",
    rf"\bno longer (?:\w+ ){{0,2}}(?:{_BAD}|reproduc\w*|fails?|failing|occurs?|happens?|see[ns]?|observed|shows? up|appears?|triggers?)",
    # ("without a hang"; not "even without the flag it fails": a subject of its own starts another clause)
    rf"\bwithout (?:an? |any )?(?:(?!(?:it|this|that|they|we|i|he|she)\b)\w+ ){{0,2}}{_BAD}\b",
    rf"\b(?:zero|0) (?:\w+ ){{0,1}}{_BAD}\b",
    rf"\b{_BAD}[- ]free\b",
    rf"\bnot (?:a |one )?(?:single |one )(?:\w+ )?{_BAD}\b",  # "Not a single hang in 3 days"
    # "0/20 hangs", "0 of 50 runs hung", "hangs in 0 of 50 runs": a count of failures that is zero
    rf"\b(?:0|zero|none) ?(?:/|of|out of) ?\d+ (?:\w+ ){{0,2}}{_BAD}\b",
    rf"\b{_BAD} (?:in|on|during|over|across) (?:0|zero|none) ?(?:/|of|out of) ?\d+\b",
    # "problems total 0", "errors: 0", "Xid events total 0" (not "hangs at 0%")
    rf"\b{_BAD}(?: (?:events?|messages?|lines?|entries|reports?))?\s*(?:total|count|seen|observed|reported)?\s*[:=]?\s*"
    r"(?:0|zero|none)\b(?![.,/]\d|\s*%)",
    rf"\b{_BAD} (?:(?!not\b|never\b)\w+ ){{0,2}}{_GONE}",  # not "the error did not go away"
    # ("the hang didn't trigger", not "this didn't trigger scale up": a trigger with an object of its own is a wanted effect)
    r"\b(?:never|didn't|did not|doesn't|does not|won't|no longer) (?:\w+ ){0,2}(?:hang|crash|oom|fail|deadlock|segfault|fault|panick?|error|reproduce|repro|trigger(?:s|ed)?\b(?!\s+(?!again\b|anymore\b|since\b|in\b|on\b|at\b|after\b|for\b|during\b|with\b|once\b)[a-z])|stall|freez|froze|wedge|lock up|happen|occur|diverge|spike)\w*\b(?: again| anymore| since)?",
    rf"\b(?:cannot|can't|could not|couldn't|unable to) (?:\w+ ){{0,2}}reproduce\b(?: (?:the |this |that |any |it )?(?:\w+ )?{_BAD}\b)?",
    r"\bnot reproducible\b|\bno repro\b|\bdoes not repro\b",
    r"(?:\b[\w%-]+ ){0,3}(?:dropped|fell|went down|reduced|down|decreased) (?:\w+ ){0,3}(?:from [\d.,]+ ?%? )?to (?:0|zero|none)\b(?![.,]\d)",
    rf"\b(?:fix(?:es|ed|ing)?|solv(?:es|ed|ing)|resolv(?:es|ed|ing)|eliminat\w+|remov(?:es?|ed|ing)|avoid(?:s|ed|ing)?|prevent(?:s|ed|ing)?|gets? rid of|got rid of|getting rid of|cur(?:es?|ed|ing)) (?:the |this |that |all |any |our )?(?:\w+[ -]){{0,2}}{_BAD}\b",
    r"\b(?:\d+|all)/(?:\d+) (?:runs? |iterations? |steps? )?(?:pass(?:ed)?|green|clean|succeed\w*|ok)\b",
    r"\ball (?:\d+ )?(?:runs?|tests?|iterations?|steps?|ranks?|jobs?) (?:pass(?:ed)?|green|clean|succeed\w*|complete\w*|finish\w*)",
    r"\b(?:pass(?:es|ed)?|clean|ok) (\d+)/\1\b",  # "pass 3/3": every run
]
# "not the OOM cause", "unrelated": what was found is not what was hunted.
_NOT_THE_CAUSE = r"\bnot (?:the |a |an )?(?:[\w-]+ ){0,2}(?:root )?(?:cause|culprit)\b|\bunrelated\b|\bnot related\b|" \
                 r"\b(?:a )?separate (?:bug|issue|problem)\b"
_NEGATED_WIN = [
    r"\bconfirmed (?:(?:it|this|that)(?:'s| is| was) )?not (?:the |a )?(?:[\w-]+ )?(?:cause|culprit|issue|problem)\b",
    # "haven't been able to eliminate this error yet", "was not able to fix it": the fix that did not come (before
    # "eliminate this error" reads as one that did)
    r"\b(?:(?:have|has|had)(?:n'?t| not)(?: yet)? been able|(?:am|is|are|was|were)(?:n'?t| not) able|not able|unable) to "
    r"(?:\w+ )?(?:fix|solve|resolve|eliminate|get rid of|remove|stop|prevent|avoid|work around|get (?:it|this|that) "
    r"(?:to )?work)\w*",
    r"\b(?:did ?n[o']t|does ?n[o']t|do ?n[o']t|didnt|doesnt|won't|wouldn't|could ?n[o']t|can't|cannot|(?:is|are|was|were)n'?t|"
    r"not(?! only\b)|never|nothing|no)"
    r"(?:,? (?:however|though|sadly|unfortunately|actually|in fact),?)? (?:\w+ ){0,2}(?:help(?:ed|s|ing)?|fix(?:ed|es)?|"
    r"correct(?:ed|s)?(?! (?:answer|output|result|value|way|version|one)s?\b)|work(?:ed|s|ing)?|remove[ds]?|eliminate[ds]?|prevent(?:ed|s)?|stop(?:ped|s)?|change(?:d|s)? anything|solve[ds]?|resolve[ds]?|matter(?:ed|s)?|improve[ds]?|make a difference|succeed(?:ed)?|pass(?:ed)?|affect(?:ed)?|budge)\b",
    r"\bsmall change\b|\bnegligible\b|\bineffective\b|\bineffectual\b|\bof no use\b|\bmarginal\w*\b|\bwithin (?:the )?noise\b|\bno better\b|\bno (?:\w+ )?(?:improvement|effect|change|difference|luck|success|help|dice|joy|progress|impact|gain|speed-?up)\b",
    r"\bnot (?:\w+ )?(?:fixed|resolved|solved|better|helpful|the (?:cause|culprit|issue|problem|fix))\b",
    _NOT_THE_CAUSE,
    r"\b(?:ruled out|dead end|dead-end|red herring|wrong|disproved|rejected|refuted|false lead|not it|nope|no go|no-go)\b",
    r"\bmade (?:it|things) worse\b|\bworse\b",
    r"\b(?:fixed|fixes|solved|changed|helped|did) nothing\b|\b(?:fixed|solved|resolved|helped) by nothing\b",  # "fixed nothing — wrong theory"
    # "Neither X nor Y changed anything", "Barely any difference", "Identical behaviour", "Confirmed not the cause"
    # ("Neither 0.1.13 or 0.1.16 worked for me", "None of these helped": the subject denies the verb)
    r"\b(?:neither|none)\b(?:(?!\b(?:and|but|so)\b)[^.;,]|\.(?=\d)){0,80}\b(?:changed anything|helped|fixed (?:it|the \w+)|made (?:a|any) difference|"
    r"mattered|worked|works|solved (?:it|the \w+)|resolved (?:it|the \w+)|"
    # ("None of those compiles", "neither build succeeded": the verbs of a run or build that went through)
    r"compiles?|compiled|builds?|built|succeed(?:s|ed)?|pass(?:es|ed)?|runs?|ran|loads?|loaded|starts?|started)\b",
    r"\bbarely (?:any|a) (?:difference|change|effect|improvement)\b|\bidentical (?:behaviou?r|error|crash|symptoms?|failure)\b",
    # "did not yield improvements", "never gave any speedup", "didn't bring a noticeable gain": a gain denied by the verb
    # that would have brought it
    r"\b(?:did ?n[o']t|does ?n[o']t|do ?n[o']t|didnt|doesnt|won't|wouldn't|never|failed to) (?:yield(?:ed)?|g[ai]ve|"
    r"br(?:ing|ought)|show(?:ed)?|produced?|provided?|le(?:ad|d) to|result(?:ed)? in|ma[kd]e)(?: (?:any|much|a|an|the|the expected|noticeable|measurable|significant|"
    r"real|visible))* (?:improvements?|speed-?ups?|gains?|difference|benefits?|boost)\b",
    # "tried the following without success", "without being able to fix the issue", "without any luck"
    r"\bwithout (?:any |much |real |a )?(?:success|luck|improvement|effect|difference|progress|joy)\b|"
    r"\bwithout (?:being able to|managing to|succeeding in) (?:\w+ ){0,2}?(?:fix|solv|resolv|get rid|work|help)\w*",
    # "Then nothing happened", "the ranking loss didn't move", "barely moved": no effect
    r"\bnothing (?:happened|changed|moved)\b|\b(?:did ?n[o']t|does ?n[o']t|never) (?:move|budge|change)\b|"
    r"\bbarely (?:moved|changed|improved)\b|\bstayed (?:flat|the same|stuck)\b",
    r"\bno (?:lo |la )?(?:soluciona|resuelve|arregla|ayuda|sirve|cambia)\w*\b|\bsin (?:efecto|cambios?)\b",
]
# "Works WITHOUT header. Fails WITH header.": a success under the condition that never failed says
# nothing about the attempt; the span is consumed and counts for nothing -- only when the text says it
# still fails with that condition ("works without find_unused_parameters" alone is a success).
_NEUTRAL_WHEN = Lazy(rf"\b(?:fail\w*|breaks?|broken|still \w+|{_BAD})\b[^.;]{{0,40}}?\b(?:with|when|if)\b", re.I)
# "Without the patch it hangs; with it, 50/50 runs pass": the failure of the control run, no verdict.
# ... and "in case that was the problem": a guess at the cause, no verdict either.
# "Updated the driver in hope of avoiding the kernel panics", "bumped it to avoid timeouts": the aim, not
# what happened -- read before the cues it holds ("avoiding ... panics" is no success).
_PURPOSE = [r"\b(?:in (?:the )?hopes? (?:of|that)|hoping (?:to|that)|in order to|so as to|to (?:try to )?(?:avoid|prevent|"
            r"stop|reduce|get rid of|work around))\b[^.;,:!?—–]{0,60}"]
_CONTROL = [  # "when I started the job again": the retry is no persistence
    # "needs a reboot to take effect", "pending a restart", "after the reboot": a reboot asked for or passed, not the
    # machine rebooting by itself (what else the sentence says still counts: "hangs after a reboot")
    r"\b(?:needs?|needed|requires?|required|pending|until|after|on) (?:a |the |another )?(?:system |host )?(?:reboot|restart)\b",
    # "It's still unclear why it's needed, but I could only make it work by ...": a question about the cause, not the
    # outcome (the words of not knowing count for nothing; what the clause says still does: "no idea why it hangs")
    r"\b(?:still )?(?:unclear|unknown|not sure|no idea) (?:why|how come|what (?:causes|caused|triggers))\b",
    # "Target: 3-5x speedup (Phase 1 goal)", "expected ~2x faster": a gain aimed at, not one measured
    r"\b(?:target|goal|aim|expect(?:ed|ing)?|hop(?:e|ed|ing))\b\s*(?:is|was|of|for)?\s*:?\s*(?:~|≈)?\d[\d.,\-–]*\s?(?:[x×%]\s*)?"
    r"(?:\w+\s+)?(?:speed-?ups?|faster|improvement|gain)\b",
    # "import errors are expected in the dev workspace": a failure the author says is normal
    rf"\b{_BAD} (?:are|is|were|was) (?:expected|normal|harmless|benign)\b",
    # "with a few keystrokes and a reboot, I was back": a reboot done, not one the system did
    r"\b(?:with|and|after|then|plus|needed|did|do|one more) (?:a|another) (?:quick |full |cold |clean |fresh )?(?:reboot|restart)\b",
    r"\b(?:started|ran|run|launched|relaunched|restarted|tried|opened|booted|rebooted|resubmitted) (?:\w+ ){0,4}again\b",
    r"\b(?:in case|whether|if) (?:that|it|this) (?:was|is|were) the (?:problem|cause|issue|culprit|bug)\b",
            rf"\bwithout (?:the |this |that |my |our )?(?:patch|fix|change|flag|workaround|setting|option)\b[^;.]{{0,30}}?{_BAD}\w*"]
_NEUTRAL = [
    rf"\b(?:works?|worked|working|fine|ok) (?:fine |ok |again )?(?:without|w/o|with no) (?:the |a |an |any )?"
    rf"(?!{_BAD}\b)(?![\w-]+ing\b)[\w-]+",
]
# "Helped a lot", "huge improvement", "much better": more than partial.
_STRONG_WIN = [
    r"\b(?:helped|helps|improved|improves) (?:a lot|massively|significantly|dramatically|hugely|enormously|greatly)\b|"
    r"\b(?:huge|big|massive|major|dramatic|significant) (?:improvement|win|speed-?up|gain|help)\b|"
    r"\b(?:much|way|far) better\b",
]
_SETTING_RATE = "".join(f"(?<!{w} )" for w in ("learning", "lr", "sample", "sampling", "frame", "bit", "clock", "refresh",
                                                 "baud", "dropout", "warmup"))
_PARTIAL = [
    # "✅ FLASHINFER but 4.4 TPS (slow kernel)", "works, but slow": it ran, too slowly
    r"\bbut (?:\w+ |[\d.,~]+ ){0,4}?(?:\(?(?:slow|laggy|sluggish)\b)",
    r"\bparcial\w*\b|\bpartial(?:ly)?\b|\bpartly\b|\bsomewhat\b|\bmostly\b|\bin part\b",
    # "conv2d runs, 3x slower than the CPU": it works now, at a price
    r"\b(?:runs|ran|works|worked|passes|passed|completes|completed|finishes|finished|starts|started)\b[^.;!?]{0,30}"
    r"\b\d+(?:\.\d+)?\s*[x×]\s+slower\b",
    r"\b(?:helps?|helped|improves?|improved|mitigat\w+|fewer|less (?:often|frequent\w*)|rarer|delays?|delayed)\b",
    # "Minimal improvement", "a slight speed-up": better, by a little
    r"\b(?:minimal|minor|slight|small|modest) (?:improvement|gain|speed-?up)\b",
    # (a rate of failures, not a setting's: "reduced the learning rate by half" is what was done)
    rf"\breduc\w+ (?:the |its )?(?:\w+ ){{0,2}}(?:{_SETTING_RATE}rate|frequency|{_BAD})\b|"
    rf"\b(?:{_SETTING_RATE}rate|frequency) (?:\w+ ){{0,2}}(?:reduced|lower|dropped)",
    r"\b(?:dropped|fell|went down|decreased|down) (?:\w+ ){0,3}(?:from [\d.,]+ ?%? )?to [\d.,]*[1-9]",
    r"\bonly (?:some|sometimes|partially|in part|for)\b|\bsometimes\b|\bintermittent\w*\b|\bbut not\b|\bworkaround\b",
    r"⚠️?|🟡|🟠|½",
    r"\bcloser\b|\bnot the bulk\b|\bgrows\b|\bgrowing\b|\bcreeps? up\b|\bbetter\b|\b[\d,]+ (?:steps?|iterations?|minutes?|hours?|requests?|epochs?) later\b|\blater than before\b",
    r"\b(?:recovered|back|up|down|improved) to \d{1,2}(?:\.\d+)? ?%",
    r"\btoo (?:slow|expensive|costly|hacky|big|much|long)\b|\bugly\b|\bhacky\b|\bnot ideal\b|"
    r"\bnot (?:really )?usable\b|\bat (?:a|the) cost\b|\bnot a (?:real )?fix\b|\bband-?aid\b",
]
_WIN = [
    # "I could only make it work by setting X", "the GPU came back at 4W", "11.37x speedups": it went through
    r"\bcould (?:only |finally |eventually )?(?:make|get) (?:it|this|that|things) (?:to )?work\b|"
    r"\b(?:gpus?|devices?|cards?|nodes?|servers?|display|screen|machines?|hosts?) (?:\w+ )?(?:came|comes) back\b|"
    r"\b\d+(?:\.\d+)?\s?[x×] (?:\w+ )?speed-?ups?\b",
    # "I managed to resolve it", "was able to get it working": the fix came
    r"\b(?<!not )(?<!n't )(?:managed|was able|were able|got it|finally able) to (?:\w+ )?(?:fix|solve|resolve|get rid of|"
    r"work around|get (?:it|this|that|everything) (?:to )?(?:work|run)|make (?:it|this|that) work)\w*",
    # "no recurrence since", "it has not recurred": the failure stayed away after the change
    r"\bno (?:recurrence|repeat|reoccurrence)s?\b|\b(?:has|have|had)(?:n't| not) (?:recurred|reoccurred|come back|returned)\b",
    # "I was back to having a fully functional system"
    r"(?<!\bnot )(?<!\bnever )\b(?:back to (?:having )?(?:a |an )?(?:fully |perfectly )?(?:working|functional|usable|normal)|"
    r"fully functional)\b",
    r"\b(?:works?|worked|working|fixed|(?<!\bboth )(?<!\bthe )(?<!\bthese )(?<!\bthose )(?<!\btwo )(?<!\bour )"
    # ("libcublasLt.so.12 resolves to the 12.3.2.9 copy": a name resolved to a target, no verdict)
    r"(?<!\bsome )(?<!\bother )(?<!\bmany )(?<!\bwith )fixes|fix(?:ed)? it|solved|solves|resolved(?! to\b)|resolves(?! to\b)|succeed(?:s|ed)?|success(?:ful(?:ly)?)?"
    # "multi-signal success detection", "success banner": the word names a thing, it is no verdict
    r"(?!\s+(?:detection|signals?|criteria|metrics?|banners?|rates?|paths?|cases?|messages?|pages?|handlers?|"
    r"callbacks?|checks?|indicators?|states?|flags?|codes?))|"
    r"(?:went|ran|got|goes|runs) (?:straight |right |all the way )through|pass(?:es|ed)|passing|green|stable|clean(?:ly)?|completes?|completed|finish(?:es|ed)|converges?|converged|confirmed|"
    r"\bcompiles\b|\bback to (?:~?[\d.]+|normal|baseline)|\bexits\b(?! (?:with|non-?zero|code|abnormally|early))|(?:is|are|looks?|works?|seems?) fine|builds (?:in|fine|cleanly|now)|root cause found|explains it|was the (?:missing|culprit|cause|problem|issue|bug)|found (?:\d+|that|a|an)\b|confirms|back to (?:the )?(?:pre|previous|normal|baseline|expected|original)\w*|exits normally|"
    r"funciona|resuelto|arreglado|soluciona|resuelve|arregla|behaves|located(?: it)?|found (?:it|the (?:bug|cause|culprit|kernel|leak|race|layer|op))|identified|pinpointed|narrowed (?:it )?down|isolated(?! (?:\w+ )?(?:env\w*|build|venv|containers?|process\w*|network|machines?|nodes?|cores?|mode|test|instance|sandbox|copy|runs?|layers?)\b)|that was it|this was it|bingo|correct|matches (?:the )?(?:reference|expected|baseline|eager|cpu|golden|ground[- ]truth|upstream|fp32|bf16 reference)\w*|(?:now|outputs?|results?|logits|numbers) (?:\w+ )?match(?:es)?(?! (?:it|them|against))|matches (?:\w+ ){0,2}within|(?:^|(?<=[.:;] ))matches\b|identical (?:outputs?|results?|logits|numbers)|recovered|goes through|went through|(?:runs?|ran) through)\b",
    r"✅|✔️?|☑️?|🎉|🟢|\bok\b|\bokay\b|\bgood\b|(?-i:\bPASS(?:ED)?\b)",
    # "~13s off page generation", "saves 20 s", "391x faster": a measured gain
    r"~?\d+(?:[.,]\d+)?\s?(?:ms|s|sec(?:onds?)?|min(?:utes?)?|h|hours?|%|x|×)\s+(?:off|faster|quicker|shorter|saved|less time)\b|"
    r"\bsav(?:es|ed|ing)\s+~?\d|"
    # "it is much faster now", "way quicker": a slowness gone, said without a number
    r"(?<!\bnot )(?<!n't )(?<!\bno )\b(?:much|way|a lot|significantly|dramatically|far) (?:faster|quicker)\b",
    r"\b(?:doing|working|works|worked|running|runs) (?:great|perfectly|fine|well)\b",
    # "This time the head learned", "this time it converged": the retry worked
    r"\bthis time (?:it|the \w+|we) (?:learned|learnt|worked|trained|converged|passed|held|went through)\b",
    # "all seemed to pass", "7 / 7 pass", "the tests pass now" (a bare "pass" is also "pass the flag")
    r"(?:\b(?:all|both|tests?|they|jobs?|checks?|runs?|cases?)|(?<![\d.])(?P<n>\d+)\s*/\s*(?P=n))\s+(?:(?:now|seemed?|seems?|appear(?:s|ed)?)\s+"
    r"(?:to\s+)?)?pass\b(?!\s+(?:the|a|an|it|them|in|through)\b)|\bpass now\b",
]
_FAIL = [
    # "same error", "Same blank icons.", "same loss curve": one word may sit between
    r"\bfall[oó]\b|\bsigue\b|\bno funciona\b|\bsame(?= [\d~]| (?:[\w-]+ )?(?:error|crash|result|hang|failure|problem|issue|fault|behaviou?r|thing|assert\w*|oom|nan|trace|"
    r"symptom|stack|message|place|step|kernel|address|spot|numbers?|output|bug|problem|icons?|glyphs?|screen|"
    r"picture|pattern|outcome|values?|loss|curve|speed|throughput|timings?|toast|response|rejection|signature)s?\b|\s*$|[.,;:)])|\bsame as before\b",
    # "crashes the same way" (but "set DATA_PATH the same way" on the cluster is how it was configured)
    r"\b(?:fail\w*|crash\w*|hang\w*|hung|break\w*|broke|die[sd]?|dying|errors? out|behave[sd]?|stuck|froze|freezes)"
    r"\s+(?:\w+\s+)?(?:in\s+)?(?:exactly\s+)?the\s+same\s+way\b",
    # "when I started it again, it was doing great": the retry is no persistence
    # ("I still want to find out why", "we still need to measure": an intention, not a failure that lasted)
    r"\b(?:still(?! (?:want|need|have to|plan|intend|mean|hope|wish|wonder|to do|todo)\b)|(?<!\bit )(?<!\bthem )again|"
    r"unchanged|persists?|persisted|remains?|continues?|identical error|no dice)\b",
    # "the devices stayed missing", "it kept crashing": a bad state that lasted through the change
    r"\b(?:stayed|stays|kept|keeps)\s+(?:missing|broken|dead|stuck|hung|hanging|crashing|failing|segfaulting|erroring|"
    r"timing out|throwing|gone|black|blank|oom(?:ing)?)\b",
    rf"\b{_BAD}\b",
    # "modprobe: FATAL: Module nvidia not found": a tool's fatal error, or a thing it could not find, quoted in a sentence
    r"\bfatal\b|\b(?:modules?|files?|commands?|librar(?:y|ies)|devices?|symbols?|packages?|drivers?|gpus?)\s+(?:[\w.'-]+\s+)?"
    r"not found\b|"
    # "→ UNSOLVED", "still unresolved": the problem the entry names is open
    r"\b(?:unsolved|unresolved|unfixed)\b|"
    # "Not allowed in `nccl-scc`", "Permission denied", "returned 500": refused by the system or the server
    r"\bnot (?:allowed|permitted)\b|\b(?:permission|access) denied\b|\bforbidden\b|\bblacklist(?:s|ed)?\b|"
    r"\b(?:returned|returns|got|gets|answers?|answered|with) (?:an? |http |status )?5\d\d\b|"
    r"\b(?:not feasible|infeasible|incompatible|not compatible|garbage|gibberish|nonsense|reproduces|reproduced|repros|ignored|no-?op|fails?|failed|failing|broke(?! down and\b)|breaks|broken|regress\w*|worse|slower|slow-?downs?|slow(?:s|ed) (?:\w+ ){0,2}?down|wrong|incorrect|diverg\w+|blew up|blows up|explod\w+|killed|dies|died|refused|refuses|rejected|invalid|unsupported|not supported|falls? back|fell back|404)\b",
    r"\b(?:don'?t|doesn'?t|didn'?t|do not|does not|did not|not|never|nor)\b[^.;!?]{0,80}\beither\b",
    r"❌|✗|✘|⛔|🔴|🚫|💥",
    # "gives back ~10 MB, which is too little to be an applicable solution": not enough to count
    r"\btoo (?:little|small|few|slow) to (?:be|make|matter|help|count)\b|\bnot (?:an? )?(?:applicable|viable|usable) (?:solution|fix|option)\b",
    # "runs successfully but loses ~60% of insertions": data lost is a failure, whatever ran
    r"\b(?:loses|lost|dropping|drops|dropped)\s+(?:~|about |around |over |nearly )?\d+(?:\.\d+)?\s*%\s+of\b",
    # "Wait 14+ hours for a slow init | No recovery", "the PM2 worker ignores it"
    r"\bno recovery\b|\bnever recover(?:ed|s)?\b|\bdid ?n[o']t recover\b|\bignores (?:it|this|that|them|the \w+)\b",
    # "the video was completely absent at boot", "the screen stayed black"
    r"\b(?:video|display|screen|picture|signal|image)\s+(?:was|is|stayed|stays|remained|remains|went|goes)\s+"
    r"(?:completely |totally |still |just |entirely )?(?:absent|missing|black|blank|dead)\b",
]
_UNKNOWN = [
    r"\b(?:inconclusive|unclear|unknown|not sure|unsure|can't tell|cannot tell|undecided|tbd|to be determined|pending|in progress|"
    r"untested|not tested|not yet|waiting|under observation|being monitored|seems|appears to|looks like|probably|likely|couldn'?t tell|could not tell|can'?t say|no data|no result|flaky|mixed|ambiguous|needs? more|unverified|not verified|maybe|possibly|might)\b",
    r"🔄|⏳|❓|🔍|\?\?|\binfo(?:rmational)? only\b",
]

_CUES = [(p, "control") for p in _PURPOSE] + [(p, "fail") for p in _NEGATED_WIN_EXTRA + _NEGATED_WIN] + [(p, "win") for p in _NEGATED_FAIL] + \
        [(p, "control") for p in _CONTROL] + [(p, "neutral") for p in _NEUTRAL] + \
        [(p, "win") for p in _STRONG_WIN] + [(p, "partial") for p in _PARTIAL] + [(p, "win") for p in _WIN] + [(p, "fail") for p in _FAIL] + \
        [(p, "unknown") for p in _UNKNOWN]


@functools.cache
def _compiled() -> list[tuple[re.Pattern, str, frozenset[str] | None]]:
    from dbglog.util import recache  # (~100 cues: compiled once per install, not per command)

    return [(recache.compile(p, re.I), m, recache.derived("openers", p, _openers)) for p, m in _CUES]


@functools.cache
def _all_openers() -> tuple[str, ...]:
    return tuple(sorted({o for _rx, _m, got in _compiled() if got for o in got}))


@functools.cache
def _opener_index() -> tuple[dict[str, tuple[str, ...]], tuple[str, ...], dict[str, tuple[int, ...]], tuple[int, ...]]:
    """The openers by their first two characters (a text holds an opener only where it holds those) and those of one;
    each opener's cues (by place) and the cues of none (always run)."""
    by_pair: dict[str, list[str]] = {}
    for o in _all_openers():
        if len(o) > 1:
            by_pair.setdefault(o[:2], []).append(o)
    cues_of: dict[str, list[int]] = {}
    for i, (_rx, _m, got) in enumerate(_compiled()):
        for o in got or ():
            cues_of.setdefault(o, []).append(i)
    return ({k: tuple(v) for k, v in by_pair.items()}, tuple(o for o in _all_openers() if len(o) == 1),
            {k: tuple(v) for k, v in cues_of.items()}, tuple(i for i, c in enumerate(_compiled()) if c[2] is None))


def _gated(low: str) -> list[tuple[re.Pattern, str, frozenset[str] | None]]:
    """The cues, in order, that may match the ASCII text ``low``: those of no openers, and those with an opener in it
    (the openers looked for are those whose first two characters are there: a tenth of them)."""
    by_pair, singles, cues_of, always = _opener_index()
    present = [o for o in singles if o in low]
    for pair in by_pair.keys() & set(map(operator.add, low, low[1:])):
        present += [o for o in by_pair[pair] if o in low]
    run = set(always)
    for o in present:
        run.update(cues_of[o])
    cues = _compiled()
    return [cues[i] for i in sorted(run)]


def _openers(pattern: str) -> frozenset[str] | None:
    """Literal texts one of which every match of ``pattern`` holds (lower case), or None when none can be read
    from it. A scan skips a cue none of whose texts is in the text: a search of a short text for a few
    words costs a fraction of running ninety large alternations over it (a log of one try per line reads
    every line's outcome)."""
    try:
        from re import _constants as c
        from re import _parser as sp

        got = _seq_openers(list(sp.parse(pattern, re.I)), c)
    except Exception:  # noqa: BLE001 - another Python's parser: scan as always
        return None
    if not got or any(not ch.isascii() and _folds_to_ascii(ch) for t in got for ch in t):
        return None  # ("ſ" matches "s" under re.I: a search for "ſ" in ASCII text would miss what the cue finds)
    return frozenset(got)


@functools.cache
def _folds_to_ascii(ch: str) -> bool:
    import string

    return any(re.fullmatch(re.escape(ch), a, re.I) for a in string.ascii_letters + string.digits)


def _seq_openers(items, c) -> set[str] | None:
    """Texts one of which any match of the sequence ``items`` holds: of its required pieces that have them (a literal
    run, or a group, branch or repeat whose every way through has one), the most telling (the longest shortest
    text: "in " lets most lines through, "no longer" few)."""
    found: list[set[str]] = []
    k = 0
    while k < len(items):
        op, av = items[k]
        if op is c.LITERAL:
            run = ""
            while k < len(items) and items[k][0] is c.LITERAL:
                run += chr(items[k][1])
                k += 1
            found.append({run.lower()})
            continue
        got = None
        if op is c.SUBPATTERN:
            got = _seq_openers(list(av[-1]), c)
        elif op is c.BRANCH:
            ways = [_seq_openers(list(b), c) for b in av[1]]
            got = set().union(*ways) if all(ways) else None
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT) and av[0] >= 1:
            got = _seq_openers(list(av[2]), c)
        if got:
            found.append(got)
        k += 1  # (zero width, optional, or a class: no text of its own to ask for; the next piece may have one)
    return max(found, key=lambda t: (min(map(len, t)), -len(t))) if found else None


def without_denied_wins(text: str) -> tuple[str, bool]:
    """``text`` with its denied successes blanked ("neither of them worked", "didn't help"), and whether it held one:
    a success word inside a denial is the denial's, not a success of its own."""
    from dbglog.util import recache

    out, found = text, False
    for p in _NEGATED_WIN_EXTRA + _NEGATED_WIN:
        out, n = recache.compile(p, re.I).subn(" ", out)
        found = found or n > 0
    return out, found


# Single words that, alone or first, are a verdict (labels, table cells, heading tags).
_VERDICT_WORDS = {
    "worked": "worked", "works": "worked", "work": "worked", "working": "worked", "fixed": "worked",
    "fix": "worked", "success": "worked", "succeeded": "worked", "successful": "worked", "solved": "worked",
    "resolved": "worked", "pass": "worked", "passed": "worked", "passes": "worked", "yes": "worked",
    "confirmed": "worked", "right": "worked", "correct": "worked", "done": "worked", "good": "worked",
    "ok": "worked", "green": "worked", "solution": "worked",
    "failed": "failed", "fail": "failed", "fails": "failed", "failure": "failed", "no": "failed",
    "wrong": "failed", "rejected": "failed", "disproved": "failed", "ruled-out": "failed",
    "ruled out": "failed", "dead end": "failed", "dead-end": "failed", "broken": "failed", "nope": "failed",
    "didn't work": "failed", "did not work": "failed", "not fixed": "failed", "abandoned": "failed",
    "reverted": "failed", "regression": "failed", "worse": "failed", "no effect": "failed",
    "no change": "failed", "no improvement": "failed", "didn't help": "failed", "did not help": "failed",
    "red herring": "failed", "not the cause": "failed",
    # experiment logs: "Verdict: KEEP", "(KEPT)", "(DISCARDED — OOM)", "Verdict: NEUTRAL" (no effect), "REVERT"
    "fixed nothing": "failed", "fixes nothing": "failed", "changed nothing": "failed", "did nothing": "failed",
    "solved nothing": "failed", "helped nothing": "failed",
    "gone": "worked", "keep": "worked", "kept": "worked", "discard": "failed", "discarded": "failed", "revert": "failed",
    "neutral": "failed", "no-op": "failed", "noop": "failed",
    "partial": "partial", "partially": "partial", "partly": "partial", "partial fix": "partial",
    "partially right": "partial", "partially works": "partial", "partially fixed": "partial",
    "mitigated": "partial", "workaround": "partial", "improved": "partial", "better": "partial",
    "helps": "partial", "helped": "partial", "mixed": "partial",
    "inconclusive": "inconclusive", "unclear": "inconclusive", "unknown": "inconclusive",
    "flaky": "inconclusive", "pending": "untested", "untested": "untested", "todo": "untested",
    "not tested": "untested", "not yet tested": "untested", "in progress": "untested", "planned": "untested",
    "wip": "untested", "tbd": "untested", "skipped": "untested", "not tried": "untested",
    "not tried yet": "untested", "not yet tried": "untested", "not run": "untested", "not run yet": "untested",
    "queued": "untested", "running": "untested", "next": "untested", "next step": "untested",
    "unsolved": "failed", "unresolved": "failed", "not solved": "failed", "not resolved": "failed",
    "partially solved": "partial", "partially resolved": "partial", "partially mitigated": "partial", "proposed": "untested", "idea": "untested",
    "parcial": "partial", "falló": "failed", "fallo": "failed", "funciona": "worked",
    "not yet run": "untested", "not tested yet": "untested", "not done": "untested", "likely": "untested", "unlikely": "untested",
    "needs investigation": "untested", "to investigate": "untested", "not yet proven": "untested",
    "unproven": "untested", "to verify": "untested", "to be tested": "untested", "pas encore testé": "untested",
    "non testé": "untested", "pas d'effet": "failed", "aucun effet": "failed", "sans effet": "failed",
    "no tested": "untested", "sin probar": "untested", "not possible": "failed", "impossible": "failed", "not yet done": "untested", "blocked": "untested", "complete": "worked",
    "completed": "worked", "so yes": "worked", "yes it works": "worked",
    "info only": "inconclusive", "informational": "inconclusive", "diagnostic": "inconclusive",
    "investigating": "inconclusive", "under investigation": "inconclusive", "still investigating": "inconclusive",
}
# The verdict marks every reader takes alike (a doc's cells and lines use them too: docreader.vocab.VERDICT_MARKS).
MARKS = {"✅": "worked", "✔": "worked", "✔️": "worked", "☑️": "worked", "🟢": "worked", "🎉": "worked",
         "✓": "worked", "☑": "worked", "✕": "failed", "✖": "failed",
         "❌": "failed", "✗": "failed", "✘": "failed", "⛔": "failed", "🔴": "failed",
         "⚠️": "partial", "⚠": "partial", "🟡": "partial", "⏳": "untested"}
EMOJI = {"💡": "worked", **MARKS, "🚫": "failed", "🟠": "partial",
         "🔄": "inconclusive", "❓": "inconclusive", "🔍": "inconclusive", "🔲": "untested"}

# Names of a setting that hold an outcome word: "mixed precision", "a clean install" (what was done, not how it went).
_TERMS = Lazy(r"\bmixed[- ]precision\b|\bclean (?:re)?(?:install(?:ation)?|build|checkout|clone|env(?:ironment)?|venv|"
              r"boot|slate|copy|image|container)s?\b", re.I)
_CLAUSE = Lazy(r"\s*(?:;|:(?!\s*\d)|\s[—–-]\s|,\s|(?<=[.!?])\s)\s*")
_CONTRAST = Lazy(r"\b(?:but|however|though|although|yet|except|whereas|while|still)\b", re.I)
_MD = Lazy(r"[*_`~>#]|\[(?:[ xX])\]")
_SENTENCE_END = Lazy(r"(?<=[.!;])\s+(?=[A-Z0-9])|\n\s*\n")


def plain_text(text: str) -> str:
    text = _MD.sub(" ", text or "")
    return " ".join(text.replace("’", "'").split())


def verdict_word(text: str) -> str | None:
    """The outcome a short label states outright ("FAILED", "✅ Fixed", "Partially right"), else None."""
    t = _TERMS.sub("amp", plain_text(text).strip(" .:;,!-—–()[]").lower())
    if not t:
        return None
    for e, o in EMOJI.items():
        if t.startswith(e):
            others = {v for k, v in EMOJI.items() if k in t and v != o}
            if others & {"worked", "failed"}:
                return "partial"
            if verdict_word(t[len(e):]) == "untested" or any(
                    verdict_word(tag) == "untested" or re.match(r"(?:pas encore test|not yet (?:tested|tried|run|verified)|noch nicht getestet|todav[ií]a no probad)", tag)
                    for tag in re.findall(r"\(([^()]{2,60})(?:\)|$)", t[len(e):])):
                # "| `--max-num-batched-tokens 16384` | ✅ **untested** |": usable, not run;
                # "❌ Revert commit (pas encore testé, à faire maintenant)": its tag says not run
                return "untested"
            # "✅ Tried bf16 autocast off (still crashes)": the tick says done, the words say failed.
            c = _scan(t[len(e):])
            if o == "worked" and _BUILT.match(t[len(e):]) and not (c["win"] or c["fail"] or c["partial"]):
                # "Status: ✅ Implemented in `attention.py`": the tick says the change is in, not that it helped
                return "untested"

            words = [k for k in ("win", "fail", "partial") if c[k]]
            if len(words) == 1 and {"win": "worked", "fail": "failed", "partial": "partial"}[words[0]] != o \
                    and not (o == "partial" and words[0] == "win"):
                # "⚠️ works, -0.9%": the warning is the author's hedge on words that say it runs
                return {"win": "worked", "fail": "failed", "partial": "partial"}[words[0]]
            return o
    if t in _VERDICT_WORDS:
        return _VERDICT_WORDS[t]
    m = re.match(r"^([a-z'-]+(?: [a-z'-]+){0,2})\s*(?:[:.;,!—–(\[]|-\s)", t)
    if m:
        # "FAILED — same error", "Fixed (200 runs clean)", "Partially right: ...": a verdict first.
        words = m.group(1).split()
        shouted = plain_text(text).lstrip(" .:;,!-—–()[]").startswith("KEEP")
        for lead in (m.group(1), " ".join(words[:2]), words[0]):
            if lead in _VERDICT_WORDS and lead not in ("no", "good", "fix", "solution", "done", "right", "work") \
                    and (lead != "keep" or shouted):
                v = _VERDICT_WORDS[lead]
                after = words[len(lead.split()):]
                if v == "worked" and after and after[0] in _QUALIFIERS:
                    return None  # "Works without header. Fails with it.": a condition follows, read the sentence
                if v == "worked" and _RULED_OUT.search(t[m.end():]):
                    return "failed"  # "Fixed — not the OOM cause": it fixed something else
                return v
    return None


# "Implemented in `x.py`", "Applied", "Merged (#412)": a status saying the change is in; not "Added the GPU
# name to the cache dir" (that names the change itself, a tried-list's item).
_BUILT = Lazy(r"^\W*(?:implemented|added|applied|deployed|merged|committed|in place)\s*(?:$|[.(]|(?:in|into|at|on) \S)",
               re.I)
# "Works without ...", "works only for ...": the word after a success verdict makes it conditional.
_QUALIFIERS = {"without", "only", "except", "when", "if", "unless", "for", "on", "with", "in", "under"}
_RULED_OUT = Lazy(_NOT_THE_CAUSE + r"|\bred herring\b|\birrelevant\b", re.I)


def _scan(text: str, whole: str | None = None, gated: bool = True) -> dict[str, int]:
    """Count the cues of each meaning in ``text``; a matched span is consumed (negations first). ``gated``: skip a
    cue none of whose texts (``_openers``) is there (the same counts, tested against ``gated=False``)."""
    low = text.lower()
    taken = bytearray(len(low))  # (1 where a match consumed the text: found and marked at C speed)
    counts = {"win": 0, "fail": 0, "partial": 0, "unknown": 0, "neutral": 0, "control": 0}
    neutral = None  # (asked once, when the first neutral cue comes up)
    # (in other text, case folding may match what a lower-case search would not: every cue is run)
    for rx, meaning, _openers in _gated(low) if gated and low.isascii() else _compiled():
        if meaning == "neutral":
            if neutral is None:
                neutral = _NEUTRAL_WHEN.search(whole or low) is not None
            if not neutral:
                continue
        for m in rx.finditer(low):
            s, e = m.span()
            if e <= s or taken.find(1, s, e) >= 0:
                continue
            taken[s:e] = b"\x01" * (e - s)
            counts[meaning] += 1
    return counts


_FENCED = Lazy(r"^\s*(```|~~~).*?^\s*\1[^\n]*$", re.M | re.S)
_QUOTED = Lazy(r"`[^`]*`|\"[^\"]{1,200}\"|“[^”]{1,200}”")


# "3/20 hangs (was 14/20)", "2 hangs in 200 runs (was 30)": a count of failures against the one before.
_COUNT_VS = Lazy(rf"(?P<a>\d[\d,]*)(?:\s*/\s*\d[\d,]*)?\s+(?:[a-z]+\s+){{0,2}}?{_BAD}\b[^()]{{0,40}}?"
                       r"\((?:was|vs\.?|down from|from|before:?)\s*(?P<b>\d[\d,]*)", re.I)
# "throughput 410 → 980 tok/s", "TTFT 1.8 s → 0.4 s", "p99 latency 220 ms → 380 ms": a measured change. The
# metric's name or unit says which way is better; a small change is no verdict (noise).
_CHANGE = Lazy(r"(?:(?P<name>[a-z][\w /%@.-]{0,40}?)[\s:=]+)?(?P<a>\d[\d,]*(?:\.\d+)?)\s*(?P<u1>[a-z%/]*)\s*"
                     r"(?:→|->|=>)\s*(?P<b>\d[\d,]*(?:\.\d+)?)\s*(?P<u2>[a-z%/]*)", re.I)
# "latency went from 91ms/token to 81ms/token": the same change in words
_FROM_TO = Lazy(r"(?:(?P<name>[a-z][\w /%@.-]{0,40}?)\s+)?\bfrom\s+(?P<a>\d[\d,]*(?:\.\d+)?)\s*(?P<u1>[a-z%/]*)\s+"
                r"to\s+(?P<b>\d[\d,]*(?:\.\d+)?)\s*(?P<u2>[a-z%/]*)", re.I)
_HIGHER = Lazy(r"tok/s|tokens?/s|throughput|tflops|mfu|accuracy|\bacc\b|\bf1\b|\bauc\b|samples?/s|it/s|"
                     r"\bqps\b|req/s|gb/s|bandwidth|score|speed-?up|hit rate|utili[sz]ation|pass rate|recall|precision", re.I)
_LOWER = Lazy(r"latency|ttft|tpot|\bp\d{2}\b|loss|step time|\btime\b|duration|\bms\b|memory|\bpeak\b|\bgb\b|"
                    r"\bmib\b|\bgib\b|error rate|perplexity|\bppl\b|\bwer\b|\bmae\b|\bmse\b|vram|rss|startup|"
                    r"\bsize\b|padding|\bs\b|\bsec", re.I)


# A change of value that follows the verb that made it ("Reduced GPU memory utilization: 0.35 → 0.80", "set workers
# 8 -> 2") says what was done; a measured change stands on its own or after the verdict's colon.
_SET_VERB = Lazy(r"^\W*(?:(?:i|we|then|also|and|first)\s+)?(?:reduc|increas|lower|rais|decreas|chang|bump|tun|adjust|"
                 r"switch|limit|capp?|shrank|shrink|grew|grow|doubl|halv|set|cut|drop|mov)\w*\b[^;,.→>]*$", re.I)

# "~10% improvement in requests per second", "a 100% increase in throughput": a gain by its size.
_PCT_GAIN = Lazy(r"(?P<n>\d+(?:\.\d+)?)\s?% (?:(?:[a-z-]+ )?(?:improvement|gain|speed-?up|boost)\b|(?:increase|more)\b"
                       r"(?= (?:in |of )?(?:\w+ ){0,3}(?:throughput|requests|speed|tok|qps|bandwidth|accuracy|score)))", re.I)


def _measured(text: str) -> str | None:
    """The verdict of numbers alone, or None: fewer failures than before, or a metric moved the right way."""
    g = _PCT_GAIN.search(text)
    if g:
        n = float(g.group("n"))
        return "worked" if n >= 30 else "partial" if n >= 5 else None
    m = _COUNT_VS.search(text)
    if m:
        a, b = int(m.group("a").replace(",", "")), int(m.group("b").replace(",", ""))
        return "worked" if a == 0 < b else "partial" if a < b else "failed"
    verdicts = set()
    for m in [*_CHANGE.finditer(text), *_FROM_TO.finditer(text)]:
        if _SET_VERB.search(text[:m.start("a")]):
            continue  # "Reduced batch size: 8 → 4": the knob that was turned, not what it measured
        a, b = float(m.group("a").replace(",", "")), float(m.group("b").replace(",", ""))
        where = f"{m.group('name') or ''} {m.group('u1')} {m.group('u2')}"
        up = bool(_HIGHER.search(where))
        if not a or (not up and not _LOWER.search(where)):
            continue
        change = (b - a) / a * (1 if up else -1)
        if change >= 0.10:
            verdicts.add("worked")
        elif change <= -0.05:
            verdicts.add("failed")
    return verdicts.pop() if len(verdicts) == 1 else ("partial" if verdicts else None)


def classify(text: str) -> str:
    """The outcome a result sentence states: worked | failed | partial | inconclusive."""
    # Quoted error text ("driver initialization failed", `--fail-fast`) is what was seen, not a verdict.
    # So are logs pasted in a fence ("heartbeat ok", "Deactivated successfully").
    text = after_the_problem(_QUOTED.sub(" ", _FENCED.sub(" ", text or "")))
    clean = re.sub(r"^(?:result|results|outcome|observed|observation|effect|verdict)s?\s*[:—–-]\s*", "", plain_text(text), flags=re.I)
    clean = _TERMS.sub("amp", clean)  # "mixed precision" names a setting, it says nothing of the result
    clean = re.sub(r"^\d{1,3}[.)]\s+", "", clean)  # "2. I blamed the upgrade. ...": the entry's number is no sentence
    if not clean:
        return "inconclusive"
    word = verdict_word(clean)
    if word is not None:
        return word if word != "untested" else "inconclusive"
    # The verdict is nearly always in the first sentence or two; later text is detail (logs, numbers).
    parts = [p for p in _SENTENCE_END.split(clean) if p.strip()]
    if len(parts) > 1 and len(parts[-1].split()) <= 3:
        last = verdict_word(parts[-1])  # "... 240 ms. Fixed." / "... Parcial."
        if last is not None and last != "untested":
            return last
    head = " ".join(parts[:2])[:400]
    # The first clause usually carries the verdict ("Hangs at 0%; the kernel alone finishes"),
    # unless the sentence turns on a contrast ("Works, but 20% slower"): then weigh everything.
    counted = _COUNT_VS.search(head) and _measured(head)
    if counted:
        return counted  # "3/20 hangs (was 14/20)": fewer, not none
    first, _, rest = _CLAUSE.split(head, maxsplit=1)[0], None, head
    c1 = _scan(first, whole=head)  # "Works without header. Fails with it.": the clause read in its sentence
    if c1["unknown"] and not c1["partial"]:
        return "inconclusive"  # "Couldn't tell, the node was drained", "Seems to work, needs more runs"
    if not _CONTRAST.search(head):
        meanings = [k for k in ("win", "fail", "partial") if c1[k]]
        if len(meanings) == 1:
            return {"win": "worked", "fail": "failed", "partial": "partial"}[meanings[0]]
    c = c1 if first == rest else _scan(rest)  # (one clause: the same text, the same sentence around it)
    if c["win"] and c["fail"] and not c["partial"] and only_the_step_went_through(rest):
        return "failed"
    if c["partial"] or (c["win"] and c["fail"]):
        if c["partial"] and not c["fail"] and c["win"] > c["partial"]:
            return "worked"
        return "partial"
    if c["win"]:
        return "worked"
    if c["fail"]:
        return "failed"
    return _measured(head) or "inconclusive"


# A problem, then the fix it got: "OOM at startup -> fixed by lowering the batch", "**Device Mismatch** → Fixed with
# placement checks", "Segfault on load: resolved by pinning numpy"
_PROBLEM_FIXED = Lazy(r"(?:→|->|=>|:)\s*(?=(?:(?:was|got|is|now|then|finally)\s+)?(?:fixed|resolved|solved|cured)\b"
                      r"(?:\s+(?:it\s+)?(?:by|with|via|using|after|through)\b)(?!\s+(?:nothing|no\b|none)))", re.I)


def after_the_problem(text: str) -> str:
    """The words after a problem's arrow or colon when a fix follows it: the failure words before it name the
    problem, they are not how the fix went."""
    m = _PROBLEM_FIXED.search(text)
    return text[m.end():] if m else text


# A step that went through ("Successfully downgraded from ROCm 7", "installed fine", "it compiles now"): the change was
# made, which says nothing yet of the bug it was made for
_STEP_DONE = Lazy(r"\b(?:successfully|correctly|properly|cleanly)\s+(?:\w+\s+)?(?:installed|built|compiled|downgraded|"
                  r"upgraded|updated|loaded|reinstalled|rebuilt|applied|deployed|created|flashed|patched)\b|"
                  r"\b(?:installed|built|compiled|downgraded|upgraded|updated|loaded|reinstalled|rebuilt|applied|flashed|"
                  r"patched)\s+(?:\w+\s+){0,3}?(?:successfully|fine|ok|okay|cleanly|without (?:any )?(?:errors?|issues?|"
                  r"problems?))\b|\b(?:install(?:ation)?|build|compil\w+|download|upgrade|downgrade|update)\s+"
                  r"(?:succeeded|succeeds|completed|went through|was successful|is successful|worked)\b|"
                  r"\b(?:it|this|that) (?:now )?(?:compiles|builds|installs)\b|\bcompiles now\b", re.I)
# ... and the bug still there after it ("but still has the same hang", "the crash persists")
_LASTED = Lazy(r"\b(?:still|same|persist\w*|continu\w*|remain\w*|unchanged)\b", re.I)


def only_the_step_went_through(text: str) -> bool:
    """ "Successfully downgraded from ROCm 7, but still has the same hang": the only success said is that the change
    was made, and the failure lasted -- a failed try, not a partial one (a fix of one symptom beside another that
    lasted, "fixes the crash but still hangs", stays partial)."""
    if not (_STEP_DONE.search(text) and _LASTED.search(text)):
        return False
    c = _scan(_STEP_DONE.sub(" ", text))
    return not c["win"] and not c["partial"] and c["fail"] > 0


def combine(r: str, c: str) -> str | None:
    """Outcome from a result's verdict and its conclusion's: the author's reading of a result
    ("found it", "delays it, does not remove it") refines it. None when neither says."""
    if r == "inconclusive" and c == "inconclusive":
        return None
    if r == "inconclusive":
        return c
    if c == "inconclusive" or c == r:
        return r
    if "partial" in (r, c):
        return "partial"
    return "worked" if c == "worked" else r


def infer(result: str, explicit: str = "", conclusion: str = "") -> str:
    """An attempt's outcome: an explicit label wins; else the result, refined by the conclusion.

    ``inconclusive`` when the text does not say; ``untested`` only when there is no text at all.
    """
    if explicit and explicit.strip():
        w = verdict_word(explicit)
        if w is not None:
            return w
        if explicit.strip().lower() in OUTCOMES:
            return explicit.strip().lower()
        guess = classify(explicit)
        if guess != "inconclusive":
            return guess
    r = classify(result) if result and result.strip() else "inconclusive"
    c = classify(conclusion) if conclusion and conclusion.strip() else "inconclusive"
    out = combine(r, c)
    if out is not None:
        return out
    return "inconclusive" if (result or "").strip() or (conclusion or "").strip() else "untested"
