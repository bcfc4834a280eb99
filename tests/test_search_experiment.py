"""The experiment model of `tried` (dbglog/kb/experiment.py) and its vocabulary (dbglog/kb/knobs.json)."""

import json
from pathlib import Path

import pytest

from dbglog.kb import experiment
from dbglog.kb.experiment import OTHER, SAME, compare, extract

KNOBS = Path(experiment.__file__).with_name("knobs.json")
MEANINGS = ("enable", "disable", "value")


def test_vocabulary_loads_once_and_is_well_formed():
    data = json.loads(KNOBS.read_text(encoding="utf-8"))
    assert len(data["knob"]) >= 50 and data["packages"]
    assert all(k["source"] in data["sources"] and data["sources"][k["source"]] for k in data["knob"])  # cited
    owner: dict[str, str] = {}
    for k in data["knob"]:
        assert k["id"] and (k.get("names") or k.get("words")), k
        for name, meaning in k.get("names", {}).items():
            assert meaning in MEANINGS or meaning.startswith("off:"), (name, meaning)
            key = experiment.norm_name(name)
            assert owner.setdefault(key, k["id"]) == k["id"], f"{name} names two knobs"
        for state in k.get("states", {}).values():
            assert state in ("on", "off") or state.startswith("="), state
    assert experiment.vocab() is experiment.vocab()  # parsed on first use, then kept


@pytest.mark.parametrize("a, b", [
    ("NCCL_SHM_DISABLE=1 torchrun train.py", "no shared-memory transport"),
    ("TORCH_COMPILE_DISABLE=1 python train.py", "run without torch.compile"),
    ("vllm serve m --max-num-seqs 64", "fewer concurrent sequences"),
    ("pip install flash-attn==2.5.8", "a flash-attn downgrade"),
    ("HIP_VISIBLE_DEVICES=0 python repro.py", "only the first GPU"),
    ("vllm serve m --enforce-eager", "eager mode"),
    ("NCCL_P2P_LEVEL=LOC torchrun x.py", "disable p2p"),
    ("client: send Connection: close (no keep-alive)", "disable HTTP keep-alive in the client"),
    ("torch 2.4.0 -> 2.3.1", "downgrade torch"),
    ('os.environ["NCCL_BLOCKING_WAIT"] = "1"', "NCCL_BLOCKING_WAIT=1"),
    ("RETAIN_GRAPH: bool = False", "retain_graph=False"),
    ("`num_workers` 0", "set num_workers to zero"),
    ("Rolled the nvidia driver back to 418", "roll back the nvidia driver to 418"),  # (the verb's halves apart)
    ("moved torch back to 2.3.1", "downgrade torch to 2.3.1"),
    # "8k" tokens is 8192 as often as 8000
    ("--max-model-len 8192 (was 32768)", "shrink the context window to 8k"),
    # a version series holds its releases
    ("pip install nvidia-nccl-cu12==2.18.3", "use nccl 2.18"),
    # Transformers' attention implementation is the attention backend, named in words too
    ("attn_implementation='sdpa'", "use torch sdpa instead of flash attention 2"),
    # a config key's number in scientific notation keeps its exponent
    ("learning_rate 1e-5 (was 2e-5)", "lower the learning rate to 1e-5"),
    # a number set, with the one it replaced written after it, says which way the knob went
    ("Tensor parallel 4 instead of 8: --tp 4", "halve the tensor parallel degree"),
    ("--mem-fraction-static 0.8 (was 0.9)", "give the server a smaller memory fraction"),
    # a value joined by colons is one value
    ("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "set PYTORCH_CUDA_ALLOC_CONF to expandable_segments:True"),
    # "capturing" is no "cap": skipping graph capture is CUDA graphs off
    ("--disable-cuda-graph", "skip capturing cuda graphs at startup"),
    ("--enforce-eager", "stop capturing graphs during warmup"),
    ("--cuda-graph-max-bs 32", "limit the captured batch size to 32"),
    # a share of device memory is the memory fraction
    ("--gpu-memory-utilization 0.8 (was the default 0.9)", "give vllm only 80% of VRAM instead of 90"),
    ("--mem-fraction-static 0.7", "give the KV pool 70% of memory instead of 88%"),
    # a library's variable written without its prefix
    ("export NCCL_P2P_DISABLE=1", "set P2P_DISABLE=1 for NCCL"),
    ("export NCCL_IB_GID_INDEX=3 on both nodes", "make NCCL use the RoCEv2 GID (index 3)"),
    # a diff of a pin, a release with its post-release, a package named like a config key
    ("requirements.txt: -flash-attn==2.8.0.post2 +flash-attn==2.7.4.post1", "downgrade flash attention to 2.7.4.post1"),
    ("requirements.txt: -flash-attn==2.8.0.post2 +flash-attn==2.7.4.post1", "pin flash_attn 2.7.4.post1 in requirements"),
    ("pip install torch==2.3.0+cu121", "torch 2.3.0"),
    # bf16 and fp16 training are one choice: a flag's boolean, the dtype named bare, "from fp16 to bf16"
    ("Use bf16 instead of fp16: --bf16 True --fp16 False", "train in bfloat16"),
    ("Use bf16 instead of fp16: --bf16 True --fp16 False", "switch precision from fp16 to bf16"),
    ("Use bf16 instead of fp16: --bf16 True --fp16 False", "disable fp16 mixed precision"),
    ("--bf16", "use bf16 instead of fp16"),
    # llama.cpp, Ollama and DeepSpeed knobs, named by flag, variable or words
    ("llama-server -m m.gguf -ngl 99", "offload all 99 gpu layers"),
    ("zero_stage: 3 in ds_config.json", "use deepspeed stage 3"),
    ("--gradient-accumulation-steps 8", "gradient accumulation 8"),
    ("ollama: num_ctx 8192", "set the context length to 8192"),
    ("llama-cli --no-mmap", "disable mmap"),
    # a setting inside an env var's list of settings; a size in binary units; a value after "=" with spaces
    ("export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128", "set max_split_size_mb to 128"),
    ("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:512", "max_split_size_mb=512"),
    ("docker run --shm-size=8g", "docker run --shm-size 8192m"),
    ("export NCCL_SHM_DISABLE=1", "NCCL_SHM_DISABLE = 1"),
    # a container's /dev/shm by its flag, its compose key or its path; a purpose clause names no knob
    ("docker run --shm-size=16g ... python train.py", "run the container with shm_size: 16gb to get more shared memory"),
    ("docker run --shm-size=16g ... python train.py", "did anyone bump /dev/shm from the 64M default to 16G?"),
    # a key and its new value after an arrow; a Triton model config's parameter; a flag with "=" spaced; -ctk
    ("enable_kv_cache_reuse -> false", "set enable_kv_cache_reuse=false"),
    ('config.pbtxt: parameters { key: "enable_kv_cache_reuse" value { string_value: "false" } }',
     "turn enable_kv_cache_reuse off"),
    ("trtllm-build --tokens_per_block 32", "--tokens_per_block = 32"),
    ("llama-server -fa -ctk q8_0 -ctv q8_0", "--cache-type-k q8_0 --cache-type-v q8_0"),
    # NVIDIA's pip wheel of a library is that library; a release raised with its kind named between; a switch's
    # call with a boolean; nvidia-smi's persistence mode by its flag's value
    ("pip install -U nvidia-cudnn-cu12==9.5.1.17", "upgrade cudnn to 9.5.x"),
    ("bump cudnn wheel to 9.5", "upgrade nvidia-cudnn-cu12 to 9.5"),
    ("torch.backends.cuda.enable_cudnn_sdp(False) at the top of train.py", "call enable_cudnn_sdp(False) at startup"),
    ("sudo nvidia-smi -pm 1", "enable persistence mode on the node"),
])
def test_one_experiment_in_other_words(a, b):
    assert compare(extract(b), extract(a), a).tier == SAME


@pytest.mark.parametrize("record, idea", [
    ("NCCL_SHM_DISABLE=1 torchrun train.py", "enable the shared-memory transport"),
    ("Attempt 1: request_queue_size=128", "set request_queue_size to 256"),
    ("vllm serve m --max-num-seqs 512", "fewer concurrent sequences"),
    ("Driver 550 LTS instead of 565", "upgrade the nvidia driver"),
    ("NCCL_P2P_LEVEL=NVL", "NCCL_P2P_LEVEL=SYS"),
    ("static_graph=True", "static_graph=False"),
    ("NCCL_P2P_DISABLE=1", "NCCL_P2P_DISABLE=1 and NCCL_IB_DISABLE=1"),
    ("Rolled the nvidia driver back to 418", "roll back the nvidia driver to 410"),
    ("--max-model-len 8192", "set the context length to 16k"),
    ("pip install nvidia-nccl-cu12==2.18.3", "use nccl 2.19"),
    ("attn_implementation='sdpa'", "set attn_implementation to eager"),
    ("learning_rate 1e-5 (was 2e-5)", "set the learning rate to 1e-4"),
    ("Tensor parallel 4 instead of 8: --tp 4", "raise the tensor parallel degree"),
    ("requirements.txt: -flash-attn==2.8.0.post2 +flash-attn==2.7.4.post1", "pin flash-attn 2.7.4"),
    ("--gpu-memory-utilization 0.8", "give vllm 95% of the GPU memory"),
    ("HIP_VISIBLE_DEVICES=0 python train.py", "HIP_VISIBLE_DEVICES=0,1"),
    ("Use bf16 instead of fp16: --bf16 True --fp16 False", "train in fp16"),
    ("--fp16", "use bf16 instead of fp16"),
    ("llama-server -m m.gguf -ngl 99", "offload 20 gpu layers"),
    ("zero_stage: 3 in ds_config.json", "use deepspeed stage 2"),
    ("export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128", "set max_split_size_mb to 512"),
    ("docker run --shm-size=8g", "docker run --shm-size 4096m"),
    ("export NCCL_SHM_DISABLE=1", "NCCL_SHM_DISABLE = 0"),
    ("docker run --shm-size=16g ... python train.py", "bump /dev/shm from the 64M default to 32G"),
    ("enable_kv_cache_reuse -> false", "enable_kv_cache_reuse=true"),
    ("trtllm-build --tokens_per_block 32", "--tokens_per_block = 64"),
    ("torch.backends.cuda.enable_cudnn_sdp(False)", "turn cuDNN attention on with enable_cudnn_sdp(True)"),
    ("sudo nvidia-smi -pm 1", "nvidia-smi -pm 0"),
])
def test_the_same_knob_another_way_or_value(record, idea):
    c = compare(extract(idea), extract(record), record)
    assert c.tier == OTHER and c.how and "record" in c.how


def test_dbglog_options_are_not_knobs_of_the_experiment():
    e = extract("dbglog run --timeout 4 --repeat 3 --env NCCL_IB_DISABLE=1 -- python client.py")
    assert [k.id for k in e.knobs] == ["NCCL InfiniBand transport"]
    assert not extract("dbglog bisect toggles --env A_B=1 --env C_D=1 -- python x.py").knobs
    assert compare(extract("raise the client's read timeout"),
                   extract("dbglog run --timeout 4 -- python client.py")).tier == experiment.NONE


def test_a_knob_named_only_as_where_is_not_turned():
    # "for the fp8 KV cache" says where; a record that sets the cache dtype did not try the idea
    idea = extract("per-head K scales for the fp8 KV cache")
    assert all(not k.state for k in idea.knobs)
    assert compare(idea, extract("--kv-cache-dtype fp8")).tier == experiment.NONE


def test_a_value_alone_tells_no_way():
    # raising or lowering against a bare value needs the documented default to say which way
    assert compare(extract("reduce the learning rate"), extract("--lr 1e-5")).tier == experiment.NONE
    assert compare(extract("lower the gpu memory utilization"), extract("--gpu-memory-utilization 0.6")).tier == SAME
    assert compare(extract("raise the gpu memory utilization"), extract("--gpu-memory-utilization 0.6")).tier == OTHER


def test_experiment_words_are_plain():
    e = extract("NCCL_SHM_DISABLE=1 vllm serve m --max-num-seqs 64")
    d = e.to_dict()
    assert d["summary"] == ("NCCL shared-memory transport off (NCCL_SHM_DISABLE=1); "
                            "concurrent sequences set to 64 (--max-num-seqs 64)")
    assert {k["kind"] for k in d["knobs"]} == {"env", "flag"}


@pytest.mark.parametrize("idea", ["disable kernel replay", "no kernel replay", "run it without kernel replay"])
def test_turning_away_from_a_named_mode_is_not_setting_it(idea):
    # "disable kernel replay" read as replay mode = kernel: the default run that hung was "the same experiment"
    (knob,) = extract(idea).knobs
    assert (knob.state, knob.value) == ("off", "kernel") and "anything but kernel" in knob.words()
    assert compare(extract(idea), extract("ncu --replay-mode kernel --set full")).tier == OTHER
    assert compare(extract(idea), extract("ncu --replay-mode application")).tier == SAME  # away from kernel, too


@pytest.mark.parametrize("idea, record", [("profile without --target-processes all",
                                           "ncu --set full --target-processes all python bench.py"),
                                          ("run without NCCL_DEBUG=INFO", "NCCL_DEBUG=INFO torchrun train.py")])
def test_a_setting_taken_away_is_not_the_setting_made(idea, record):
    # "without --target-processes all" read as --target-processes all: the run with it was "same knob, same way"
    (knob,) = extract(idea).knobs
    assert knob.state == "off" and knob.words().startswith("not ")
    assert compare(extract(idea), extract(record)).tier == OTHER


def test_a_switch_variable_set_after_without_is_turned_the_other_way():
    (knob,) = extract("without NCCL_P2P_DISABLE=1").knobs
    assert knob.state == "on"  # the transport on, as NCCL_P2P_DISABLE=0 would leave it


def test_a_value_ends_where_cjk_text_begins():
    # "export VLLM_USE_V1=0可以跑" ("... works") gave the value "0可以跑": another value than the idea's 0
    (knob,) = extract("export VLLM_USE_V1=0可以跑").knobs
    assert knob.name == "VLLM_USE_V1=0"
    assert compare(extract("set VLLM_USE_V1=0"), extract("export VLLM_USE_V1=0可以跑")).tier == SAME


def test_torchvision_and_torchaudio_are_packages_whose_versions_are_knobs():
    # "update torchvision to 0.8.2" named no knob, and the word rules called a reinstall of 0.8.2 "the other way"
    (knob,) = extract("update torchvision to 0.8.2").knobs
    assert (knob.id, knob.state, knob.value) == ("torchvision", "upgrade", "0.8.2")
    rec = extract("Removing them and reinstalling torch==1.7.1, torchvision==0.8.2 and torchaudio==0.7.2 solved it")
    assert compare(extract("update torchvision to 0.8.2"), rec).tier == SAME
    assert compare(extract("pin torchaudio 0.7.1"), rec).tier == OTHER


def test_a_share_of_memory_read_off_a_measurement_is_no_setting():
    # "peaks at 95% of VRAM" is what the run used, not what it was given
    assert not extract("memory usage peaks at 95% of VRAM").knobs
    assert not extract("the model uses 80% of memory").knobs


def test_a_file_named_before_its_lines_is_not_a_config_key():
    # "requirements.txt: -flash-attn" read as the key "requirements.txt" set to "-flash-attn"
    knobs = extract("requirements.txt: -flash-attn==2.8.0.post2 +flash-attn==2.7.4.post1").knobs
    assert [(k.id, k.state, k.value) for k in knobs] == [("flash-attn", "downgrade", "2.7.4.post1")]


def test_a_dtype_naming_what_it_is_of_is_no_training_precision():
    # "fp16 accumulator" is the accumulator's dtype: fp16 training was not turned on
    assert [k.state for k in extract("fp16 accumulator in the epilogue").knobs] == [""]
    assert [(k.id, k.state) for k in extract("train in bfloat16").knobs] == [("bf16 training", "on")]


def test_a_knob_word_inside_a_longer_hyphenated_name_is_that_name_not_the_knob():
    # "p2p" inside Megatron's overlap-p2p-communication is not NCCL's peer-to-peer transport
    assert not [k for k in extract("run with overlap-p2p-communication disabled").knobs
                if k.id == "NCCL peer-to-peer transport"]
    assert [k.state for k in extract("--disable-cuda-graph").knobs if k.id == "CUDA graphs"] == ["off"]


def test_a_call_reads_its_last_argument_through_nested_calls_and_keywords():
    positional = extract("torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)").knobs
    keyword = extract("add clip_grad_norm_(params, max_norm=1.0) after unscaling").knobs
    assert [(k.id, k.value) for k in positional] == [(k.id, k.value) for k in keyword] == [("gradient clipping", "1.0")]


def test_a_fraction_written_without_its_leading_zero_is_that_fraction():
    assert compare(extract("--mem-fraction-static .7"), extract("--mem-fraction-static 0.7")).tier == SAME
    assert compare(extract("--mem-fraction-static .6"), extract("--mem-fraction-static 0.7")).tier == OTHER


def test_what_follows_a_purpose_is_the_problem_not_a_knob():
    knobs = extract("upgrade triton from 3.1 to 3.2.0 to fix the shared memory overflow").knobs
    assert [(k.id, k.state) for k in knobs] == [("triton", "upgrade")]
    assert [k.state for k in extract("to fix it, disable shared memory").knobs] == ["off"]


def test_a_release_bumped_to_a_version_is_an_upgrade_but_a_setting_turned_up_is_no_package():
    assert [(k.id, k.state, k.value) for k in extract("bump triton to 3.2").knobs] == [("triton", "upgrade", "3.2")]
    assert [k.id for k in extract("turn up nccl logging to INFO").knobs] == ["NCCL debug logging"]


def test_a_variable_set_to_a_value_after_to_takes_that_value():
    assert [(k.state, k.value) for k in extract("bump XLA_PYTHON_CLIENT_MEM_FRACTION to 0.95").knobs] == [("raise", "0.95")]
    assert compare(extract("bump XLA_PYTHON_CLIENT_MEM_FRACTION to 0.95"),
                   extract("export XLA_PYTHON_CLIENT_MEM_FRACTION=.95")).tier == SAME


def test_tensorflow_memory_growth_by_its_variable_and_by_its_call_is_one_knob():
    assert compare(extract("export TF_FORCE_GPU_ALLOW_GROWTH=true"),
                   extract("for g in gpus: tf.config.experimental.set_memory_growth(g, True)")).tier == SAME


def test_a_config_key_written_again_after_the_arrow_is_one_change():
    knobs = extract("**Change**: `learning_rate: 0.0003` → `learning_rate: 0.0001`").knobs
    assert [(k.id, k.state, k.value) for k in knobs] == [("learning rate", "lower", "0.0001")]


def test_a_value_given_with_an_alternative_is_either_value():
    record = extract("Reduce batch size to 8 or 4")
    assert [k.words() for k in record.knobs] == ["batch size lowered to 8 or 4"]
    assert compare(extract("reduce batch size to 4"), record).tier == SAME
    assert compare(extract("reduce batch size to 2"), record).tier == OTHER


@pytest.mark.parametrize("text, names, want", [
    ("increase the docker pids limit to 4096", ["--pids-limit"], "increase the docker --pids-limit to 4096"),
    ("NCCL SHM disable = 1", ["NCCL_SHM_DISABLE"], "NCCL_SHM_DISABLE = 1"),
    ("limit the max split size to 128", ["max_split_size_mb"], "limit the max_split_size_mb to 128"),
    ("stop when the capture range ends", ["--capture-range", "--capture-range-end"], "stop when the --capture-range-end"),
    # (words a vocabulary phrase holds whole are read by the phrase, with their cues; one word is no name)
    ("drop the batch size to 8", ["batch_size"], "drop the batch size to 8"),
    ("rerun with NCCL debug output enabled", ["NCCL_DEBUG"], "rerun with NCCL debug output enabled"),
    ("raise the timeout", ["--timeout"], "raise the timeout"),
])
def test_a_setting_spelled_in_words_is_read_as_the_name_a_record_holds(text, names, want):
    assert experiment.spelled_out(text, names) == want


def test_binary_and_decimal_sizes_are_one_value_and_other_sizes_are_not():
    assert experiment.same_value("8192m", "8g") and experiment.same_value("8 GB", "8g")
    assert experiment.same_value("8k", "8192") and not experiment.same_value("4g", "8g")


def test_words_a_vocabulary_phrase_gives_a_state_are_not_respelled_as_a_name():
    # ("kernel replay mode" is replay mode kernel: read as "kernel --replay-mode" it lost its value)
    assert experiment.spelled_out("kernel replay mode", ["--replay-mode"]) == "kernel replay mode"


def test_a_path_word_is_not_where_a_change_was_applied():
    # ("./build/all_gather_perf" runs a test binary; the record did not change a build)
    record = extract("NCCL_P2P_LEVEL=SYS ./build/all_gather_perf -b 8M -e 1G -g 8")
    assert record.target == ""
    assert compare(extract("force NCCL_P2P_LEVEL=SYS on the server"), record, "./build/all_gather_perf").tier == SAME


@pytest.mark.parametrize("record, idea", [
    ("mlx_lm.lora -c config.yaml --grad-checkpoint", "turn on grad_checkpoint: true in the training config"),
    ("mlx_lm.lora --grad-checkpoint --iters 600", "run with grad_checkpoint=True"),
])
def test_an_unknown_flag_last_on_its_command_or_before_another_option_is_a_switch_given(record, idea):
    assert extract(record).knobs[0].state == "on"
    assert compare(extract(idea), extract(record)).tier == SAME


def test_an_unknown_flag_in_prose_or_taken_away_is_not_given():
    assert extract("we thought about --grad-checkpoint.").knobs[0].state == ""
    assert extract("without --grad-checkpoint").knobs[0].state == "off"


@pytest.mark.parametrize("text, knob, state", [
    ("call ddp_model._set_static_graph() as the error says", "static-graph", "on"),
    ("model.gradient_checkpointing_enable()", "gradient checkpointing", "on"),
    ("removed model.gradient_checkpointing_enable() and kept our wrapper", "gradient checkpointing", "off"),
    ("model.disable_adapters()", "adapters", "off"),
])
def test_a_call_without_arguments_whose_name_says_the_way_turns_that_switch(text, knob, state):
    (k,) = extract(text).knobs
    assert (k.id, k.state) == (knob, state)


def test_a_switch_turned_by_its_call_is_the_keyword_set_true():
    assert compare(extract("call model._set_static_graph()"),
                   extract("DDP(model, device_ids=[rank], static_graph=True)")).tier == SAME


@pytest.mark.parametrize("text, state, value", [
    ("config.yaml: learning_rate: 1e-4 changed to 2e-5", "lower", "2e-5"),
    ("cut lora_parameters.scale from 20 to 2", "lower", "2"),
    ("max_num_seqs 256 to 128", "lower", "128"),
])
def test_a_setting_moved_from_one_value_to_another_is_read_at_its_new_value(text, state, value):
    (k,) = extract(text).knobs
    assert (k.state, k.value) == (state, value)


def test_to_between_a_number_and_a_word_is_no_setting_moved():
    assert extract("set batch 8 to fix the OOM").knobs == ()
    assert extract("gpu_memory_utilization 0.9 to fit").knobs[0].value == "0.9"


@pytest.mark.parametrize("word, value", [("sixteen", 16.0), ("twelve", 12.0), ("sixty-four", 64.0), ("half", 0.5)])
def test_numbers_written_in_words_are_their_values(word, value):
    assert experiment.number(word) == value
