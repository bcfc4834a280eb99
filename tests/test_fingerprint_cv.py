"""The grouped cross-validation of "same failure" (bench/fingerprint_eval.py --cv): thresholds are fitted
on the training folds only, precision first, and the left-out fold is judged with them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import fingerprint_eval as E  # noqa: E402


def _case(fold: str, same: bool, score: float) -> E.Case:
    c = E.Case.__new__(E.Case)  # (a pair reduced to what the token-set decision reads)
    c.fold, c.same, c.hard, c.rules, c.gate, c.site, c.fields = fold, same, not same, None, True, True, score
    c.tokens, c._at, c.pair = ((), ()), {}, {}
    return c


def test_the_fitted_threshold_keeps_the_most_recall_at_the_target_precision_and_the_stricter_on_ties():
    train = [_case("x", True, 100), _case("x", True, 96), _case("x", False, 90), _case("x", True, 84)]
    (t_site, _), _ = E.fit("token set", train)
    assert t_site == 96  # 96 and 100 kept, the different pair at 90 left out: the strictest threshold that does


def test_a_left_out_fold_is_judged_by_thresholds_fitted_without_it():
    folds = {"a": [_case("a", False, 90), _case("a", True, 100)],
             "b": [_case("b", False, 90), _case("b", True, 100)],
             "c": [_case("c", True, 90)]}  # (only this fold says 90 is the same failure)
    res = E.cross_validate(folds, ["token set"])["token set"]
    th, n = res["c"]
    assert th[0] > 90 and (n["tp"], n["fn"]) == (0, 1)
    assert res["pooled"]["tp"] == sum(res[f][1]["tp"] for f in folds)


def test_rounds_that_share_a_log_or_a_source_project_are_one_fold(tmp_path):
    def round_(name, *pairs):
        d = tmp_path / name
        d.mkdir()
        (d / "pairs.json").write_text(json.dumps([{"a": f"logs/{a}", "b": f"logs/{b}", "same": True} for a, b in pairs]))
        return str(d)

    one = round_("one", ("lcpp6433_kaits.log", "lfile403.log"))
    two = round_("two", ("lcpp903.log", "ollama3765.log"))  # (another llama.cpp issue: the same project)
    three = round_("three", ("upctf7.log", "tsnecuda126.log"))
    folds = E.groups([one, two, three])
    assert sorted(folds.values()) == sorted([[one, two], [three]])
    assert E.project("lcpp6433_kaits.log") == E.project("lcpp903.log") == "lcpp"
