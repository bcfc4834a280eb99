"""The MCP tools for documents: `doc_units` shows an agent how a doc was cut and read (ids, kinds, lines, text,
built-in labels) and changes nothing; `import_extraction` takes back the attempts the agent read, citing unit
ids, validates them (one-line error in structuredContent.error, nothing written) and imports exactly those,
every line kept; `import_docs` is `dbglog import`; both take `use`."""

import pytest

from conftest import run_cli_inproc
from import_thread_doc import THREAD_DOC, investigations, lost_lines, mirror_files, write_doc

pytest.importorskip("mcp")
from test_mcp_server import cli_json, serve  # noqa: E402


@pytest.fixture
def ws(workdir):
    run_cli_inproc(workdir, "init", check=0)
    return workdir


def extraction_from(units: list[dict], digest: str) -> dict:
    """What an agent that read the units would send: the eager run worked, the downgrade only partly helped,
    bob's answer to the suggestion is his attempt."""
    def ids(word):
        return [u["id"] for u in units if word in u["text"] and u["kind"] == "sentence"]
    return {"digest": digest, "attempts": [
        {"units": ids("enforce_eager=True"), "title": "enforce_eager=True", "outcome": "worked"},
        {"units": ids("torch 2.3.1"), "title": "torch 2.3.1", "outcome": "partial"},
        {"units": ids("XFORMERS"), "title": "XFORMERS backend", "outcome": "worked", "who": "bob"},
    ]}


def test_doc_units_then_import_extraction(ws):
    write_doc(ws)
    mine = cli_json(ws, "new", "My own hang", "--no-env")["id"]

    async def scenario(call, session):
        tools = {t.name: t for t in (await session.list_tools()).tools}
        units = await call("doc_units", path="notes.md")
        n_before = investigations(ws)
        bad, d = {}, units["digest"]
        bad["no_unit"] = await call("import_extraction", path="notes.md", extraction={
            "digest": d, "attempts": [{"units": [99999], "title": "x", "outcome": "worked"}]})
        bad["outcome"] = await call("import_extraction", path="notes.md", extraction={
            "digest": d, "attempts": [{"units": [units["units"][0]["id"]], "title": "x", "outcome": "fixed"}]})
        bad["bool_id"] = await call("import_extraction", path="notes.md",
                                    extraction={"digest": d, "attempts": [{"units": [True], "title": "x"}]})
        bad["shape"] = await call("import_extraction", path="notes.md", extraction={"attempt": []})
        bad["missing"] = await call("doc_units", path="nope.md")
        bad["range"] = await call("doc_units", path="notes.md", first_line=9, last_line=3)
        part = await call("doc_units", path="notes.md", first_line=9, last_line=9)
        whole = extraction_from(units["units"], d)
        bad["no_digest"] = await call("import_extraction", path="notes.md",
                                      extraction={"attempts": whole["attempts"]})
        bad["stale"] = await call("import_extraction", path="notes.md", extraction=whole | {"digest": "0" * 16})
        after_bad = investigations(ws)
        done = await call("import_extraction", path="notes.md",
                          extraction=extraction_from(units["units"], units["digest"]))
        again = await call("import_extraction", path="notes.md",
                           extraction=extraction_from(units["units"], units["digest"]))
        return tools, units, n_before, bad, after_bad, done, again, part

    tools, units, n_before, bad, after_bad, done, again, part = serve(ws, scenario)
    assert part["digest"] == units["digest"] and [u["lines"] for u in part["units"]] == [[9, 9]]
    assert bad["range"]["error"] == "first_line and last_line are 1-based lines with first_line <= last_line"
    assert tools["doc_units"].annotations.read_only_hint and not tools["import_extraction"].annotations.read_only_hint
    assert "use" in tools["import_extraction"].input_schema["properties"]
    assert units["source"] == "notes.md" and n_before == 1  # doc_units wrote nothing
    # the agent is told what an attempt is, in the words a model behind `import --llm` is given
    from dbglog.docreader import llm
    from dbglog.docreader.review import READING_GUIDE
    assert units["guide"].startswith(READING_GUIDE) and READING_GUIDE in llm.PROMPT
    assert "suggestion answered by the person who tried it" in units["guide"] and "`next_steps`" in units["guide"]
    eager = next(u for u in units["units"] if "enforce_eager=True" in u["text"])
    assert (eager["kind"], eager["lines"], eager["label"]) == ("sentence", [9, 9], "action_result")
    assert len({u["id"] for u in units["units"]}) == len(units["units"])
    explained = cli_json(ws, "import", "--explain", "notes.md")["units"]  # the same reading as --explain
    by_lines = {(tuple(u["lines"]), u["kind"]): (u["label"], u["confidence"]) for u in units["units"]}
    assert explained and all(by_lines[(tuple(u["lines"]), u["kind"])] == (u["label"], u["confidence"])
                             for u in explained)

    assert bad["no_unit"]["error"] == "extraction: attempt 1 cites unit 99999, which this document does not have"
    assert bad["outcome"]["error"].startswith("extraction: attempt 1: outcome 'fixed' is not one of")
    assert bad["bool_id"]["error"] == "extraction: attempt 1 cites no unit ids (`units`: a list of ids)"
    assert bad["shape"]["error"] == "extraction: expected an object with an `attempts` list"
    # (ids mean the units they were read as: an extraction without the digest, or from another reading, is refused)
    assert bad["no_digest"]["error"].startswith("extraction: `digest` is missing: give the digest that came with")
    assert bad["stale"]["error"].startswith("extraction: the document, or dbglog's reading of it, changed since")
    assert bad["missing"]["error"] == "nope.md: no such file"
    assert all("\n" not in v["error"] for v in bad.values()) and after_bad == 1

    [inv] = done["investigations"]
    assert inv["action"] == "create" and done["current"] == mine and inv["current"] is False
    got = [(a["source_lines"], a["title"], a["outcome"], a["who"]) for a in inv["attempt_list"]]
    assert got == [([9, 9], "enforce_eager=True", "worked", ""), ([10, 10], "torch 2.3.1", "partial", ""),
                   ([17, 21], "XFORMERS backend", "worked", "bob")]
    assert again["investigations"][0]["action"] == "unchanged"
    shown = cli_json(ws, "show", inv["id"])
    assert [a["title"] for a in shown["attempts"]] == ["enforce_eager=True", "torch 2.3.1", "XFORMERS backend"]
    imported = next(p for p in mirror_files(ws) if inv["id"] in p.name)
    assert lost_lines(THREAD_DOC, imported.read_text()) == []


def test_import_docs_and_import_extraction_take_use(ws):
    write_doc(ws)
    write_doc(ws, THREAD_DOC.replace("vLLM crashes", "SGLang crashes"), name="other.md")
    cli_json(ws, "new", "My own hang", "--no-env")

    async def scenario(call, session):
        out = {"dry": await call("import_docs", paths=["notes.md"], dry_run=True, use=True)}
        out["plain"] = await call("import_docs", paths=["notes.md"])
        out["use"] = await call("import_docs", paths=["notes.md"], use=True)
        out["two"] = await call("import_docs", paths=["notes.md", "other.md"], use=True)
        read = await call("doc_units", path="other.md")
        out["extracted"] = await call("import_extraction", path="other.md", use=True,
                                      extraction=extraction_from(read["units"], read["digest"]))
        out["show"] = await call("show")
        return out

    out = serve(ws, scenario)
    assert out["dry"]["dry_run"] and out["dry"]["investigations"][0]["action"] == "create"
    plain = out["plain"]["investigations"][0]
    assert plain["current"] is False and out["plain"]["current"] != plain["id"]
    assert out["use"]["current"] == plain["id"] and out["use"]["investigations"][0]["current"] is True
    assert out["two"]["error"].startswith("--use needs exactly one investigation")
    ext = out["extracted"]["investigations"][0]
    assert out["extracted"]["current"] == ext["id"] and ext["title"].startswith("SGLang crashes")
    assert cli_json(ws, "show")["id"] == ext["id"] == out["show"]["id"]
    assert "## Source headings" not in [s["heading"] for s in out["show"]["sections"]]  # import's bookkeeping


def test_a_refused_import_docs_in_a_directory_without_a_workspace_leaves_none_behind(workdir):
    async def scenario(call, session):
        refused = await call("import_docs", paths=["missing.md"])
        left = sorted(p.name for p in workdir.iterdir())
        (workdir / "t.md").write_text("# Loader OOM\n\n## Attempt 1: halve the batch\n\n**Result:** still OOM\n")
        done = await call("import_docs", paths=["t.md"])
        again = await call("import_docs", paths=["missing.md"])
        return refused, left, done, again

    refused, left, done, again = serve(workdir, scenario)
    assert "error" in refused and left == []
    assert "error" not in done and "error" in again
    assert (workdir / ".dbglog" / "dbglog.db").exists() and len(list((workdir / "logs").iterdir())) == 1


# --- what an agent is shown of a document ---------------------------------------------------------------------

SESSION_NOTES = """# Driver reinstall

Purged first, then listed the drivers.

    ./cuda_purge.sh
    ./nvidia_purge.sh
    sudo apt-get update
    $ ubuntu-drivers devices
    driver   : nvidia-driver-525 - distro non-free recommended
    $ nvidia-smi
    NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.

- **Stacking kernels.** Liger with torch.compile crashed with an illegal memory access. Pick one.
- Installed it with `uv pip install --python <venv>/bin/python <wheel>`, then ran `start <profile>`<br>and it <b>worked</b>.
- The driver <b>loaded</b> after a reboot.
"""


def _agent_units(text: str) -> list[dict]:
    from dbglog.docreader.review import units_for_agents
    from dbglog.kb import importer
    from dbglog.docreader.units import segment

    parsed, _ = importer.parse_document(text, "notes.md", explain=True)
    return units_for_agents(segment(text), parsed)


def test_every_written_line_of_a_console_session_lies_in_a_unit_an_agent_can_cite():
    # (the purge commands run before the first "$ " prompt were in no unit: an agent could not cite them)
    lines = SESSION_NOTES.split("\n")
    units = _agent_units(SESSION_NOTES)
    cited = {i for u in units for i in range(u["lines"][0], u["lines"][1] + 1)}
    assert [k for k, ln in enumerate(lines, 1) if ln.strip() and k not in cited] == []
    purge = next(u for u in units if "./cuda_purge.sh" in u["text"])
    assert purge["lines"] == [5, 7] and purge["kind"] == "code"


def test_an_agent_is_shown_a_command_with_what_it_printed_and_a_sentence_with_its_run_in_heading():
    units = _agent_units(SESSION_NOTES)
    smi = next(u for u in units if u["kind"] == "command" and "nvidia-smi" in u["text"])
    assert "couldn't communicate with the NVIDIA driver" in smi["text"]
    assert any(u["text"].startswith("**Stacking kernels.** Liger with torch.compile crashed") for u in units)


def test_an_agent_is_shown_a_sentences_placeholders_as_written():
    # (the built-in reader reads "<venv>" as an HTML tag and drops it; an agent is shown the line as written)
    shown = next(u["text"] for u in _agent_units(SESSION_NOTES) if "Installed it" in u["text"])
    assert "--python <venv>/bin/python <wheel>" in shown and "`start <profile>`" in shown
    assert any(u["text"] == "The driver loaded after a reboot." for u in _agent_units(SESSION_NOTES))  # (tags go)
    # (sentences sharing a line are each shown as their own words, with their placeholders, not the whole line once
    # per sentence)
    two = _agent_units("# Notes\n\nRan `ssh <head_ip>` first. Then it hung at init.\n")
    assert [u["text"] for u in two if u["kind"] == "sentence"] == ["Ran `ssh <head_ip>` first.", "Then it hung at init."]


BUILD_SCRIPT = """#!/bin/bash
# From the previous box:
# Built thunk (hsakmt)
#   thunk-dev_1.0.0-local_amd64.deb
#   note: installs to /opt/rocm
# Built device-libs
#   devlibs_1.0.0-local_amd64.deb
#   devlibs-dev_1.0.0-local_amd64.deb
# Built runtime
#   runtime_2.0.0-local_amd64.deb
#   runtime-dev_2.0.0-local_amd64.deb
#   ISSUE: needs comgr
#   Did sudo make install

mkdir -p build/debs
cd build

# thunk interface
if [ ! -f debs/thunk_1.0-local_amd64.deb ]
then
  cmake ../src/thunk
  make -j8 package
fi

# device libs
if [ ! -f debs/devlibs_1.0-local_amd64.deb ]
then
  cmake ../src/devlibs
  make -j8 package
fi

# comgr (broken)
#cmake ../src/comgr
#make -j8
"""


def test_a_scripts_long_caption_goes_with_its_command_and_no_unit_is_cut_inside_another():
    # (a script kept as notes: the caption's lines after its first were also cut into per-line code units, inside
    # the command's own span, so an agent saw the same lines twice under two ids)
    units = _agent_units(BUILD_SCRIPT)
    owner: dict[int, int] = {}
    for u in units:
        if u["kind"] != "sentence":
            for i in range(u["lines"][0], u["lines"][1] + 1):
                assert owner.setdefault(i, u["id"]) == u["id"], f"line {i} is in units {owner[i]} and {u['id']}"
    mkdir = next(u for u in units if "mkdir -p build/debs" in u["text"])
    assert mkdir["kind"] == "command" and mkdir["lines"] == [2, 16]


SCRIPT_WITH_NOTES = """#!/bin/bash
# 010: build the image
docker build -t trainer:dev .
#    Stdout:

#    Stderr:

#    warning: cache mount ignored

# It took me a while to see where the generated job file goes. Look at the
# controller with scontrol show job and take the directory from the stdout
# path; without accounting that shows nothing, so search the work directory
# for the newest log file instead and edit the script next to it.

sbatch --requeue job.sh
"""


def test_a_command_takes_no_caption_from_across_the_notes_read_apart_above_it():
    # (the output comment of one command, then a block of the author's notes, then the next command: the notes were
    # left out of the commands' lines, so the output comment above them became the next command's caption and its
    # unit spanned the notes, which were units of their own too)
    units = _agent_units(SCRIPT_WITH_NOTES)
    said = {i for u in units if u["kind"] == "sentence" for i in range(u["lines"][0], u["lines"][1] + 1)}
    owner: dict[int, int] = {}
    for u in units:
        if u["kind"] != "sentence":  # (sentences may share a line; nothing else shares one, with them or another)
            for i in range(u["lines"][0], u["lines"][1] + 1):
                assert i not in said and owner.setdefault(i, u["id"]) == u["id"], f"line {i} is in two units"
    sbatch = next(u for u in units if "sbatch --requeue" in u["text"])
    assert sbatch["lines"] == [15, 15]  # (its own line: no caption from above the notes)
    assert any(u["kind"] == "sentence" and u["text"].startswith("It took me a while") for u in units)


def test_a_long_units_end_is_shown_with_what_was_left_out_said():
    # (a unit was cut at 2,000 characters: a long run's log lost its last lines, where it said how it went)
    log = "\n".join(f"[rank0] step {k:4d} loss 2.{k % 97:02d} lr 3e-4 tok/s 41{k % 9}00 mem 61.2GiB" for k in range(90))
    doc = f"# Long run\n\nI ran it with the new allocator.\n\n```console\n$ torchrun train.py --alloc expandable\n{log}\n" \
          "RuntimeError: CUDA error: an illegal memory access was encountered\n```\n"
    unit = next(u for u in _agent_units(doc) if "torchrun" in u["text"])
    assert unit["text"].startswith("$ torchrun train.py --alloc expandable\n[rank0] step    0 loss")
    assert unit["text"].endswith("step   89 loss 2.89 lr 3e-4 tok/s 41800 mem 61.2GiB\n"
                                 "RuntimeError: CUDA error: an illegal memory access was encountered")
    assert "characters not shown" in unit["text"] and len(unit["text"]) <= 2000
    assert unit["lines"] == [6, 97]


STEPS_DOC = """# NCCL hang on 2 nodes

## Attempts

### Attempt 1: NCCL_P2P_DISABLE=1
**Result:** still hangs.

## Next steps

1. Run nccl-tests across the two nodes.
2. Swap the IB cable.
3. Ask the cluster team about the switch firmware.

## Notes

Tomorrow I will try NCCL_IB_DISABLE=1 on both nodes.
"""


def test_an_extractions_next_steps_replace_the_built_in_ones_and_every_line_is_kept(ws):
    from dbglog.docreader.review import from_extraction
    from dbglog.docreader.units import segment
    from dbglog.kb import importer

    doc = segment(STEPS_DOC)
    unit = {u.text: u.id for u in doc.units}
    ext = {"attempts": [{"units": [unit["**Result:** still hangs."]], "title": "P2P off", "outcome": "failed"}],
           "next_steps": [{"units": [unit["Ask the cluster team about the switch firmware."]]},
                          {"units": [unit["Tomorrow I will try NCCL_IB_DISABLE=1 on both nodes."]],
                           "text": "try NCCL_IB_DISABLE=1 on both nodes"}]}
    (p,), _ = importer.parse_document(STEPS_DOC, "notes.md", from_extraction(doc, ext))
    assert [(s.text, s.source_lines) for s in p.inv.next_steps] == [
        ("Ask the cluster team about the switch firmware.", [12, 12]), ("try NCCL_IB_DISABLE=1 on both nodes", [16, 16])]
    from dbglog.core import markdown
    assert lost_lines(STEPS_DOC, markdown.render(p.inv)) == []  # (the steps left out are text again)
    without = {"attempts": ext["attempts"]}  # (no `next_steps`: the built-in reader's stay)
    (q,), _ = importer.parse_document(STEPS_DOC, "notes.md", from_extraction(doc, without))
    assert "Run nccl-tests across the two nodes." in [s.text for s in q.inv.next_steps]
    (r,), _ = importer.parse_document(STEPS_DOC, "notes.md", from_extraction(doc, without | {"next_steps": []}))
    assert r.inv.next_steps == [] and lost_lines(STEPS_DOC, markdown.render(r.inv)) == []  # (none: the guide says so)


def test_the_guide_an_agent_reads_says_how_to_drop_next_steps_and_how_to_read_measurements(tmp_path):
    from dbglog.kb import importer

    (tmp_path / "steps.md").write_text(STEPS_DOC)
    guide = importer.agent_units(str(tmp_path / "steps.md"))["guide"]
    assert '`"next_steps": []`' in guide and "dropped" in guide
    # (agents marked a benchmark with no target worked or failed, and skipped a bisection's tested commits)
    assert "a measurement or benchmark of the unchanged case" in guide and "Each commit a bisection tests" in guide
    assert "only prepared the next one" in guide  # (a probe built and run is no fix that worked)
    # (agents read isolation runs -- one part alone passed 30/30 -- and test runs of a fix as inconclusive checks)
    assert "even only to find where the fault is" in guide and "a test run checking a fix" in guide
    # (agents read each run of a benchmark sweep with no fault as a measurement; the labels, as a run that succeeded)
    assert "each run of a sweep or benchmark that changes a setting from run to run" in guide
    # (agents made one attempt per value of a sweep -- context 256, 512, 1024 -- where people count the sweep once)
    assert "A sweep (one run or test repeated over values of one setting" in guide and "is one attempt" in guide


def test_a_next_step_citing_a_unit_the_document_lacks_is_refused():
    from dbglog.docreader.review import from_extraction
    from dbglog.docreader.units import segment

    with pytest.raises(Exception, match="next step 1 cites unit 9999, which this document does not have"):
        from_extraction(segment(STEPS_DOC), {"attempts": [], "next_steps": [{"units": [9999]}]})


def test_an_extractions_next_step_may_say_it_was_done_and_an_unknown_status_is_refused():
    from dbglog.docreader.review import from_extraction
    from dbglog.docreader.units import segment
    from dbglog.kb import importer

    doc = segment(STEPS_DOC)
    unit = {u.text: u.id for u in doc.units}
    ext = {"attempts": [], "next_steps": [
        {"units": [unit["Run nccl-tests across the two nodes."]], "status": "done"},
        {"units": [unit["Swap the IB cable."]]}]}
    (p,), _ = importer.parse_document(STEPS_DOC, "notes.md", from_extraction(doc, ext))
    assert [(s.text, s.status) for s in p.inv.next_steps] == [
        ("Run nccl-tests across the two nodes.", "done"), ("Swap the IB cable.", "todo")]
    with pytest.raises(Exception, match="next step 1 has status 'finished'; use one of todo, done, dropped"):
        from_extraction(doc, {"attempts": [], "next_steps": [{"units": [unit["Swap the IB cable."]],
                                                              "status": "finished"}]})


def test_the_guide_says_a_plan_carried_out_later_is_a_done_step(tmp_path):
    from dbglog.kb import importer

    (tmp_path / "steps.md").write_text(STEPS_DOC)
    guide = importer.agent_units(str(tmp_path / "steps.md"))["guide"]
    assert '`"status": "done"`' in guide and "carried out" in guide
    # (agents asked why ids were missing: the units with no words are not shown)
    assert "Unit ids skip the units that carry no words" in guide


QUOTING_THREAD = """# vLLM hangs at startup

### ana — 2025-03-01

I tried --enforce-eager on the two 4090s and the server still hangs at the first request.

### ben — 2025-03-02

> I tried --enforce-eager on the two 4090s and the server still hangs at the first request.

Try NCCL_P2P_DISABLE=1 as well.

> The engine hangs forever after the weights load on a single card too.

That one is from the docs' FAQ.
"""


def test_a_quoted_unit_says_it_is_quoted_and_whose_words_it_repeats():
    # (a reply's quote of the asker was shown under the replier's name alone: an agent took it for the replier's try)
    units = _agent_units(QUOTING_THREAD)
    echoed = [u for u in units if u["text"].startswith("I tried --enforce-eager")]
    assert [(u["author"], u.get("quoted", False), u.get("quotes")) for u in echoed] == [
        ("ana", False, None), ("ben", True, "ana")]
    faq = next(u for u in units if u["text"].startswith("The engine hangs forever"))
    assert faq["quoted"] and faq["quotes"] == ""
    assert "quoted" not in next(u for u in units if u["text"].startswith("Try NCCL_P2P_DISABLE"))


def test_a_sentence_sharing_its_line_is_shown_with_its_placeholders():
    # (the reading takes "<user>" for an HTML tag: "/tmp/<user>/.cache/uv" was shown as "/tmp/ /.cache/uv" when
    # another sentence shared the line)
    units = _agent_units("# Notes\n\nThe cache moved to /tmp/<user>/.cache/uv on the node. Then `uv sync` failed twice.\n")
    said = [u["text"] for u in units if u["kind"] == "sentence"]
    assert said == ["The cache moved to /tmp/<user>/.cache/uv on the node.", "Then `uv sync` failed twice."]


STAGED_DOC = """# Loss goes to NaN at step 900 on the v5e pod

### Stage 1: turn off the compiler cache (DONE)
**Status**: ran past step 900 twice

- Disabled the persistent compile cache: the NaN at step 900 is gone.

### Stage 2: check the metrics code (DONE)
**Status**: nothing syncs across replicas

- Read the metrics code: no cross-replica reduction in it.

### Stage 3: warmup schedule (DONE)
**Status**: stable to step 2,000

- Switched to a linear warmup of 500 steps: stable to step 2,000.
"""


def test_an_extraction_may_say_the_document_is_one_investigation_however_its_sections_read(ws):
    from dbglog.docreader.review import from_extraction
    from dbglog.docreader.units import segment
    from dbglog.kb import importer

    doc = segment(STAGED_DOC)
    unit = {u.text: u.id for u in doc.units}
    ext = {"attempts": [
        {"units": [unit["Disabled the persistent compile cache: the NaN at step 900 is gone."]], "title": "no cache",
         "outcome": "worked"},
        {"units": [unit["Switched to a linear warmup of 500 steps: stable to step 2,000."]], "title": "warmup",
         "outcome": "worked"}]}
    split, _ = importer.parse_document(STAGED_DOC, "notes.md", from_extraction(doc, ext))
    assert len(split) >= 2  # (each stage's Status reads as a bug of its own)
    (one,), _ = importer.parse_document(STAGED_DOC, "notes.md",
                                        from_extraction(doc, ext | {"one_investigation": True}))
    assert one.inv.title == "Loss goes to NaN at step 900 on the v5e pod"
    assert [(a.title, a.source_lines) for a in one.inv.attempts] == [("no cache", [6, 6]), ("warmup", [16, 16])]
    from dbglog.core import markdown
    assert lost_lines(STAGED_DOC, markdown.render(one.inv)) == []
    from dbglog.util.errors import DbglogError

    with pytest.raises(DbglogError, match="one_investigation"):
        from_extraction(doc, ext | {"one_investigation": "yes"})



def test_a_plain_reimport_keeps_an_extraction_that_joined_the_document_into_one_investigation(ws, tmp_path):
    import json

    doc = write_doc(tmp_path, STAGED_DOC)
    units = json.loads(run_cli_inproc(ws, "import", "--units", doc, "--json", check=0).stdout)
    unit = {u["text"]: u["id"] for u in units["units"]}
    ext = tmp_path / "reading.json"
    ext.write_text(json.dumps({"digest": units["digest"], "one_investigation": True, "attempts": [
        {"units": [unit["Switched to a linear warmup of 500 steps: stable to step 2,000."]], "title": "warmup",
         "outcome": "worked"}]}))
    run_cli_inproc(ws, "import", doc, "--extraction", ext, check=0)
    again = json.loads(run_cli_inproc(ws, "import", doc, "--json", check=0).stdout)
    assert [(i["action"], [a["title"] for a in i["attempt_list"]]) for i in again["investigations"]] == [
        ("unchanged", ["warmup"])] and investigations(ws) == 1

def test_the_guide_tells_an_agent_how_to_join_a_story_split_into_investigations(tmp_path):
    from dbglog.kb import importer

    (tmp_path / "notes.md").write_text(STAGED_DOC)
    got = importer.agent_units(str(tmp_path / "notes.md"))
    assert '"one_investigation": true' in got["guide"] and len(got["investigations"]) >= 2


def test_a_period_of_vs_or_e_g_ends_no_sentence_so_an_error_line_stays_one_unit():
    # (an agent saw "Check failed: err == cudaSuccess (7 vs." and "0) Name: ..." as two units)
    doc = ("# Launch fails\n\nIt stops with `MXNetError` Check failed: err == cudaSuccess (7 vs. 0) Name: MapPlanKernel."
           " A newer driver, e.g. 550, did not help.\n")
    said = [u["text"] for u in _agent_units(doc) if u["kind"] == "sentence"]
    assert said[-2:] == ["It stops with `MXNetError` Check failed: err == cudaSuccess (7 vs. 0) Name: MapPlanKernel.",
                         "A newer driver, e.g. 550, did not help."]


def test_a_sentence_going_on_after_a_line_break_is_not_cut_at_a_long_capitalised_label():
    # (an agent saw "... still `activating` instead" and "SIGTERMs the start script: ..." as two units)
    doc = ("# Stop hangs\n\nA stop issued while the unit is still `activating` instead\nSIGTERMs the start script: the"
           " unit fails and the containers are orphaned.\nResult: kept as a known issue.\n")
    said = [u["text"] for u in _agent_units(doc) if u["kind"] == "sentence"]
    assert said[-2:] == ["A stop issued while the unit is still `activating` instead SIGTERMs the start script: the unit"
                         " fails and the containers are orphaned.", "Result: kept as a known issue."]


def test_a_journals_dated_entry_line_is_a_unit_of_its_own_not_glued_to_the_line_under_it():
    # (an agent saw "**Date:** 02-06-2025 - 02-06-2025 Problem" as one unit: the date line and the entry's first line)
    doc = "# Dev journal\n\n**Date:** 02-06-2025 - 05-06-2025\nProblem\n\n(Solved) The kernel build failed on 12.6.\n"
    said = [u["text"] for u in _agent_units(doc) if u["kind"] == "sentence"]
    assert said[:2] == ["**Date:** 02-06-2025 - 05-06-2025", "Problem"]


def test_a_unit_whose_words_are_all_in_its_run_in_heading_is_still_shown_to_an_agent():
    # (a unit with only an emoji after its bold lead was left out of doc_units, so its line could not be cited)
    units = _agent_units("# Notes\n\n**Loaded.** 🎉\n\nThen it hung at step 5.\n")
    assert any(u["lines"] == [3, 3] for u in units)


def test_a_placeholder_of_several_words_is_shown_to_an_agent_as_written():
    # ("You can ensure that running `mpirun <mpirun args> <some script printing ulimit -l>`" lost both placeholders)
    units = _agent_units("# Notes\n\nYou can check it by running mpirun <mpirun args> <some script printing ulimit -l> first.\n")
    text = next(u["text"] for u in units if u["lines"] == [3, 3])
    assert "<mpirun args>" in text and "<some script printing ulimit -l>" in text
