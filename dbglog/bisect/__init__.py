"""Bisection: the pure searches and the engine that drives them (picire's split).

- pure (1): ``algorithms`` (history and toggle searches, Go's bisect style), ``bayes`` (probabilistic
  bisection);
- the engine (3): ``drivers`` (the bisection kinds, registered: status, resume, mark, abort for every
  kind), ``oracle`` (key → verdict: known steps, verdict cache, runs in slots), ``lifecycle``
  (claim, signals → interrupt, release, shielded clean-up, conclude), ``session`` (the session store,
  executor, calibration), ``spec`` (what a user asks, typed);
- thin targets: ``history`` (commits, worktrees), ``toggles`` (toggle sets, copies, in-place edits),
  ``flaky``; toggle ``kinds`` (one registry), ``suspects`` and ``configedit`` (source and config edits),
  ``journal`` (journaled in-place edits, restored after kill -9).

May import: ``dbglog.run`` (a step is a supervised run), ``dbglog.core``, ``dbglog.util`` and ``dbglog.coop``. Never
``dbglog.kb`` (a driver records into the investigation through the ``Records`` it is handed), ``dbglog.cli``
or ``ops``.
"""
