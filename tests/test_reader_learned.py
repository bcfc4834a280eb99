"""The learned recall pass (docreader/learned.py): it adds the tries the rules left alone when its model is
confident, cites their lines, shows its probability, drops only a linked attempt it all but rules out, never reads certain
structure, and helps on docs it was never trained on."""

import json
from pathlib import Path

import corpus_measure as cm
from dbglog.docreader import learned
from dbglog.docreader.read import read_document

SEED = Path(__file__).parent / "golden" / "07_seed_debug_protocol.md"

THREAD = """# Loader OOM since the 0.6 wheel

### dana — 2025-05-02

Since the 0.6 wheel the loader runs out of host memory on the second shard.

### omar — 2025-05-03

Skipping shard 17 gets the loader past the second shard with no OOM.
"""


def _attempts(text, model):
    return [(tuple(a.source_lines), a.outcome, a.who) for p in read_document(text, "doc.md", model=model)[0]
            for a in p.inv.attempts]


def _model(weights, bias=-6.0, threshold=0.5):
    return learned.Model(bias, threshold, weights, {})


def test_a_unit_the_model_is_sure_of_becomes_an_attempt_citing_its_lines_with_its_outcome_and_author():
    sure = _model({"w:skipping": 12.0})
    assert _attempts(THREAD, None) == []  # the rules alone read no try here
    assert _attempts(THREAD, sure) == [((9, 9), "worked", "omar")]


def test_a_model_that_is_not_sure_adds_nothing():
    assert _attempts(THREAD, _model({"w:skipping": 2.0})) == []


def test_a_model_that_rules_nothing_out_keeps_every_attempt_the_rules_read():
    every = _model({}, bias=8.0)  # says yes to every unit
    for doc in cm.corpus()[:25]:
        text = doc.read_text(encoding="utf-8")
        rules = {a[0] for a in _attempts(text, None)}
        assert rules <= {a[0] for a in _attempts(text, every)}, doc.name


REPORT = """# OOM after the 0.4 update

Since 0.4 the 13B model runs out of memory on the first prompt.

I installed 0.4.2 and the OOM is gone.
"""


def test_a_linked_attempt_the_model_all_but_rules_out_is_dropped_but_certain_structure_never_is():
    none = learned.Model(-30.0, 0.99, {}, {}, drop=0.5)  # scores every unit near zero
    assert [a[0] for a in _attempts(REPORT, None)] == [(5, 5)]
    assert _attempts(REPORT, none) == []
    text = SEED.read_text(encoding="utf-8")
    kept = read_document(text, SEED.name, model=none)[0][0].inv.attempts
    assert [a.number for a in kept] == [1, 2, 3, 4, 5]


COMMANDS = """# Driver checks on the new node

```bash
docker run --rm --gpus all cuda:12.4-base nvidia-smi  # NOK (Failed to initialize NVML)
docker run --rm --runtime=nvidia cuda:12.4-base nvidia-smi  # OK
```
"""


def test_a_command_with_the_comment_that_says_how_it_went_is_never_dropped_by_the_model():
    none = learned.Model(-30.0, 0.99, {}, {}, drop=0.5)  # scores every unit near zero
    assert [(a[0], a[1]) for a in _attempts(COMMANDS, none)] == [((4, 4), "failed"), ((5, 5), "worked")]


SWEEP = """# Pipeline sizes on two nodes

| NODES | TP | PP | MBS | Step time | TFLOPs | Notes |
| ----: | -: | -: | --: | --------: | -----: | ----: |
| 2 | 1 | 1 | 1 | 31 | 44.1 | 18GB |
| 2 | 1 | 2 | 2 | 30 | 45.0 | 21GB |
| 2 | 2 | 1 | 4 | 52 | 26.3 | 12GB |
"""

TOOL_TABLE = """# Batched bench on the 4090

| PP | TG | N_KV | T_PP s | S_PP t/s |
| -: | -: | ---: | -----: | -------: |
| 512 | 128 | 0 | 0.41 | 1248.8 |
| 512 | 128 | 4096 | 0.52 | 984.6 |
| 512 | 128 | 8192 | 0.66 | 775.7 |
"""


def test_the_rows_of_a_results_table_that_varies_its_settings_are_never_dropped_by_the_model():
    none = learned.Model(-30.0, 0.99, {}, {}, drop=0.5)  # scores every unit near zero
    assert [a[0] for a in _attempts(SWEEP, none)] == [(5, 5), (6, 6), (7, 7)]
    # a table one tool printed sweeps one setting: its rows are one run's output, and the model may drop them
    assert _attempts(TOOL_TABLE, none) == []


def test_the_pass_never_reads_certain_structure_so_the_seed_protocol_doc_stays_exact():
    text = SEED.read_text(encoding="utf-8")
    every = _model({}, bias=8.0)
    parsed = read_document(text, SEED.name, model=every)[0]
    inv = parsed[0].inv
    assert [a.number for a in inv.attempts[:5]] == [1, 2, 3, 4, 5]
    # whatever it adds lies outside the five protocol attempts, the differences table and the plan
    protocol = [tuple(a.source_lines) for a in read_document(text, SEED.name, model=None)[0][0].inv.attempts]
    added = [tuple(a.source_lines) for a in inv.attempts if tuple(a.source_lines) not in protocol]
    assert all(not (lo <= b and a <= hi) for a, b in added for lo, hi in protocol)


def test_explain_shows_the_learned_probability_of_each_unit_it_asked_about():
    parsed = read_document(THREAD, "doc.md", explain=True, model=_model({"w:skipping": 12.0}))[0]
    asked = {j.unit.first + 1: j.learned for j in parsed[0].judged if j.learned is not None}
    assert asked[9] > 0.99 and asked[5] < 0.01


def test_the_shipped_models_are_data_with_named_features_thresholds_and_what_they_were_trained_on():
    raw = json.loads(learned.MODEL.read_text(encoding="utf-8"))
    assert set(raw) == {"attempts", "steps", "outcomes"}
    for k in ("attempts", "steps"):
        m = raw[k]
        assert 0.0 <= m["drop"] < m["threshold"] < 1.0 and len(m["weights"]) > 1000
        assert all(k.split(":", 1)[0] in ("c", "kind", "w", "b", "h", "p", "n", "cb") or k in ("post", "head")
                   for k in m["weights"])
        assert m["about"]["docs"] >= 200 and m["about"]["trained_by"].startswith("bench/reader_learn.py")
    assert set(raw["outcomes"]) == set(learned.OUTCOMES)
    for m in raw["outcomes"].values():
        assert 0.0 < m["threshold"] < 1.0 and m["about"]["attempts"] >= 700
        assert all(k.split(":", 1)[0] in ("g", "r", "t") or k == "has result" for k in m["weights"])


def _outcome_models(weights_by_class, threshold=0.5):
    return tuple(learned.Model(-4.0, threshold, weights_by_class.get(k, {}), {}) for k in learned.OUTCOMES)


PROTOCOL_AND_LOOSE = """# Decoder hangs on rank 3

## Attempt 1: pin NCCL 2.18

**Hypothesis:** the 2.19 ring change.
**What we did:** pinned NCCL 2.18.
**Result:** same hang at step 40.
**Conclusion:** not the ring.

## Notes

I also reran with NCCL_P2P_DISABLE=1: same hang at step 40.
"""


def test_the_outcome_model_relabels_a_loose_try_it_is_sure_of_and_never_a_protocol_field():
    sure = learned.Models(outcomes=_outcome_models({"worked": {"t:same": 12.0, "r:same": 12.0}}))
    before = {a.title: a.outcome for a in read_document(PROTOCOL_AND_LOOSE, "doc.md", model=None)[0][0].inv.attempts}
    after = {a.title: a.outcome for a in read_document(PROTOCOL_AND_LOOSE, "doc.md", model=sure)[0][0].inv.attempts}
    loose = next(t for t in before if "P2P" in t)
    protocol = next(t for t in before if "2.18" in t)
    assert before[loose] == "failed" and after[loose] == "worked"  # (a model made to be wrong, to be seen acting)
    assert after[protocol] == before[protocol] == "failed"


def test_an_outcome_model_under_its_threshold_changes_nothing():
    unsure = learned.Models(outcomes=_outcome_models({"worked": {"t:same": 12.0}}, threshold=0.99))
    before = [(a.title, a.outcome) for a in read_document(PROTOCOL_AND_LOOSE, "doc.md", model=None)[0][0].inv.attempts]
    after = [(a.title, a.outcome) for a in read_document(PROTOCOL_AND_LOOSE, "doc.md", model=unsure)[0][0].inv.attempts]
    assert after == before


def test_without_a_model_file_the_reader_reads_by_the_rules(tmp_path):
    assert not learned.load(str(tmp_path / "none.json"))
    assert _attempts(THREAD, None) == _attempts(THREAD, False)


PLANS = """# Loader OOM since the 0.6 wheel

Since the 0.6 wheel the loader runs out of host memory on the second shard.

A bisect of the wheels between 0.5 and 0.6 on the staging box is what remains.

I will probably look at it again later.
"""


def _steps(text, models):
    return [(tuple(s.source_lines), s.text) for p in read_document(text, "doc.md", model=models)[0]
            for s in p.inv.next_steps]


def test_the_step_model_adds_a_plan_it_is_sure_of_and_drops_a_guessed_one_it_scores_near_zero():
    rules = _steps(PLANS, None)
    sure = learned.Model(-6.0, 0.5, {"w:bisect": 12.0}, {}, drop=0.01)
    got = _steps(PLANS, learned.Models(steps=sure))
    assert rules == [((7, 7), "I will probably look at it again later.")]  # the rules' guess, not the plan
    # the plan the model is sure of is a step; the rules' guess it scores near zero is gone
    assert [lines for lines, _ in got] == [(5, 5)]


def test_a_step_from_a_next_steps_list_is_never_dropped():
    doc = "# Hang at step 512\n\n## Next steps\n\n- rerun with NCCL_DEBUG=INFO\n- try the 2.21 NCCL build\n"
    never = learned.Model(-30.0, 0.99, {}, {}, drop=0.99)  # would drop every guessed plan
    assert len(_steps(doc, learned.Models(steps=never))) == len(_steps(doc, None)) == 2


def test_the_shipped_model_finds_more_on_own_words_docs_it_was_never_trained_on():
    # tests/corpus/docs is not among the model's training docs (bench/reader_learn.py trains on the labelled
    # real docs and tests/corpus/styles); the pass must find more there than the rules alone
    found = {}
    for name, model in (("rules", None), ("learned", True)):
        learned.load.cache_clear()
        rows = [cm.measure(d, model=model) for d in cm.corpus()]
        found[name] = cm.totals(rows)
    assert found["learned"]["attempts_found"] > found["rules"]["attempts_found"]
    # and its added rows are not mostly junk: at least one in three is a labelled try
    extra_rows = found["learned"]["extra"] - found["rules"]["extra"]
    gained = found["learned"]["attempts_found"] - found["rules"]["attempts_found"]
    assert gained * 2 >= extra_rows


NOTES = """# Card falls off the bus under load

The GPU drops off the PCIe bus after an hour of training (Xid 79).

## Notes

The run uses 8 GPUs on one node.

Downgraded triton to 2.3.1 and the illegal memory access is gone.
"""


def test_a_unit_the_attempt_pass_almost_took_is_offered_unticked_in_the_review_with_the_outcome_its_words_give():
    from dbglog.docreader.review import review_markdown

    almost = learned.Model(-6.0, learned.load().attempts.threshold, {"w:downgraded": 5.7}, {})  # p = 0.43
    parsed = read_document(NOTES, "notes.md", explain=True, model=almost)[0]
    assert not any(a.source_lines == [9, 9] for p in parsed for a in p.inv.attempts)
    review = review_markdown("notes.md", NOTES, parsed)
    unsure = review.split("## Not sure (not imported unless ticked)")[1]
    assert "- [ ] lines 9-9 · worked · 0.43 · Downgraded triton to 2.3.1" in unsure
    assert "lines 7-7" not in unsure  # scored near zero: not offered


REPLY = """# Preallocation ignored on the notebook runtime

### dana — 2021-01-29

Since yesterday the notebook preallocates 90 % of the GPU whatever we set.

### omar — 2021-01-29

{}
"""


def test_a_sentence_the_model_takes_that_tells_two_tries_gives_two_attempts_on_its_lines():
    text = REPLY.format("Same here: we tried to reset the runtime and to switch accounts, but the problem persists.")
    assert _attempts(text, None) == []  # the rules alone leave it
    got = [(a.title, a.outcome, tuple(a.source_lines), a.who)
           for p in read_document(text, "doc.md", model=_model({"w:tried": 12.0}))[0] for a in p.inv.attempts]
    assert [(t.split()[-2:], o, lines, who) for t, o, lines, who in got] == [
        (["the", "runtime"], "failed", (9, 9), "omar"), (["switch", "accounts"], "failed", (9, 9), "omar")]


def test_an_attempt_the_model_takes_that_only_looked_is_inconclusive_whatever_its_finding_says():
    text = REPLY.format("Dumped the driver version on every node, all the same 535 build, which worked fine before.")
    assert _attempts(text, None) == []
    assert _attempts(text, _model({"w:dumped": 12.0})) == [((9, 9), "inconclusive", "omar")]


SETUP_CAPTION = """# OOM with the static memory fraction

**Setup:**

GPU: L40S 48 GB

I set --mem-fraction-static to 0.85 and got a CUDA out of memory error; at 0.84 the server refuses to start.
"""


def test_a_bold_setup_caption_does_not_silence_the_tries_told_after_it_while_an_installation_section_stays_quiet():
    sure = _model({"w:mem": 12.0})
    assert [o for _, o, _ in _attempts(SETUP_CAPTION, sure)] == ["failed"]
    install = SETUP_CAPTION.replace("**Setup:**", "## Installation")
    assert _attempts(install, sure) == []


def test_a_setting_that_does_not_work_beside_one_that_does_gives_two_attempts_with_opposite_outcomes():
    doc = ("# Preallocation ignored\n\nI find that `XLA_PREALLOCATE=false` via `!export` does not work, "
           "but `os.environ['XLA_PREALLOCATE']` does.\n")
    assert _attempts(doc, None) == []  # the rules alone leave it
    assert [o for _, o, _ in _attempts(doc, _model({"w:find": 12.0}))] == ["failed", "worked"]


def test_the_covered_ranges_answer_as_a_scan_of_every_range_would():
    import random

    rng = random.Random(5)
    for _ in range(300):
        spans = [(a, a + rng.randrange(0, 6)) for a in (rng.randrange(0, 60) for _ in range(rng.randrange(0, 8)))]
        near = learned._Spans(spans)
        for first in range(0, 70, 3):
            last = first + rng.randrange(0, 4)
            assert near.touches(first, last) == any(lo <= last and first <= hi for lo, hi in spans), (spans, first)


def test_a_line_labelled_as_the_goal_is_no_try_even_for_the_learned_pass():
    from dbglog.kb import importer

    doc = """# Unified CUDA build - attempt log

**Workflow:** `CI-Linux-CUDA.yml`
**Strategy:** incremental caching with a fixed key
**Goal:** Get CMake configure to succeed, building up vcpkg cache with each attempt

---

## Attempts Log

### Attempt 1: YAML syntax error - unmatched quote
**Result:** ❌ FAILED in 5m39s
**Fix Applied:** Fixed quote syntax - removed extra quote
"""
    parsed, _ = importer.parse_document(doc, "doc.md")
    got = [(a.title, a.source_lines) for p in parsed for a in p.inv.attempts]
    assert ("YAML syntax error - unmatched quote", [11, 14]) in got and not any(lines == [5, 5] for _, lines in got), got


def test_a_verdict_line_right_after_a_guessed_try_is_how_it_went():
    notes = """# flash-attn on the 2080 Ti

Install notes for the old card:
a）set DISTUTILS_USE_SDK=1 in the x64 prompt
b）pip install flash-attn==1.0.9 --no-build-isolation
c）成功。
"""
    sure = _model({"w:pip": 12.0})
    assert _attempts(notes, sure) == [((5, 6), "worked", "")]


def test_values_named_after_tried_in_the_problems_post_are_a_failed_try_each_quoted_or_not():
    doc = """# Override ignored on a Vega card

### someone — 2024-03-15

Seeing the same crash with the Windows build on a Vega 56. The debug log shows the variable is read but the card is still refused. Have tried setting the variable to values of: 9.0.0, "9.0.0", 10.3.0, "10.3.0"
"""
    parsed, _ = read_document(doc, "doc.md")
    titles = [a.title for p in parsed for a in p.inv.attempts if a.outcome == "failed"]
    assert len(titles) == 4, titles
    assert sum('"' in t for t in titles) == 2


def test_boosted_trees_weigh_cues_together_and_mix_their_log_odds_with_the_linear_part():
    import math

    from dbglog.util.logit import Model, Trees

    # one tree: "a past-tense verb" counts only by the asker (x <= 0.5 goes left)
    tree = ((0, 0.5, 1, 2, 0.0, 0), (0, 0.0, 0, 0, -1.0, 1), (1, 0.5, 3, 4, 0.0, 0),
            (0, 0.0, 0, 0, -1.0, 1), (0, 0.0, 0, 0, 3.0, 1))
    trees = Trees(0.0, 0.5, ("c:opens with a past-tense verb", "c:by the asker"), (tree,))
    both = {"c:opens with a past-tense verb": 1.0, "c:by the asker": 1.0}
    assert trees.score(both) == 3.0 and trees.score({"c:opens with a past-tense verb": 1.0}) == -1.0
    m = Model(0.2, 0.45, {"c:by the asker": 1.0}, {}, 0.25, trees)
    assert math.isclose(m.probability(both), 1 / (1 + math.exp(-(0.5 * 1.2 + 0.5 * 3.0))))
    again = Model.of(m.to_dict())
    assert again == m and again.probability({}) == m.probability({})
    assert learned.load().attempts.trees is not None  # (the shipped attempt model has them)


def test_compiled_trees_score_every_feature_dict_exactly_as_walking_them_node_by_node():
    import random

    from dbglog.util.logit import Trees

    trees = learned.load().attempts.trees
    rng = random.Random(7)
    for _ in range(500):
        f = {n: rng.choice([0.0, 1.0, 0.5, rng.random() * 4]) for n in rng.sample(trees.features, 40)}
        assert trees.score(f) == trees.walk(f)  # (the same comparisons and additions in order: the same float)
    assert trees._compiled is not None
    # a threshold with no literal (inf) is walked, not compiled
    odd = Trees(0.5, 0.5, ("c:x",), (((0, float("inf"), 1, 2, 0.0, 0), (0, 0.0, 0, 0, 1.0, 1), (0, 0.0, 0, 0, 2.0, 1)),))
    assert odd._compiled is None and odd.score({"c:x": 3.0}) == 1.5 and odd.score({}) == 1.5


def test_a_models_linear_part_is_the_sum_of_its_weighted_features_in_their_order_bit_for_bit():
    import math
    import random

    m = learned.load().steps
    names = list(m.weights)[:60] + [f"w:unknown{i}" for i in range(30)]  # (features without a weight add nothing)
    rng = random.Random(3)
    for _ in range(300):
        f = {n: rng.choice([1.0, 0.5, -0.25, rng.random() * 3]) for n in rng.sample(names, 35)}
        z = m.bias + sum(m.weights[k] * v for k, v in f.items() if k in m.weights)
        assert m.probability(f) == 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def test_a_units_place_is_given_to_the_model_as_numbers():
    from dbglog.docreader.units import segment

    doc = segment("# t\n\n### a — 2024-01-01\nIt fails.\n\n### b — 2024-01-02\n- I tried the nightly, same error.\n")
    units = [u for u in doc.units if u.kind in learned.KINDS]
    f = learned.unit_features(units, [{} for _ in units], {}, len(units) - 1)
    assert f["x:post"] == 1 / 20 and 0.5 < f["x:place"] < 1 and f["x:index"] == 0.0 and f["x:words"] == 6 / 80


def test_guessed_tries_in_separate_list_items_stay_separate():
    doc = """# Hang in the custom all-reduce

## Findings

- The profiler trace of rank two shows a wait on the peer buffer.
- The custom all-reduce kernel holds the stream on the other ranks.
"""
    everything = _model({"c:a list item": 20.0})  # every item a guess
    got = [tuple(a.source_lines) for p in read_document(doc, "doc.md", model=everything)[0] for a in p.inv.attempts]
    assert (5, 5) in got and (6, 6) in got and (5, 6) not in got, got


def test_a_table_of_problems_met_and_their_fixes_is_never_dropped_by_the_learned_pass():
    doc = """# CTranslate2 on ROCm for Windows

## Problems encountered and solutions

| # | Problem | Solution |
|---|---------|----------|
| 1 | CMake can't find a C compiler | installed the MSVC Build Tools |
| 2 | Intel OpenMP `libiomp5` not found | `-DOPENMP_RUNTIME=NONE` |
"""
    nobody = learned.Model(-9.0, 0.9, {}, {}, 0.25)  # every unit scored near zero, under the drop
    got = [a.source_lines for p in read_document(doc, "doc.md", model=nobody)[0] for a in p.inv.attempts]
    assert got == [[7, 7], [8, 8]], got


LOOK_WITH_OUTPUT = """# Torch check on the old card

```bash
$ pip show torchvision
Name: torchvision
Version: 0.20.1+cu121
```
"""


def test_the_outcome_model_never_makes_a_look_with_its_output_a_fix_that_failed():
    # ("$ pip show torch" and what it printed is a look: its finding is no verdict, whichever pass reads it)
    sure = learned.Models(outcomes=_outcome_models({"failed": {"r:version": 12.0, "t:pip": 12.0}}))
    assert [a.outcome for p in read_document(LOOK_WITH_OUTPUT, "doc.md", model=None)[0] for a in p.inv.attempts] \
        == ["inconclusive"]
    assert [a.outcome for p in read_document(LOOK_WITH_OUTPUT, "doc.md", model=sure)[0] for a in p.inv.attempts] \
        == ["inconclusive"]
    assert [a.outcome for p in read_document(LOOK_WITH_OUTPUT, "doc.md")[0] for a in p.inv.attempts] == ["inconclusive"]


SECTIONED = """# NCCL hang on 2 nodes

Training hangs at the first all_reduce when we go from 1 node to 2.

## What we tried

- Set `NCCL_IB_DISABLE=1`: still hangs.
- Pinned `NCCL_SOCKET_IFNAME=ens5f0` on both nodes: the hang is gone, 30 steps/s.

## Next

- [ ] Check the IB GID index
"""


def test_the_opening_paragraph_of_a_doc_with_a_section_of_tries_is_no_try_whatever_a_model_says():
    sure = _model({"w:hangs": 12.0, "w:training": 12.0})
    assert [a[0] for a in _attempts(SECTIONED, sure)] == [(7, 7), (8, 8)]
    # (without a section of tries, the opening paragraph is the model's to read)
    flat = SECTIONED.replace("## What we tried\n", "")
    assert (3, 3) in [a[0] for a in _attempts(flat, sure)]
