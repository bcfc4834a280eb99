"""Reading debug docs written by people: any markdown in, investigations out, no line lost.

Real write-ups come in every shape: the DEBUG.md protocol (``### Attempt N`` with ``**Hypothesis:**``
fields), issue threads where a suggestion is answered "yes, it works", command notes whose comments say
``# OK`` / ``# NOK (page fault)``, a case list followed by a result list, lab notebooks, checklists,
notes in Chinese or German. A rule per wording fits the wordings it has seen and breaks the others, so
this package reads by structure first and general cues second:

1. **Units** (``units.py``). markdown-it-py cuts the document into units, each with its source lines and
   its place: heading path, list item (checkbox, depth), table row (the header's cells), thread post
   (author), quote depth, command (with the comment that says how it went), sentence of a paragraph.
   Every non-blank line belongs to a unit.
2. **Certain structure** (``structure.py``): only where shape decides -- the protocol's labelled fields,
   an ``Attempt N`` heading, the header fields (``Status:``, ``Symptom:``), a key-differences table, a list
   under a next-steps heading, template and protocol sections (kept as text, never read for attempts).
3. **Cues** (``cues.py``, words in ``cues/<lang>.toml``: one table per language, data not code): tense,
   person, mood (imperative, modal, question, conditional), outcome words with their negation, the role
   words of the heading path, the checkbox, the table column, the thread role.
4. **Scorer** (``scorer.py``, weights in ``cues/weights.toml``): one linear model from cues to a label --
   action with its result, action, result, proposal, request, plan, boilerplate, context -- with a
   confidence and the features that decided it (``import --explain``).
5. **Linker** (``linker.py``): each action joined to its result wherever it is (same sentence, next
   sentence or item, a later keyed result list, the row's result column, a command's comment, the reply
   of another person to a suggestion); several tries in one sentence are several attempts.
6. **Assembly** (``read.py``): investigations (one per section with its own ``Status:``/``Symptom:``
   fields, else the whole document), attempts with their ``source_lines`` and ``who``, next steps,
   key differences, and every line structure did not take kept verbatim as free sections. Then the result
   is *checked*: rendered in the canonical format, every counted source line must be found in it
   (``yardstick.py``, compared the way ``shared/tools/import-report`` compares); what is not is kept again.

``bench/reader_eval.py`` measures it on labelled real docs with a study/held-out split by source.

May import: ``dbglog.core`` (the record values, outcome words, the canonical format), ``dbglog.util`` and
``dbglog.diagnose`` (the signature catalog reads what a console command printed); never the services above
them (``kb.records``, ``kb.importer``, which call this package).
"""

from dbglog.docreader.read import Parsed, Skipped, read_document
from dbglog.docreader.yardstick import _probe, counts, kept_text, norm

__all__ = ["Parsed", "Skipped", "_probe", "counts", "kept_text", "norm", "read_document"]
