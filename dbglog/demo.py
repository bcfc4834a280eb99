"""`dbglog demo`: the whole loop on a throwaway workspace, so a new user sees it work in seconds."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

import click

from dbglog import ops
from dbglog.kb.records import Records
from dbglog.util.workspace import Workspace


def step(title: str, quiet: bool) -> None:
    if not quiet:
        click.secho(f"\n== {title}", bold=True)


def record_investigation(recs: Records) -> str:
    inv = recs.new(
        "NCU profiling hangs on TMA + mbarrier kernels",
        symptom='`ncu --set full ./bench` hangs at "==PROF== Profiling ... 0%" on the first replay pass.',
        files=["csrc/attention/tma_kernel.cu", "scripts/profile.sh"],
        tags=["ncu", "tma", "hang"],
        environment="- GPU: NVIDIA H100 80GB HBM3 (sm_90)\n- Driver: 550.54.15, CUDA 12.4\n- Nsight Compute: 2024.1.1",
    )
    i = inv.id
    recs.diff_add(i, "Launch context", "raw CUDA driver API", "PyTorch custom op",
                  labels=("Repro (works)", "Actual kernel (hangs)"))
    recs.diff_add(i, "mbarrier phases", "1", "2 (producer/consumer)")
    recs.diff_add(i, "Replay mode", "application", "kernel")
    recs.diff_add(i, "Sections", "--section SpeedOfLight", "--set full")
    recs.next_add(i, "Replay mode application", "re-runs the whole program per pass; confirms kernel replay is the trigger")
    recs.next_add(i, "Fewer sections", "bisect --set full down to the section that hangs")
    recs.next_add(i, "cuda-gdb attach during the hang", "see which warp waits on which mbarrier phase")
    # (title, hypothesis, did, result, conclusion, outcome), then what each one settled
    attempts = [
        ("Default kernel replay with --set full", "The hang is in our kernel, not in the profiler.",
         "ncu --set full --target-processes all python bench.py",
         "Hangs at 0% of the first pass; the kernel alone (no ncu) finishes in 3 ms.",
         "Only hangs under the profiler: replay interacts with the mbarrier protocol.", "failed"),
        ("Application replay instead of kernel replay",
         "Kernel replay restores memory but not the mbarrier phase bits, so the consumer waits forever.",
         "ncu --replay-mode application --set full python bench.py",
         "Completes all 38 passes in 4 min; metrics look sane.",
         "Kernel replay is the trigger: mbarrier state is not part of the saved/restored memory.", "worked"),
        ("Only SpeedOfLight section under kernel replay", "A single-pass section needs no replay, so it cannot hang.",
         "ncu --section SpeedOfLight python bench.py", "Works (1 pass).",
         "Consistent with replay being the trigger.", "worked"),
    ]
    for title, hypothesis, did, result, conclusion, outcome in attempts:
        recs.add_attempt(i, title=title, hypothesis=hypothesis, did=did, result=result, conclusion=conclusion,
                         outcome=outcome)
    recs.next_mark(i, "1", "done", attempt=2)
    recs.diff_set(i, "Replay mode", status="culprit")
    recs.diff_set(i, "Launch context", status="ruled-out")
    recs.next_mark(i, "Fewer sections", "done", attempt=3)
    return i


CRASH_REPRO = """\
import os, signal, sys
print("step 0: loss 2.31", flush=True)
print("[rank0]: RuntimeError: CUDA error: an illegal memory access was encountered", file=sys.stderr)
print("CUDA kernel errors might be asynchronously reported at some other API call.", file=sys.stderr)
print("[rank0]: Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12, OpType=ALLREDUCE)",
      file=sys.stderr, flush=True)
os.kill(os.getpid(), signal.SIGABRT)
"""

HANG_REPRO = """\
import subprocess, sys, time
# A worker that ignores SIGTERM, like a process stuck in a GPU kernel.
subprocess.Popen([sys.executable, "-c",
                  "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"])
print("==PROF== Profiling \\"attention_fwd\\" - 0: 0%....", flush=True)
time.sleep(600)
"""


def supervised_runs(recs: Records, inv_id: str, quiet: bool) -> list[dict]:
    """Two real supervised runs, each recorded as an attempt the way ``dbglog run --attempt`` does
    it (``ops.run_repro``: evidence quoted, the playbooks' next steps added): a crash whose real
    cause sits above the last line, and a hang."""
    import sys

    from dbglog.kb.records import run_result_line

    out = []
    for name, script, timeout, title in (
        ("crash_repro.py", CRASH_REPRO, 30.0, "Run the training step under dbglog run"),
        ("hang_repro.py", HANG_REPRO, 1.5, "Profile with a 1.5 s timeout"),
    ):
        (recs.ws.root / name).write_text(script)
        step(f"dbglog run --timeout {timeout:g} --attempt {title!r} -- python {name}", quiet)
        # grace 1 s, not 5: the hang's worker ignores SIGTERM, and the demo must stay quick
        opts = replace(ops.REPRO_OPTIONS, timeout=timeout, grace=1.0, echo=not quiet)
        rr = ops.run_repro(recs, [sys.executable, name], opts, cwd=recs.ws.root, attempt_title=title, inv_ref=inv_id)
        r = rr.runs[0]
        if not quiet:
            click.echo(f"-> {run_result_line([r])}")
            if r["outcome"] == "hang":
                click.echo(f"-> whole process tree killed; survivors: {len(r['survivors'])}")
            for n in rr.advice:
                click.echo(f"-> next step added: {n.text}")
        out.append(r)
    return out


def demo_search(recs: Records, quiet: bool) -> tuple[dict, dict]:
    """Search the knowledge base, then run the before-trying-a-fix check."""
    query, idea = "replay mod mbarier", "kernel replay with --set full"
    res = ops.search(recs, query, limit=3)  # the same service calls as `dbglog search` / `dbglog tried`
    check = ops.tried(recs, idea)
    if not quiet:
        from dbglog.kb.present import print_hit as _print_hit

        step(f'dbglog search "{query}"   (a partial word and a typo on purpose)', quiet)
        for note in ops.query_notes(res.query):
            click.echo(click.style(f"note: {note}", dim=True))
        for n, h in enumerate(res.hits, 1):
            _print_hit(h, n)
        step(f'dbglog tried "{idea}"   (run it before trying a fix; exit 0 = already tried)', quiet)
        for h in check.close:
            click.echo(f"[{h.outcome.upper()}] Attempt {h.number}: {h.title}")
            click.echo(f"   conclusion: {h.fields['conclusion']}")
        if not check.close:
            click.echo("No close prior attempt.")
    return res.to_dict(), check.to_dict()


def run_demo(keep: bool = False, as_json: bool = False) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="dbglog-demo-"))
    quiet = as_json
    try:
        recs = Records(Workspace(tmp / ".dbglog"), create=True)
        step("Recording an investigation (dbglog new / diff add / next add / attempt add)", quiet)
        inv_id = record_investigation(recs)
        runs = supervised_runs(recs, inv_id, quiet)
        from dbglog.bisect import history, toggles

        history.demo(recs, inv_id, quiet)  # dbglog bisect git on a generated repo
        toggles.demo(recs, inv_id, quiet)  # dbglog bisect toggles on marked suspect calls
        inv = ops.investigation(recs, inv_id)
        path = recs.ws.root / recs.path_for(inv_id)
        if not quiet:
            from dbglog.kb.present import render_show

            step(f"dbglog show {inv_id}", quiet)
            render_show(inv, recs.path_for(inv_id))
            step(f"The reviewable markdown mirror: {path.relative_to(tmp)}", quiet)
            click.echo(path.read_text(encoding="utf-8"))
        searched, checked = demo_search(recs, quiet)
        result = {"workspace": str(tmp) if keep else None, "investigation": inv.to_dict(), "runs": runs,
                  "markdown_path": str(path.relative_to(tmp)), "search": searched, "tried": checked}
        recs.close()
        if keep and not quiet:
            click.echo(f"Workspace kept at {tmp}")
        return result
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)
