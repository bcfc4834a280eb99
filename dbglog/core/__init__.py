"""The bottom layer: the values every other folder shares, and their pure readers and format.

What lives here (layer 1 in ``tests/test_layers.py``): ``model`` (the record dataclasses and their
validation: investigation, attempt, difference, next step, free section), ``outcome`` (what a result
sentence says: worked / failed / partial / inconclusive, cues as data), ``synonyms`` (the field's
abbreviations, synonyms and environment variables, as data) and ``markdown`` (the canonical markdown of
an investigation: ``render`` and ``parse``, ``parse(render(x)) == x``; ``ParseError``, ``split_row``).

No I/O beyond reading a string: the knowledge base (``dbglog.kb``: storage, sync, search, import) and the
reader of people's markdown (``dbglog.docreader``) both build on these, so neither imports the other.

May import: ``dbglog.util`` only. Never ``dbglog.kb``, ``dbglog.docreader``, ``dbglog.run``,
``dbglog.bisect`` or anything above. Importing this package imports nothing.
"""
