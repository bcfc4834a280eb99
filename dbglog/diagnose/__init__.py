"""Diagnosis: reading what a failing run printed and dumped, and naming the suspect.

``run/`` runs and captures; ``diagnose/`` reads. Everything here turns text (a run's output, a
debugger's dump, a tool's report) into typed facts and a verdict, and never starts the repro:

- ``signatures`` -- the failure catalog and its scanning engine (the one most causal failure name);
- ``evidence`` -- the registry of dump readers (``PARSERS``: kind, markers, parser) and ``extract``;
- ``threads`` -- the one splitter of thread dumps (py-spy, gdb ``bt``/``py-bt``, faulthandler) and
  the hang verdict read from thread states (blocked in user code, idle loop, helper pool, lock cycles);
- one module per dump kind beside them: ``debug_agent``, ``amdpc`` (AMD PC -> source line), ``rocgdb``,
  ``cuda`` (cuda-gdb and core dumps), ``sanitizer``, ``smi``, ``gpustate``, ``kernlog``, ``hiplog``,
  ``memory``, ``nccl``, ``fr_trace``, ``kernel_api``; ``kernels`` (kernel names: short, demangled);
- ``fingerprint`` -- a failure's fingerprint (the recall at failure time).

A reader may run a read-only tool on a file it was handed (``c++filt``, ``nvdisasm``,
``llvm-objdump``) but never the user's program.

May import: ``dbglog.util`` and ``dbglog.core`` (values). It sits below ``run/`` (``run`` imports ``diagnose``, never the
reverse) and knows nothing of ``kb``, ``bisect``, ``ops`` or the commands. Importing this package
imports nothing.
"""
