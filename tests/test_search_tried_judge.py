"""`tried`'s learned judge (kb/search.py ``judge_same``, model kb/same.json): a paraphrase that the word rules
refused only for holding too few of the idea's words is answered "tried"; what the rules read as a difference,
or a setting the idea names that no record holds, is never overruled; the rules' "same" is never taken away."""

import json
from dataclasses import replace

import pytest

from dbglog.kb import search
from dbglog.util.logit import Model

PARAPHRASE = "the converted checkpoint was switched from mistral-7b to mistral-7b-instruct"


def _judge(threshold=0.5):
    # the shipped weights at a threshold of the test's choosing: the shipped one is chosen by cross-validation
    # (bench/tried_learn.py) and moves when the model is retrained
    return replace(search.same_model(), threshold=threshold)


@pytest.fixture(scope="module")
def conn(tmp_path_factory):
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace

    root = tmp_path_factory.mktemp("tried_judge")
    (root / ".git").mkdir()
    recs = Records(Workspace(root / ".dbglog"), create=True)
    inv = recs.new("Megatron checkpoint gives garbage text after the export", symptom="inference prints repeated tokens")
    recs.add_attempt(inv.id, title="Ran it with a 13b model in 2GB shards as well, the output is fine", outcome="worked")
    recs.add_attempt(inv.id, title="I changed the checkpoint from mistral-7b to mistral-7b-instruct.",
                     result="answers are readable now", outcome="worked")
    recs.add_attempt(inv.id, title="Turned off tensor parallel output gathering", did="parallel_output=False",
                     result="no change", outcome="failed")
    yield recs.store.conn
    recs.close()


def _first(res):
    return res.close[0].title if res.close else None


def test_a_paraphrase_refused_for_too_few_words_is_answered_tried(conn):
    res = search.tried(conn, PARAPHRASE, judge=_judge())
    assert _first(res) == "I changed the checkpoint from mistral-7b to mistral-7b-instruct."
    assert res.close[0].same_p is not None and res.close[0].same_p >= 0.5
    # below the judge's threshold the words' refusal stands
    assert not search.tried(conn, PARAPHRASE, judge=_judge(0.99)).close


def test_the_rules_alone_refuse_that_paraphrase(conn):
    # (what the judge changes: without it the same question gets no "tried")
    res = search.tried(conn, PARAPHRASE, judge=None)
    assert not res.close
    hit = next(h for h in res.result.hits if "mistral-7b-instruct" in h.title)
    assert hit.verdict in {r.split(":", 1)[1] for r in search.JUDGED_RULES}


def test_a_setting_no_record_holds_is_never_rescued(conn):
    res = search.tried(conn, "set CUDA_DEVICE_MAX_CONNECTIONS=1 for the garbage text from the exported checkpoint")
    assert not res.close


def test_a_value_the_record_changed_another_way_stays_another_way(conn):
    res = search.tried(conn, "set parallel_output=True")
    assert not res.close
    assert res.another and "parallel" in res.another[0].title


def test_the_judge_never_takes_away_what_the_rules_call_the_same(conn):
    never = Model(bias=-30.0, threshold=0.99, weights={}, about={})
    q = "turned off tensor parallel output gathering"
    assert _first(search.tried(conn, q, judge=never)) == _first(search.tried(conn, q, judge=None)) is not None


def test_an_always_sure_judge_still_leaves_a_named_difference_alone(conn):
    always = Model(bias=30.0, threshold=0.5, weights={}, about={})
    res = search.tried(conn, "set parallel_output=True", judge=always)
    assert not res.close


def test_json_gives_the_judges_probability_and_labels_its_answer_a_guess(conn):
    d = search.tried(conn, PARAPHRASE, judge=_judge()).to_dict()
    assert 0.0 <= d["close"][0]["same_probability"] <= 1.0
    assert d["close"][0]["judged_by"] == "learned" and "a guess" in d["close"][0]["differs"]
    plain = search.tried(conn, "turned off tensor parallel output gathering").to_dict()
    assert plain["close"][0]["judged_by"] == "built-in"


def test_what_the_judge_read_is_collected_for_training(conn):
    seen: list = []
    search.tried(conn, PARAPHRASE, judge=None, seen=seen)
    assert seen and all(h.kind == "attempt" for h, _ in seen)
    assert all({"share_direct", "sim", "rel_score"} <= set(f) for _, f in seen)


def test_no_model_file_means_the_rules_alone(tmp_path):
    assert search.same_model(str(tmp_path / "absent.json")) is None


def test_the_shipped_model_says_how_it_was_trained_and_cross_validated():
    m = search.same_model()
    assert m is not None and m.weights and m.threshold == search.SAME_AT
    cv = m.about["cv_5fold_by_document"]
    assert {"tried", "never_tried"} <= set(next(iter(cv.values())))


def test_a_model_survives_its_json_round_trip():
    m = Model(bias=-1.5, threshold=0.4, weights={"sim": 0.9, "rule:name-missing": -0.2}, about={"c": 1.0})
    assert Model.of(json.loads(json.dumps(m.to_dict()))) == m


def test_a_number_the_record_lacks_is_never_rescued(conn):
    # (the paraphrase with a size it never gave: another value, not the same experiment, however sure the judge)
    always = Model(bias=30.0, threshold=0.5, weights={}, about={})
    assert search.tried(conn, PARAPHRASE, judge=always).close
    assert not search.tried(conn, PARAPHRASE + " at 2GB per shard", judge=always).close


@pytest.mark.parametrize("idea", ["the", "a", "it the"])
def test_an_idea_of_stop_words_alone_is_never_judged_tried(conn, idea):
    # "the" matched every attempt's words and the judge, reading only its measures, called two of them the same
    # experiment at 0.6: a question that names nothing is not a repeat of anything
    res = search.tried(conn, idea, judge=_judge(0.01))
    assert not res.close


@pytest.mark.parametrize("idea", ["checkpoint", "it works"])
def test_an_idea_of_one_plain_word_is_too_vague_to_be_a_repeat(conn, idea):
    # "checkpoint" is in two attempts' words: each was "the same experiment" by the word rules, since it held the
    # whole idea; an agent asking so would skip whatever it meant
    res = search.tried(conn, idea, judge=_judge())
    assert not res.close and res.vague and res.to_dict()["vague"] is True


def test_a_word_with_a_setting_or_a_second_word_is_judged_as_before(conn):
    assert search.tried(conn, "parallel_output=False", judge=_judge()).close
    assert not search.tried(conn, "mistral-7b-instruct checkpoint", judge=_judge()).vague


def test_another_number_in_a_word_is_no_typo_of_the_records(tmp_path):
    # "2-wide" was corrected to "4-wide" as a typo, and "use 2-wide tiles" answered by the 4-wide record
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace

    (tmp_path / ".git").mkdir()
    recs = Records(Workspace(tmp_path / ".dbglog"), create=True)
    inv = recs.new("attention_fwd faults after the tiling change")
    recs.add_attempt(inv.id, title="Use 4-wide tiles in attention_fwd", result="illegal address", outcome="failed")
    try:
        res = search.tried(recs.store.conn, "use 2-wide tiles")
        assert not res.close and all(t.kind != "typo" for t in res.result.query.terms)
    finally:
        recs.close()
