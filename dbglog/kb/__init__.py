"""The knowledge base: records, their markdown mirror, the index and search, and import.

What lives here, by layer (``tests/test_layers.py`` holds the rule; higher imports lower, never the reverse):

- services (3): ``records`` (every write: one transaction, atomic file writes), ``importer`` (docs in,
  idempotently);
- format and storage (2): ``mirror`` (the canonical markdown with a user's own template; the format
  itself is ``dbglog.core.markdown``), ``store`` (schema, migrations, queries), ``sync`` (``logs/`` ↔
  database), ``merge`` (the git merge driver), ``sections`` (free sections, watched docs), ``search``
  (FTS5 + fuzzy rerank, "was this tried?"), ``present`` (shared row wording);
- (1): ``story`` (an attempt's "what was done", from git only). The records (``model``), ``outcome``,
  ``synonyms`` and the markdown format are in ``dbglog.core``.

May import: ``dbglog.util``, ``dbglog.core`` and ``dbglog.docreader`` (the importer reads people's markdown).
One call goes sideways: opening a workspace (``records.Records``) restores files a killed in-place bisection
left edited (``dbglog.bisect.journal.restore_orphans``), since every command must see the original bytes. Never
``dbglog.cli``, ``ops`` or the front doors. Importing this package imports nothing.
"""
