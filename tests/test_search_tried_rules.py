"""`tried` on near-misses: the general rules found on real debug docs (session s4).

One small workspace in the shapes real docs are imported in: a plan recorded as an untested
attempt, a knob set one way, a setting written in code, an issue's log output, a runbook's advice.
Each rule is checked both ways: the near-miss is not "tried", the idea itself still is.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import module_records
from dbglog.kb import search


@pytest.fixture(scope="module")
def conn(tmp_path_factory):
    recs = module_records(tmp_path_factory, "tried_rules")
    inv = recs.new("ROCm cleanup hang on two RX 7900 XT", symptom="hangs in torch.cuda.empty_cache before training")
    recs.add_attempt(inv.id, title="TORCH_BLAS_PREFER_HIPBLASLT=0", result="no effect on the hang", outcome="failed")
    recs.add_attempt(inv.id, title="Solution 1: Skip the pre-training GPU cleanup",
                     hypothesis="the cleanup triggers the deadlock", outcome="untested")
    recs.add_attempt(inv.id, title="Reduced the dataloader timeout from 600 s to 120 s",
                     did="MU_DL_TIMEOUT=120", result="hang caught earlier", outcome="partial")
    recs.add_attempt(inv.id, title="Fixed the retain_graph flag", did="RETAIN_GRAPH: bool = False",
                     result="memory stable", outcome="worked")
    recs.add_attempt(inv.id, title="Infiniband settings", did="export NCCL_IB_DISABLE=0\nexport NCCL_SOCKET_IFNAME=ens4f0",
                     result="same hang", outcome="failed")
    recs.add_attempt(inv.id, title="Disabled CUDA graphs", did="--disable-cuda-graph on TP=8",
                     result="server stays up", outcome="worked")
    recs.add_attempt(inv.id, title="Trainer smoke test", did="python train.py --trainer gpu --steps 10",
                     result="hangs at step 1", outcome="failed")
    recs.add_attempt(inv.id, title="NCCL timeouts in code",
                     did='os.environ.setdefault("NCCL_BLOCKING_WAIT", "1")\nos.environ["NCCL_ASYNC_ERROR_HANDLING"] = "1"',
                     result="errors surface at once", outcome="partial")
    recs.add_attempt(inv.id, title="Solution 2: enhanced MIOpen debug variables",
                     conclusion="```bash\nexport MIOPEN_DEBUG_CONV_WINOGRAD=0\n```", outcome="partial")
    recs.add_attempt(inv.id, title="Smaller model", did="vllm serve qwen-7b",
                     result="RuntimeError at CUDACachingAllocator.cpp:1131", outcome="failed")
    recs.add_attempt(inv.id, title="Half precision for the cleanup hang", did="--dtype float16", result="same hang",
                     outcome="failed")
    issue = recs.new("llama.cpp cudaMalloc OOM on dual 3090")
    recs.add_attempt(issue.id, title="bf16 weights", did="--dtype bf16", result="same OOM", outcome="failed")
    recs.add_attempt(issue.id, title="Use non-power-of-2 channels", did="nn.Conv2d(16, 31, 3)", outcome="worked")
    recs.add_attempt(issue.id, title="Newer build", did="built b5190 with CUDA 12.8", outcome="failed")
    recs.set_section(issue.id, "Expected Results", "### Training output\n{'loss': 2.2, 'learning_rate': 0.0002}")
    recs.set_section(issue.id, "Relevant log output",
                     "ggml_cuda_init: GGML_CUDA_FORCE_MMQ:    no\nggml_cuda_init: found 2 CUDA devices")
    recs.set_section(issue.id, "Troubleshooting",
                     "### If data loading is slow:\n1. Increase `MU_TRAIN_WORKERS`\n2. Increase the NCCL socket threads")
    mimo = recs.new("MIMO throughput on 8xH100", symptom="TFLOPs per GPU below target")
    recs.add_attempt(mimo.id, title="Experiment 3: Batch Size Increase", did="Double micro_batch_size: mbs=4, nmb=2",
                     result="OOM at 75 GB; trajectory 49 -> 48.3", outcome="failed")
    recs.add_attempt(mimo.id, title="php-fpm static children", did="pm=static\npm.max_children=10000",
                     result="480 rps", outcome="worked")
    recs.add_attempt(mimo.id, title="Theories ruled out", did="| CuPy pool cap (256MB) | identical 41GB VM |",
                     outcome="failed")
    recs.add_attempt(mimo.id, title="Experiment 4: Text Embedding Reorder",
                     did="Moved get_text_embeddings() before the encoder forward: reordering enables overlap",
                     result="+1.0% TFLOPs", outcome="worked")
    recs.add_attempt(mimo.id, title="iter9 chain again, LR=1e-5", did="--lr 1e-5 --load_from best.pt",
                     result="val 47.76", conclusion="Continue chaining at LR=5e-6; if plateau, switch to an "
                     "ensemble of recent checkpoints.", outcome="worked")
    recs.add_attempt(mimo.id, title="Attempt 2: shorter context", did="seq 8192 -> 4096, halving the sequence",
                     result="still OOM", outcome="failed")
    recs.set_section(mimo.id, "Notes", "Model: 1B ViT (40L, H=1408) + 7B LLM (32L, H=4096) on 8xH100 80GB, PP=1.")
    recs.next_add(mimo.id, "Activation recomputation", detail="enable for the encoder to free 21.7 GB")
    recs.set_section(mimo.id, "Replies", "### Post by helper\nYour mistake was the downloaded driver. To get the "
                     "desktop back you can remove the hidden .compiz folder and reboot.")
    recs.set_section(mimo.id, "A hypothesis that measurement killed",
                     "The model did not fit in RAM, so slim_gguf.py requantizes it to Q8_0.\n"
                     "Result: 9.6 GB -> 6.0 GB, and it made no difference to speed.")
    fp8 = recs.new("FP8 GEMM output drifts from the bf16 reference")
    recs.add_attempt(fp8.id, title="E2: Accumulator Width", did="Switched the epilogue accumulator from fp16 to fp32",
                     result="max error 0.41 -> 0.09", outcome="partial")
    recs.add_attempt(fp8.id, title="run2 activation offload to CPU", did="offload_activations: true",
                     result="1,874 -> 1,390 tok/s", outcome="failed")
    recs.add_attempt(fp8.id, title="Experiment 5: fp32 softmax only", did="softmax(scores.float())",
                     result="NaN later, at 8,460", conclusion="Partial at best.\n\n**Recommendation:** QK-norm on "
                     "for d24 and up. Re-run d20 with it to check the cost at small scale.", outcome="partial")
    ddp = recs.new("DDP training 4x slower than expected on 4 GPUs")
    recs.add_attempt(ddp.id, title="Test alternative backends",
                     did="To isolate whether the issue was specific to NCCL, switched to gloo",
                     result="gloo: 4x speedup", outcome="worked")
    lcd = recs.new("ST7920 graphics investigation", symptom="garbled pixels while testing the display")
    recs.add_attempt(lcd.id, title="Workaround attempted", did="PAUSEUI command (suspend UI task)",
                     result="Same behavior with UI paused", outcome="failed")
    recs.next_add(lcd.id, "Decompile the LCD driver with ghidra")
    recs.set_section(lcd.id, "Post by a helper", "What driver are you using? Try using envy. Remove the old "
                     "driver. Do not reboot. Now load the 96.xx driver and see what happens.")
    recs.set_section(lcd.id, "Build notes", "Whenever I change GCC, kbuild rebuilds everything.\n"
                     "How can I keep my old object files with ccache?")
    yield recs.store.conn
    recs.close()


def said(conn, idea):
    res = search.tried(conn, idea)
    return bool(res.close), res


def test_untested_attempt_is_mentioned_not_tried(conn):
    tried, res = said(conn, "skip the pre-training gpu cleanup")
    assert not tried and res.mentioned and res.mentioned[0].outcome == "untested"


def test_a_knob_turned_the_other_way_is_another_experiment(conn):
    assert not said(conn, "increase the dataloader timeout")[0]
    assert said(conn, "lower the dataloader timeout")[0]
    assert not said(conn, "enable cuda graphs on TP=8")[0]
    assert said(conn, "turn off cuda graphs")[0]


def test_another_value_is_another_experiment(conn):
    assert not said(conn, "NCCL_IB_DISABLE=1")[0]
    assert said(conn, "NCCL_IB_DISABLE=0")[0]
    assert said(conn, "retain_graph=False")[0]  # written `RETAIN_GRAPH: bool = False`
    assert not said(conn, "retain_graph=True")[0]
    assert not said(conn, "--trainer=cpu")[0]  # the record ran `--trainer gpu`
    assert not said(conn, "trainer=cpu")[0]


def test_instead_of_names_what_goes_in(conn):
    assert said(conn, "use fp16 instead of bf16 for the cleanup hang")[0]
    assert not said(conn, "use bf16 instead of fp16 for the cleanup hang")[0]


def test_names_and_their_qualifiers(conn):
    assert said(conn, "non-power-of-2 channels")[0]
    assert not said(conn, "use power-of-2 channels")[0]  # the record's "non-" says the other
    assert said(conn, "build with CUDA 12.8")[0]
    assert not said(conn, "build with triton 12.8")[0]  # 12.8 is CUDA's here
    tried, res = said(conn, "reduce the learning rate")  # a training log shows it, under expected results
    assert not tried


def test_a_short_word_is_not_corrected_into_another_length(conn):
    from dbglog.kb.search import correct_word

    assert correct_word(conn, "opencl") != "open"
    assert correct_word(conn, "trainr") in ("trainer", "train")


def test_settings_written_in_code(conn):
    assert said(conn, "NCCL_BLOCKING_WAIT=1")[0]
    assert not said(conn, "NCCL_BLOCKING_WAIT=0")[0]
    assert not said(conn, "NCCL_ASYNC_ERROR_HANDLING=0")[0]
    assert said(conn, "MIOPEN_DEBUG_CONV_WINOGRAD=0")[0]  # (the import left the command in the conclusion)
    assert not said(conn, "MIOPEN_DEBUG_CONV_WINOGRAD=1")[0]


def test_a_switch_must_be_turned(conn):
    # the record names the allocator in an error line: it did not turn it on (or off)
    assert not said(conn, "enable the caching allocator again")[0]
    assert said(conn, "turn off hipblaslt")[0]  # `..._HIPBLASLT=0` turns it off


def test_logs_and_advice_are_not_attempts(conn):
    assert not said(conn, "GGML_CUDA_FORCE_MMQ=1")[0]  # an issue template's log prints the setting
    tried, res = said(conn, "increase MU_TRAIN_WORKERS")  # "If data loading is slow:" is advice
    assert not tried and res.mentioned


def test_acronyms_and_library_names(conn):
    assert said(conn, "turn off hipblaslt")[0]  # the word inside TORCH_BLAS_PREFER_HIPBLASLT=0
    res = search.tried(conn, "turn off hipblaslt")
    assert not any("miopen" in a.lower() for t in res.result.query.terms for a in t.alts)
    assert not said(conn, "replace DDP with FSDP for the cleanup hang")[0]


def judged(conn, idea) -> dict[str, str]:
    """Each hit ``tried`` would judge for ``idea``: its title -> the rule that refuses it ("" = close)."""
    res = search.search(conn, idea, kinds=search.TRIED_KINDS, limit=10, candidates=search.TRIED_CANDIDATES)
    search.weigh(conn, res.query, search.TRIED_KINDS)
    return {h.title: search.judge(h, res.query) for h in res.hits}


def test_close_rules_are_one_named_documented_table():
    names = [r.name for r in search.CLOSE_RULES]
    assert len(set(names)) == len(names) and all(n == n.lower() and " " not in n for n in names)
    assert all(len(r.why) > 60 for r in search.CLOSE_RULES)  # each says what it refuses and why


def test_judge_names_the_rule_that_refuses(conn):
    assert judged(conn, "NCCL_IB_DISABLE=1")["Infiniband settings"] == "another-value"
    assert judged(conn, "NCCL_IB_DISABLE=0")["Infiniband settings"] == ""
    assert judged(conn, "increase the dataloader timeout")[
        "Reduced the dataloader timeout from 600 s to 120 s"] == "other-way"
    assert judged(conn, "use power-of-2 channels")["Use non-power-of-2 channels"] == "negated-name"
    assert judged(conn, "build with triton 12.8")["Newer build"] == "version-of-another-name"
    assert judged(conn, "build with CUDA 12.8")["Newer build"] == ""
    assert set(judged(conn, "NCCL_ALGO=Tree").values()) <= {"name-no-record-has"}


def test_a_value_the_idea_gives_must_be_the_records(conn):
    assert said(conn, "micro batch size 4")[0]
    assert not said(conn, "micro batch size 3")[0]  # "Experiment 3" numbers the record, 48.3 is a result
    assert judged(conn, "micro batch size 3")["Experiment 3: Batch Size Increase"] == "value-missing"
    assert said(conn, "pm=static for php-fpm")[0]
    assert not said(conn, "pm=ondemand for php-fpm")[0]  # (a short setting name: its value decides)
    assert said(conn, "cap the cupy pool at 256MB")[0]
    assert not said(conn, "cap the cupy pool at 1GB")[0]  # not the tail of "41GB"


def test_a_sentence_that_proposes_is_a_mention(conn):
    tried, res = said(conn, "ensemble the recent checkpoints")  # "if plateau, switch to ..." in the notes
    assert not tried and res.mentioned
    assert not said(conn, "chain fine-tune at LR=5e-6")[0]  # "Continue chaining at LR=5e-6"
    assert said(conn, "chain again at LR=1e-5")[0]
    tried, res = said(conn, "remove the hidden .compiz folder")  # a reply's "you can remove ..."
    assert not tried and res.mentioned


def test_the_knob_is_named_before_where_it_applies(conn):
    # "for the encoder" says where; a record that reordered the encoder did not recompute activations
    assert judged(conn, "enable activation recomputation for the encoder")[
        "Experiment 4: Text Embedding Reorder"] == "another-fix-same-topic"
    assert said(conn, "reorder the text embeddings before the encoder forward")[0]


def test_a_direction_the_record_goes_is_held(conn):
    assert said(conn, "shorter sequence length")[0]  # "8192 -> 4096, halving the sequence"
    assert not said(conn, "longer sequence length")[0]


def test_more_or_less_is_a_change_the_text_states(conn):
    # a setup line lists a 7B model: it did not switch to a smaller one
    ideas = judged(conn, "switch to a smaller 7B model")
    assert ideas["Notes"] == "other-way" and ideas["Smaller model"] == ""  # (vllm serve qwen-7b)
    assert not said(conn, "reduce the learning rate")[0]  # a training log shows it, it does not lower it


def test_what_a_change_replaced_is_not_what_it_tried(conn):
    assert said(conn, "fp32 accumulator in the epilogue")[0]
    assert judged(conn, "fp16 accumulator in the epilogue")["E2: Accumulator Width"] == "only-the-old-side"
    assert said(conn, "offload activations to CPU")[0]
    assert not said(conn, "offload activations to NVMe")[0]  # where a change goes is a value it gives


def test_a_change_that_went_elsewhere(conn):
    assert said(conn, "switch the DDP backend to gloo")[0]
    assert judged(conn, "switch to the nccl backend")["Test alternative backends"] == "another-target"


def test_a_recommendation_paragraph_proposes(conn):
    tried, res = said(conn, "re-run d20 with QK-norm")
    assert not tried and res.mentioned


def test_an_instruction_to_the_reader_proposes(conn):
    tried, res = said(conn, "load the 96.xx driver with envy")
    assert not tried and res.mentioned


def test_a_question_is_not_a_report(conn):
    assert not said(conn, "use ccache to keep the old object files")[0]


def test_an_acronym_that_says_where_is_not_required(conn):
    assert said(conn, "pause the UI task while testing the LCD")[0]
    assert not said(conn, "pause the LCD refresh")[0]


def test_a_hypothesis_with_a_result_was_tested(conn):
    tried, res = said(conn, "requantize the gguf to Q8_0 so it fits in RAM")
    assert tried and res.close[0].kind == "section" and res.close[0].outcome == "failed"


def test_numbers_match_as_numbers():
    import re

    def finds(token, text):
        t = search.parse_query(token).terms[0]
        return bool(re.search(t.pattern(), text, re.I))

    assert finds("1e-4", "lr 1e-04") and not finds("1e-4", "spikes to ~1e4")
    assert finds("3", "mbs 3, nmb 2") and not finds("3", "val 48.3") and not finds("3", "took 3.5 s")
    assert finds("3.0", "Triton 3.0.0")


def test_query_parsing():
    def terms(q):
        return [t.raw for t in search.parse_query(q).terms]

    # an out-of-order phrase after a shorter one is kept, not swallowed
    assert terms("turn off the caching allocator") == ["turn", "off caching allocator"]
    assert terms("go from TP4 to TP8") == ["go", "TP", "4", "8"]  # TP8 = TP 8; fa2, h100 stay names
    assert terms("fa2 on h100") == ["fa2", "h100"]
    assert terms("retain_graph=False") == ["retain_graph", "False"]
    assert terms("mixed 3090/4090 box") == ["mixed", "3090", "4090", "box"]
    assert terms("/usr/local/cuda") == ["/usr/local/cuda"]
    # a duration written apart is one term, with its other units ("7200 seconds" finds "timedelta(hours=2)")
    assert terms("a timeout of 7200 seconds") == ["timeout", "7200s"]
    assert "hours 2" in search.parse_query("7200 seconds").terms[0].alts
    # a list of names of any length is each name on its own; a host, a model id or a path keeps its slashes
    assert terms("pip show torch/torchvision/torchaudio") == ["pip", "show", "torch", "torchvision", "torchaudio"]
    assert terms("forward/backward hooks") == ["forward", "backward", "hooks"]
    assert terms("nvidia.com/gpu") == ["nvidia.com/gpu"] and terms("Qwen/Qwen3-0.6B") == ["Qwen/Qwen3-0.6B"]
    alts = {t.raw: t.alts for t in search.parse_query("utilization 0.5 torch 2.10").terms}
    assert alts["0.5"] == ["0.50", ".5"] and alts["2.10"] == []  # a fraction, not a version


def test_a_word_of_the_field_is_not_a_typo(conn):
    res = search.tried(conn, "switch to deepspeed zero-3")
    assert not res.close
    assert all(t.kind != "typo" for t in res.result.query.terms if t.raw == "deepspeed")


_name = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{2,12}", fullmatch=True)
_value = st.from_regex(r"[A-Za-z0-9.]{1,6}", fullmatch=True)


@settings(max_examples=60, deadline=None)
@given(_name, _value, _value, st.text(max_size=80))
def test_other_value_property(name, v1, v2, noise):
    record = f"{noise}\nexport {name}={v1}\n"
    assert not search._other_value(f"{name}={v1}", record)  # the same setting is the same experiment
    if search._norm_value(v1) != search._norm_value(v2) and v2.lower() not in record.lower():
        assert search._other_value(f"{name}={v2}", f"export {name}={v1}")


@settings(max_examples=80, deadline=None)
@given(st.builds(lambda base, end: base + end, st.from_regex(r"[a-z]{3,10}", fullmatch=True),
                 st.sampled_from(["", "s", "ations", "ation", "ings", "ions", "edly", "ers", "ies"])))
def test_a_word_matches_itself(word):
    # "implementations" once failed its own pattern ("implement" + at most 5 letters)
    import re

    t = search.Term(raw=word, parts=[word])
    assert re.search(t.pattern(), f"x {word} y", re.I)
    assert re.search(t.pattern(), f"x {word.capitalize()}. y", re.I)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=200), st.text(max_size=200))
def test_rules_never_raise(idea, record):
    search._other_value(idea, record)
    search._opposite(idea, record)
    search.parse_query(idea)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300))
def test_reported_only_drops_text(text):
    kept = search._reported(text)
    assert kept == text or len(kept) <= len(text)
    assert all(w in text for w in kept.split())  # nothing is made up, only proposals are left out


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=80))
def test_judge_never_raises(conn, idea):
    res = search.search(conn, idea + " x", kinds=search.TRIED_KINDS, limit=5, candidates=search.TRIED_CANDIDATES)
    search.weigh(conn, res.query, search.TRIED_KINDS)
    names = {r.name for r in search.CLOSE_RULES} | {"", "no-terms"}
    assert all(search.judge(h, res.query) in names for h in res.hits)


def test_an_investigations_context_is_read_once_for_all_of_its_hits(tmp_path, monkeypatch):
    # An investigation of thousands of attempts has a long context (its title, symptom and section headings),
    # and most of a query's hits share it: it was searched again for every hit (43 s for one `tried` over 10,000
    # attempts whose sections were named with long headings).
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace

    (tmp_path / ".git").mkdir()
    recs = Records(Workspace(tmp_path / ".dbglog"), create=True)
    inv = recs.new("NCCL hang on the A6000 box", symptom="all_reduce_perf hangs between GPU2 and GPU3")
    for k in range(12):
        recs.add_attempt(inv.id, title=f"NCCL_P2P_LEVEL={k}", result="still hangs", outcome="failed")
    context_reads = []
    real = search._term_regexes

    class Counting:
        def __init__(self, rx):
            self.rx = rx

        def search(self, text, *a):
            if "A6000 box\nall_reduce_perf" in text:  # (the context: title and symptom joined)
                context_reads.append(self.rx.pattern)
            return self.rx.search(text, *a)

        def __getattr__(self, name):  # (finditer, pattern...: the pattern's own)
            return getattr(self.rx, name)

    monkeypatch.setattr(search, "_term_regexes", lambda terms: [Counting(r) for r in real(terms)])
    res = search.search(recs.store.conn, "NCCL hang", kinds=search.TRIED_KINDS, limit=20,
                        candidates=search.TRIED_CANDIDATES)
    assert sum(h.kind == "attempt" for h in res.hits) >= 10
    assert len(context_reads) == len(set(context_reads)) == len(res.query.terms)  # (once per term, not per hit)


@pytest.mark.parametrize("text, kept", [
    ("试试用 packing，并且把 cutoff_len 调小到 1024。", False),  # advice, in the reply's own words
    ("我已经使用packing的方式且cut off len = 1024。", True),  # the asker's report
    ("Probier bitte --lowvram und schau, ob der Fehler bleibt.", False),
    ("Ich habe --lowvram gesetzt, gleicher Fehler.", True),
    ("バッチサイズを下げてお試しください。", False),
])
def test_advice_in_another_language_is_left_out_of_what_was_reported(text, kept):
    assert (search._reported(text).strip() == text) is kept


@pytest.mark.parametrize("idea, record, tier", [
    ("launch on 1 GPU with graph enabled, --cuda-graph-max-bs 1", "8xGPU with graph: --cuda-graph-max-bs 1", "other"),
    ("run the repro on 8 GPUs with NCCL_P2P_DISABLE=1", "NCCL_P2P_DISABLE=1 on 8 GPUs: still hangs", "same"),
    ("ran it on a single GPU", "2 x GPUs: hangs at the first all_reduce", "other"),
    ("switched to single-GPU training", "切换使用单卡后可以正常运行", "same"),  # (Chinese counts cards: 单卡, 双卡, 4卡)
    ("train on 4 GPUs", "双卡训练卡住", "other"),  # (卡住 is "stuck", no count)
])
def test_how_many_devices_a_run_used_is_part_of_the_experiment(idea, record, tier):
    from dbglog.kb import experiment

    assert experiment.compare(experiment.extract(idea), experiment.extract(record)).tier == tier


@pytest.mark.parametrize("record", [
    "已经将batchsize设为了1 。关闭了多卡训练 。还是爆错",  # a Chinese note: the value set with 设为
    "batchsize=1: still OOM",
])
def test_a_batch_size_written_as_one_word_or_set_in_chinese_is_the_batch_size_knob(record):
    from dbglog.kb import experiment

    assert experiment.compare(experiment.extract("set batch size to 1"), experiment.extract(record)).tier == "same"


def test_an_english_compound_with_a_hyphen_is_a_word_not_a_name_no_record_holds(recs):
    from dbglog.kb import search

    inv = recs.new("CUDA_ERROR_UNKNOWN in the container")
    recs.add_attempt(inv.id, title="reboot linux", did="and reboot linux, but i get CUDA_ERROR_UNKNOWN", outcome="failed")
    c = recs.store.conn
    res = search.tried(c, "rebooted Linux and re-ran")
    assert res.close and res.close[0].title == "reboot linux"
    # (a package's name is still a name: a record without it is not the same experiment)
    assert not search.tried(c, "rebooted linux after installing flash-attn").close


def test_a_preposition_of_how_a_thing_ran_is_no_part_of_the_experiment(tmp_path):
    # ("run under compute-sanitizer" against "compute-sanitizer --tool memcheck python train.py": "under" is in no
    # record, and it counted against the record as a word of the idea)
    from dbglog.kb.records import Records
    from dbglog.util.workspace import Workspace

    (tmp_path / ".git").mkdir()
    recs = Records(Workspace(tmp_path / ".dbglog"), create=True)
    inv = recs.new("Training hangs at step 12000 on rank 5")
    recs.add_attempt(inv.id, title="compute-sanitizer memcheck", did="compute-sanitizer --tool memcheck python train.py",
                     result="no errors, too slow to reach step 12000", outcome="inconclusive")
    res = search.tried(recs.store.conn, "run under compute-sanitizer")
    assert [h.title for h in res.close][:1] == ["compute-sanitizer memcheck"]
    recs.close()
