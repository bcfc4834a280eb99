"""Supervised runs: spawning and watching a repro, what its failure looks like, and what to capture.

What lives here, by layer (``tests/test_layers.py`` holds the rule):

- services (3): ``runner`` (spawn, watch, tree kill, classify: one ``RunResult``), ``captures`` (the
  registered capture presets), ``serve`` (server + client repros);
- probes (1): ``advice`` (+ ``advice.toml``: playbook next steps), ``envinfo`` (environment
  snapshot), ``proctree`` (the one process layer: trees, the pid-reuse rule, zombie-aware waits),
  ``preflight``, ``escalate``, ``flightrec``, ``slurm`` (one allocation per step), ``options`` (the typed
  ``RunOptions`` every front door hands a run, and their checks).

Reading failure text (signatures, dump evidence, thread dumps) lives in ``dbglog.diagnose``, one layer
below: ``run`` captures, ``diagnose`` reads. ``run.signatures`` and ``run.evidence`` are shims for the
session that moved them.

May import: ``dbglog.util`` and ``dbglog.core`` (and ``dbglog.diagnose``, below it). Never ``dbglog.kb``
(``ops`` records a run's result), ``dbglog.cli``, ``ops``, the front doors, or ``dbglog.bisect`` (bisection drives runs, not the reverse). Importing this package
imports nothing.
"""
