"""`tried` on the shapes real debug docs have (issue threads, fix guides, arrows, settings in prose): each rule both ways.

The records are written in my own words in the shapes the real docs had: an issue thread whose
replies advise in the imperative and whose author reports in the past, a fix guide with a
"Recommended ..." list, a change written with an arrow, a setting turned on in prose.
"""

import pytest

from conftest import old_database_with_attempt, opened_by_dbglog
from dbglog.kb import search


def _records(root):
    """An empty workspace at ``root`` (a git checkout, as dbglog expects)."""
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace

    (root / ".git").mkdir()
    return Records(Workspace(root / ".dbglog"), create=True)


@pytest.fixture(scope="module")
def conn(tmp_path_factory):
    recs = _records(tmp_path_factory.mktemp("round6"))
    forum = recs.new("CUDA out of memory fine-tuning a 7B model on a 16 GB card")
    recs.set_section(forum.id, "Comments from other users",
                     "> ## helper_one\n>\n> Turn on gradient_checkpointing and use adafactor instead of AdamW.\n"
                     ">\n>\n> > ## the_author\n> >\n> > Thanks. Enabling gradient checkpointing works, training runs.\n")
    recs.set_section(forum.id, "Conversation",
                     "What you can do meanwhile is to compare speed on the CPU.\n\n"
                     "Build the project without CUDA:\n\n```\ncmake -DGGML_CUDA=OFF\n```\n")
    cloud = recs.new("DataParallel hangs at the first batch on a 4-GPU cloud instance")
    recs.add_attempt(cloud.id, title="Instance configuration",
                     did="- Instance type: `cloud.gpu.4x` → `cloud.gpu.1x` (one GPU)", outcome="worked")
    recs.set_section(cloud.id, "Recommended GPU Instances",
                     "1. **cloud.t4.small** - one T4\n2. **cloud.a10.small** - one A10, newer")
    ray = recs.new("NCCL init fails on remote Ray workers")
    recs.add_attempt(ray.id, title="Patched the Ray executor to whitelist NCCL vars", did="edit ray_executor.py",
                     result="still fails on the remote workers", outcome="failed")
    moe = recs.new("illegal memory access with a MoE model on three GPUs")
    recs.set_section(moe.id, "Conversation", "`-kvq 2` without qmoe is also crashing for me on the latest commit.")
    recs.add_attempt(moe.id, title="Server with my usual flags", did="llama-server -fa -qmoe -ngl 99 -c 32768",
                     result="crashes after three prompts", outcome="failed")
    recs.add_attempt(moe.id, title="Ran it without -pmoe", result="no crash in 40 prompts", outcome="worked")
    issue = recs.new("kernel abort in the attention path after the latest pull", symptom=(
        "did git pull and ran tool-bench: it aborts at once.\n\n"
        "Tried tool-serve and it answered, but got the same abort afterwards.\n\n"
        "When not using -zz, the model answers normally, only slower.\n\n"
        "Built with cmake -DOPT_ALL_QUANTS=ON -DOPT_GPU=ON"))
    recs.add_attempt(issue.id, title="Training flags", did="fp32 weights: `fp16=False, bf16=False` in the trainer",
                     result="no NaN", outcome="worked")
    recs.set_section(issue.id, "What Hasn't Been Seriously Investigated", "- running llama.cpp instead of the server")
    plain = recs.new("deadlock with checkpointing on the big box", symptom=(
        "Checkpointing deadlocks with the linear attention model.\n\nWithout it the run goes out of memory.\n\n"
        "The process sits in D state.\n\nkill -9 does not end it."))
    recs.add_attempt(plain.id, title="Package drift", did="pip resolution upgrades packages across nodes",
                     outcome="failed")
    yield recs.store.conn
    recs.close()


def _close(conn, idea):
    return search.tried(conn, idea).close


def test_possessive_and_glob_tokens():
    q = search.parse_query("patch vllm's executor to pass NCCL_* through")
    assert [t.raw for t in q.terms][:4] == ["patch", "vllm", "executor", "pass"]
    assert "NCCL" in [t.raw for t in q.terms]
    assert not any(t.kind == "typo" for t in q.terms)


def test_glob_family_finds_the_named_vars(conn):
    assert _close(conn, "patch the ray executor so NCCL_* vars reach the workers")


def test_setting_turned_on_is_the_setting(conn):
    q = search.parse_query("gradient_checkpointing=True")
    assert [t.raw for t in q.terms] == ["gradient_checkpointing"]
    assert _close(conn, "gradient_checkpointing=True")
    # the other way is not what the author did (only said as a value: no record sets it off)
    assert not _close(conn, "gradient_checkpointing=False")


def test_thread_advice_is_not_a_report(conn):
    # a reply's imperative: mentioned, not tried; the author's "Enabling ... works": tried
    res = search.tried(conn, "use adafactor")
    assert not res.close and res.mentioned
    assert _close(conn, "enable grad checkpointing for the 7B finetune")
    assert not _close(conn, "build without GGML_CUDA_FA_ALL_QUANTS")


def test_recommended_heading_proposes(conn):
    res = search.tried(conn, "run on cloud.a10.small")
    assert not res.close and res.mentioned


def test_move_from_to_arrow(conn):
    assert _close(conn, "move from cloud.gpu.4x to cloud.gpu.1x")
    assert not _close(conn, "move from cloud.gpu.4x to cloud.gpu.2x")


def test_switch_word_must_turn_the_knob(conn):
    # "without" there is about another knob; a command line that names the flag ran with it
    assert not _close(conn, "run without -kvq")
    # ("-kvq 2 without qmoe is also crashing" did run without it; the command line did not)
    assert [h.kind for h in _close(conn, "run the server without -qmoe")] == ["section"]
    assert _close(conn, "run the server without -pmoe")
    # a phrase of the synonym table that holds the switch word is judged as before
    assert search.parse_query("disable cuda graphs").terms[0].group


def test_an_issue_body_reports_its_tries(conn):
    hits = _close(conn, "run tool-serve")
    assert [(h.kind, h.fields["heading"]) for h in hits] == [("section", "Symptom")]
    top = search.tried(conn, "run tool-serve").to_dict()["close"][0]
    assert top["heading"] == "Symptom" and top["text"].startswith("Tried tool-serve") and top["line"]
    assert _close(conn, "run without -zz")
    # the settings it was built with are no try of building without them
    assert not _close(conn, "build without OPT_ALL_QUANTS")
    # a body that only describes the bug tells no try: its investigation is mentioned, not tried
    res = search.tried(conn, "checkpointing with the linear attention model")
    assert not any(h.title == "Symptom" for h in res.close)
    assert any(h.kind == "investigation" and "deadlock" in h.title for h in res.mentioned)


def test_a_setting_only_set_off_is_not_used(conn):
    assert not _close(conn, "use bf16 instead of fp16")
    assert _close(conn, "fp16=False")


def test_not_investigated_heading_proposes(conn):
    assert not _close(conn, "run llama.cpp instead of the server")


def test_where_words_are_not_the_fix(conn):
    # "across the nodes" says where; the try (pipeline parallel) is in no record
    assert not _close(conn, "use pipeline parallel across the nodes")


def test_verb_compounds_and_irregular_pasts():
    q = search.parse_query("checkout the old commit and rebuild")
    alts = {t.raw: t.alts for t in q.terms}
    assert "checked out" in alts["checkout"] and "rebuilt" in alts["rebuild"]


def test_answer_says_how_each_hit_was_judged(conn):
    d = search.tried(conn, "run tool-serve").to_dict()
    top = d["close"][0]
    assert top["verdict"] == {"close": True, "rule": "", "why": search.VERDICT_WHY[""]}
    assert top["outcome_is_guess"] is True  # free text: its outcome is read from its words
    names = {r.name for r in search.CLOSE_RULES} | set(search.VERDICT_WHY)
    d = search.tried(conn, "use bf16 instead of fp16").to_dict()
    assert not d["tried"] and d["others"]
    for h in d["others"] + d["mentioned"]:
        assert not h["verdict"]["close"] and h["verdict"]["rule"] in names and h["verdict"]["why"]


def test_text_says_how_a_record_tried_it_another_way(conn):
    from dbglog.fastpath import print_tried

    res = search.tried(conn, "use bf16 instead of fp16")  # a record ran with fp16=False: the knob, another value
    out = []
    print_tried(res, "use bf16 instead of fp16", [], echo=lambda s="", err=False: out.append(s),
                style=lambda s, **k: s)
    assert res.answer == "tried another way" and out[0].startswith("Tried another way:")
    i = out.index("Tried another way:")
    assert out[i + 1].startswith("  - [FAILED]") or out[i + 1].startswith("  - [")
    assert out[i + 2].strip() == f"how it differs: {res.another[0].differs}" and res.another[0].differs


def test_mcp_tried_hits_carry_the_verdict(conn):
    pytest.importorskip("mcp")
    from dbglog import mcp_server

    res = search.tried(conn, "run tool-serve")
    hit = mcp_server._judged(res.close)[0].model_dump()
    assert hit["verdict"]["close"] is True and hit["outcome_is_guess"] is True
    assert hit["tier"] == "same" and "tool-serve" in hit["full_text"] and "knobs" in hit["experiment"]


def test_mcp_tried_returns_each_candidate_with_its_experiment_and_full_text(conn, monkeypatch):
    pytest.importorskip("mcp")
    from dbglog import mcp_server, ops

    class _Recs:
        class store:  # noqa: N801 - the one attribute ops.tried reads
            pass
    _Recs.store.conn = conn
    monkeypatch.setattr(mcp_server, "_records", lambda: (_Recs, []))
    monkeypatch.setattr(ops, "refresh_watched", lambda recs, warn: None)
    monkeypatch.setattr(ops, "search_filters", lambda *a: None)
    out = mcp_server.tried("use bf16 instead of fp16")
    d = out.model_dump() if hasattr(out, "model_dump") else out
    assert d["answer"] == "tried another way" and d["another_way"]
    cand = d["another_way"][0]
    assert cand["tier"] == "other" and cand["differs"] and cand["full_text"]
    assert {"knobs", "applied_to", "summary"} <= set(cand["experiment"])
    assert d["idea_experiment"]["knobs"] is not None


FIXTURES = __import__("pathlib").Path(__file__).parent / "fixtures" / "search_round6"


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """The fixture docs through the importer, as a user's `dbglog import` would take them in."""
    from dbglog.kb import importer
    recs = _records(tmp_path_factory.mktemp("round6_import"))
    out = importer.import_files(recs, sorted(str(p) for p in FIXTURES.glob("*.md")))
    by_doc = {i["source"].split("/")[-1].split(".")[0]: i["id"] for i in out["investigations"]}
    yield recs.store.conn, by_doc
    recs.close()


def test_fixture_docs(imported):
    import yaml

    conn, by_doc = imported
    ideas = yaml.safe_load((FIXTURES / "ideas.yaml").read_text())
    missed = [e["idea"] for e in ideas["tried"]
              if not any(h.investigation == by_doc[e["doc"]] for h in search.tried(conn, e["idea"]).close[:3])]
    alarms = [idea for idea in ideas["untried"] if search.tried(conn, idea).close]
    assert not missed and not alarms, (missed, alarms)


def test_a_duration_in_other_units():
    alts = search.parse_query("raise the timeout to 1h").terms[-1].alts
    assert {"60 min", "3600 s", "3600", "1 hour"} <= set(alts)
    assert "1800" in search.parse_query("30min").terms[0].alts
    assert search.parse_query("80GB").terms[0].alts == ["80 GB"]  # (not a duration)


def test_bold_label_that_says_untested_plan(tmp_path):
    recs = _records(tmp_path)
    inv = recs.new("watch boot-loops when the wallpaper is swapped at runtime")
    recs.set_section(inv.id, "Notes", "**What did not fix it:**\n- Shrinking the image to 25KB: still crashed.\n\n"
                     "**How to do it right (untested plan):** decode at boot and rely on the image cache.\n")
    conn = recs.store.conn
    try:
        assert not search.tried(conn, "decode at boot and rely on the image cache").close
        assert search.tried(conn, "shrink the image to 25KB").close
    finally:
        recs.close()


def test_rather_than_is_everyday_wording():
    terms = {t.raw: t for t in search.parse_query("use LOCAL_RANK rather than RANK").terms}
    assert search._filler(terms["rather"]) and search._filler(terms["than"])


def test_a_before_after_row_turns_a_switch(tmp_path):
    recs = _records(tmp_path)
    inv = recs.new("trainer runs out of memory at step 1")
    recs.add_attempt(inv.id, title="`shard.param_offload`", did="`shard.param_offload` — False — **True** — params to CPU",
                     outcome="worked")
    recs.add_attempt(inv.id, title="`shard.fused_adam`", did="`shard.fused_adam` — True — **False** — plain Adam",
                     outcome="worked")
    conn = recs.store.conn
    try:
        assert search.tried(conn, "turn on shard param offload").close
        assert not search.tried(conn, "turn off shard param offload").close
        assert search.tried(conn, "disable fused adam").close
        assert not search.tried(conn, "enable fused adam").close
    finally:
        recs.close()


def test_where_a_switch_goes_is_the_change(tmp_path):
    recs = _records(tmp_path)
    inv = recs.new("collective timeout at epoch 2000")
    recs.add_attempt(inv.id, title="Improved distributed initialization",
                     did="dist.init_process_group(backend=opt.dist_backend, timeout=timeout)", outcome="worked")
    recs.add_attempt(inv.id, title="Switched the process group backend to mpi", did="backend=mpi", outcome="failed")
    other = recs.new("gloo all_gather slow on the CPU runners")  # (gloo is a word of the records)
    recs.add_attempt(other.id, title="Bigger gloo buffers", did="GLOO_SOCKET_IFNAME=eth0", outcome="failed")
    for i in range(6):  # (a few unrelated records: the words above weigh as they would in a real log)
        o = recs.new(f"unrelated bug {i} in the data pipeline", symptom="loss spikes")
        recs.add_attempt(o.id, title=f"cache the tokenizer {i}", did="tokenizer cache on", outcome="failed")
    conn = recs.store.conn
    try:
        # the init call names the process group backend, not where it went: "to gloo" is the change
        assert not search.tried(conn, "switch the process group backend to gloo").close
        assert search.tried(conn, "switch the process group backend to mpi").close
    finally:
        recs.close()


@pytest.fixture(scope="module")
def uma(tmp_path_factory):
    recs = _records(tmp_path_factory.mktemp("uma"))
    inv = recs.new("Server crashes when the iGPU is visible")
    recs.add_attempt(inv.id, title="rebuilding with `-DUSE_UMA=ON`", did="rebuilding with `-DUSE_UMA=ON`",
                     result="None of these helped.", outcome="failed")
    recs.add_attempt(inv.id, title="rebuilding with `-DUSE_UMA=OFF`", did="rebuilding with `-DUSE_UMA=OFF`",
                     result="None of these helped.", outcome="failed")
    # an import keeps the list the attempts were read from as text too
    recs.set_section(inv.id, "I tried the following",
                     "- rebuilding with `-DUSE_UMA=ON`\n- rebuilding with `-DUSE_UMA=OFF`")
    yield recs.store.conn
    recs.close()


def test_a_flag_assigned_on_turns_the_knob_on_and_one_assigned_off_turns_it_the_other_way(uma):
    res = search.tried(uma, "rebuild with UMA on")
    assert [h.fields["title"] for h in res.close] == ["rebuilding with `-DUSE_UMA=ON`"]
    assert [h.fields["title"] for h in res.another] == ["rebuilding with `-DUSE_UMA=OFF`"]


def test_a_free_text_line_that_restates_an_attempt_is_shown_once_as_the_attempt(uma):
    res = search.tried(uma, "rebuild with UMA on")
    assert all(h.kind == "attempt" for h in res.close + res.another)


def test_a_name_the_record_lacks_but_its_investigations_headings_hold_is_context_not_another_experiment(tmp_path):
    recs = _records(tmp_path)
    inv = recs.new("FP8 matmul is slower than expected")
    recs.add_attempt(inv.id, title="Method FP8 rowwise + compile", did="FP8 rowwise + compile",
                     result="Forward 1.84ms", outcome="partial")
    recs.set_section(inv.id, "Microbenchmark of the d26 MLP", "| Method | Forward |\n|---|---|")
    try:
        res = search.tried(recs.store.conn, "d26 MLP with FP8 rowwise + compile")
        assert [h.fields["title"] for h in res.close] == ["Method FP8 rowwise + compile"]
        # a name neither the record nor its investigation holds still makes another experiment
        assert search.tried(recs.store.conn, "d40 MLP with FP8 rowwise + compile").close == []
    finally:
        recs.close()


def test_a_free_text_line_inside_an_attempts_text_gives_its_answer_to_the_attempt(tmp_path):
    recs = _records(tmp_path)
    inv = recs.new("Epoch takes 40 s on one GPU")
    # an import titled the attempt by the list's heading and kept every item in what was done, and kept the list
    # as text too
    recs.add_attempt(inv.id, title="Changes tested one at a time",
                     did="-> turned on cudnn benchmark mode, no change\n-> raised num_workers from 2 to 8 in the "
                         "dataloader, much faster", outcome="partial")
    recs.set_section(inv.id, "Changes tested one at a time",
                     "-> turned on cudnn benchmark mode, no change\n-> raised num_workers from 2 to 8 in the "
                     "dataloader, much faster")
    try:
        res = search.tried(recs.store.conn, "raise num_workers from 2 to 8 in the dataloader")
        assert res.close and res.close[0].fields["title"] == "Changes tested one at a time"
        assert not [h for h in res.result.hits if h.kind == "section"], [(h.kind, h.tier) for h in res.result.hits]
    finally:
        recs.close()


@pytest.fixture(scope="module")
def profiler(tmp_path_factory):
    recs = _records(tmp_path_factory.mktemp("profiler_ctx"))
    inv = recs.new("Profiler hangs on the pipelined kernel", symptom="the kernel runs fine without the profiler",
                   environment="GPU: NVIDIA B200")
    recs.add_attempt(inv.id, title="Profiled it with ncu --set full", result="hangs at 0 %", outcome="failed")
    recs.set_section(inv.id, "Protocol", "Whenever you are investigating a bug, write the attempt down first.")
    yield recs.store.conn
    recs.close()


def test_a_way_only_the_investigation_goes_is_not_the_records(profiler):
    # "without" was in the symptom only: the profiled run was "the same experiment" as running without the profiler
    res = search.tried(profiler, "run without the profiler")
    assert not res.close
    hit = next(h for h in res.result.hits if h.kind == "attempt")
    assert hit.verdict == "way-only-around"
    assert search.tried(profiler, "profile with ncu --set full").close  # the record's own way is still the same


def test_free_text_holding_one_of_the_ideas_words_is_not_a_report_of_it(profiler):
    # a protocol's "investigating a bug" with "NVIDIA" only in the environment was "file a bug with NVIDIA", tried
    res = search.tried(profiler, "file a bug with NVIDIA")
    assert not res.close
    assert search.tried(profiler, "write the attempt down first").close  # its own words still are


def test_an_idea_that_puts_in_what_no_record_holds_is_not_the_record_it_replaces(tmp_path):
    # "use nsys instead of ncu": nsys is in no record, so it was dropped, and "ncu ... instead of ..." held the rest
    recs = _records(tmp_path)
    inv = recs.new("Profiler hangs on the pipelined kernel")
    recs.add_attempt(inv.id, title="Application replay instead of kernel replay",
                     did="ncu --replay-mode application --set full python bench.py", outcome="worked")
    try:
        assert not search.tried(recs.store.conn, "use nsys instead of ncu").close
        assert search.tried(recs.store.conn, "application replay instead of kernel replay").close
    finally:
        recs.close()


def test_an_english_term_glued_to_chinese_text_is_found_by_tried(tmp_path):
    from dbglog.core.synonyms import identifier_words

    assert identifier_words("但是目前我已经使用packing的方式") == "packing"
    recs = _records(tmp_path)
    inv = recs.new("多卡训练时GPU利用率很低")
    recs.add_attempt(inv.id, title="感谢回复！但是目前我已经使用packing的方式且cut off len = 1024", outcome="failed")
    res = search.tried(recs.store.conn, "use packing")
    assert [(h.kind, h.number) for h in res.close] == [("attempt", 1)], res.close


def test_a_database_from_before_glued_words_indexes_them_on_open(tmp_path):
    db = tmp_path / "old.db"
    conn = old_database_with_attempt(db, "0014", "但是目前我已经使用packing的方式")
    with opened_by_dbglog(conn, db) as s:
        assert [(h.kind, h.number) for h in search.tried(s.conn, "use packing").close] == [("attempt", 1)]
        assert search.check_index(s.conn) == []


def test_a_try_recorded_in_the_ideas_own_words_is_the_first_answer(tmp_path):
    # Two tries of one log that the judge both calls the same experiment: the one titled in the very words asked
    # comes first, whatever the judge's score of the other (a success with more overlap in the body).
    recs = _records(tmp_path)
    log = recs.new("VAE decode runs out of memory at 1024px on a 12 GB card")
    recs.add_attempt(log.id, title="Dynamic offload + VAE tiling", did="offload_mode=cond_only --vae-tiling",
                     result="fits, 146 s per image, VAE tiling adds 80 s", outcome="worked")
    recs.add_attempt(log.id, title="No offload + VAE tiling", did="offload_mode=none --vae-tiling",
                     result="OOM in the VAE decode", outcome="failed")
    res = search.tried(recs.store.conn, "no offload + VAE tiling")
    answers = res.close + res.another
    assert answers and answers[0].title == "No offload + VAE tiling"
    recs.close()


def test_a_qualified_name_finds_the_try_that_names_its_member_and_class_apart(tmp_path):
    # "DQNAgent.select_action" is the method a worklog names as "select_action() in DQNAgent": the same thing.
    recs = _records(tmp_path)
    log = recs.new("Agent picks invalid actions after the screen check")
    recs.add_attempt(log.id, title="Modified select_action() in DQNAgent", did="priority gate before the argmax",
                     result="no invalid action in 200 episodes", outcome="worked")
    res = search.tried(recs.store.conn, "Modified DQNAgent.select_action")
    assert res.close and res.close[0].title == "Modified select_action() in DQNAgent"
    none = search.tried(recs.store.conn, "Modified ReplayBuffer.sample_batch")
    assert not none.close
    recs.close()


def test_a_heading_kept_as_free_text_that_titles_a_try_is_not_the_investigations_topic(tmp_path):
    recs = _records(tmp_path)
    inv = recs.new("llama.cpp crashes at load on the new card")
    recs.add_attempt(inv.id, title="Vulkan backend", result="Run: crashes, same error on load", outcome="failed")
    recs.add_attempt(inv.id, title="CUDA backend, arch 89", result="Run: model loads", outcome="worked")
    # an import keeps the tries' sections whole as free text too, under their own headings
    recs.set_section(inv.id, "Notes: Attempts > 1. Vulkan backend", "**Run**: crashes")
    recs.set_section(inv.id, "Notes: Attempts > 2. CUDA backend, arch 89", "**Run**: model loads")
    try:
        ans = search.tried(recs.store.conn, "vulkan backend")
        assert [h.fields["title"] for h in ans.close if h.kind == "attempt"] == ["Vulkan backend"]
    finally:
        recs.close()


def test_an_attempt_without_every_word_of_the_idea_is_still_a_candidate_when_sections_hold_them_all(tmp_path):
    # ("manually" is in no attempt: every word matched three free sections, and the attempt that ran the very
    # command was never gathered, so never judged)
    recs = _records(tmp_path)
    inv = recs.new("Containers lose their GPUs after a host reboot")
    recs.add_attempt(inv.id, title="`nvidia-docker restart 42c188bb7e23`", did="nvidia-docker restart 42c188bb7e23",
                     result="Cannot restart container 42c188bb7e23: error gathering device information",
                     outcome="failed")
    for k in range(3):
        recs.set_section(inv.id, f"Notes {k}", f"Restart the container manually with nvidia-docker (note {k}).")
    res = search.tried(recs.store.conn, "manually restart the container with nvidia-docker restart")
    assert any(h.kind == "attempt" for h in res.result.hits)
    # ("manually" says how it was done, not what: the record that ran the command is the same experiment)
    assert [h.kind for h in res.close][:1] == ["attempt"]
    recs.close()
