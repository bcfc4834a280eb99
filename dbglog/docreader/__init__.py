"""Reading debug docs written by people: any markdown in, investigations out, no line lost.

Real debug write-ups come in every shape: the DEBUG.md protocol (``### Attempt N`` with
``**Hypothesis:**`` fields), postmortems (Summary / Timeline / Root cause / Action items),
"What we tried" sections whose attempts are sub-headings (``### Theory 2: ... (WRONG)``),
numbered list items, bullets ("Tried X → still hangs") or table rows (Approach | Result |
Status), exported issue threads, and notes with no recognisable structure at all. This module
reads all of them with one model:

1. **Outline.** markdown-it-py (the parser ``mirror.py`` uses) gives the block structure with
   line maps; headings (ATX and setext) make a tree of sections, each with its own blocks
   (paragraphs, lists with their items, tables with their rows, fences, HTML) and children.
   Lines no token covers (link reference definitions) become raw blocks: nothing falls out.
2. **Roles.** Each section heading is classified by its words: an attempt ("Attempt 3", "Fix
   #2", "Theory 1", "Phase 2 (dead end)"; any sub-heading of a "What we tried" container), a
   container of attempts, a next-steps list ("Next steps", "TODO", "Action items", "Open
   questions"), a key-differences table, a header field (symptom, environment, root cause,
   related files, status) or plain text. Inside a container, list items and table rows are
   attempts too; anywhere, a list item that starts "Tried ..." or a paragraph that starts
   "**Attempt 3 (FAILED):**" is one.
3. **Investigations.** A document is one investigation (one bug) however many sections it
   has; it is several only when it plainly holds several bugs: two or more sections, none
   inside another, each with its own ``Status:``/``Symptom:`` fields, or sibling sections whose
   attempt numbering starts over. Text outside every bug (a preamble, the team's protocol, a
   template) is kept with the first.
4. **Keep everything.** What is not structure is kept verbatim, in order, as free sections
   under its own headings. Then the result is *checked*: it is rendered in the canonical
   format and every non-blank source line must be found in it (compared the way
   ``shared/tools/import-report`` compares: markdown decoration, a leading ``Label:``, case and
   spacing aside). A structured unit that lost a line (a table whose rows became attempts, a
   fixed-width cell that wrapped in a middle column, an italic label) is kept again verbatim
   as "<heading> (as written)"; a heading whose words were only renamed ("What we tried" read
   as the attempts) is listed in a "Source headings" section that says where its content
   went. Import is lossless by verification, not by hope.

Outcomes come from an explicit label or a tag in the heading ("(WRONG)", "✅", "— FAILED"),
else from the result text (``outcome.infer``), else from the container's words ("What didn't
work"); when nothing says, the outcome is ``inconclusive``.

The parts: ``outline`` (tokens → section tree), ``vocab`` (the words: headings, labels, tags),
``reader`` (roles → investigations, free sections, verification), ``narrative`` (attempts told as
sentences in paragraphs: "I first tried X. This made no difference."), ``text`` (field values,
titles, steps, tables), ``yardstick`` (is a source line kept?).

May import: ``dbglog.kb``'s values and readers (``model``, ``outcome``, ``synonyms``, ``mirror``) and
``dbglog.util``; never the services above them (``kb.records``, ``kb.importer``, which call this package).
"""

from dbglog.docreader.reader import Parsed, Skipped, read_document
from dbglog.docreader.yardstick import _probe, counts, kept_text, norm

__all__ = ["Parsed", "Skipped", "_probe", "counts", "kept_text", "norm", "read_document"]
