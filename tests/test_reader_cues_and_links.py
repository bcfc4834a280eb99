"""General cues and links the rules of the reader must get right whatever the wording (docs written for these
tests). The learned passes on top of the rules are tested in test_reader_learned.py."""

import re

import pytest

from dbglog.docreader.cues import heading_role, language, outcome_of, plain
from dbglog.docreader.units import segment
from dbglog.kb import importer


def _read(doc):
    # the rules' reading alone: the learned passes have their own tests (test_reader_learned.py)
    parsed, _ = importer.parse_document(doc, "doc.md", model=False)
    return parsed


def _attempts(doc):
    return [(a.title, a.outcome, a.who) for p in _read(doc) for a in p.inv.attempts]


@pytest.mark.parametrize("text, lang", [
    ("Ustawiłem zmienną i serwer nadal wisi na tym samym etapie, bez zmian.", "pl"),
    ("Pody żądające GPU wisiały wiecznie w stanie Pending.", "pl"),
    ("Ich habe den Treiber neu installiert und es funktioniert nicht.", "de"),
    ("J'ai réinstallé le pilote mais ça ne marche pas.", "fr"),
    ("Reinstalé el driver pero no funciona para nada.", "es"),
    ("I reinstalled the driver and the pod is still pending.", "en"),
    ("Reinstalei o driver, mas o servidor ainda trava quando sobe o modelo.", "pt"),
    ("Reduzi o clock da memória e não resolveu, continua travando.", "pt"),
])
def test_a_polish_sentence_is_told_from_the_other_latin_script_languages(text, lang):
    assert language(text) == lang


def test_a_polish_note_is_read_by_its_cue_table_and_its_step_tables_columns():
    doc = """# Trening zawiesza się na drugiej karcie

## Próba 1: mniejszy batch

Zmniejszyłem batch z 32 do 8 i uruchomiłem trening ponownie.
Nadal wisi po pierwszej epoce, bez zmian.

## Próba 2: sterownik

### Krok po kroku

| Krok | Komenda | Wynik |
|---|---|---|
| 1 | `NCCL_P2P_DISABLE=1` | ❌ Dalej wisi |
| 2 | Sterownik 560 zamiast 535 | ✅ Trening przechodzi trzy epoki |
"""
    got = {(t, o) for t, o, _who in _attempts(doc)}
    assert ("mniejszy batch", "failed") in got  # ("Próba 1" is attempt 1, as "Attempt 1" and "Versuch 1" are)
    assert ("`NCCL_P2P_DISABLE=1`", "failed") in got
    assert ("Sterownik 560 zamiast 535", "worked") in got
    assert outcome_of("Serwer wstał i odpowiada — działa, ale przepustowość spadła o 15%.", "pl") == "partial"


def test_a_portuguese_note_is_read_by_its_cue_table():
    doc = """# Travamentos da MI50 com o llama.cpp

## Registro (2026-08-07)

- Reduzi o MCLK de 1300 para 1200: o corte de energia continua, não resolveu.
- Desativei o daemon de rampa: o jogo congelou de novo.
- Voltei o daemon com rampa gradual e perfil em auto: funcionou, estável por duas horas.
"""
    got = [o for _t, o, _who in _attempts(doc)]
    assert got == ["failed", "failed", "worked"]
    assert outcome_of("O servidor subiu, mas ainda trava depois de uma hora.", "pt") in ("failed", "partial")


@pytest.mark.parametrize("head, body, title", [
    ("### Versuch 2: kleinere Batch", "Batch von 32 auf 8 reduziert, hängt immer noch.", "kleinere Batch"),
    ("### Próba 2: mniejszy batch", "Zmniejszyłem batch z 32 do 8. Nadal wisi, bez zmian.", "mniejszy batch"),
    ("### 尝试2：减小 batch", "把 batch 从 32 改成 8，还是卡住。", "减小 batch"),  # (a full-width colon after the number)
    ("### Test 2: smaller batch", "Cut the batch from 32 to 8; still hangs.", "Test 2: smaller batch"),
])
def test_a_numbered_try_headed_by_the_word_for_attempt_in_any_language_is_titled_by_what_follows(head, body, title):
    doc = f"""# Training hangs after the first epoch

{head}

{body}
"""
    assert [t for t, _o, _w in _attempts(doc)] == [title]


@pytest.mark.parametrize("text, want", [
    ("CUDA_VISIBLE_DEVICES=0 を設定したら起動した。", "worked"),
    ("ドライバを戻しても起動しない。", "failed"),
    ("サーバーが起動したが、推論でエラーになった。", "partial"),
])
def test_a_japanese_server_that_starts_or_does_not_says_how_the_try_went(text, want):
    assert outcome_of(text, "ja") == want


@pytest.mark.parametrize("text, want", [
    ("電源の上限を下げても再現する。", "failed"),  # the failure reproduces: the try changed nothing
    ("GPU メモリを確保した瞬間にホストごと落ちて再起動が必要になる。", "failed"),
    ("ここでマシンがハードロックする。", "failed"),
    ("BIOS で ReBAR を切ったら再現しなくなった。", "worked"),
])
def test_a_japanese_failure_that_reproduces_or_takes_the_host_down_says_the_try_failed(text, want):
    assert outcome_of(text, "ja") == want


def test_a_korean_problem_that_went_away_says_the_try_worked():
    assert outcome_of("GPU를 stop 시켰다가 다시 시작했더니 문제가 없어졌습니다!", "ko") == "worked"
    assert outcome_of("드라이버를 바꾸니 에러가 사라졌다.", "ko") == "worked"


def test_torchs_out_of_memory_message_pasted_as_prose_is_program_output():
    from dbglog.docreader.cues import _PASTED

    assert _PASTED.match("Tried to allocate 216.00 MiB (GPU 0; 7.92 GiB total capacity; 69.17 MiB already allocated)")
    assert not _PASTED.match("Tried to allocate less by lowering the batch size: it runs now.")


def test_a_status_in_capitals_that_leads_a_comment_in_another_language_is_its_verdict():
    doc = """# ビルドメモ

```bash
pip install flash-attn --no-build-isolation   # NG: nvcc が見つからない
export CUDA_HOME=/usr/local/cuda-12.4
pip install flash-attn --no-build-isolation   # OK
```
"""
    assert [o for _t, o, _w in _attempts(doc)] == ["failed", "worked"]
    assert outcome_of("NG: nvcc が見つからない", "ja") == "failed"


def test_a_reply_that_names_what_it_did_only_by_a_pronoun_tried_the_suggestion_above_it():
    doc = """# Inference is slow

### asker — 2025-01-02

Inference on an RTX 4090 is slow.

### helper — 2025-01-03

Please try removing `--enforce-eager`.

### asker — 2025-01-04

Removed it and it is much faster now. Thanks!
"""
    got = [(a.title, a.outcome, a.who) for p in importer.parse_document(doc, "doc.md", model=True)[0]
           for a in p.inv.attempts]
    assert got == [("removing `--enforce-eager`", "worked", "asker")]


@pytest.mark.parametrize("text, want", [
    ("Removed it and it is much faster now.", "worked"),
    ("It is not much faster now.", None),
    ("Tried it, but it isn't much faster.", None),
])
def test_much_faster_is_a_verdict_and_not_much_faster_is_none(text, want):
    assert outcome_of(text, "en") == want


def test_dated_entries_that_open_a_note_are_tries_not_the_problem():
    doc = """# Hang notes

**2025-03-01** — set `NCCL_IB_DISABLE=1`: still hangs after 2h.
**2025-03-02** — upgraded NCCL to 2.21.5: no hang in 12h.
"""
    got = [(a.title, a.outcome) for p in importer.parse_document(doc, "doc.md", model=True)[0] for a in p.inv.attempts]
    assert got == [("set `NCCL_IB_DISABLE=1`", "failed"), ("upgraded NCCL to 2.21.5", "worked")]


def test_a_table_of_tries_and_results_is_read_by_its_french_header():
    doc = """# Essais

| Essai | Résultat |
|---|---|
| `NCCL_P2P_DISABLE=1` | ça bloque toujours |
| pilote 550 | ça marche |
"""
    assert [t for t, _o, _w in _attempts(doc)] == ["`NCCL_P2P_DISABLE=1`", "pilote 550"]


@pytest.mark.parametrize("doc, want", [
    ("""# Build-Notizen für flash-attn

Ich habe versucht, flash-attn auf dem neuen Server zu bauen. Der Speicher ist knapp und der Build ist sehr langsam.

```bash
make -j32   # bricht ab, kein Speicher
make -j4    # funktioniert
```
""", ["failed", "worked"]),
    ("""# Essais sur le serveur

J'ai essayé plusieurs réglages pour que l'entraînement ne se bloque plus sur les deux cartes.

| Essai | Résultat |
|---|---|
| `NCCL_P2P_DISABLE=1` | ça bloque toujours |
| pilote 550 | ça marche |
""", ["failed", "worked"]),
])
def test_a_verdict_of_a_word_or_two_is_read_in_the_documents_language(doc, want):
    assert [o for _t, o, _w in _attempts(doc)] == want


def test_a_short_german_heading_is_read_in_the_documents_language():
    doc = """# Ollama nutzt die iGPU nicht

Der Runner stürzt beim Start ab und Ollama läuft nur auf der CPU. Die Ursache ist noch unklar.

## Lösung erfolgreich umgesetzt

### Was funktioniert hat:

**1. Mehr VRAM im BIOS:**
```
UMA Frame Buffer: 512 MB → 4 GB
```

**2. GFX_VERSION überschrieben:**
```ini
Environment="HSA_OVERRIDE_GFX_VERSION=11.0.2"
```
"""
    got = _attempts(doc)
    assert [t for t, _, _ in got] == ["Mehr VRAM im BIOS", "GFX_VERSION überschrieben"]
    assert {o for _, o, _ in got} == {"worked"}


def test_a_problem_field_in_one_section_and_a_status_footer_in_another_are_one_investigation():
    doc = """# Training stalls after the first epoch

## Current config

```
workers: 8
```

**Problem:** the loader workers never exit.

## Attempts

- Tried `persistent_workers=False` -> still stalls.

## Footer

**Status:** open
"""
    parsed = _read(doc)
    assert len(parsed) == 1
    assert [a.outcome for a in parsed[0].inv.attempts] == ["failed"]


def test_a_version_in_a_table_cell_is_not_a_list_number():
    doc = """# Which wheel runs on gfx1102?

ROCm | torch wheel   | Outcome
---- | ------------- | --------------------------
6.0  | 2.3.1+rocm6.0 | invalid device function
6.1  | 2.4.1+rocm6.1 | runs, but first start takes 9 min
"""
    got = _attempts(doc)
    assert [t for t, _, _ in got] == ["ROCm 6.0 · torch wheel 2.3.1+rocm6.0", "ROCm 6.1 · torch wheel 2.4.1+rocm6.1"]
    assert [o for _, o, _ in got] == ["failed", "partial"]
    assert plain("6.0") == "6.0" and plain("1. step") == "step"


def test_a_suggestion_of_two_settings_is_answered_part_by_part():
    doc = """# Server stops answering after a few hundred requests

### asker — 2025-03-18

With tp 2 the server stops answering after about 500 requests.

### maintainer — 2025-03-20

Could someone try `--max-num-seqs 32` and, separately, the nightly wheel?

### helper — 2025-03-21

32 didn't change anything, stuck again at ~600. The nightly works though.
"""
    got = sorted(_attempts(doc))
    assert got == [("`--max-num-seqs 32`", "failed", "helper"), ("the nightly wheel", "worked", "helper")]


def test_the_quoted_suggestion_above_an_answer_does_not_hide_the_answer():
    doc = """# all_reduce hangs across two nodes

### asker — 2024-09-18

The first all_reduce never returns across the two boxes; single node is fine.

### helper — 2024-09-19

To split the problem, try with `NCCL_IB_DISABLE=1`; that forces sockets.

### asker — 2024-09-19

> try with `NCCL_IB_DISABLE=1`

Did that. No hang anymore, but bandwidth drops to 2 GB/s.
"""
    (title, outcome, who), = _attempts(doc)
    assert "NCCL_IB_DISABLE=1" in title and outcome == "partial" and who == "asker"


def test_a_first_post_that_answers_someone_is_read_for_its_tries():
    doc = """# Fix illegal memory access with prefix caching

### reporter — 2024-10-29

Hi @maintainer, I have tried to disable `chunked_prefill`, but it failed. Only with `enable_prefix_caching=False` it works.
"""
    got = _attempts(doc)
    assert len(got) >= 1 and got[0][1] == "failed"


@pytest.mark.parametrize("text, want", [
    ("neither changed anything", "failed"),
    ("nothing fixed it", "failed"),
    ("the driver update didn't make any difference", "failed"),
    # a reboot asked for is no reboot that happened; one that happened by itself is a failure
    ("Disabled ECC mode (needs a reboot to take effect)", None),
    ("The host reboots randomly under load.", "failed"),
    ("After the reboot it works.", "worked"),
    # a gain denied by the verb that would have brought it
    ("Surprisingly, giving more capacity to the model did not yield improvements.", "failed"),
    ("It never gave any measurable speedup.", "failed"),
    ("This change did not show a significant gain.", "failed"),
    ("runs, first start 40 s", "worked"),
    # "pass" said of the tests or a count of them, not "pass the flag"
    ("Nightly tests on CUDA 12.x: 7 / 7 pass", "worked"),
    ("the tests pass now", "worked"),
    ("3 / 7 pass", None),
    ("pass the flag to the server", None),
    ("runs, but tuning takes 9 min on first start", "partial"),
    ("runs out of memory after 2 steps", "failed"),
    ('even without the "--upgrade" it fails', "failed"),  # a subject of its own: "without" negates no failure there
    ("ran 3 hours without a hang", "worked"),
    ("This didn't trigger scale up.", None),  # the trigger's object is the effect wanted, not a bug
    ("The hang didn't trigger.", "worked"),
    ("I tried a clean install of EasyDiffusion, got the same result.", "failed"),  # "clean install" names a setting
    ("@kaiyux ok，I will try with latest version, thx！", None),  # what the asker will do: no verdict yet
    ("Is this OK?", None),  # a question asks how it went; it does not say
    ("I removed the flag, is it still crashing?", None),
    ("Did that fix it? Yes, it works.", "worked"),
    ("It crashes at load. Any idea why?", "failed"),
    ("Good to hear.", None),  # a reply's reaction to someone else's news
    ("Glad it works now!", None),
    # the perfect tense negated: a failure not seen since is gone, a fix not managed is none
    ("After disabling it I have not yet encountered the error.", "worked"),
    ("Haven't had a crash since.", "worked"),
    ("I have tried each of the following and haven't been able to eliminate this error yet:", "failed"),
    ("We were not able to fix it.", "failed"),
    # the change went through, the bug lasted: a failed try (a fix of one symptom beside another that lasted is partial)
    ("Successfully downgraded from ROCm 7, but still has the same GPU cleanup hang issue", "failed"),
    ("The install succeeded but torch still cannot see the GPU.", "failed"),
    ("It compiles now, but still segfaults at startup.", "failed"),
    ("fixes the crash but still hangs", "partial"),
    ("Installed successfully, the hang is gone.", "worked"),
    # refused by the system or the server; a fix managed; a panic that never came
    ("Not allowed in `nccl-scc`", "failed"),
    ("Both requests returned 500 and the listener disappeared.", "failed"),
    ("Prior to that, I managed to resolve it by disabling `torch.compile` on the sync function.", "worked"),
    ("I was not able to get it to work", "failed"),
    ("The bench never panicked in the timing loop.", "worked"),
    # a problem, then the fix it got: the failure words before the arrow or colon name the problem
    ("3. **DataParallel Device Mismatch** → Fixed with device placement checks", "worked"),
    ("OOM at startup -> fixed by lowering the batch", "worked"),
    ("Segfault on load: resolved by pinning numpy", "worked"),
    ("OOM -> fixed by lowering the batch, but it hangs at step 900", "partial"),
    ("Status: not fixed by the patch", "failed"),
    # an entry left open; "isolated" as a place, not as finding the culprit
    ("6. Ninja not found in isolated pip build environment → UNSOLVED", "failed"),
    ("We isolated the culprit: the fused kernel", "worked"),
    # a tool's fatal error quoted, a device back, a speedup told as a factor
    ("but now, when i run `sudo modprobe nvidia` i'm getting 'modprobe: FATAL: Module nvidia not found.'", "failed"),
    ("One more cycle and the GPU came back at 4W, 0% with no reset pending.", "worked"),
    ("The fused recurrent kernel achieves between 11.37 and 13.22x speedups.", "worked"),
    ("The error came back after a day.", "failed"),
    # not knowing why is no verdict; what the sentence says happened still is
    ("It's still unclear why it's needed, but I could only make it work by setting HSA_OVERRIDE_GFX_VERSION first.",
     "worked"),
    ("No idea why it hangs.", "failed"),
    # a gain aimed at is no gain measured; a fix by nothing is none
    ("- Target: 3-5x speedup (Phase 1 goal)", None),
    ("- Current: 1.2-1.5x speedup with batch_size=21", "worked"),
    ("Result: fixed by nothing, still OOM", "failed"),
    # a negation with "however" between it and its verb; a run that went through too slowly
    ("It did not, however, correct the output head orientation.", "failed"),
    ("✅ FLASHINFER but 4.4 TPS (slow kernel)", "partial"),
])
def test_outcome_words_with_their_negation_and_catches(text, want):
    assert outcome_of(text, "en") == want


@pytest.mark.parametrize("text, lang, want", [
    ("드라이버 재설치 (이 방법으로 해결 실패)", "ko", "failed"),  # the fix it was after, then that it failed
    ("重装驱动之后，解决失败", "zh", "failed"),
    ("重装驱动之后问题解决了", "zh", "worked"),
    ("路径3: 包状态修复 → 部分成功", "zh", "partial"),
])
def test_a_success_word_followed_by_a_failure_word_is_one_failure_in_chinese_japanese_and_korean(text, lang, want):
    assert outcome_of(text, lang) == want


def test_a_path_ticked_off_a_list_of_files_is_no_attempt():
    doc = """# Cleanup after the fix

## What we did

- Set `HSA_OVERRIDE_GFX_VERSION=11.0.2` -> the GPU is found, 29/29 layers offloaded ✅
- ❌ `/usr/local/bin/ollama.backup` (33 MB)
- ❌ `/usr/local/lib/ollama.custom-build/` (9.2 GB)
"""
    got = _attempts(doc)
    assert len(got) == 1 and got[0][1] == "worked"


def test_items_under_what_worked_and_what_did_not_are_attempts_with_those_outcomes():
    doc = """# Summary: fp8 MoE crashes on H100 (resolved)

**Problem.** The fused MoE kernel hits an illegal memory access under batch > 64.

## What didn't work

- Eager mode (`--enforce-eager`) — crash rate unchanged.
- A driver reinstall (550.54 → 550.90) — no difference.

## What worked

- Upgrading to vllm 0.5.4: five days under load, no crash.
"""
    got = _attempts(doc)
    assert [o for _, o, _ in got] == ["failed", "failed", "worked"]
    assert got[1][0].startswith("A driver reinstall (550.54 → 550.90)")


def test_a_case_list_keyed_in_bold_is_joined_to_its_result_list():
    doc = """# MoE configs on 4x 4090

### Runs

- **R1** default (`--tp 4`)
- **R2** `--tp 4 --disable-cuda-graph`
- **R3** `--tp 2` on two cards

### Outcomes

- **R1**: misaligned address, first batch
- **R2**: misaligned address, after ~10 requests
- **R3**: runs, 200 requests without errors
"""
    got = _attempts(doc)
    assert [o for _, o, _ in got] == ["failed", "failed", "worked"]
    assert got[0][0].startswith("R1")


def test_a_narrated_step_and_a_setting_that_made_the_job_run_are_attempts():
    doc = """# DDP across two GPUs under WSL2 never starts

Both ranks print their rank and then nothing, for 30 minutes.

## How I got there

At first we restarted the machine. Nothing changed, same hang.
Swapping the `gloo` backend in for `nccl` made the job run, slowly.
`NCCL_P2P_DISABLE=1` made the job start immediately.
"""
    got = _attempts(doc)
    assert [o for _, o, _ in got][-2:] == ["partial", "worked"]  # "made the job run, slowly": with a catch
    assert any("restarted" in t and o == "failed" for t, o, _ in got)


def test_an_attempt_that_only_looked_has_an_unknown_outcome_whatever_it_found():
    doc = """# RoCE bring-up for NCCL

## Log

- Ran `ibv_devinfo` on all nodes -> all ports PORT_ACTIVE, looks fine.
- dumped the block table of the failing batch -> it holds a -1 padding entry, the crash is there.
- Set `NCCL_IB_TC=106` -> still retry errors.
"""
    got = _attempts(doc)
    assert [o for _, o, _ in got] == ["inconclusive", "inconclusive", "failed"]


def test_quoted_settings_are_not_suggestions_and_a_suggestion_is_answered_once():
    doc = """# Chunked prefill crashes with GPTQ marlin

### asker — 2024-07-20

Chunked prefill with a GPTQ marlin model crashes with an illegal memory access.

### helper — 2024-07-27

> * **Env Vars**
>   * _export VLLM_ATTENTION_BACKEND=FLASH_ATTN_

just change to `export VLLM_ATTENTION_BACKEND=XFORMERS`

try it.

### asker — 2024-07-28

Yes, that works.

I was able to run the marlin model with chunked prefill on 0.4.2 but could not after this version.
"""
    got = _attempts(doc)
    assert got[0] == ("`export VLLM_ATTENTION_BACKEND=XFORMERS`", "worked", "asker")
    assert [o for _, o, _ in got[1:]] == ["worked", "failed"]


def test_forum_answers_signed_in_german_are_posts_and_an_answer_with_its_account_is_one_attempt():
    doc = """# RX 6800: Ollama findet die GPU nicht

**Frage von mkoehler (12.01.2025, 20:15)**

Ollama läuft nur auf der CPU, obwohl `rocminfo` die Karte zeigt.

**Antwort von t_brenner (12.01.2025, 21:02)**

Ist dein Benutzer in den Gruppen `render` und `video`?

**Antwort von mkoehler (12.01.2025, 21:40)**

Danke, das war's leider nicht. Den Benutzer habe ich zu `render` und `video` hinzugefügt und den Dienst neu
gestartet, Log zeigt immer noch dasselbe.

**Antwort von mkoehler (13.01.2025, 19:30)**

Ich habe trotzdem den Backports-Kernel installiert – und jetzt
funktioniert es: `ollama ps` zeigt 100 % GPU.
"""
    got = _attempts(doc)
    assert [(o, w) for _, o, w in got] == [("failed", "mkoehler"), ("worked", "mkoehler")]


def test_commands_kept_as_comments_in_a_dockerfile_with_their_results_are_attempts():
    doc = """# Dockerfile notes

```dockerfile
FROM nvcr.io/nvidia/pytorch:24.07-py3
# RUN pip install flash-attn==2.6.3
#     -> builds for 70 min, then dies: nvcc fatal: Unsupported gpu architecture 'compute_100'
# RUN pip install flash-attn==2.6.3 --no-build-isolation
#     -> same undefined symbol
RUN MAX_JOBS=8 pip install flash-attn==2.6.3 --no-build-isolation
```
"""
    got = _attempts(doc)
    assert [o for _, o, _ in got] == ["failed", "failed"]
    assert "--no-build-isolation" in got[1][0]


def test_a_flag_keeps_its_dashes_when_its_text_is_made_plain():
    assert plain("--max-num-seqs 64") == "--max-num-seqs 64" and plain("- item") == "item"


def test_an_issue_form_thread_keeps_its_replies_and_answers_go_to_the_suggestion_they_name():
    doc = """# Illegal memory access after a few hours (flashinfer backend)

**asker** commented on Nov 13, 2024

### Describe the bug

Serving the model with `--tensor-parallel-size 2` works for a few hours and then the engine dies.

### Before submitting a new issue...

- [x] I checked the open and closed issues before filing this.

**helper** commented on Nov 14, 2024

Does it also happen with the flash-attn backend? You would need `VLLM_ATTENTION_BACKEND=FLASH_ATTN`.
And have you tried `enforce_eager=True`?

**asker** commented on Nov 15, 2024

Can't tell yet for the backend switch: it has been running for two hours without a crash.

**asker** commented on Nov 18, 2024

@helper with FLASH_ATTN it crashed again after ~9 hours.

**asker** commented on Nov 19, 2024

Eager: yes — with that it ran through the whole weekend, no crash.
"""
    got = _attempts(doc)
    assert got == [("`VLLM_ATTENTION_BACKEND=FLASH_ATTN`", "failed", "asker"), ("`enforce_eager=True`", "worked", "asker")]


def test_a_mailing_list_thread_gives_the_answer_and_a_third_persons_own_try():
    doc = """# Re: [users] ZeRO-3 hangs at save_checkpoint

From: Priya
Date: Tue, 8 Apr 2025 09:14

If any rank skips the call, the others wait forever. Could you check that every rank calls
`model_engine.save_checkpoint()`?

From: Tomasz
Date: Tue, 8 Apr 2025 11:02

That was it. Removed the rank-0 guard, and the checkpoint is written in 4 minutes.

From: Helga
Date: Wed, 9 Apr 2025 16:40

Same symptom here, but our save is called on all ranks already. Setting the flag to false avoids the hang for us.
"""
    got = _attempts(doc)
    assert [(o, w) for _, o, w in got] == [("worked", "Tomasz"), ("worked", "Helga")]
    assert got[1][0].startswith("Setting the flag to false")


def test_an_update_paragraph_of_thing_colon_verdict_sentences_gives_one_attempt_each():
    doc = """# Flux in ComfyUI on a 12 GB card: OOM

Sampling at 1024x1024 dies with `torch.OutOfMemoryError` in the first step.

Things to try, cheapest first:

- [ ] launch with `--lowvram`
- [ ] fp8 weights

**UPDATE (same evening):** `--lowvram` alone: still OOM, same place. fp8 weights on top of `--lowvram`: works, 74 s per
image.
"""
    got = _attempts(doc)
    assert [o for _, o, _ in got] == ["failed", "worked"]


def test_a_status_table_with_a_notes_column_gives_its_ticked_rows_as_attempts():
    doc = """# Xid 119 after the driver upgrade

## Status

| | Step | Notes |
|---|---|---|
| [x] | Upgrade 10 nodes to 550.127.05 | 2 of them hit Xid 119 within a week, not fixed |
| [x] | Disable GSP firmware on 10 canaries | 3 weeks, 0 Xid 119, works |
| [ ] | Roll GSP-off to the whole fleet | waiting on approval |
"""
    got = _attempts(doc)
    assert [o for _, o, _ in got] == ["failed", "worked"]


@pytest.mark.parametrize("text, lang, want", [
    ("starts, first token ~3x slower", "en", "partial"),
    ("works ~2 h, then the NVML error returns", "en", "partial"),
    ("runs, only 3 GB/s", "en", "partial"),
    ("still crashes, after ~2 h instead of 30 min", "en", "partial"),
    ("no better", "en", "failed"),
    ("Minimal improvement: step time -1.4 %", "en", "partial"),  # better, by a little
    ("a slight speed-up, same OOM later", "en", "partial"),
    ("no measurable improvement", "en", "failed"),
    ("Significant improvement", "en", "worked"),
    ("能跑，但每步 41 秒，太慢", "zh", "partial"),
    ("正常，每步 19 秒", "zh", "worked"),
])
def test_a_success_with_a_catch_and_a_failure_that_got_better_are_partial(text, lang, want):
    assert outcome_of(text, lang) == want


def test_a_chinese_case_list_and_its_result_list_are_joined_by_their_keys():
    doc = """# 显存测试

**测试方案**

方案一：ZeRO-2，不开 offload
方案二：ZeRO-3 + gradient checkpointing

**结果**

方案一：OOM，第一步反向时报错
方案二：正常，每步 19 秒
"""
    got = _attempts(doc)
    assert [o for _, o, _ in got] == ["failed", "worked"]


def test_a_build_log_of_issue_entries_gives_each_edit_as_an_attempt_not_the_error():
    doc = """# jaxlib from source for ROCm — build log

issue 1: `fatal error: 'rocprim/rocprim.hpp' file not found`
  the headers live in /opt/rocm/include/rocprim, but the configure rule only globs include/hipcub
  edit: rocm_configure.bzl, added "rocprim" to the header dirs list

issue 2: `ld.lld: error: unable to find library -lrocm_smi64`
  edit: export ROCM_PATH=/opt/rocm-6.1.2 before the build
"""
    got = _attempts(doc)
    assert [t.split(",")[0] for t, _, _ in got] == ["rocm_configure.bzl", "export ROCM_PATH=/opt/rocm-6.1.2 before the build"]
    assert all(o != "failed" for _, o, _ in got)


def test_a_title_that_names_setup_does_not_silence_the_document_and_step_headings_are_steps():
    doc = """# CUDA GPU Setup Fix Documentation

## Root Cause
The CUDA toolkit was missing (no `ptxas`, no `libdevice`).

## Solution Implemented

### 1. Install CUDA Components via pip
```bash
python3 -m pip install nvidia-cuda-nvcc
```

### 2. Set XLA Environment Flags
```bash
export XLA_FLAGS="--xla_gpu_cuda_data_dir=$HOME/.local/cuda"
```
"""
    got = _attempts(doc)
    assert got == [("Install CUDA Components via pip", "worked", ""), ("Set XLA Environment Flags", "worked", "")]


def test_a_how_to_shell_block_with_describing_comments_gives_no_attempts():
    doc = """# Setting up the container toolkit

```bash
# Install the toolkit and configure Docker to use the NVIDIA runtime
sudo apt-get install -y nvidia-container-toolkit
sudo nvidia-ctk runtime configure --runtime=docker
# Restart Docker to apply the changes
sudo systemctl restart docker
```
"""
    assert _attempts(doc) == []


def test_the_solution_was_names_a_try_that_worked():
    doc = """# NCCL would hang

This can happen for various reasons:
1. ACSCtl is enabled in the BIOS
2. on one box the solution was to turn off ACSCtl on all PCI devices with `setpci`.
"""
    got = _attempts(doc)
    assert len(got) == 1 and got[0][1] == "worked"
    assert outcome_of("What finally fixed it was bucketing the sequence lengths", "en") == "worked"
    assert outcome_of("My solution was building Ceres against Eigen 3.3 from source.", "en") == "worked"
    assert outcome_of("Caused a core dump!", "en") == "failed"


@pytest.mark.parametrize("text", [
    "# T\n\n" + "a" * 200_000 + "\n",  # one word with no space: the file-name pattern once tried every start
    # a note of how a script's run went, then more comment lines than the note's look-ahead reads: it once read past
    # the run into the command after it, as if that were a comment (a crash)
    "```bash\npython run.py\n\n# again failed on save,\n" + "# x y z w\n" * 60 + "python other.py\n```\n",
    "# T\n\n" + "".join("  " * i + "- tried x -> works\n" for i in range(400)),  # deep indents: a table-rule test
    # a thread of thousands of "Still fails." under one reported fix: each verdict counted the posts between it and
    # the fix by walking all of them (17 s of CPU for six thousand, some 8 s for these four; about 3 s read linearly
    # on a busy 2-core machine)
    "# T\n\n### a — 2024-01-01\nIt hangs.\n\n### b — 2024-01-02\nSetting `X=1` fixed it for me.\n\n" + "".join(
        f"### u{i} — 2024-01-03\nStill fails.\n\n" for i in range(4000)),
    # list items of one long word full of digits and no colon: "a setting and what it measured" backtracked
    "# T\n\n" + "".join(f"- {'a1' * 10_000} {i}\n" for i in range(3)),
    # a heading of one word, fifty thousand spaces and another: the anchor pattern of `plain` once tried every space
    "# x" + " " * 50_000 + "y\n\ntext\n",
    # the same run of spaces in a table cell (the "but" of two tries in one sentence), a post's author line (the
    # number of an entry) and a paragraph (a hard line break's two spaces): each took 15-25 s of CPU
    "# T\n\n| change | result |\n|---|---|\n| a" + " " * 30_000 + "b | fails |\n",
    "# T\n\n### alice" + " " * 30_000 + "— 2024-01-01\nIt hangs.\n",
    "# T\n\nI tried x" + " " * 150_000 + "y and it failed.\n",
])
def test_hostile_shapes_are_read_in_linear_time(text):
    import time

    from dbglog.docreader.read import read_document

    t = time.process_time()
    read_document(text, "hostile.md")
    assert time.process_time() - t < 5.0  # each took 5 to 80 s of CPU with a backtracking pattern


def test_a_title_with_a_role_word_does_not_turn_the_whole_document_into_next_steps():
    doc = """# Runbook: inference box recovery guide

## What happened

The node dropped both GPUs during a long fine-tune; `nvidia-smi` listed nothing.

## What did not work

- Reloaded the kernel module with `modprobe -r nvidia && modprobe nvidia`: the devices stayed missing.

## Next steps

- Ask the host to reseat the riser card.
"""
    [p] = _read(doc)
    assert [a.outcome for a in p.inv.attempts] == ["failed"]
    assert [s.text for s in p.inv.next_steps] == ["Ask the host to reseat the riser card."]


def test_a_verdict_listed_right_under_a_marked_attempt_is_its_result_not_another_attempt():
    doc = """# Box lost its GPUs

## Things that did not bring it back

❌ **Driver reload:** `rmmod nvidia_uvm nvidia && modprobe nvidia`
   - the bus address is still gone afterwards

❌ **Resetting through sysfs**
   - the card vanished for good
"""
    got = [(a.title, a.outcome, a.source_lines) for p in _read(doc) for a in p.inv.attempts]
    assert [o for _, o, _ in got] == ["failed", "failed"]
    assert [lines for _, _, lines in got] == [[5, 6], [8, 9]]


def _steps(doc):
    return [s.text for p in _read(doc) for s in p.inv.next_steps]


def test_a_plan_said_inside_an_attempts_paragraph_is_a_next_step_too():
    doc = """# MoE layer faults on the EP=8 config

## Log

Swapped in the tuned block-size table for the expert GEMM and reran the EP=8 job: it ran through. I'll send the tuned table upstream as a PR.
"""
    [p] = _read(doc)
    assert [a.outcome for a in p.inv.attempts] == ["worked"]
    assert any("upstream" in s for s in _steps(doc))


def test_a_question_about_the_future_asked_of_someone_else_is_no_next_step():
    doc = """# vLLM hangs at the first request with TP=2

### asker — 2025-08-01

vLLM 0.9.2 with two GPUs hangs at the first request.

### maintainer — 2025-08-02

There is a fix for the custom all-reduce in PR #21034. Does it fix it?

### asker — 2025-08-02

It works! No more hang with the PR applied. Is the nightly going to include it?
"""
    assert not any("nightly" in s for s in _steps(doc))


def test_the_items_under_a_short_plan_caption_are_next_steps_with_their_lines():
    doc = """# Loader eats VRAM during layout training

## 2025-03-03

The run died again after 40 epochs with the VRAM full.

- Guesses
    - The dataset handling function leaks tensors between batches.
- Something to try
    - Parallelize the dataset handling function.
    - Save a checkpoint every 5 epochs.

Done today:

- moved the eval to the CPU: no change

Next steps:

- Bisect the loader between v0.3 and v0.4.
"""
    [p] = _read(doc)
    assert [(s.source_lines, s.text) for s in p.inv.next_steps] == [
        ([10, 10], "Parallelize the dataset handling function."), ([11, 11], "Save a checkpoint every 5 epochs."),
        ([19, 19], "Bisect the loader between v0.3 and v0.4.")]


def test_a_plan_under_its_own_label_is_a_step_and_a_sibling_label_ends_the_status_field():
    doc = """# Runner crashes on gfx906

The ollama runner crashes as soon as a model loads.

**Next steps**: Run the diagnostic commands to confirm the root cause, but do not block on fixing ROCm.

## Log

- **STATUS:** job 5 running
- **NEXT:** Monitor the job status and verify the smoke tests complete
"""
    [p] = _read(doc)
    assert [(s.source_lines, s.text.split()[0]) for s in p.inv.next_steps] == [([5, 5], "Run"), ([10, 10], "Monitor")]


def test_a_labelled_plan_inside_a_tries_section_is_a_next_step_too():
    doc = """# CUDA build on the CI runner

## Attempt 3: fresh build from scratch

1. Deleted the stale cache from attempt 2
2. Rebuilt everything

**Lessons:**
- The build completes; the tests cannot run without a GPU driver
- Next step: upload the artifacts and run the tests on the self-hosted GPU runner
"""
    [p] = _read(doc)
    assert [s.source_lines for s in p.inv.next_steps] == [[10, 10]]
    assert len(p.inv.attempts) == 1  # (the try keeps the plan in its text too)


@pytest.mark.parametrize("doc", [
    "# VOICEVOX が GPU モードで落ちる\n\nDirectML 版で推論すると例外で止まります。\n\n一度 onnx モデルを正しい opset で作りなおしてみます。\n",
    "# 모델 학습 기록\n\nfine-tuning 은 끝났다.\n\n다음은 이렇게 fine-tuning한 모델로 실제 예측을 해보는 코드를 작성해볼 생각이다.\n",
    "# 多卡训练卡住\n\n在 CUDA 12 下多卡训练会卡住。\n\n好的，感谢您的反馈，有时间我也测试一下。\n",
    "# Layout notes\n\nThe VRAM fills slowly during training.\n\n- FIXME\n    - extract the element count into a parameter\n",
])
def test_what_the_author_means_to_do_next_in_any_language_is_a_next_step(doc):
    assert len(_steps(doc)) == 1


def test_a_caption_told_to_the_reader_or_said_of_the_past_gives_no_steps():
    doc = """# Jetson build notes

## Building

Things you need to do:

1. Clone the repository with its submodules.
2. Build with the CUDA flag.

So the plan was:

1. Create a Dockerfile.
2. Build it on Cloud Build.
"""
    steps = " ".join(_steps(doc))
    assert not any(w in steps for w in ("Clone", "CUDA flag", "Dockerfile", "Cloud Build"))


def test_what_the_author_will_do_is_a_plan_with_no_outcome_and_the_try_told_after_it_on_its_line_stays_a_try():
    doc = """# llamafile on gfx1030

The llamafile build stops at `nvcc` missing on an RX 6800.

## Log

The README says AMD owners need the ROCm SDK. So I'll just install `rocm-hip-sdk` and try again. I installed `rocm-hip-sdk`, rebooted and tried again, to no avail.

Setting `NCCL_P2P_DISABLE=1` fixed it for me. I'll file a separate issue for the hang in the shm broadcast.
"""
    [p] = _read(doc)
    assert outcome_of("I'll file a separate issue for the hang.", "en") is None
    assert outcome_of("It will hang after 3 hours.", "en") == "failed"  # what happens, not what the author will do
    got = [(a.source_lines, a.outcome) for a in p.inv.attempts]
    assert ([7, 7], "failed") in got and got[-1] == ([9, 9], "worked")  # ("to no avail": it failed)
    assert any("separate issue" in s.text for s in p.inv.next_steps)


@pytest.mark.parametrize("said, want", [
    ("I removed the nltk download in my code, and unexpectedly the program stops hanging.", "worked"),
    ("I encountered a similar issue with a locally built triton, and for me it was fixed by building it with g++ 9.",
     "worked"),
    ("I have the same error but when I disable eager mode it works.", "worked"),
    ("I have the same error.", "failed"),
    ("Setting NCCL_P2P_DISABLE=1 seems to fix the issue.", "worked"),
    ("It works but hangs after an hour.", "partial"),
    ("Adding -DCMAKE_CUDA_ARCHITECTURES=86 solved my llama.cpp compilation problem.", "worked"),
    ("That did not solve the problem.", "failed"),
    ("Downgraded and it works, but I am a bit sad that I had to downgrade.", "worked"),  # a "but" with no limit
    ("It works, but 20% slower.", "partial"),
])
def test_a_failure_named_as_the_bug_shared_or_the_thing_gone_is_not_how_the_try_went(said, want):
    assert outcome_of(said, "en") == want


def test_a_german_modal_before_its_subject_is_a_plan():
    doc = """# Slurm-Job hängt beim Start

## Notizen

Mit `--exclude=node07` läuft der Job durch. Nach dem Tausch der Karte will ich den Job nochmal auf allen Knoten starten.
"""
    assert any("nochmal" in s for s in _steps(doc))


def test_open_rows_of_a_task_table_are_next_steps_and_ticked_rows_are_attempts():
    doc = """# Xid 79 on the training fleet

## Tracker

| Done | Task | Result |
|---|---|---|
| [x] | Pin the driver to 550.90 on four nodes | still Xid 79 on two of them |
| [ ] | Move the remaining nodes to the new BIOS | waiting on the vendor |
| [ ] | Ask the vendor for a firmware with the PCIe fix | |
"""
    [p] = _read(doc)
    assert [a.outcome for a in p.inv.attempts] == ["failed"]
    assert [s.text for s in p.inv.next_steps] == ["Move the remaining nodes to the new BIOS",
                                                  "Ask the vendor for a firmware with the PCIe fix"]


def test_an_unticked_item_not_done_for_lack_of_time_is_the_authors_plan():
    doc = """# ROCm image lacks gfx942 kernels

## Checklist

- [x] reproduced with the nightly image: same `hipErrorNoBinaryForGpu`
- [ ] rebuild the image myself with `PYTORCH_ROCM_ARCH=gfx942` (haven't had time)
"""
    assert any("PYTORCH_ROCM_ARCH" in s for s in _steps(doc))


def test_still_before_an_intention_is_not_a_failure_that_lasted():
    assert outcome_of("I still want to rerun it on the second node", "en") is None
    assert outcome_of("it still hangs on the second node", "en") == "failed"


def test_a_hedged_success_is_the_reporters_success_and_a_contracted_perfect_is_a_past_try():
    doc = """# OOM after the 0.4 update

### asker — 2025-03-01

Since 0.4 the 13B model runs out of memory on the first prompt.

### helper — 2025-03-02

The 0.4.2 build changes the KV cache sizing; give it a go.

### asker — 2025-03-03

I've installed 0.4.2 and it seems that the OOM is gone in my case.
"""
    got = _attempts(doc)
    assert [(o, w) for _, o, w in got] == [("worked", "asker")]
    assert outcome_of("it seems to hang still", "en") == "failed"


def test_a_column_whose_cells_are_verdicts_is_the_result_column_whatever_its_header():
    doc = """# Allreduce stalls on the 16-node job

## Runs

| Run | NCCL_ALGO | NCCL_PROTO | Ended |
|---|---|---|---|
| r1 | Ring | Simple | hangs at step 40 |
| r2 | Tree | Simple | completes, 3.1 s/step |
| r3 | Tree | LL128 | still hangs at step 40 |
"""
    got = _attempts(doc)
    assert [o for _, o, _ in got] == ["failed", "worked", "failed"]


def test_a_yes_no_column_does_not_pass_for_a_result_column():
    doc = """# Allreduce stalls on the 16-node job

## Runs

| Run | NCCL_ALGO | Hang? |
|---|---|---|
| r1 | Ring | yes |
| r2 | Tree | no |
"""
    assert [o for _, o, _ in _attempts(doc)] != ["worked", "failed"]


ZH_THREAD = """# [BUG] 双卡推理时 vLLM 卡住不动

### 是否已有关于该错误的issue或讨论？ | Is there an existing issue / discussion for this?

- [X] 我已经搜索过已有的issues和讨论 | I have searched the existing issues / discussions

### 当前行为 | Current Behavior

用两张 4090 启动 `--tensor-parallel-size 2`，加载完模型后就一直卡住，没有任何报错。单卡可以正常运行。

### 期望行为 | Expected Behavior

_No response_

### 运行环境 | Environment

- OS: Ubuntu 22.04
- CUDA: 12.1
- vllm: 0.4.2

### liuwei — 2024-05-10

试试设置 `NCCL_P2P_DISABLE=1`，4090 不支持 P2P。

### zhangsan — 2024-05-11

@liuwei 谢谢，加了 `NCCL_P2P_DISABLE=1` 之后可以正常推理了。

### wangwu — 2024-05-12

我这边是 A800，加了这个还是卡住，后来把 vllm 降级到 0.4.0 就好了。

### zhangsan — 2024-05-13

另外我试了 `--disable-custom-all-reduce`，没有效果。下周再试一下升级驱动。
"""


def test_a_chinese_issue_thread_is_read_by_clause_mood_and_outcome_words():
    got = _attempts(ZH_THREAD)
    tried = [(t, o, w) for t, o, w in got if w]
    assert [(o, w) for _, o, w in tried] == [("worked", "zhangsan"), ("failed", "wangwu"), ("worked", "wangwu"),
                                             ("failed", "zhangsan")]
    assert "降级到 0.4.0" in tried[2][0]  # two tries told in one sentence, split at the clause that changed something
    assert any("升级驱动" in s for s in _steps(ZH_THREAD))
    assert not any("搜索过" in t for t, _, _ in got)  # the bilingual issue form is no try


ACS_THREAD = """# all_reduce hangs on 8x L40S after driver update

### kvn-r — 2025-02-03

After moving the box to driver 565 the first all_reduce of every job hangs forever; GPU util sits at 100 %.

What I've tried so far:
- `NCCL_P2P_DISABLE=1`: no change, still hangs
- `NCCL_IB_DISABLE=1` (no IB on this box anyway): same
- rolling back to driver 550: works again, but we need 565 for the new CUDA

### maint-a — 2025-02-03

Can you run with `NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,P2P` and attach the log? Also, is ACS enabled on the PCIe switches?

### kvn-r — 2025-02-04

Log attached. `lspci -vvv` shows ACSCtl SrcValid+ on both switches, so yes.

### maint-a — 2025-02-04

That's it then. Please disable ACS (or pass `iommu=pt`) and retry.

### kvn-r — 2025-02-05

Disabled ACS with setpci on both switches, and all_reduce_perf now completes at the expected bus bandwidth. Thanks!

### jdoe42 — 2025-02-10

Same hang here on 4x L40S. For me `iommu=pt` alone did not help, I had to turn ACS off as well.

### zhu-w — 2025-02-11

FWIW we see no hang on H100 SXM with the same driver. Will try the ACS change on our L40S nodes next week.
"""


def test_a_requested_look_the_asker_then_ran_and_a_fix_done_as_suggested_are_the_askers_tries():
    got = [(a.title, a.outcome, a.who, a.source_lines) for p in _read(ACS_THREAD) for a in p.inv.attempts]
    by_lines = {tuple(lines): (o, w) for _, o, w, lines in got}
    assert by_lines[(14, 18)] == ("inconclusive", "kvn-r")  # asked to run with NCCL_DEBUG, posted what it showed
    assert by_lines[(22, 26)] == ("worked", "kvn-r")  # "Disabled ACS with setpci ...": did what was suggested
    assert not any(t.startswith("Please disable") for t, _, w, _ in got if w == "zhu-w")  # answers nobody's suggestion


FORM_THREAD = """# [Bug]: illegal memory access in fused_moe with FP8 on H20

### Your current environment

<details>
<summary>The output of `python collect_env.py`</summary>

```text
PyTorch version: 2.5.1+cu124
vLLM Version: 0.6.4.post1
```

</details>

### 🐛 Describe the bug

Serving DeepSeek-V2-Lite with `--quantization fp8 --tensor-parallel-size 2` dies on the first long prompt:

```
RuntimeError: CUDA error: an illegal memory access was encountered
```

With `--enforce-eager` it still crashes, just later. Dropping `--quantization fp8` makes it go away.

### Before submitting a new issue...

- [x] Make sure you already searched for relevant issues, and asked the chatbot living at the bottom right corner of the [documentation page](https://docs.vllm.ai/en/latest/), which can answer lots of frequently asked questions.

### m-gold — 2024-12-02

Could you check whether it reproduces with `VLLM_FUSED_MOE_CHUNK_SIZE=8192`? There was an overflow in the chunked path.

### tq-lin — 2024-12-03

Yep, with `VLLM_FUSED_MOE_CHUNK_SIZE=8192` I can't reproduce it anymore after ~2k requests.

### r-ahmed — 2024-12-05

Hitting this on H100 too. I built from main (commit 3f2a9c1) and the crash is gone for me, so #10753 probably fixed it.

### tq-lin — 2024-12-06

Confirmed, 0.6.5 works without the env var. Closing.
"""


def test_an_issue_forms_problem_field_is_the_baseline_and_the_first_post_below_a_body_is_a_reply():
    got = [(a.outcome, a.who, a.source_lines) for p in _read(FORM_THREAD) for a in p.inv.attempts]
    assert [17, 17] not in [lines for _, _, lines in got]  # "Serving ... dies on the first long prompt": the bug itself
    assert ("worked", "tq-lin", [31, 35]) in got  # the helper's question, answered by the one who hit it
    assert ("worked", "r-ahmed", [39, 39]) in got  # "so #10753 probably fixed it" hedges the cause, not the try


TODO_DOC = """# gfx1010 conv2d crash — TODO

## Status

PyTorch 2.3 + ROCm 6.0 on an RX 5700 XT: any `torch.nn.Conv2d` forward segfaults in MIOpen. Matmul works.

## Done

- [x] Installed ROCm 6.0 from the AMD repo and the matching PyTorch wheel
- [x] Confirmed the GPU shows up in `rocminfo` (gfx1010)
- [x] `HSA_OVERRIDE_GFX_VERSION=10.3.0` → conv2d still segfaults, now inside a different kernel
- [x] `MIOPEN_FIND_MODE=1` → no change
- [x] Built MIOpen from source with gfx1010 in the target list → conv2d runs, 3x slower than CPU fallback
- [x] Wrote a minimal repro script (`repro_conv.py`)

## Remaining

- [ ] Try `MIOPEN_DEBUG_CONV_DIRECT=0` to skip the direct kernels
- [ ] Report the slowdown upstream with the repro script
- [ ] Check whether ROCm 6.1 ships gfx1010 kernels

## Do not use

- `HSA_OVERRIDE_GFX_VERSION=10.3.0` with the stock wheel — crashes in other ops too
"""


def test_a_task_list_reads_its_tries_not_its_setup_tasks_nor_its_problem_statement():
    got = {tuple(a.source_lines): a.outcome for p in _read(TODO_DOC) for a in p.inv.attempts}
    assert (5, 5) not in got  # "PyTorch 2.3 on an RX 5700 XT: any Conv2d segfaults": the problem, stated first
    assert (9, 9) not in got and (14, 14) not in got  # installing, writing a repro script: tasks that prepare
    assert got[(10, 10)] == "inconclusive"  # confirmed what rocminfo shows: a look, not a fix
    assert got[(11, 11)] == got[(12, 12)] == "failed"
    assert got[(13, 13)] == "partial"  # runs now, 3x slower
    assert [s.text for p in _read(TODO_DOC) for s in p.inv.next_steps][:1] == [
        "Try `MIOPEN_DEBUG_CONV_DIRECT=0` to skip the direct kernels"]


DONE_MARKS = """# ptxas segfault with CUDA 12.8 on jax 0.5

## What We've Tried

- ✅ Upgraded the driver to 570.86 — still segfaults in ptxas
- ✅ Rebuilt jaxlib from source against CUDA 12.8
- ✅ Set `XLA_FLAGS=--xla_gpu_cuda_data_dir=/usr/local/cuda` — no change
"""


def test_a_tick_on_every_item_of_a_list_whose_words_say_failed_means_done_not_fixed():
    got = [a.outcome for p in _read(DONE_MARKS) for a in p.inv.attempts]
    assert got == ["failed", "inconclusive", "failed"]


RUNS_LOG = """# 176B pre-run: hangs on 48 nodes

## 2022-02-14

We keep hanging at the first all-reduce on 48 nodes, while 8 and 16 nodes start fine.

| nodes | TP | PP | NCCL version | CUDA_LAUNCH_BLOCKING | outcome |
|-------|----|----|--------------|----------------------|---------|
| 8     | 4  | 2  | 2.10.3       | 0                    | starts  |
| 16    | 4  | 4  | 2.10.3       | 0                    | starts  |
| 48    | 4  | 12 | 2.10.3       | 0                    | hangs after ~20 min |
| 48    | 4  | 12 | 2.10.3       | 1                    | no hang in 6 h, 15 % slower |
| 48    | 4  | 12 | 2.12.7       | 0                    | hangs |

## 2022-02-15

Ran with `NCCL_DEBUG=INFO` on 48 nodes: the hang is inside a `ncclSend` on the PP boundary between node 23 and 24.

Next: try `NCCL_PROTO=Simple` on the 48-node config; if that does not help, stay on `CUDA_LAUNCH_BLOCKING=1` for now.
"""


def test_a_run_with_a_debug_setting_is_a_look_and_a_runs_table_gives_one_try_per_row():
    got = [(a.source_lines, a.outcome) for p in _read(RUNS_LOG) for a in p.inv.attempts]
    assert [o for _, o in got[:5]] == ["worked", "worked", "failed", "partial", "failed"]
    assert got[5] == ([17, 17], "inconclusive")  # "Ran with NCCL_DEBUG=INFO: the hang is in ncclSend": what it showed
    assert any("NCCL_PROTO=Simple" in s for s in _steps(RUNS_LOG))


FIX_REPORT = """# NCCL watchdog timeout in DDP on 2x RTX 3090 — fix report

## Summary

Training crashed after ~40 min with `Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1203, OpType=ALLREDUCE)`. The cause was an `expand()` view whose gradient stride differed between ranks, which made bucket rebuilding hang on one rank.

## Attempts

### Attempt 1: raise the timeout
Set `timeout=timedelta(minutes=60)` in `init_process_group`.
**Result:** the crash came later (~95 min), same watchdog message.

### Attempt 2: disable bucket view
`gradient_as_bucket_view=False`.
**Result:** no change.

### Attempt 3: replace expand() with repeat()
Changed `pos.expand(B, -1, -1)` to `pos.repeat(B, 1, 1)` in the embedding.
**Result:** 6 h run without a timeout.

## Expected Outcomes

- ✅ No more NCCL timeouts on long runs
- ✅ Same throughput as before

## Next steps

- Run the full 3-day schedule on both nodes.
"""


def test_expected_outcomes_are_a_prediction_not_results():
    got = [(a.title, a.outcome) for p in _read(FIX_REPORT) for a in p.inv.attempts]
    assert [o for _, o in got] == ["failed", "failed", "worked"]


ATTEMPT_LOG = """# GRPO 120B — attempt history

### Attempt 4 — vLLM 0.8.5, TP=8 for rollout
- Problem: rollout workers OOM at 93 GB during weight sync
- Change: `enable_sleep_mode=True`, colocate actor and rollout
- Result: sync works, first step completes in 41 min

### Attempt 5 — same, with `max_num_seqs=64`
- Problem: step time too long
- Result: step time 18 min, reward curve flat after 30 steps

### Attempt 6 — lr 1e-6 → 3e-7
- Result: reward rises slowly; KL stays under 0.02

### Attempt 7 — FP8 rollout
- Problem: `RuntimeError: CUDA error: an illegal memory access was encountered` in the MoE kernel on step 1
- Reverted to BF16.
"""


def test_a_problem_line_under_an_attempt_heading_is_what_that_try_ran_into_not_a_new_bug():
    parsed = _read(ATTEMPT_LOG)
    assert len(parsed) == 1  # four attempts, one investigation
    got = [(a.source_lines[0], a.outcome) for a in parsed[0].inv.attempts]
    assert [line for line, _ in got] == [3, 8, 12, 15]
    assert got[0][1] == "worked" and got[3][1] == "failed"  # attempt 7 hit an illegal memory access


ZH_NOTES = """# 记一次多机训练 NCCL 超时

环境：2 台机器，每台 8 张 A100，torchrun 启动，PyTorch 2.1。

训练跑到第 300 步左右就报 `Watchdog caught collective operation timeout`，然后进程被杀掉。

1. 一开始以为是网络问题，把 `NCCL_SOCKET_IFNAME` 指定成 `ib0`，还是超时。
2. 加大超时时间到 7200 秒，只是报错晚了一点，问题没解决。
3. 打开 `NCCL_DEBUG=INFO` 看日志，发现第二台机器的 rank 12 一直卡在数据加载。
4. 把 DataLoader 的 `num_workers` 从 16 改成 4，训练正常跑完了 2000 步。

后面准备再试一下把 `pin_memory` 关掉，看看能不能把 `num_workers` 再调回去。
"""


@pytest.mark.parametrize("label", ["规避手段", "解决方法", "临时方案", "解决方案", "**解决方案**"])
def test_a_chinese_workaround_label_under_each_error_heading_is_the_fix_tried(label):
    doc = f"""# 昇腾 NPU 训练报错记录

#### 问题：`RuntimeError: all only supports torch.uint8 and torch bool dtypes`

{label}：all 操作的输入先转成 bool

#### 问题：`Cannot set version_counter for inference tensor`

{label}：用 torch.no_grad() 替换 torch.inference_mode()
"""
    got = [a.source_lines for p in _read(doc) for a in p.inv.attempts]
    assert got == [[5, 5], [9, 9]]


@pytest.mark.parametrize("label", ["해결", "해결 방법", "해결책"])
def test_a_korean_fix_label_under_each_error_heading_is_the_fix_tried(label):
    doc = f"""# 학습 오류 기록

#### 문제: `CUDA out of memory`

{label}: 배치 크기를 8에서 4로 줄였더니 학습이 끝까지 돌았다

#### 문제: `NCCL timeout`

{label}: NCCL_P2P_DISABLE=1 을 설정했더니 멈추지 않았다
"""
    got = [a.source_lines for p in _read(doc) for a in p.inv.attempts]
    assert got == [[5, 5], [9, 9]]


@pytest.mark.parametrize("doc, want", [
    ("""# Digit six is misread

Attempt 1. Apply a correction weight to class 6
six_bias = 1.20f
Attempt result: no change

Attempt 2. Classify each image five times with a little noise and vote
Attempt result: no change
""", [([3, 6], "failed"), ([7, 9], "failed")]),
    ("""# 숫자 6 인식 문제

시도1. 보정 가중치를 적용
six_bias = 1.20f
시도 결과: 변화x

시도2. 같은 이미지를 여러 번 변형해서 예측하고 투표
시도 결과 : 변화 x
""", [([3, 6], "failed"), ([7, 9], "failed")]),
])
def test_a_line_opening_with_a_numbered_try_heads_that_try_in_any_language(doc, want):
    assert [(a.source_lines, a.outcome) for p in _read(doc) for a in p.inv.attempts] == want


@pytest.mark.parametrize("doc", [
    "# 问题\n\n训练一开始就报 CUDA error。\n\n我把 batch size 改成了 8。\n\n还是出现了同样的错误。\n",
    "# 問題\n\n学習を開始するとCUDAエラーで止まる。\n\nバッチサイズを8に下げました。\n\nそれでも同じエラーが出ました。\n",
])
def test_the_same_failure_told_in_a_past_form_after_a_change_is_that_changes_result(doc):
    assert [(a.source_lines, a.outcome) for p in _read(doc) for a in p.inv.attempts] == [([5, 7], "failed")]


def test_a_korean_error_that_occurred_after_a_change_is_that_changes_result_not_a_try():
    doc = """# 문제

poetry 환경에서 import 에러가 났다.

일단 가상환경을 conda로 바꾸었다.

그래도 같은 에러가 났다.
"""
    assert [(a.source_lines, a.outcome) for p in _read(doc) for a in p.inv.attempts] == [([5, 7], "failed")]


def test_each_entry_of_a_numbered_chinese_list_is_its_own_try():
    got = [(a.source_lines, a.outcome) for p in _read(ZH_NOTES) for a in p.inv.attempts]
    assert got == [([7, 7], "failed"), ([8, 8], "failed"), ([9, 9], "inconclusive"), ([10, 10], "worked")]
    assert any("pin_memory" in s for s in _steps(ZH_NOTES))


ZH_CASES = """# 四卡推理 Qwen 时 vLLM 启动卡住

### wang_lei — 2025-03-02

用 vLLM 0.6 部署，各种组合的情况如下：
（1）单卡 fp16，成功
（2）双卡 tp=2 fp16，成功
（3）四卡 tp=4 awq 不成功
（4）四卡 tp=4 fp16，不成功

不成功的时候都是加载完权重就卡住不动。

### zhao_min — 2025-03-03

四卡的时候试试加上 `--disable-custom-all-reduce`
"""


def test_numbered_cases_in_one_chinese_paragraph_are_a_try_each_with_the_verdict_that_closes_it():
    # "（1）…，成功" line after line: markdown sees one paragraph, the numbers make it a list of runs, and the word
    # that closes each line, after a comma or a space, is how that run went
    got = [(a.source_lines, a.outcome) for p in _read(ZH_CASES) for a in p.inv.attempts]
    assert got[:4] == [([6, 6], "worked"), ([7, 7], "worked"), ([8, 8], "failed"), ([9, 9], "failed")]
    units = [u for u in segment(ZH_CASES).units if u.first in (4, 5, 6)]  # (0-based: the caption, entries 1 and 2)
    assert [(u.first, u.item >= 0) for u in units] == [(4, False), (5, True), (6, True)]


@pytest.mark.parametrize("text", ["开机之后第一次可以正常启动,但是模型退出之后再次启动,就会卡住。", "我也是这个错，大佬有解决嘛",
                                  "看来您的测试运行遇到了一个 \"invalid device ordinal\" 错误。"])
def test_a_chinese_sentence_that_only_ends_on_an_outcome_word_is_no_try_and_its_verdict(text):
    doc = f"# 记录\n\n## 现象\n\n随便说一句背景。\n\n{text}\n"
    assert [a.source_lines for p in _read(doc) for a in p.inv.attempts] == []


DE_FORUM = """# ROCm: HIP error invalid device function auf RX 6700 XT

### marco_k — 12.03.2024

Hallo zusammen, seit dem Update auf ROCm 6.0 bekomme ich bei jedem `torch.randn(2, device="cuda")` den Fehler `HIP error: invalid device function`. Mit ROCm 5.7 lief alles.

Folgendes habe ich schon probiert:
- PyTorch neu installiert (Nightly für ROCm 6.0) – gleicher Fehler
- `HSA_OVERRIDE_GFX_VERSION=10.3.0` gesetzt – jetzt läuft es, aber nur wenn ich es im selben Terminal exportiere

### jens_w — 12.03.2024

Trag die Variable in `/etc/environment` ein, dann gilt sie auch für den Dienst.

### marco_k — 13.03.2024

Danke, das hat funktioniert. Der Dienst startet jetzt auch nach einem Neustart ohne Fehler.
"""


def test_a_german_forum_thread_with_day_month_year_dates_reads_posts_imperatives_and_catches():
    got = [(a.source_lines, a.outcome, a.who) for p in _read(DE_FORUM) for a in p.inv.attempts]
    assert got == [([8, 8], "failed", "marco_k"),  # "– gleicher Fehler" in a line the code names make look English
                   ([9, 9], "partial", "marco_k"),  # "läuft, aber nur wenn ...": works with a catch
                   ([13, 17], "worked", "marco_k")]  # "Trag die Variable ... ein" / "das hat funktioniert"


POSTMORTEM = """# Postmortem: inference fleet Xid 79 outage, 2025-06-04

## Impact

32 of 120 H100 nodes dropped out of the serving pool for 5 hours; p99 latency doubled.

## Timeline

- 09:12 — alerts fire: `Xid 79, GPU has fallen off the bus` on 6 nodes.
- 09:40 — on-call drains the affected nodes and reboots them; all 6 come back, 4 fail again within the hour.
- 10:25 — we roll the driver back from 570.124 to 550.144 on 10 nodes; Xid 79 keeps appearing at the same rate.
- 11:50 — the hardware team notices all failing nodes share a PSU firmware revision. Power capping to 500 W with `nvidia-smi -pl 500` on 20 nodes: no Xid 79 in the following 3 hours.
- 14:10 — PSU firmware upgraded on all nodes; power cap removed; no recurrence since.

## Root cause

PSU firmware 2.1.4 let the 12 V rail droop under synchronized load spikes.

## Action items

- [ ] Add PSU firmware revision to the node health check.
- [ ] Alert on Xid 79 rate per rack, not per node.
"""


def test_a_timeline_told_in_the_present_tense_gives_its_changes_as_tries():
    got = [(a.source_lines, a.outcome) for p in _read(POSTMORTEM) for a in p.inv.attempts]
    assert got == [([10, 10], "failed"), ([11, 11], "failed"), ([12, 12], "worked"), ([13, 13], "worked")]
    assert len([s for p in _read(POSTMORTEM) for s in p.inv.next_steps]) == 2


def test_a_post_header_named_like_an_entry_is_no_attempt_and_habitual_advice_is_no_try():
    doc = """# NCCL all_reduce freezes on 4x A6000

### asker-7 — 2024-03-01

Training freezes at the first all_reduce. Setting `NCCL_P2P_DISABLE=1` makes it run.

### maint-2 — 2024-03-02

Disabling VT-d in the BIOS or passing `iommu=pt` usually helps with this kind of freeze.

### hello-11 — 2024-03-09

Do you still have the problem? If not, we will close it soon.
"""
    got = [(a.title, a.who) for p in _read(doc) for a in p.inv.attempts]
    assert not any("2024" in t or w in ("hello-11", "maint-2") for t, w in got)


def test_switching_on_debug_output_is_a_look_but_cuda_launch_blocking_can_be_a_fix():
    from dbglog.docreader.cues import diagnostic

    assert diagnostic("Enabled NCCL debugging to inspect communication initialization")
    assert diagnostic("export NCCL_DEBUG=INFO and rerun")
    assert not diagnostic("set CUDA_LAUNCH_BLOCKING=1 and rerun")


SOURCE_BUILD_THREAD = """# Segfault in flash_attn_varlen_func on A10G after upgrading to 2.6.3

### dkr-9 — 2024-09-10

After `pip install flash-attn==2.6.3` every call to `flash_attn_varlen_func` segfaults on our A10G boxes. 2.5.9 was fine.

EDIT: solved by rebuilding from source with `MAX_JOBS=4 pip install flash-attn --no-build-isolation`, see below.

### tri-m — 2024-09-11

This should be fixed by #1180, can you try the latest nightly wheel?

### dkr-9 — 2024-09-11

@tri-m I tried your suggestion but got a different error: `undefined symbol: _ZN3c104cuda9SetDeviceEi`.

### pax-ml — 2024-09-12

Downgrading to 2.5.9 fixed it for me.

### dkr-9 — 2024-09-13

The undefined symbol was a torch mismatch. Rebuilt flash-attn from source against torch 2.4.0:

```bash
MAX_JOBS=4 pip install flash-attn --no-build-isolation
```

This works, no more segfaults after 10k steps.

### tri-m — 2024-09-14

Closing as fixed in 2.6.3.post1.
"""


def test_an_action_shown_as_a_command_block_takes_the_verdict_after_the_block_and_a_closing_note_is_no_try():
    got = [(a.source_lines, a.outcome, a.who) for p in _read(SOURCE_BUILD_THREAD) for a in p.inv.attempts]
    assert ([23, 29], "worked", "dkr-9") in got  # "Rebuilt ... :" + the pip command + "This works"
    assert ([11, 15], "failed", "dkr-9") in got  # "I tried your suggestion but got a different error"
    assert ([19, 19], "worked", "pax-ml") in got
    assert not any(w == "tri-m" for _, _, w in got)  # "Closing as fixed in 2.6.3.post1." closes, it tried nothing


JA_NOTES = """# RTX 4090 で vLLM が起動直後に落ちる

## 環境

- Ubuntu 22.04 / CUDA 12.4 / vLLM 0.6.3

## 症状

モデルのロード後、最初のリクエストで `CUDA error: an illegal memory access was encountered` が出て落ちる。

## 試したこと

- `--enforce-eager` を付けて起動してみたが、同じエラーで落ちた。
- `--gpu-memory-utilization 0.8` に下げたところ、エラーは変わらず。
- vLLM を 0.5.5 にダウングレードしたら、問題なく動いた。

## 今後

- 0.6.3 で `VLLM_ATTENTION_BACKEND=XFORMERS` を試す予定。
"""


def test_a_japanese_note_is_read_with_its_own_cue_table():
    from dbglog.docreader.cues import language

    assert language("vLLM を 0.5.5 にダウングレードしたら、問題なく動いた。") == "ja"
    assert language("加了这个还是卡住") == "zh"
    got = [(a.source_lines, a.outcome) for p in _read(JA_NOTES) for a in p.inv.attempts]
    assert got == [([13, 13], "failed"), ([14, 14], "failed"), ([15, 15], "worked")]
    assert any("XFORMERS" in s for s in _steps(JA_NOTES))


BUILD_NOTES = """# flash-attn build notes (ROCm 6.2, MI210)

```bash
# first try, straight pip: fails, no ROCm wheel
pip install flash-attn

# build from the ROCm fork -> compiler killed (OOM) after 40 min
git clone https://github.com/ROCm/flash-attention && cd flash-attention
python setup.py install

MAX_JOBS=4 python setup.py install   # builds, 1h10m

# test
python -c "import flash_attn; print(flash_attn.__version__)"   # 2.6.3, works
pytest tests/test_flash_attn.py -k "causal"   # 3 failures in bwd, fwd ok
```

Tried again with `GPU_ARCHS=gfx90a` set to skip other targets: builds in 25 min.
"""


def test_command_notes_under_a_notes_title_read_every_commented_command():
    got = [(a.source_lines, a.outcome, a.title) for p in _read(BUILD_NOTES) for a in p.inv.attempts]
    # (the caption's verdict, "-> compiler killed", is the clone's and the install's under it: lines 7-9)
    assert [(lines, o) for lines, o, _ in got] == [([4, 5], "failed"), ([7, 9], "failed"), ([11, 11], "worked"),
                                                   ([13, 14], "worked"), ([15, 15], "failed"), ([18, 18], "worked")]
    assert "flash_attn" in got[3][2]  # "# test" above a command names no try: the command does


CONSOLE_NOTES = """# nccl-tests on the new node pair

```console
$ ./build/all_reduce_perf -b 8 -e 1G -f 2 -g 8
# Avg bus bandwidth    : 183.2
$ NCCL_P2P_DISABLE=1 ./build/all_reduce_perf -b 8 -e 1G -f 2 -g 8
# Avg bus bandwidth    : 21.7
$ mpirun -np 16 -H node1:8,node2:8 ./build/all_reduce_perf -b 8 -e 1G -f 2 -g 1
node2:1234:1250 [3] NCCL INFO NET/IB : No device found.
(hangs after the first size, killed after 10 min)
$ mpirun -np 16 -H node1:8,node2:8 -x NCCL_IB_HCA=mlx5_0,mlx5_1 ./build/all_reduce_perf -b 8 -e 1G -f 2 -g 1
# Avg bus bandwidth    : 94.5
```

So single-node is fine, and across nodes it only works with `NCCL_IB_HCA` pinned to the two ports that are cabled.
"""


def test_a_console_transcript_reads_each_prompt_as_a_command_and_what_it_printed_as_its_result():
    got = [(a.source_lines, a.outcome, a.title) for p in _read(CONSOLE_NOTES) for a in p.inv.attempts]
    assert ([8, 10], "failed") in [(lines, o) for lines, o, _ in got]  # "(hangs after the first size, killed ...)"
    assert all("$" not in t for _, _, t in got)


ANNOTATED_SESSION = """# Container does not see the GPU

## what I ran

```console
$ podman --version
podman version 4.9.3

# plain run: the tool is not even there
$ podman run --rm trainer:dev rocm-smi
Error: crun: executable file `rocm-smi` not found in $PATH: No such file or directory

# works once the devices are passed through
$ podman run --rm --device /dev/kfd --device /dev/dri trainer:dev rocm-smi
GPU  Temp   AvgPwr  SCLK    MCLK     Fan  Perf  PwrCap  VRAM%  GPU%
0    41.0c  35.0W   800Mhz  1600Mhz  0%   auto  300.0W    0%   0%
```
"""


def test_a_comment_over_a_prompt_after_a_blank_line_captions_the_next_command_not_the_last_output():
    # "# works once ..." sat in the output of the run before it: that run read as worked, and the run it names as
    # nothing (its output, a table of numbers, says no verdict)
    got = {tuple(a.source_lines): a.outcome for p in _read(ANNOTATED_SESSION) for a in p.inv.attempts}
    assert got.get((9, 11)) == "failed"  # its caption and its error: the caption is its own, not the line after
    assert got.get((13, 16)) == "worked"  # the caption's verdict, since the table it printed says none
    units = segment(ANNOTATED_SESSION).units
    plain = next(u for u in units if u.kind == "command" and u.text.endswith("trainer:dev rocm-smi") and "--device" not in u.text)
    assert "works once" not in plain.comment and plain.desc == "plain run: the tool is not even there"


DATED_NOTEBOOK = """# Lab notebook — loss spikes on the 7B run

**Mon 14 Oct**

Loss spikes to ~12 at step 2.1k, then recovers. Grad norm goes to 1e4 right before.

Lowered lr from 3e-4 to 2e-4. Spikes still there, a bit smaller.

**Tue 15 Oct**

Turned off the fused Adam kernel (`fused=False`). No change.

Found that the spikes line up with one data shard (shard 0173). Removed it from the mix → no spike up to 6k steps.

**Wed 16 Oct**

Put shard 0173 back but with the dedup filter on: clean so far (4k steps).

TODO: check whether other shards have the same long repeated-token lines.
Need to rerun the 1B ablation with the filter to be sure.
"""


CAPTIONED_SCRIPT = """# Max batch size per model on one 4090

```bash
# Fine.
python bench.py --model 8b --bs 32 --ckpt on
# OOM.
python bench.py --model 8b --bs 64 --ckpt on
# Runs fine with offload on.
python bench.py --model 8b --bs 48 --offload on
```
"""


def test_comments_over_commands_in_a_stretch_that_opens_with_a_comment_are_captions_and_a_lone_verdict_word_says_how():
    # comment, command, comment, command, with no blank line: a stretch that opens with a comment and closes with a
    # command pairs each comment with the command under it, not with the one above; "Fine." alone is a verdict
    got = [(a.source_lines, a.outcome) for p in _read(CAPTIONED_SCRIPT) for a in p.inv.attempts]
    assert got == [([4, 5], "worked"), ([6, 7], "failed"), ([8, 9], "worked")]


def test_a_run_captioned_by_a_verdict_word_alone_is_titled_by_its_command():
    titles = [a.title for p in _read(CAPTIONED_SCRIPT) for a in p.inv.attempts]
    assert titles[:2] == ["`python bench.py --model 8b --bs 32 --ckpt on`", "`python bench.py --model 8b --bs 64 --ckpt on`"]


def test_a_command_then_its_comment_stays_paired_with_the_command_above():
    doc = "# Notes\n\n```bash\npython bench.py --bs 32\n# Fine.\npython bench.py --bs 64\n# OOM.\n```\n"
    assert [(a.source_lines, a.outcome) for p in _read(doc) for a in p.inv.attempts] == [([4, 5], "worked"),
                                                                                             ([6, 7], "failed")]


def test_ticked_items_that_say_what_a_component_does_are_not_tries_but_ticked_things_done_are():
    doc = """# GPU sharing on the lab cluster

## What the scheduler extension gives us

- ✅ Detects every GPU through NVML
- ✅ Reserves one GPU per job
- ❌ Prevents two jobs on one card

## What we changed

- ✅ Set `CUDA_MPS_PIPE_DIRECTORY` on every node
- ❌ Rebuilt the extension with CUDA 12.4
"""
    got = [(a.source_lines, a.outcome) for p in _read(doc) for a in p.inv.attempts]
    assert got == [([11, 11], "worked"), ([12, 12], "failed")]


ZH_LISTED_ANSWER = """# 双卡 tp=2 推理时 core dumped

### li_wei — 2025-01-10

两张 4090 上用 tp=2 启动服务，第一个请求就 core dumped。

### chen_fang — 2025-01-10

请试试下面两种设置：

1. NCCL_P2P_LEVEL=LOC
2. NCCL_SHM_DISABLE=1

### li_wei — 2025-01-11

加上NCCL_P2P_LEVEL=LOC 或 NCCL_SHM_DISABLE=1都能正常推理了
"""


def test_a_reply_naming_both_items_of_a_listed_suggestion_under_one_verdict_is_a_try_of_each():
    # the suggestion is the list under its caption, one item per setting; the asker's one verdict names both
    got = sorted((a.title, a.outcome, a.who) for p in _read(ZH_LISTED_ANSWER) for a in p.inv.attempts)
    assert [(t, o, w) for t, o, w in got if "NCCL" in t] == [("NCCL_P2P_LEVEL=LOC", "worked", "li_wei"),
                                                              ("NCCL_SHM_DISABLE=1", "worked", "li_wei")]


def test_a_day_caption_is_a_date_not_a_numbered_try_and_need_to_is_a_plan():
    got = [(a.source_lines, a.outcome) for p in _read(DATED_NOTEBOOK) for a in p.inv.attempts]
    assert got == [([7, 7], "failed"), ([11, 11], "failed"), ([13, 13], "inconclusive"), ([13, 13], "worked"),
                   ([17, 17], "worked")]
    steps = _steps(DATED_NOTEBOOK)
    assert len(steps) == 2 and any("1B ablation" in s for s in steps)


TASK_LIST = """# TODO — bf16 NaN after compile

## Done

- [x] Reproduce on 1 GPU — NaN at step 3, same as on 8
- [x] Try fp16 instead of bf16 — same NaN
- [x] Disable `torch.compile` — trains fine for 2k steps
- [x] Bisect compile modes: `mode="reduce-overhead"` NaN, `mode="default"` fine

## Open

- [ ] File upstream issue with the minimal repro
- [ ] Check whether it reproduces on H100
- [ ] Try `torch._inductor.config.fallback_random = True`

## Checklist before each run

- [ ] `git status` clean
- [ ] wandb run name set
"""


def test_a_task_lists_box_not_its_imperative_mood_says_whether_an_item_was_done():
    got = [(a.source_lines, a.outcome) for p in _read(TASK_LIST) for a in p.inv.attempts]
    assert got == [([5, 5], "failed"), ([6, 6], "partial"), ([7, 7], "worked"), ([8, 8], "inconclusive")]
    steps = _steps(TASK_LIST)
    assert any("H100" in s for s in steps) and any("fallback_random" in s for s in steps)
    assert outcome_of("Check whether it reproduces on H100", "en") is None


PLANS_IN_NOTES = """# vLLM TP=4 startup hang — notes

Startup hangs at `init_distributed_environment` on 4x L4 (PCIe). TP=2 starts fine.

Set `NCCL_P2P_DISABLE=1`: starts, 30 % slower decode. Keeping it for now.

The next thing to try is `NCCL_P2P_LEVEL=PHB` instead of disabling P2P entirely.
Also worth checking whether the BIOS has ACS enabled on the PLX switch.
Plan: rerun with `NCCL_DEBUG=INFO` on the 4-GPU box tomorrow and diff the topology against the 2-GPU one.

Open questions:
- Why does TP=2 on GPUs 2,3 hang but 0,1 not?
- Is the driver's P2P capability check wrong on this board?
"""


def test_plans_said_as_the_next_thing_to_try_a_plan_label_or_a_captioned_list_of_open_questions():
    steps = [(s.source_lines, s.text) for p in _read(PLANS_IN_NOTES) for s in p.inv.next_steps]
    assert [lines for lines, _ in steps] == [[7, 7], [9, 9], [12, 12], [13, 13]]


def test_an_indented_block_of_commented_commands_is_read_like_a_fenced_one():
    doc = """# ROCm build notes

    # plain CPU build: ok
    cmake -B build && cmake --build build

    # with -DGGML_HIP=ON: fails, clang not found
    cmake -B build -DGGML_HIP=ON
"""
    got = [(a.source_lines, a.outcome) for p in _read(doc) for a in p.inv.attempts]
    assert got == [([3, 4], "worked"), ([6, 7], "failed")]


def test_a_setting_and_what_it_measured_is_a_try():
    doc = """# FSDP memory notes

## 2x A100, seq 4096

ckpt(mlp) + compile(fwd + bwd): 17'446 MiB, 1055 ms

ckpt(attn) + compile(model): OOM

The runs above used the same seed.
"""
    got = [(a.source_lines, a.outcome) for p in _read(doc) for a in p.inv.attempts]
    assert got == [([5, 5], "inconclusive"), ([7, 7], "failed")]


def test_a_metric_named_with_a_qualifier_and_its_value_is_a_fact_not_a_setting_tried():
    doc = """# Model conversion

The conversion finished and the model loads.

## Performance estimates

- **Memory (Prefill):** ~689 MB
- **Memory (Decode):** ~85 MB
"""
    assert [a.title for p in _read(doc) for a in p.inv.attempts] == []


def test_a_leaf_heading_that_says_how_its_try_went_is_that_try():
    doc = """# W7900 ML stack log

## 2024-04-20

### xformers - Not Working

```
pip wheel -v --no-build-isolation git+https://github.com/ROCm/xformers.git@main#egg=xformers
```

### bitsandbytes - Works

The ROCm fork builds with `-DCOMPUTE_BACKEND=hip`.
"""
    got = [(a.title, a.outcome) for p in _read(doc) for a in p.inv.attempts]
    assert got == [("xformers", "failed"), ("bitsandbytes", "worked")]


def test_a_status_that_says_how_a_run_went_does_not_make_its_section_a_bug_of_its_own():
    doc = """# vLLM runs on one H100

| Model | Status | KV cache (GiB) |
|---|---|---|
| Llama-3.1-8B | SUCCESS | 51.4 |
| Llama-3.3-70B-FP8 (TP=1) | FAILED | -1.4 |

## Llama-3.3-70B-FP8 (TP=1)

**Status:** ENGINE FAILED - out of memory

The weights load (67.7 GiB) but no memory is left for the KV cache.
"""
    parsed = _read(doc)
    assert len(parsed) == 1
    assert [a.outcome for a in parsed[0].inv.attempts][:2] == ["worked", "failed"]
    bug = """# Training hang

## Rank 3 stalls

**Status:** Fixed, works with NCCL_P2P_DISABLE=1

**Symptom:** rank 3 stops at step 40.
"""
    assert [p.inv.status for p in _read(bug)] == ["resolved"]


def test_a_ticked_chore_is_no_try():
    doc = """# V3 kernel log

## Step 1

- ✅ README updated: SDPA set as the default
- ✅ Committed: a8376e2
- ✅ Fixed the tensor offset formula in V3: 14/14 correctness tests pass
"""
    got = [(a.source_lines, a.outcome) for p in _read(doc) for a in p.inv.attempts]
    assert got == [([7, 7], "worked")]


def test_a_korean_note_is_read_with_its_own_cue_table():
    from dbglog.docreader.cues import language

    doc = """# PyTorch에서 CUDA를 못 잡는 문제

## 시도한 것

- `pip install torch`로 다시 설치했는데 여전히 `False`가 나왔다.
- cu118 인덱스에서 torch를 재설치했더니 `torch.cuda.is_available()`이 `True`로 바뀌었다. 해결!
"""
    assert language("cu118 인덱스에서 torch를 재설치했더니 해결됐다") == "ko"
    got = [(a.source_lines, a.outcome) for p in _read(doc) for a in p.inv.attempts]
    assert got == [([5, 5], "failed"), ([6, 6], "worked")]


def test_a_korean_heading_whose_role_word_only_says_where_is_no_section_of_that_role():
    # ("환경" is an issue form's environment section; "EC2환경에서 ... 버전" is a version, in the EC2 environment: the
    # head noun comes last, and a noun with a particle of place before it only modifies it)
    assert heading_role("환경", "ko") == "boilerplate"
    assert heading_role("AWS EC2환경에서 PyTorch 버전", "ko") is None
    assert heading_role("環境での確認", "ja") is None
    doc = """# 메모

## AWS EC2환경에서 PyTorch 버전

모델을 돌리는데 `torch.cuda.is_available()`이 `False`로 떴었다.

그래서 PyTorch를 uninstall하고 CUDA와 호환되는 버전으로 재설치하였다.

다시 설치하고 나서 확인해보니 성공적으로 GPU를 사용하여 모델을 돌릴 수 있게 되었다.
"""
    assert [a.outcome for p in _read(doc) for a in p.inv.attempts] == ["worked"]


def test_a_japanese_table_whose_comment_column_says_how_each_run_went():
    doc = """# 問題のあるベンチマーク

| ベンチマーク名 | コメント |
| -- | -- |
| d3q19-bgk | `static const signed char` に変えると実行できた。 |
| bm3d | CUDA版は `CImgIOException` で実行できない。 |
"""
    got = [(a.source_lines, a.outcome) for p in _read(doc) for a in p.inv.attempts]
    assert got == [([5, 5], "worked"), ([6, 6], "failed")]


def test_setup_lines_between_commented_runs_do_not_hide_the_runs():
    doc = """# GRPO on two GPUs

```bash
export EPOCHS=1
export NUM_GENERATIONS=8
# multigpu with torchrun: this hangs after initializing the LLM engine
torchrun --nproc_per_node 2 -m rl_finetune --epochs ${EPOCHS}

cd scripts
python rl_finetune_multigpu.py --gpu-memory-utilization 0.3
# 28/67 [16:41<20:54, 32.18s/it
```
"""
    got = [(a.source_lines, a.outcome) for p in _read(doc) for a in p.inv.attempts]
    assert got == [([6, 7], "failed"), ([10, 11], "inconclusive")]


def test_what_a_run_printed_pasted_as_comments_after_a_blank_line_is_its_result():
    doc = """# 70B LoRA keeps running out of memory

```sh
CONFIG=configs/lora_70b.yaml
OUTPUT_DIR=/scratch/lora70b
DATA=/scratch/data/pubmed.jsonl
WANDB_MODE=offline
SEED=7
LR=1e-4
EPOCHS=1

### run 1 ----------------------------------------
RUN_ID=1
trainer -c $CONFIG --run-name run-$RUN_ID \\
  --max-len 256 --lora-r 16

# torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB.
# GPU 0 has a total capacity of 79.2 GiB of which 1.1 GiB is free.

### run 2 ----------------------------------------
RUN_ID=2
trainer -c $CONFIG --run-name run-$RUN_ID \\
  --max-len 256 --lora-r 8

# RUN_ID 2 produces:
# RuntimeError: NCCL error in ProcessGroupNCCL.cpp:1970, unhandled system error

### run 3 ----------------------------------------
RUN_ID=3

# Now switch to the sharded launcher
launcher --nproc 8 trainer -c $CONFIG --run-name run-$RUN_ID

# again failed on save:
# command terminated with exit code 137

# TODO next try --compile false on the save path
# NB: not tried yet, the node is busy
# if run 4 fails too, try that first

### run 4 ----------------------------------------
RUN_ID=4

# this one never ran: the node was drained
launcher --nproc 4 trainer -c $CONFIG --run-name run-$RUN_ID
```
"""
    got = [(a.source_lines, a.outcome) for p in _read(doc) for a in p.inv.attempts]
    # (the bare assignments, "SEED=7", set the runs up: they are not runs that said nothing)
    # (a note of how it went, "again failed on save:", that no command follows is the last run's result too)
    assert got[:3] == [([14, 18], "failed"), ([22, 26], "failed"), ([31, 35], "failed")]
    assert not any(lines[0] <= 45 <= lines[1] and o != "inconclusive" for lines, o in got)  # run 4 said nothing
    # (a note between the runs that is no command's caption or output is the author's, read as such: here a plan)
    assert any("compile false" in s for s in _steps(doc))


@pytest.mark.parametrize("line", ["Requirement already satisfied: setuptools>=40.8.0 in /usr/lib/python3/site-packages",
                                  "Successfully installed triton-windows-3.2.0.post18",
                                  "Installing collected packages: triton-windows"])
def test_a_package_managers_progress_pasted_as_text_reads_as_output(line):
    from dbglog.docreader.cues import context, features

    doc = segment(f"# Triton on Windows\n\nThe kernel import fails.\n\n{line}\n")
    ctx = context(doc)
    [u] = [u for u in doc.units if u.first == 4]
    assert "pasted error output" in features(u, ctx)


def test_a_verdict_column_that_advises_what_to_do_with_each_setting_gives_no_tries():
    doc = """# Allocator settings on gfx1201

## Memory-allocator config

| `PYTORCH_HIP_ALLOC_CONF` knob | Verdict on gfx1201 |
|---|---|
| `garbage_collection_threshold:0.8` | ✅ use it |
| `max_split_size_mb:128` | ❌ **remove** — blocks allocations over 128 MB |
| `expandable_segments:True` | ❌ crashed at step 10 |
| `roundup_power2_divisions:4` | ✅ See below |
"""
    got = [(a.source_lines, a.outcome) for p in _read(doc) for a in p.inv.attempts]
    assert got == [([9, 9], "failed"), ([10, 10], "worked")]


def test_a_commented_out_command_led_by_its_verdict_is_a_try_with_that_verdict():
    doc = """# nvidia-docker on the new host

```bash
sudo systemctl restart docker
docker run --gpus all nvidia/cuda:12.2.0-base-ubuntu22.04 nvidia-smi  # OK
# NOK docker run --gpus all --rm nvidia/cuda:12.8.0-base-ubuntu22.04 nvidia-smi
#  unsatisfied condition: cuda>=12.8
```
"""
    got = [(a.source_lines, a.outcome) for p in _read(doc) for a in p.inv.attempts]
    assert got == [([5, 5], "worked"), ([6, 7], "failed")]


def test_a_script_saved_without_its_shebang_is_read_as_a_script_not_as_markdown_headings():
    doc = """# See https://github.com/NVIDIA/nvidia-docker
curl -s -L https://nvidia.github.io/nvidia-docker/gpgkey | sudo apt-key add -
sudo apt-get update && sudo apt-get install -y nvidia-container-toolkit
sudo systemctl restart docker
docker run --gpus all nvidia/cuda:12.2.0-base-ubuntu22.04 nvidia-smi  # OK
# NOK docker run --gpus all --rm nvidia/cuda:12.8.0-base-ubuntu22.04 nvidia-smi
exit 0
"""
    assert not [u for u in segment(doc).units if u.kind == "heading"]
    assert ([6, 6], "failed") in [(a.source_lines, a.outcome) for p in _read(doc) for a in p.inv.attempts]


def test_a_table_laid_on_its_side_gives_one_try_per_column_even_inside_a_quote():
    doc = """# gfx803 in Docker

> |Kernel|>=6.15.8|6.14|6.13|
> |---|---|---|---|
> |ROCm 6.4 works|✅|🟥|🟥|
"""
    got = [(a.title, a.outcome) for p in _read(doc) for a in p.inv.attempts]
    assert got == [("Kernel >=6.15.8", "worked"), ("Kernel 6.14", "failed"), ("Kernel 6.13", "failed")]


def test_a_table_of_settings_and_their_measurements_gives_one_try_per_row():
    doc = """# Peak memory of the 1B encoder under ZeRO

## Runs (bf16, 8 GPUs)

| Setting | peak GB | s/epoch |
|---|---|---|
| ZeRO-1 | 21.46 | 9.68 |
| ZeRO-2 | 22.26 | 8.51 |
| ZeRO-3 + offload | 20.39 | 12.67 |
"""
    got = [(a.source_lines, a.outcome) for p in _read(doc) for a in p.inv.attempts]
    assert got == [([7, 7], "inconclusive"), ([8, 8], "inconclusive"), ([9, 9], "inconclusive")]
    first = _read(doc)[0].inv.attempts[0]
    assert (first.title, first.result) == ("ZeRO-1", "peak GB 21.46 · s/epoch 9.68")  # each measurement named


def test_a_table_of_named_setups_and_what_each_measured_keeps_every_run_past_the_learned_pass():
    doc = """# Training throughput of the 20B model on one node

## Performance summary

| Configuration | TFLOPs | Memory (GiB) |
|---|---|---|
| bf16, eager | 171.2 | 68.9 |
| bf16 + compile | 188.4 | 59.0 |
| fp8 everywhere + compile | 150.6 | 74.2 |
"""
    got = [a.source_lines for p in importer.parse_document(doc, "doc.md", model=True)[0] for a in p.inv.attempts]
    assert got == [[7, 7], [8, 8], [9, 9]]


def test_a_libraries_log_records_pasted_as_lines_of_prose_are_no_tries():
    doc = """# DDP job dies at the end of the first epoch

The job on 4 nodes gets to the end of epoch 1 and then stops with:
[E ProcessGroupNCCL.cpp:737] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9120, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600412 milliseconds before timing out.
[E ProcessGroupNCCL.cpp:737] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9120, OpType=BROADCAST, Timeout(ms)=600000) ran for 600388 milliseconds before timing out.
[rank1]:[W socket.cpp:663] [c10d] The client socket has failed to connect to [node-2]:29500 (errno: 110 - Connection timed out).

I raised the timeout to two hours and it still dies at the same step.
"""
    got = [a.source_lines for p in importer.parse_document(doc, "doc.md", model=True)[0] for a in p.inv.attempts]
    assert got == [[8, 8]]


def test_a_numbered_heading_over_a_card_of_labelled_fields_is_one_try_whose_failed_stage_fails_it():
    doc = """# Custom vLLM image for the new cards

## Builds tried

### 1️⃣ From source (main branch)
- **Image**: vllm-custom:dev
- **Build**: ✅ success (41 min)
- **SM_120 kernels**: ✅ compiled
  - `scaled_mm_sm120.cu.o` ✅
  - `moe_sm120.cu.o` ✅
- **Run**: ❌ **failed** (worker dies at the first request)
- **PyTorch**: nightly

### 2️⃣ From the release wheel
- **Image**: vllm-custom:wheel
- **Build**: ✅ success (6 min)
- **Run**: ✅ serves requests
- **PyTorch**: 2.8.0
"""
    got = [(a.title, a.outcome, a.source_lines) for p in _read(doc) for a in p.inv.attempts]
    assert got == [("From source (main branch)", "failed", [5, 12]), ("From the release wheel", "worked", [14, 18])]


def test_latest_version_is_form_text_in_a_checkbox_and_a_try_in_a_reply():
    doc = """# flash-attn build fails with No module named torch

### asker — 2025-03-30

- [x] I am on the latest version of flash-attn and the bug is still there.

The build stops with `ModuleNotFoundError: No module named 'torch'`.

### helper — 2025-03-31

So I just installed the latest version: `pip install flash-attn --no-build-isolation`. It works now.
"""
    got = [(a.source_lines, a.outcome) for p in _read(doc) for a in p.inv.attempts]
    assert got == [([11, 11], "worked")]


def test_a_cards_try_keeps_every_field_as_its_result_not_only_the_first():
    doc = """# Custom llama.cpp build

## Builds tried

### 1. Vulkan backend
- **Commit**: b4521
- **Build**: ✅ ok (6 min)
- **Run**: ❌ garbage output after 20 tokens
"""
    got = [(a.title, a.outcome, a.result) for p in _read(doc) for a in p.inv.attempts]
    assert got == [("Vulkan backend", "failed",
                    "Commit: b4521; Build: ✅ ok (6 min); Run: ❌ garbage output after 20 tokens")]


def test_a_card_of_fields_written_as_lines_of_one_paragraph_is_one_try():
    doc = """# llama.cpp crashes at load on the new card

## Attempts

### 1. Vulkan backend

**Build**: ✅ ok, `cmake -B build -DGGML_VULKAN=ON`
**Run**: ❌ crashes, same error on load

### 2. CUDA backend, arch 89

**Build**: ✅ ok
**Run**: ✅ model loads, 95 tok/s
"""
    got = [(a.title, a.outcome) for p in _read(doc) for a in p.inv.attempts]
    assert got == [("Vulkan backend", "failed"), ("CUDA backend, arch 89", "worked")]


def test_a_heading_that_names_its_attempts_is_a_section_of_tries_though_it_opens_with_a_verb():
    from dbglog.docreader.cues import heading_role

    assert heading_role("Build Attempts Log", "en") == "tried"
    assert heading_role("Install CUDA components via pip", "en") is None  # a step, by its mood
    doc = """# vLLM on the Jetson dies at KV cache allocation

## Evidence

### Build Attempts Log
1. ❌ Build from source (ARM64) - setuptools_scm errors
2. ❌ Build from source v0.6.3 - network timeouts
3. ❌ Switch to V0 engine - same crash
"""
    got = [(a.source_lines, a.outcome) for p in _read(doc) for a in p.inv.attempts]
    assert got == [([6, 6], "failed"), ([7, 7], "failed"), ([8, 8], "failed")]


def test_a_troubleshooting_record_inside_a_setup_section_is_read_and_its_numbered_cjk_captions_are_tries():
    doc = """# 监控部署记录

## 部署过程

#### Docker 环境准备（简述）

按官方文档安装 Docker。

##### 排障记录1：Docker Compose 插件一直装不上

**排查过程1——换成官方源**：

我把 apt 源换成了 Docker 官方源，重新安装，还是失败。

**排查过程2——重新下载密钥**：

删掉旧的密钥文件，用 sudo 重新下载并 chmod a+r，再安装就成功了。
"""
    got = [(a.title, a.outcome, a.source_lines) for p in _read(doc) for a in p.inv.attempts]
    assert got == [("换成官方源", "failed", [11, 13]), ("重新下载密钥", "worked", [15, 17])]


def test_a_caption_with_its_verdict_set_apart_over_a_command_block_is_one_try():
    doc = """<!-- notes -->
按官方教程安装（未成功）

```bash
sudo dpkg -i cudnn-local-repo.deb
sudo apt-get -y install cudnn
```

基于 contrib 模块编译（编译失败）

```bash
cmake -DOPENCV_EXTRA_MODULES_PATH=../contrib/modules ../opencv
cmake --build .
```

Fallback wheel URL (if the first one does not work):

```bash
pip install https://example.org/wheels/flash_attn-2.8.3-cp312.whl
```
"""
    got = [(a.source_lines, a.outcome) for p in _read(doc) for a in p.inv.attempts]
    assert got == [([2, 7], "failed"), ([9, 14], "failed")]


def test_a_caption_with_a_verdict_that_points_at_the_block_below_is_one_try_holding_what_was_set():
    doc = """# Burn test cannot load its module on a Kepler card

### owner — 2024-03-01

The test dies at once with a PTX JIT error.

### owner — 2024-03-02

Fixed it by changing the following in the build file:

```
-ARCH ?= 50
+ARCH ?= 35
```

Then tried these commands:

```
make clean && make
```
"""
    atts = [a for p in _read(doc) for a in p.inv.attempts]
    fix = next(a for a in atts if a.title.startswith("Fixed it by changing"))
    assert (fix.outcome, fix.source_lines) == ("worked", [9, 14])
    assert "+ARCH ?= 35" in fix.did  # (what `tried` reads of it: what was set, not only "the following")
    assert "\n" not in fix.did  # (on one line: a block's "- item" or "### Attempt" opens no structure in the mirror)


def test_a_question_that_points_back_asks_about_the_thing_named_just_before_it_on_its_line():
    doc = """# Quantizing to the new format asserts in one layer

### asker — 2025-05-02

`llama-quantize model.gguf out.gguf Q1_X` stops with `GGML_ASSERT(best >= 0)` on blk.1.

### maintainer — 2025-05-03

There is PR #368. Does it fix it? I cannot run such a large model here.

### asker — 2025-05-03

> There is PR #368. Does it fix it? I cannot run such a large model here.

It works! No more error on blk.1. So what was the matter here?
"""
    got = [(a.title, a.outcome, getattr(a, "who", "")) for p in _read(doc) for a in p.inv.attempts]
    assert ("There is PR #368", "worked", "asker") in got
    assert all(who == "asker" for _, _, who in got)


@pytest.mark.parametrize("quote", ["I tried to rebuild my quants without -fmoe and the crash is gone.",
                                   "to rebuild my quants without -fmoe and the crash"])  # (a part, its code spans plain)
def test_a_reply_quoting_an_earlier_post_does_not_read_the_quoted_try_again(quote):
    doc = f"""# imatrix run crashes on the converted model

### asker — 2025-07-10

I tried to rebuild my quants without `-fmoe` and the crash is gone.

### helper — 2025-07-11

> {quote}

Good to hear.
"""
    got = [a.source_lines for p in _read(doc) for a in p.inv.attempts]
    assert got == [[5, 5]]


def test_a_chinese_goal_label_says_what_a_run_is_to_show_not_what_was_done():
    doc = """# 待测项目清单

### B. 真引擎联调：stability_test.py --real

**位置**：`kernels/stability_test.py`

**目标**：六步分层验证直接在真引擎上跑，500+ 请求的成功率/P50/P99/KV 归零成为真实证据（替换纯模拟）。

**运行命令**：

```bash
python stability_test.py --real --requests 500
```
"""
    got = [a.source_lines for p in _read(doc) for a in p.inv.attempts]
    assert [7, 7] not in got


def test_assert_lines_pasted_as_prose_are_program_output_not_tries():
    doc = """# batched-bench aborts with -ser on the CPU build

### reporter — 2025-05-06

I ran llama-batched-bench with `-ser 7,1` and it aborts at the second batch:

/app/src/iqk/iqk_mul_mat.cpp:16600: GGML_ASSERT(fms.S[j] > 0) failed
/app/src/iqk/iqk_mul_mat.cpp:16600: GGML_ASSERT(fms.S[j] > 0) failed

/app/src/iqk/iqk_mul_mat.cpp:16600: GGML_ASSERT(fms.S[j] > 0) failed
"""
    got = [a.source_lines for p in _read(doc) for a in p.inv.attempts]
    assert all(lo == 5 for lo, _ in got)


def test_a_try_of_a_suggestion_is_titled_by_what_the_suggestion_asks_to_run():
    doc = """# The P40 crashes with an illegal memory access

### asker — 2025-07-24

llama-server crashes with an illegal memory access on the P40 as soon as a prompt is sent.

### helper — 2025-07-25

Does your card work in llama.cpp if you use regular quants of the model?

### asker — 2025-07-25

Yes, with regular quants it works fine.

### helper — 2025-07-26

Could you test PR #654 and report back?

### asker — 2025-07-26

Tested it, still the same crash.
"""
    got = [(a.title, a.outcome) for p in _read(doc) for a in p.inv.attempts]
    assert ("use regular quants of the model", "worked") in got and ("PR #654", "failed") in got


def test_a_try_whose_own_sentence_says_it_worked_keeps_that_verdict_over_the_story_after_it():
    doc = """# Serving the new checkpoint on two boxes

The model served on the first box; the second one took four fixes.

## The traps on the second box

**1. The image's entrypoint is `vllm serve`.**

```
vllm serve: error: argument --compilation-config/-cc: 1 validation error
```

The whole shell command was consumed as vLLM's `--compilation-config`, because `-c`
is its short form. Fixed with `--entrypoint bash`. This is the same collision that
wasted hours on the benchmark images, and it shows as a nonsense error.
"""
    got = [a.outcome for p in _read(doc) for a in p.inv.attempts if a.source_lines[0] <= 14 <= a.source_lines[1]]
    assert got == ["worked"]


def test_a_table_of_names_and_words_is_not_a_table_of_runs():
    doc = """# Which box is which

| Host | GPU | Role |
|---|---|---|
| gpu-a | A100 | trainer |
| gpu-b | H100 | eval |
"""
    assert _attempts(doc) == []


def test_a_console_session_pasted_without_prompts_is_cut_into_commands_with_what_each_printed():
    from dbglog.docreader.units import segment

    doc = """# Driver not loaded after the kernel update

```bash
what I checked:

nvidia-smi
NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.

lsmod | grep nouveau

sudo modprobe nvidia
modprobe: ERROR: could not insert 'nvidia': Key was rejected by service
```
"""
    units = [u for u in segment(doc).units if u.kind == "command"]
    assert [(u.first + 1, u.text) for u in units] == [
        (4, "nvidia-smi"), (9, "lsmod | grep nouveau"), (11, "sudo modprobe nvidia")]
    assert units[0].desc == "what I checked:" and "failed because it couldn't" in units[0].comment
    assert units[1].comment == "" and "Key was rejected" in units[2].comment


def test_a_block_of_install_commands_with_no_output_is_not_a_console_session():
    from dbglog.docreader.units import segment

    doc = "# Setup\n\n```bash\npip install torch\n\npip install vllm\n```\n"
    assert [u.kind for u in segment(doc).units if u.kind in ("command", "code")] == ["code"]


MARKED_FENCE = """# Server never answers on 4090s with CUDA 12.3

I ran the official image on several rented machines:
```
✅ GPU: L40     Driver Version: 525.116.04   CUDA Version: 12.0
❌ GPU: 2x4090  Driver Version: 545.29.06    CUDA Version: 12.3
✅ GPU: 2x4090  Driver Version: 550.54.15    CUDA Version: 12.4
```
"""


def test_a_fence_of_verdict_marked_settings_gives_one_attempt_per_line_with_the_marks_outcome():
    got = [(a.outcome, a.source_lines) for p in _read(MARKED_FENCE) for a in p.inv.attempts]
    assert got == [("worked", [5, 5]), ("failed", [6, 6]), ("worked", [7, 7])]
    # a fence with one marked line among code is code
    assert not _attempts(MARKED_FENCE.replace("❌", "").replace("✅ GPU: 2x4090", "GPU: 2x4090"))


def test_a_fence_of_ticked_stages_of_one_run_is_no_list_of_tries():
    stages = "# Hang at the first batch\n\n```\n✅ Model loads\n✅ Patches apply\n✅ Dataset scans\n❌ HANGS at batch 1\n```\n"
    assert _attempts(stages) == []


ISSUE_LOG = """# Build issues

## Issue Log

### Issue #1: sudo asks for a password over ssh
**Error**: `sudo: a terminal is required to read the password`
**Root Cause**: ssh allocates no terminal for a remote command.
**Fix**: add `-t` to the ssh command:
```bash
ssh -t builder "./run_setup.sh"
```

### Issue #2: the wheel cache fills the disk
**Error**: `No space left on device` while building the wheel
**Root Cause**: the pip cache lives on the small root volume.
**Fix**: point `PIP_CACHE_DIR` at the scratch disk.
**Status**: ✅ Confirmed working
"""


def test_a_bugs_fix_field_under_its_error_and_root_cause_is_its_attempt_citing_its_lines():
    got = [(p.inv.title, p.inv.root_cause, [(a.outcome, a.source_lines) for a in p.inv.attempts])
           for p in _read(ISSUE_LOG)]
    assert got == [
        ("Issue #1: sudo asks for a password over ssh", "ssh allocates no terminal for a remote command.",
         [("inconclusive", [8, 11])]),  # nothing says how it went: not guessed
        ("Issue #2: the wheel cache fills the disk", "the pip cache lives on the small root volume.",
         [("worked", [16, 17])]),  # the bug's Status is how its fix went
    ]


PAGE_TEXT = """ROCm idle GPU bug: a Vulkan workaround

The GPU stays at 100 % after the model is unloaded.

What Doesn't Work

  • ollama stop: the model unloads but the GPU stays stuck
  • systemctl restart ollama: Ollama restarts but the GPU never recovers
"""


def test_a_pages_plain_text_heading_over_glyph_bullets_reads_as_a_heading_over_a_list_of_failed_tries():
    doc = segment(PAGE_TEXT)
    assert [(u.kind, u.first) for u in doc.units if u.kind == "heading"] == [("heading", 4)]
    assert [(u.first, u.depth, u.text.split(":")[0]) for u in doc.units if u.kind == "sentence" and u.depth] == [
        (6, 1, "ollama stop"), (7, 1, "systemctl restart ollama")]
    assert [(o, lines) for _, o, lines in ((a.title, a.outcome, a.source_lines) for p in _read(PAGE_TEXT)
                                           for a in p.inv.attempts)] == [("failed", [7, 7]), ("failed", [8, 8])]


def test_a_sentence_or_a_colon_line_over_a_list_after_a_blank_line_stays_a_sentence():
    for line in ("All training attempts now successfully complete:", "Then we tried the following",
                 "环境结论"):
        doc = segment(f"# Notes\n\n{line}\n\n- one\n- two\n")
        assert [u.kind for u in doc.units if u.first == 2] == ["sentence"], line


def test_a_bug_header_with_two_fix_fields_is_not_read_as_one_fix():
    doc = ISSUE_LOG.replace("**Fix**: point `PIP_CACHE_DIR` at the scratch disk.",
                            "**Fix**: point `PIP_CACHE_DIR` at the scratch disk.\n**Fix**: clear the cache first.")
    second = _read(doc)[1].inv
    assert second.root_cause == "the pip cache lives on the small root volume."
    assert not any(a.source_lines and a.source_lines[0] == 16 and a.source_lines[1] >= 17 for a in second.attempts)


def test_the_items_of_a_list_captioned_as_done_are_attempts_with_the_verdict_under_the_list():
    doc = """# Server crashes when the iGPU is visible

The server aborts at startup with an out-of-memory error on device 1.

I rebuilt the backend with
- `-DUSE_UMA=ON`
- `-DUSE_UMA=OFF`
- `-DTARGETS=gfx1102`

Every one of these failed with the iGPU visible.
"""
    parsed = _read(doc)
    atts = [a for p in parsed for a in p.inv.attempts]
    assert [(a.title, a.outcome) for a in atts] == [
        ("`-DUSE_UMA=ON`", "failed"), ("`-DUSE_UMA=OFF`", "failed"), ("`-DTARGETS=gfx1102`", "failed")]
    # each cites its item and the verdict's line; the caption's words stay with the setting
    assert [a.source_lines for a in atts] == [[6, 10], [7, 10], [8, 10]]
    assert atts[0].did.startswith("I rebuilt the backend with")


def test_a_list_captioned_as_a_suggestion_is_not_read_as_tries():
    doc = """# Server crashes when the iGPU is visible

The server aborts at startup with an out-of-memory error on device 1.

You could rebuild the backend with
- `-DUSE_UMA=ON`
- `-DTARGETS=gfx1102`
"""
    assert _attempts(doc) == []


def test_a_second_list_introduced_as_more_tries_is_not_the_first_lists_results():
    doc = """# Loader hangs on the second epoch

The loader hangs on the second epoch with eight workers.

I tried the following:
- setting `persistent_workers=False`
- pinning memory off

None of these helped.

We also tried these flags:

- `--no-mmap`: crash
- `--workers 0`: works
"""
    got = [(t, o) for t, o, _ in _attempts(doc)]
    assert ("`--no-mmap`", "failed") in got and ("`--workers 0`", "worked") in got
    assert [o for t, o in got if "persistent" in t or "pinning" in t] == ["failed", "failed"]
    assert not any("also tried" in t for t, _ in got)  # the caption is told in its items


def test_items_under_pros_and_cons_are_qualities_of_an_option_not_tries():
    doc = """# Engine fails its memory check on a shared GPU

The engine asserts during memory profiling when other jobs free memory.

## Option 1: use the older engine

**Pros**
- ✅ better tested and more stable
- ✅ no strict memory check

**Cons**
- ⚠️ slightly slower
"""
    assert _attempts(doc) == []


def test_a_program_placeholder_in_a_title_does_not_make_the_doc_a_template():
    doc = """# Crash: hipStreamCreateWithFlags returned hipErrorOutOfMemory : stream:<null>

The server crashes with the iGPU visible.

- I set `HIP_VISIBLE_DEVICES=0` and the crash went away.
"""
    assert [(t, o) for t, o, _ in _attempts(doc)] == [("I set `HIP_VISIBLE_DEVICES=0` and the crash went away.", "worked")]


def test_a_fence_left_open_in_one_post_ends_at_the_next_posts_header():
    doc = """# Illegal address after two good steps

### alice — 2024-03-01
The job dies with an illegal address after two good steps.

```
step 1 ok
step 2 ok
RuntimeError: CUDA error: an illegal memory access was encountered

### bob — 2024-03-02
I shrank the model to two dense layers and the error disappears.

### alice — 2024-03-03
I converted the notebook to a script and ran it: same error.
"""
    units = segment(doc).units
    assert [u.text for u in units if u.kind == "heading"][-2:] == ["bob — 2024-03-02", "alice — 2024-03-03"]
    code = next(u for u in units if u.kind == "code")
    assert (code.first, code.last) == (5, 9)  # the paste, up to the line before bob's header
    bob = next(u for u in units if u.kind == "sentence" and "shrank" in u.text)
    assert bob.author == "bob" and bob.first == 11  # read as bob's words, not as code
    assert ("failed", "alice") in [(o, w) for _, o, w in _attempts(doc)]


def test_a_shell_comment_that_looks_like_a_post_header_stays_in_its_fence_outside_threads():
    doc = """# Build notes

```
make -j8
# build - 2024-05-01 nightly
make install
```
"""
    code = [u for u in segment(doc).units if u.kind == "code"]
    assert len(code) == 1 and (code[0].first, code[0].last) == (2, 6)


def test_a_list_of_tries_closed_by_a_result_item_gives_that_result_to_each_try():
    doc = """# Allocator assert on the edge board

The server dies with an allocator assert at the first request.

## What we tried

1. **Memory settings**
   - Reduced GPU memory utilization: 0.35 → 0.80
   - Reduced context window: 4096 → 2048 tokens
   - Reduced batch size: 8 → 4 sequences
   - **Result:** Same error every time
"""
    got = [(t, o) for t, o, _ in _attempts(doc)]
    assert len(got) == 3 and {o for _, o in got} == {"failed"}, got


@pytest.mark.parametrize("text, want", [
    ("Reduced batch size: 8 → 4 sequences", None),  # the knob turned, not a measurement
    ("Reduced GPU memory utilization: 0.35 → 0.80", None),
    ("throughput 410 → 980 tok/s", "worked"),
    ("p99 latency 220 ms → 380 ms", "failed"),
    ("Reduced batch size 8 → 4: throughput 410 → 900 tok/s", "worked"),  # the knob, then what it measured
])
def test_a_change_of_value_after_the_verb_that_made_it_is_no_verdict(text, want):
    assert outcome_of(text, "en") == want


@pytest.mark.parametrize("heading, role", [
    ("❌ Failed Workarounds", "failed"), ("Rejected approaches", "failed"), ("✅ Successful Diagnostics", "worked"),
    ("Fix attempts", "tried"), ("Error log", "tried"), ("Options", "options"), ("Failure analysis", "lessons"),
])
def test_a_heading_that_opens_with_a_verdict_names_tries_that_went_that_way(heading, role):
    from dbglog.docreader.cues import heading_role

    assert heading_role(heading, "en") == role


def test_the_entries_of_a_failed_workarounds_list_each_give_their_settings_with_the_entrys_result():
    doc = """# Conv2d crashes on the old card

Every Conv2d call aborts with a memory aperture violation.

### ❌ Failed Workarounds
1. **Environment Variables**
   - HSA_ENABLE_SDMA=0
   - MIOPEN_DEBUG_CONV_GEMM=0
   - **Result:** No effect

2. **Source build**
   - Rebuilt the runtime with the card's target
   - **Result:** linker conflict, build failed
"""
    got = [(t, o) for t, o, _ in _attempts(doc)]
    assert ("HSA_ENABLE_SDMA=0", "failed") in got and ("MIOPEN_DEBUG_CONV_GEMM=0", "failed") in got
    assert ("Rebuilt the runtime with the card's target", "failed") in got
    assert not any(t.startswith("Failed Workarounds") for t, _ in got)


def test_a_one_line_triple_backtick_span_in_a_thread_opens_no_fence():
    doc = """# Sum kernel fails on the old card

### alice — 2024-03-01
Please run it with logging:
```AMD_LOG_LEVEL=7 python sum_test.py```

### bob — 2024-03-02
I ran it with logging and the hostcall error is still there.
"""
    units = segment(doc).units
    assert not any(u.kind == "code" and u.first >= 6 for u in units)
    assert any(u.kind == "sentence" and u.author == "bob" for u in units)


@pytest.mark.parametrize("doc, want", [
    ("""# Обучение падает с OOM

При batch_size=256 обучение падает с CUDA out of memory.

## Что пробовали

- Уменьшили batch_size до 128 — помогло, обучение идёт.
- Включили `expandable_segments` — не помогло, та же ошибка.
""", ["worked", "failed"]),
    ("""# Le job reste bloqué au premier allreduce

Le job de 256 GPU reste bloqué au premier allreduce.

## Essais

- J'ai réduit le nombre de nœuds à 16 : toujours bloqué.
- J'ai désactivé le chargement du checkpoint : ça marche.
""", ["failed", "worked"]),
    ("""# El entrenamiento se cuelga en el primer paso

El entrenamiento se cuelga en el primer paso con NCCL.

## Intentos

- Probé con `NCCL_P2P_DISABLE=1`: funciona.
- Actualicé el driver a 550: sigue fallando.
""", ["worked", "failed"]),
])
def test_russian_french_and_spanish_notes_are_read_with_their_own_cue_tables(doc, want):
    assert [o for _, o, _ in _attempts(doc)] == want


@pytest.mark.parametrize("text, lang", [
    ("Я попробовал уменьшить batch_size, но ошибка осталась.", "ru"),
    ("J'ai essayé de réduire le nombre de nœuds, mais le job est toujours bloqué.", "fr"),
    ("He probado con otra versión del driver y sigue fallando.", "es"),
    ("I tried the nightly wheel and it works.", "en"),
    ("The kernel makes CUDA die; after that every call fails and the process must die. " * 3, "en"),
    ("Der Runner stürzt beim Start ab", "de"),
])
def test_the_language_of_a_sentence_is_told_by_its_script_and_its_common_words(text, lang):
    from dbglog.docreader.cues import language

    assert language(text) == lang


def test_front_matter_below_a_leading_comment_is_front_matter_not_a_heading():
    doc = """<!-- exported from the wiki -->
---
date: 2025-11-13
status: resolved
---

# DDP crash resolution

The two-GPU run crashed at startup.
"""
    units = segment(doc).units
    assert [(u.kind, u.first, u.last) for u in units[:3]] == [("html", 0, 0), ("front", 1, 4), ("heading", 6, 6)]
    assert [p.inv.title for p in _read(doc)] == ["DDP crash resolution"]


def test_a_summary_and_a_conclusion_that_each_give_a_status_are_one_investigation_with_its_next_steps():
    doc = """# DDP crash resolution

## Executive Summary

**Status**: ✅ **RESOLVED**

Multi-GPU training works again.

## What we did

- Replaced the launcher's `|| echo` with an exit-code check: the real error showed, and the run then passed.

## Next Steps

1. Merge to main after the long run completes.
2. Scale to 4-GPU testing.

## Conclusion

**Status**: resolved
"""
    parsed = _read(doc)
    assert len(parsed) == 1
    inv = parsed[0].inv
    assert inv.status == "resolved"
    assert [s.source_lines for s in inv.next_steps] == [[15, 15], [16, 16]]


def test_a_sub_heading_that_groups_a_list_of_next_steps_gives_its_items_as_steps():
    doc = """# Training dies with a cuDNN error

The run dies at step 40 with CUDNN_STATUS_INTERNAL_ERROR.

## Next Steps

### Immediate actions

1. **Check system resources** with `free -h` and `nvidia-smi`.
2. **Disable cuDNN benchmarking** and rerun 50 steps.

### Later

Try a native Linux host.
"""
    steps = [s for p in _read(doc) for s in p.inv.next_steps]
    assert [s.source_lines for s in steps] == [[9, 9], [10, 10], [12, 14]]


def test_a_list_of_one_setups_fields_ending_in_its_status_is_not_a_list_of_tries():
    doc = """# Backward pass hangs with many layers

The production config hangs at step 1.

## Test results

**Failed config (production.yaml)**:
- Model: dim=768, n_layers=12
- Runtime: BF16, flash enabled
- Training: seq_len=2048, batch_size=2
- Status: ❌ Hangs at step 1
"""
    assert not any(t.startswith(("Model:", "Runtime:", "Training:")) for t, _, _ in _attempts(doc))


def test_a_caption_that_lists_the_setup_is_not_a_list_of_tries():
    doc = """# Loss explodes after restarts

We began this lineage with the following settings:
- Batch size of 2M
- FP32 Adam
- 8x tensor parallelism
"""
    assert _attempts(doc) == []


def test_a_bare_name_is_not_a_try_but_a_short_setting_is():
    doc = """# Loss spikes after resume

## What we did

- ✅ Run 1
- ✅ Summary
- ✅ Batch=128: loss stable
"""
    got = [t for t, _, _ in _attempts(doc)]
    assert got == ["Batch=128"], got


def test_bullet_glyph_lines_in_separate_paragraphs_are_one_list_under_their_caption():
    doc = """# Board stuck in recovery mode

My board is stuck in recovery mode after flashing.

Things I tried:

  • Flash with different host machines

  • Tried a different USB cable

  • Tried different carrier boards

Does anybody have an idea?
"""
    units = [u for u in segment(doc).units if u.text.startswith(("Flash", "Tried"))]
    assert len({u.group for u in units}) == 1 and [u.index for u in units] == [0, 1, 2]
    got = [t for t, _, _ in _attempts(doc)]
    assert got[-3:] == ["Flash with different host machines", "Tried a different USB cable",
                        "Tried different carrier boards"]


def test_a_look_pasted_with_its_output_is_a_diagnostic_try_but_a_bare_command_is_not():
    doc = """# Kernels fail to compile for the old cards

### alice — 2024-01-01
The build fails with an unsupported architecture error.

### bob — 2024-01-02
Here is what I see:
```
$ nvcc -V
Cuda compilation tools, release 12.0, V12.0.140
```

### carol — 2024-01-03
To install, run:
```
$ pip install candle
```
"""
    got = [(t, o, w) for t, o, w in _attempts(doc)]
    assert got == [("`nvcc -V`", "inconclusive", "bob")]


def _story_doc(story_lines: int) -> str:
    story = "\n".join(f"- Tried batch size {8 * (k + 1)}: still OOM at step {k + 3}." for k in range(story_lines))
    return f"""# Embedding pipeline tuning

## What we tried

{story}

## Troubleshooting

### Error: CUDA out of memory
**Symptom:** OOM during warmup
**Status:** resolved

Lowering the batch to 96 fixed it.

### Error: 429 Too Many Requests
**Symptom:** permits exhausted
**Status:** resolved

Reverting to one batch at a time fixed it.
"""


def test_a_write_up_whose_own_story_precedes_its_troubleshooting_entries_keeps_that_story_as_an_investigation():
    parsed = _read(_story_doc(12))
    assert [p.inv.title for p in parsed] == ["Embedding pipeline tuning", "Error: CUDA out of memory",
                                             "Error: 429 Too Many Requests"]
    assert len(parsed[0].inv.attempts) == 12


def test_a_short_preamble_before_several_bugs_is_no_investigation_of_its_own():
    parsed = _read(_story_doc(2))
    assert [p.inv.title for p in parsed] == ["Error: CUDA out of memory", "Error: 429 Too Many Requests"]


def test_a_title_that_names_news_with_a_verb_word_is_not_a_protocol_rule():
    doc = """# Update on the 175B training run

- Kicked off 1.3B runs with tensor parallelism to test stability: loss diverged after 2k steps.
- Lowered the clipping threshold to 1.0: still diverged.
"""
    assert [o for _, o, _ in _attempts(doc)] == ["failed", "failed"]


@pytest.mark.parametrize("heading", ["已添加的调试信息", "已完成的修改", "已尝试的方法"])
def test_a_chinese_heading_of_what_was_already_done_is_a_heading_of_tries(heading):
    from dbglog.docreader.cues import heading_role

    assert heading_role(heading, "zh") == "tried"


def test_a_row_of_runs_is_titled_by_its_settings_and_its_measurements_are_its_result():
    doc = """# FP8 matmul is slower than expected

| Method | Forward | Fwd+Bwd | Speedup |
|---|---|---|---|
| BF16 + compile | 2.00ms | 4.79ms | 1.00x |
| FP8 rowwise + compile | 1.84ms | 4.55ms | 1.08x |
"""
    atts = [a for p in _read(doc) for a in p.inv.attempts]
    assert [a.title for a in atts] == ["BF16 + compile", "FP8 rowwise + compile"]  # (a name needs no column)
    assert "Forward 1.84ms" in atts[1].result


def test_arrow_lines_are_one_list_and_each_a_try_under_a_tested_heading():
    doc = """# Epoch takes 40 s on one GPU

## Tips to read
- Pin the host memory

### Tested changes, one at a time
Baseline is 40 s an epoch.

-> Turned on `torch.backends.cudnn.benchmark`, no change
=> Moved the augmentations to the GPU, a bit faster (31 s)
→ Raised num_workers from 2 to 8, much faster (12 s)
"""
    units = [u for u in segment(doc).units if u.text.startswith(("Turned", "Moved", "Raised"))]
    assert len(units) == 3 and len({u.group for u in units}) == 1 and [u.index for u in units] == [0, 1, 2]
    assert all(not u.text.startswith(("-", "=", "→")) for u in units)  # (the glyph is the bullet, not the words)
    got = [t for t, _, _ in _attempts(doc)]
    assert [t.split()[0] for t in got[-3:]] == ["Turned", "Moved", "Raised"], got


def test_a_heading_that_says_what_was_tested_names_tries_not_options():
    from dbglog.docreader.cues import heading_role

    assert heading_role("Tested changes, one at a time", "en") == "tried"
    assert heading_role("What we tested", "en") == "tried"
    assert heading_role("Tips to read", "en") == "options"


def test_a_table_of_sizes_with_a_target_column_is_no_run_but_a_table_of_measured_runs_is():
    doc = """# Grouped GEMM kernel is slower than the reference

## Problem sizes

| M | N | K | Target (µs) |
|---|---|---|---|
| 256 | 4096 | 7168 | 4.708 |
| 512 | 3072 | 4096 | 6.535 |

## Runs

| tile | time (µs) | speedup |
|---|---|---|
| 128x128 | 5.91 | 0.80x |
| 128x256 | 4.12 | 1.14x |
"""
    got = [t for t, _, _ in _attempts(doc)]
    assert not any(t.startswith(("M 256", "256", "M 512", "512")) for t in got), got
    assert [t for t in got if "128x" in t] == ["tile 128x128", "tile 128x256"], got


def test_each_row_of_a_change_table_is_a_knob_turned_with_its_headings_verdict():
    doc = """# RL step runs out of memory

## Run 1: smaller rollout cache (SUCCESS)

### Changes from run 0

| Parameter | Run0 | Run1 | Reason |
|---|---|---|---|
| `GPU_MEM_UTIL` | 0.70 | **0.45** | leave room for the trainer |
| `MAX_SEQS` | 512 | 256 | match the smaller cache |
| `TP` | 2 | 2 | unchanged |

## Before and after

| Setting | Before | After | Effect |
|---|---|---|---|
| attention | sdpa | eager | stable, slower |
"""
    got = [(t, o) for t, o, _ in _attempts(doc)]
    assert ("`GPU_MEM_UTIL`: 0.70 → 0.45", "worked") in got and ("`MAX_SEQS`: 512 → 256", "worked") in got, got
    assert not any("TP" in t for t, _ in got)  # (a value that did not change is no try)
    assert any(t == "attention: sdpa → eager" for t, _ in got), got


def test_a_table_of_measurements_before_and_after_is_no_change_table():
    from dbglog.docreader.cues import change_columns

    assert change_columns(("Benchmark", "Before", "After", "Change")) is None
    assert change_columns(("Factor", "Working", "Broken")) is None
    assert change_columns(("Parameter", "Iter0", "Iter1", "Reason")) == (0, 1, 2)
    assert change_columns(("Aspect", "Before", "After", "Impact")) == (0, 1, 2)


def test_a_script_saved_without_its_shebang_reads_each_commented_run_under_its_verdict():
    # a launch script kept as a note: the runs put away as comments, each under the comment that says how it went
    doc = """export LOG_LEVEL=1

set -x

# current sweep
SEQ=8192 BATCH=8 \\
bash launch_one.sh

set +x

# 🟢 Pass 32k bs4
# SEQ=32768 BATCH=4 \\
# bash launch_one.sh

# ⚠️ Hang 64k bs4
# SEQ=65536 BATCH=4 \\
# bash launch_one.sh

# 🔴 OOM 128k bs2
# SEQ=131072 BATCH=2 \\
# bash launch_one.sh
"""
    assert segment(doc).units[0].kind == "command"  # (its comments are not read as headings)
    got = _attempts(doc)
    assert [(t, o) for t, o, _ in got] == [("🟢 Pass 32k bs4", "worked"), ("⚠️ Hang 64k bs4", "partial"),
                                          ("🔴 OOM 128k bs2", "failed")], got


def test_a_line_of_code_put_away_with_a_comment_saying_how_it_went_is_a_try():
    # a launch script: list entries and options commented out, each with what happened when it ran
    doc = """#!/bin/bash
set -euo pipefail

echo "== bench =="

MODELS=(
    "llava-7b"
    # "chat2-7b"        # OOM with 32 frames
    "owl-7b"
    # "tarsier-7b"      # disabled for now
)

echo "starting"

python serve.py \\
  --tp 2 \\
  --max-len 8192
  # --max-len 4096 ## this works with prompts of 1024 tokens
"""
    got = [(a.source_lines, a.outcome) for p in _read(doc) for a in p.inv.attempts]
    assert ([8, 8], "failed") in got  # (its title is the code, not the comment)
    assert [a.title for p in _read(doc) for a in p.inv.attempts if a.source_lines == [8, 8]] == ['`"chat2-7b"`']
    assert ([18, 18], "worked") in got
    assert not any(lines[0] <= 10 <= lines[1] for lines, _ in got)  # "disabled" says no outcome
    # the echo lines after blank lines are the script's own, not a console session and what it printed
    assert not any(lines[1] - lines[0] > 4 for lines, _ in got), got


def test_a_commented_out_run_under_a_caption_that_says_how_it_went_is_a_failed_try():
    doc = """#!/bin/bash
CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve my/model \\
  --tensor-parallel-size 2 \\
  --data-parallel-size 2

# # TP=1, DP=4 crashes the engine..
# CUDA_DEVICE_ORDER=PCI_BUS_ID
# CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve my/model \\
#   --tensor-parallel-size 1 \\
#   --data-parallel-size 4
"""
    got = [(a.source_lines, a.outcome) for p in _read(doc) for a in p.inv.attempts]
    assert any(lo <= 8 <= hi and o == "failed" for (lo, hi), o in got), got


def test_markdown_with_a_few_commands_is_not_taken_for_a_script():
    doc = """# Build notes

export CUDA_HOME=/usr/local/cuda
cmake -B build
The build failed at the link step.

- tried clang instead: same error
"""
    assert not any(u.kind == "command" for u in segment(doc).units)


def test_an_attempt_heading_may_carry_a_parenthetical_and_a_template_blank_is_no_investigation():
    doc = """# CI build log

## Attempt Template

### Attempt N: [Brief Description]
**Result:** ⏳/✅/❌
**Fix Applied:**

## Attempts

### Attempt 2: cache restored
**Result:** ✅ SUCCESS
**Fix Applied:** restored the vcpkg cache before configure

**Milestones:**
- ✅ configure
- ✅ link

### Attempt 1 (CANCELED): wrong package removed
**Result:** ❌ CANCELED after 10 minutes
**Root Cause:** removed the feature instead of installing the package
**Fix Applied:** put the feature back
"""
    parsed = _read(doc)
    assert [p.inv.title for p in parsed] == ["CI build log"]
    got = [(a.title, a.outcome) for a in parsed[0].inv.attempts]
    # (numbered attempts come in their numbers' order; the milestones ticked under attempt 2 are its own account)
    assert got == [("wrong package removed", "failed"), ("cache restored", "worked")], got


def test_each_side_of_a_comparison_that_shares_one_verdict_is_a_try():
    doc = """# Cluster job stops making progress

Isolation runs so far:

- `NCCL_ALGO=Ring`: still wedged.
- Fused attention versus the reference kernel: both wedged.
- `bf16`, `fp16`, and `fp32` master weights: all wedged near step 40.
"""
    got = [(t, o) for t, o, _ in _attempts(doc)]
    assert len(got) == 6 and all(o == "failed" for _, o in got), got
    assert any(t.startswith("Fused attention") for t, _ in got) and any(t.startswith("the reference kernel")
                                                                         for t, _ in got), got


def test_settings_listed_under_one_verdict_in_the_opening_post_are_each_a_failed_try():
    doc = """# Mixtral OOM on four cards

### alice — 2024-03-08
Hi! TP 4, model len 1000, enforce eager, several memory fractions; Nothing helps. I always get an OOM error.

### bob — 2024-03-09
The weights alone need 90 GB, so that will not fit in 4x24 GB. Tried that last week, it was slow, but it worked.
"""
    got = [(t.split(":")[0], o) for t, o, _ in _attempts(doc)]
    assert ("TP 4", "failed") in got and ("enforce eager", "failed") in got and ("several memory fractions", "failed") in got, got


def test_a_sentence_of_prose_clauses_before_a_verdict_is_not_a_list_of_settings():
    from dbglog.docreader.cues import listed_tries

    assert listed_tries("TP 4, model len 1000, enforce eager; nothing helps.") == ["TP 4", "model len 1000", "enforce eager"]
    assert listed_tries("When the server started after the reboot last week, the logs showed the new driver was "
                        "loaded as expected; nothing helps.") == []
    assert listed_tries("TP 4, model len 1000, enforce eager; it works now.") == []


def test_of_two_verdict_columns_the_one_that_differs_between_rows_says_how_each_went():
    doc = """# Host memory grows with image requests

| Test | 50 requests | VRAM | Stabilizes? |
|------|-------------|------|-------------|
| Model A + images | ✅ | +322 MiB | ❌ Never |
| Model A text only | ✅ | +19 MiB | ✅ Yes |
| Model B + images | ✅ | +56 MiB then stable | ✅ Yes |
"""
    got = {t.split(" ·")[0]: o for t, o, _ in _attempts(doc)}
    assert got.get("Model A + images") == "failed" and got.get("Model A text only") == "worked", got


def test_rows_of_a_results_table_that_measured_something_worked_beside_rows_that_ran_out_of_memory():
    doc = """# Sweep for the 1B3 model

| NODES | TP | PP | DP | MBS | Speed | TFlops | Notes |
| ----: | -: | -: | -: | --: | ----: | -----: | ----: |
|     2 |  1 |  2 |  4 |   1 |    30 |   45.4 | 10GB  |
|     2 |  1 |  2 |  4 |   8 |    29 |   47.0 | 15GB  |
|     2 |  1 |  2 |  4 |  16 |     x |      x | OOM   |
|     2 |  2 |  1 |  4 |   1 |    53 |   25.7 | 11GB  |
"""
    got = [o for _, o, _ in _attempts(doc)]
    assert sorted(got) == ["failed", "worked", "worked", "worked"], got


def test_a_results_table_with_no_failed_row_only_says_what_each_run_measured():
    doc = """# Sweep for the 1B3 model

| NODES | TP | PP | DP | MBS | Speed | TFlops |
| ----: | -: | -: | -: | --: | ----: | -----: |
|     2 |  1 |  2 |  4 |   1 |    30 |   45.4 |
|     2 |  1 |  2 |  4 |   8 |    29 |   47.0 |
|     2 |  2 |  1 |  4 |   1 |    53 |   25.7 |
"""
    got = [o for _, o, _ in _attempts(doc)]
    assert got and "worked" not in got, got


def test_a_change_that_left_the_problem_as_it_was_is_a_try_even_in_the_problem_statement():
    doc = """# 初始化时卡住

### alice — 2021-07-16
用单机4卡跑，会在init时hang住；关闭deepspeed也一样。
请问配置需要注意什么吗?

### bob — 2021-07-21
可以检查一下安装是否有问题。
"""
    got = [(t, o) for t, o, _ in _attempts(doc)]
    assert any("deepspeed" in t and o == "failed" for t, o in got), got
    assert not any(t.startswith("用单机4卡跑") for t, _ in got), got  # the problem itself is no try


def test_configuration_runs_that_measured_something_worked_beside_runs_that_ran_out_of_memory():
    doc = """# BERT 10B on 8 nodes

### Configurations
PIPELINE_MP_SIZE=8, micro batch 4, ZeRO-3 offload

### Performance
OOM

### Configurations
PIPELINE_MP_SIZE=16, micro batch 1, ZeRO-3 offload

### Performance
SamplesPerSec=7.34 Effective Tera Flops per GPU: 1.04
"""
    got = [o for _, o, _ in _attempts(doc)]
    assert got == ["failed", "worked"], got


def test_the_second_side_of_a_switch_compared_keeps_the_switchs_name():
    got = [t for t, _, _ in _attempts("# Job wedges\n\n- NVLS enabled versus disabled: both wedged.\n")]
    assert [t.split(":")[0] for t in got] == ["NVLS enabled", "NVLS disabled"], got


def test_a_numbered_attempt_over_several_commands_each_with_its_result_is_read_variant_by_variant():
    doc = """# VBIOS recovery log

### Attempt 2: flash with override flags
- **Command:** `./flash -6 --index=0 board.rom`
- **Result:** FAILED — same "EEPROM not found" error
- **Command:** `./flash --overridesub --index=0 board.rom`
- **Result:** FAILED — same error

### Attempt 3 (T20): read the BIOS with the tools
- Unloaded the driver first, then ran:
  - `getbios -s PRAMIN` → "Invalid signature"
  - `getbios -s PROM` → "Invalid signature"
- **Result:** FAILED — no new information
"""
    got = [t for t, _, _ in _attempts(doc)]
    assert sum("overridesub" in t for t in got) == 1 and sum("-6" in t for t in got) == 1, got
    assert sum("PRAMIN" in t for t in got) == 1 and sum("PROM`" in t or t.endswith("PROM") for t in got) == 1, got


def test_a_caption_that_says_how_the_tries_went_speaks_for_each_item():
    doc = """# Illegal memory access while training

### asker — 2019-06-14

I do not understand what the issue is, but I have tried the following things without being able to fix the issue:
- Setting the cudnn flag in the Makefile
- Training both the small and the large model
- EDIT: tried with CUDA 10.1
Could it be the GPU the service uses?
"""
    got = [(t, o) for t, o, _ in _attempts(doc)]
    assert len(got) >= 2 and all(o == "failed" for _, o in got), got


def test_an_issue_titles_bracketed_tag_is_no_template_blank():
    doc = """# [Bug Report] Engine hangs on two A100s

### asker — 2025-01-02

I set `NCCL_P2P_DISABLE=1` and the hang is gone.
"""
    parsed, skipped = importer.parse_document(doc, "doc.md", model=False)
    assert [p.inv.title for p in parsed] == ["[Bug Report] Engine hangs on two A100s"] and not skipped


def test_third_people_report_back_on_a_suggestion_and_a_later_one_takes_the_later_answers():
    doc = """# Server stuck at startup with tensor parallel 4

### asker — 2024-01-17

It starts with one GPU but hangs at startup with `--tensor-parallel-size 4`.

### helper — 2024-01-18

try these parameters
`--gpu-memory-utilization 0.8`

### second — 2024-01-18

hello, I have tried the method you provided, but it has no effect.

### third — 2024-01-19

No effect here either

### fourth — 2024-02-22

@asker try this

**export NCCL_P2P_DISABLE=1**

this worked for me

### fifth — 2024-03-16

This also solved this issue for me.
"""
    assert not any(u.kind == "heading" and "NCCL" in u.text for u in segment(doc).units)  # a command in bold
    got = {(a.who, a.outcome): a.title for p in _read(doc) for a in p.inv.attempts}
    assert ("second", "failed") in got and ("third", "failed") in got, got
    assert "NCCL_P2P_DISABLE" in got.get(("fifth", "worked"), ""), got


def test_a_command_continued_over_lines_is_told_as_one_line_without_its_backslashes():
    doc = ("#!/bin/bash\n# OK: 2 nodes\nSEQ=8192 BATCH=8 \\\n  bash launch_one.sh\n\n"
           "# NOK (hang): 4 nodes\nSEQ=8192 BATCH=16 bash launch_one.sh\n")
    got = [u.text for u in segment(doc).units if u.kind == "command" and "SEQ" in u.text]
    assert got == ["SEQ=8192 BATCH=8 bash launch_one.sh", "SEQ=8192 BATCH=16 bash launch_one.sh"], got


def test_a_chinese_line_full_of_code_names_and_a_link_is_read_as_chinese():
    from dbglog.docreader.cues import language

    assert language("问题解决：export NCCL_P2P_DISABLE =1\nhttps://github.com/NVIDIA/nccl/issues/631") == "zh"
    assert language("调用 torch.distributed.barrier() 一直卡住") == "zh"
    assert language("I set NCCL_P2P_DISABLE=1 and https://example.com/x says why") == "en"
    doc = """# 多卡训练卡住

### asker — 2024-03-01
单卡正常，两卡就卡住不动。

### asker — 2024-03-02
问题解决：export NCCL_P2P_DISABLE=1
https://github.com/NVIDIA/nccl/issues/631
"""
    got = _attempts(doc)
    assert [o for t, o, _ in got if "NCCL_P2P_DISABLE" in t] == ["worked"]


def test_lines_that_report_states_under_one_mark_are_one_look_not_one_try_each():
    doc = """# The runner stays on the CPU

## What we changed
- ✅ Raised the shim's reported driver version to 13000

## Current status
- ✅ `cuInit()` is being called and succeeds
- ✅ Device found at 0000:00:05.0
- ✅ No version errors in the logs
- ⚠️ Discovery still timing out
- ⚠️ GPU mode still CPU
"""
    got = _attempts(doc)
    assert len(got) == 3, got
    assert got[0][0].startswith("Raised the shim") and got[0][1] == "worked"
    assert got[1][0].startswith("`cuInit()` is being called") and got[1][1] == "inconclusive"
    assert got[2][0].startswith("Discovery still timing out") and got[2][1] == "failed"


def test_a_marked_line_naming_a_setting_or_a_change_is_still_a_try():
    from dbglog.docreader.linker import _status_line

    assert not _status_line("✅ `--enforce-eager`: works")
    assert not _status_line("✅ Increased the driver version, errors gone")
    assert not _status_line("❌ NCCL_P2P_DISABLE=1 is still hanging")
    assert not _status_line("✅ We restarted the pods, still fine")
    assert _status_line("⚠️ Discovery still timing out")


def test_a_heading_with_an_html_anchor_is_read_and_a_table_of_contents_is_no_list_of_tries():
    from dbglog.docreader.vocab import is_placeholder

    assert not is_placeholder('Reproduction steps <a id="repro"></a>')
    assert is_placeholder("Attempt 1: <short description>") and is_placeholder("<a short description of the fix>")
    doc = """# Importing torch first makes cuml segfault at exit

- [Reproduction](#repro)
- [Discussion](#discussion)
  - [Removing the unused import fixes it](#import)
  - [faulthandler prints nothing](#faulthandler)

## Reproduction <a id="repro"></a>

Ran the repro 30 times on a V100: 3 of 30 runs segfault with exit code 139.

## Discussion <a id="discussion"></a>

### Removing the unused import fixes it <a id="import"></a>

I removed the unused `import torch` from neighbors.py and ran it 30 times again: no segfault in 30 runs.

### faulthandler prints nothing <a id="faulthandler"></a>

I enabled `faulthandler` in the Dockerfile: still no stack trace when it crashes.
"""
    got = _attempts(doc)
    assert not any("](#" in t for t, _o, _w in got), got
    assert any("import torch" in t and o == "worked" for t, o, _w in got), got
    assert any("faulthandler" in t for t, _o, _w in got), got
    assert not any("<a id" in t for t, _o, _w in got), got


def test_a_table_of_checks_and_what_they_showed_gives_one_look_per_row():
    doc = """# The runner picks the wrong cuBLAS

## Verified on the VM

| Check | Result |
|-------|--------|
| `libcublasLt.so.12` | resolves to the 12.3.2.9 copy |
| `libcudart.so.12` | points at the shim, not the driver's |
| systemd `ollama` unit | `OLLAMA_LIBRARY_PATH` lists `cuda_v12` first |
"""
    got = _attempts(doc)
    assert len(got) == 3 and {o for _t, o, _w in got} == {"inconclusive"}, got
    assert "libcublasLt.so.12" in got[0][0]


def test_a_chinese_statement_with_an_embedded_whether_is_no_question_and_not_solved_is_a_failure():
    from dbglog.docreader.cues import _last_clause

    assert _last_clause("数据传输是否有问题不是很明白，cpu是能跑的，换gpu就报错了") == "换gpu就报错了"
    assert outcome_of("并没有解决问题", "zh") == "failed"
    assert outcome_of("问题没有解决", "zh") == "failed"
    assert outcome_of("问题解决了", "zh") == "worked"


def test_a_fix_shown_in_a_fence_takes_the_verdict_below_it_and_later_verdicts_are_others_tries():
    doc = """# 安装 1.8.4 后报错 CUDNN_STATUS_BAD_PARAM

### alice — 2020-09-07

安装后运行时报错 CUDNN_STATUS_BAD_PARAM。

在命令行里执行:
```bash
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
```

即可解决问题

### bob — 2021-02-09

并没有解决问题
"""
    got = _attempts(doc)
    assert ("export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH", "worked", "alice") in got, got
    assert ("export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH", "failed", "bob") in got, got


def test_a_setup_script_kept_as_notes_gives_the_commands_shown_with_how_they_went():
    doc = """<!-- kept from the lab wiki -->
#!/bin/bash
set -xv
sudo apt-get autoremove --purge 'nvidia-*'
sudo apt-get install nvidia-driver-535 nvidia-settings
sudo add-apt-repository ppa:graphics-drivers/ppa
sudo apt --fix-broken install
sudo apt install nvidia-driver-580 nvidia-settings
sudo systemctl restart docker
ubuntu-drivers devices
#model    : TU106 [GeForce RTX 2060 Rev. A]
#driver   : nvidia-driver-535 - distro non-free recommended
nvidia-xconfig
# ERROR: Unable to find any GPUs in the system
docker run --rm --gpus all ubuntu nvidia-smi
# docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].
"""
    got = _attempts(doc)
    titles = [t for t, _o, _w in got]
    assert any("nvidia-xconfig" in t and o == "failed" for t, o, _w in got), got
    assert any("docker run" in t and o == "failed" for t, o, _w in got), got
    assert not any("apt-get install nvidia-driver-535" in t for t in titles), got  # set up, nothing shown


# Outcome words read in their context: what a sentence says happened, and what only looks like a verdict.
OUTCOME_WORDS = [
    # a success the subject denies is a failure
    ("Neither 0.1.13 or 0.1.16 worked for me.", "failed"),
    ("None of these worked", "failed"),
    ("Neither of them worked.", "failed"),
    ("None of those compiles.", "failed"),  # a build or run that went through, denied
    ("None of these builds succeeded.", "failed"),
    ("This worked", "worked"),
    # wedged is a hang, a freeze that did not come a success
    ("still wedged near step 24", "failed"),
    ("the current run did not freeze", "worked"),
    ("the training froze again", "failed"),
    # without success is a failure, without errors a success
    ("I have tried the following without success:", "failed"),
    ("tried these without any luck", "failed"),
    ("tried several things without being able to fix the issue", "failed"),
    ("It runs without errors now", "worked"),
    # a lowered learning rate was done, a lowered crash rate is how it went
    ("We reduced the learning rate by half.", None),
    ("The learning rate was lowered to 1e-5.", None),
    ("Pinning the allocator reduced the crash rate.", "partial"),
    ("The failure rate dropped to 3%.", "partial"),
    # resolving to a target and a setting made the same way give no verdict
    ("libcublasLt.so.12 resolves to the 12.3.2.9 copy", None),
    ("Pinning the driver resolved the hang.", "worked"),
    ("Set DATA_PATH the same way on the cluster.", None),
    ("With the patch it still crashes the same way.", "failed"),
]


@pytest.mark.parametrize("text, said", OUTCOME_WORDS)
def test_outcome_words_are_read_in_their_context(text, said):
    assert outcome_of(text, "en") == said


def test_a_list_of_checked_states_under_an_action_is_how_that_action_went():
    doc = """# Build notes

The nightly wheel build fails on the build box: `cub/cub.cuh: No such file or directory`.

## What fixed it

The nightly kept failing on missing CUB headers, so we moved the build box to CUDA 12.8, which bundles CCCL.

**Checked after the switch**:
- ✅ toolkit 12.8 on the PATH
- ✅ CUB and Thrust headers present
- ✅ wheel built with the CUDA backend

## Still broken

We also pinned the old driver for the second box.

- ✅ driver 550 installed
- ❌ GPU still missing from nvidia-smi
"""
    got = _attempts(doc)
    assert len(got) == 2
    assert got[0][0].startswith("The nightly kept failing") and got[0][1] == "worked"
    assert got[1][0].startswith("We also pinned") and got[1][1] == "partial"


def test_a_checked_list_whose_items_name_tries_of_their_own_stays_one_try_per_item():
    doc = """# Build notes

## What we did

We rebuilt the image on the build box.

- ✅ Reinstalled the toolkit: build passes
- ❌ Tried `CUDA_HOME=/opt/cuda`: same error
"""
    got = _attempts(doc)
    assert [o for _, o, _ in got][-2:] == ["worked", "failed"]
    assert any("Reinstalled the toolkit" in t for t, _, _ in got)


def test_explain_says_what_each_unit_became_in_the_end():
    from dbglog.docreader.review import explain, read_as_text

    doc = """# Hang on rank 3

## Tried

I set `NCCL_P2P_DISABLE=1` and the hang went away.

## Next steps

- Re-enable P2P on the new firmware.
"""
    parsed, _ = importer.parse_document(doc, "doc.md", explain=True, model=False)
    by_line = {u["lines"][0]: u["read_as"] for u in explain(parsed, doc.count("\n") + 1)}
    assert by_line[5] == {"kind": "attempt", "number": 1, "outcome": "worked"}
    assert read_as_text(by_line[5]) == "attempt 1 (worked)"
    assert by_line[9]["kind"] == "next_step" and read_as_text(by_line[9]) == "next step 1"
    assert read_as_text(by_line[1]) == "text"


@pytest.mark.parametrize("lang,key,text,said", [
    ("en", "tense.future", "I'll rerun it on the H100 tomorrow", True),  # a contraction's tail, by its apostrophe
    ("en", "tense.future", "we'll see after the reboot", True),
    ("en", "tense.future", "Going to rebuild with the nightly", True),  # an entry of several words, all there
    ("en", "tense.future", "Going nowhere, the build is broken", False),  # its first word alone is not the entry
    ("en", "tense.future", "Still broken", False),
    ("en", "tense.future", "ill-formed PTX", False),  # no apostrophe: no tail
    ("en", "boilerplate.form", "I have searched the existing issues", True),
    ("en", "boilerplate.form", "I have a 4090 and searched everywhere", False),  # the words, not in the entry's order
    # a person telling their setup or a look they took is no form's text
    ("en", "boilerplate.form", "I am using a RTX 3090 and tried to compile with CUDA 11.1", False),
    ("en", "boilerplate.form", "I checked the dmesg output after the crash", False),
    ("de", "outcome.still", "immer noch derselbe Fehler", True),
])
def test_cue_tables_find_entries_of_several_words_and_contractions_whatever_the_shortcut(lang, key, text, said):
    from dbglog.docreader.cues import table

    t = table(lang)
    assert t.has(key, text) is said
    assert bool(t.rx[key].search(text)) is said  # the set lookups agree with the table's own pattern


def test_a_check_table_row_is_a_look_whatever_it_showed_and_a_probed_setting_keeps_its_verdict():
    doc = """# Homelab GPU box after the reinstall

The vLLM container restarts in a loop since the driver update.

## Verified on the host

| Check | Result |
|---|---|
| `docker ps` | 4 containers running, vLLM restarting |
| `nvidia-smi` | works, driver 570.86 |

## Settings

| Probe | Result |
|---|---|
| `NCCL_P2P_DISABLE=1` | still restarting |
| `--enforce-eager` | works, no more restarts |
"""
    got = {t.strip("`"): o for t, o, _ in _attempts(doc)}  # ("`docker ps`": a command needs no column)
    assert got["docker ps"] == "inconclusive" and got["nvidia-smi"] == "inconclusive"
    assert got["NCCL_P2P_DISABLE=1"] == "failed" and got["--enforce-eager"] == "worked"


@pytest.mark.parametrize("did,look", [
    ("`dkms status`", True), ("`sudo systemctl status nvidia-persistenced`", True), ("`kubectl get pods -A`", True),
    ("`docker volume ls`", True), ("`pip install vllm==0.6.3`", False), ("Final status", False),
    ("`docker run --gpus all nvidia/cuda:12.4.0-base nvidia-smi`", False),
])
def test_a_read_only_command_set_as_code_is_a_look(did, look):
    from dbglog.docreader.cues import diagnostic

    assert diagnostic(did) is look


def test_a_heading_that_says_steps_are_needed_holds_plans_not_tries():
    doc = """# MI50 runner crashes on discovery

Ollama falls back to the CPU: the ROCm runner exits during GPU discovery.

## Investigation Steps Needed

### Step 1: Check the kernel driver
```bash
lsmod | grep kfd
sudo dmesg | grep -i amdgpu | tail -50
```

### Step 2: Run a HIP device query outside Ollama
"""
    parsed = _read(doc)
    assert [a.title for p in parsed for a in p.inv.attempts] == []
    steps = [s.text for p in parsed for s in p.inv.next_steps]
    assert any("Check the kernel driver" in s for s in steps) and any("HIP device query" in s for s in steps)


def test_read_as_names_the_narrowest_record_a_unit_was_read_into():
    from types import SimpleNamespace as NS

    from dbglog.docreader.review import ReadAs

    long_try = NS(source_lines=[1, 20], number=1, outcome="worked")  # a suggestion and, far below, its answer
    reply = NS(source_lines=[5, 6], number=2, outcome="failed")  # another person's try, inside that range
    step = NS(source_lines=[30, 30], position=1)
    made = ReadAs([NS(inv=NS(attempts=[long_try, reply], next_steps=[step]))])
    unit = lambda a, b: NS(first=a - 1, last=b - 1)  # noqa: E731 (0-based lines, as units hold them)
    assert made.of(unit(5, 5)) == {"kind": "attempt", "number": 2, "outcome": "failed"}
    assert made.of(unit(10, 10))["number"] == 1
    assert made.of(unit(30, 30)) == {"kind": "next_step", "number": 1, "outcome": None}
    assert made.of(unit(25, 26))["kind"] == "text"


def test_a_list_with_a_pending_line_under_an_action_is_not_how_that_action_went():
    doc = """# Build notes

The nightly wheel build fails on the build box: `cub/cub.cuh: No such file or directory`.

## What we did

We moved the build box to CUDA 12.8.

- ✅ toolkit 12.8 on the PATH
- ⏳ wheel build with the CUDA backend
"""
    got = _attempts(doc)
    # (a pending line is no verdict: the move has no result yet, and is not half-worked either)
    assert ("We moved the build box to CUDA 12.8.", "inconclusive", "") in got


def test_a_labelled_issue_inside_an_attempt_is_what_that_try_ran_into_not_a_new_investigation():
    # "**Initial issue:**" with "- Error: ..." under a "### ✅ Attempt 4" heading: a bold label with a symptom-like
    # field under it split a troubleshooting log into three investigations (a blind doc, set 44)
    doc = """# vLLM on the GB10 box

## Attempts

### ❌ Attempt 3: Upgrade vLLM in the container
**What was tried:**
- `pip install --upgrade vllm`

**Why it failed:**
- Error: `ImportError: libcudart.so.12: cannot open shared object file`

### ✅ Attempt 4: Switch to the official image
**What was tried:**
- Switched to `vllm/vllm-openai:latest`

**Initial issue:**
- Error: `Free memory on device is less than desired GPU memory utilization`

**Second issue:**
- Error: `ptxas fatal: Value 'sm_121a' is not defined for option 'gpu-name'`
"""
    parsed = _read(doc)
    assert [p.inv.title for p in parsed] == ["vLLM on the GB10 box"]
    assert [a.number for a in parsed[0].inv.attempts][:2] == [3, 4]


def test_a_bold_name_before_an_item_does_not_hide_the_tense_of_what_follows_it():
    # "- **Tile order**: Changed ..." read its tense from "Tile" and was no try; a field label is still a label
    from dbglog.docreader.cues import context, features

    doc = segment("# Worklog\n\n## Tuesday\n\n- **Tile order**: Changed the tile loop to match the k-last layout.\n"
                  "- **Accumulator** (`acc`): Dropped the zero fill, it is overwritten anyway.\n"
                  "- **Result:** Rewrote the launcher.\n- **Launch overhead**: the gap could be the driver.\n")
    ctx = context(doc)
    f = {u.text.split("**")[1]: features(u, ctx) for u in doc.units if u.kind == "sentence"}
    assert "opens with a past-tense verb" in f["Tile order"]
    assert "opens with a past-tense verb" in f["Accumulator"]
    assert "labelled as a result" in f["Result:"]
    assert "opens with a past-tense verb" not in f["Launch overhead"]


def test_a_document_whose_one_bug_section_is_a_small_part_of_it_keeps_its_own_title():
    # "## The bug (what hangs)" with a Symptom: line among a session log's sections titled the investigation
    doc = ("# fused-combine hang on the 32-chip mesh: investigation log\n\n## TL;DR\n\nThe hang is intermittent.\n\n"
           "## Timeline\n\n" + "".join(f"- 1{k}:00 reran the smoke test with seed {k}: PASS.\n" for k in range(6))
           + "\n## The bug (what hangs)\n\n- Symptom: synchronize_device never returns.\n\n## Conclusion\n\n"
           "It is device state, not the mux.\n")
    (p,) = _read(doc)
    assert p.inv.title == "fused-combine hang on the 32-chip mesh: investigation log"
    assert p.inv.symptom.startswith("synchronize_device never returns")
    # a document that is mostly its one bug section is still titled by it (the seed protocol's shape)
    (q,) = _read("# Debug notes\n\n## NCCL hang on rank 3\n\n**Status:** open\n**Symptom:** rank 3 stalls.\n\n"
                 "### Attempt 1: NCCL_P2P_DISABLE=1\n**Result:** still hangs.\n")
    assert q.inv.title == "NCCL hang on rank 3"


def test_a_time_is_no_case_key_so_two_rows_that_start_in_one_hour_stay_two_tries():
    # "~11:41" under "11:23" read as case 11 and its result, and "13:35" with a "13:04" far below as case 13: two
    # attempts with another row's verdict, one of them spanning the rows and the list between
    doc = ("# Hang log\n\n| Window | config | result |\n|---|---|---|\n| 11:23–11:35 | baseline | **HANG 3/3** |\n"
           "| ~11:41–13:17 | e2e test | **PASS 14/14** |\n| 13:35–14:07 | stress harness | stall 4/4 |\n\n## Timeline\n\n"
           "- 13:04–13:17 nosettle control: **4 PASS**.\n")
    got = [(a.source_lines, a.outcome) for p in _read(doc) for a in p.inv.attempts]
    assert got == [([5, 5], "failed"), ([6, 6], "worked"), ([7, 7], "failed"), ([11, 11], "worked")]


@pytest.mark.parametrize("said, outcome", [("export VLLM_USE_V1=0可以跑", "worked"), ("换了驱动之后可以运行", "worked"),
                                           ("还是不能运行", "failed"), ("加载模型完成后直接死机，尝试多次都一样", "failed"),
                                           ("我加在终端了，没有用", "failed"), ("我重装了显卡驱动但是无效", "failed"),
                                           ("能跑了，但是很慢", "partial")])
def test_chinese_for_it_runs_is_a_verdict(said, outcome):
    # "可以跑" / "可以运行" ("it runs") said nothing, where "能跑" already did
    assert outcome_of(said, "zh") == outcome


@pytest.mark.parametrize("said, outcome", [("我用的deepspeed==0.14.0也是报这个错，需要升级到什么版本合适？", "failed"),
                                           ("我降到0.13.0，还是报同样的错", "failed"), ("换了驱动以后不再报这个错了", "worked"),
                                           ("将 deepspeed 退回到 0.14.0 版本对我有用", "worked"),
                                           ("这个方法对我没有用", "failed")])
def test_chinese_for_it_gives_this_error_is_a_failure_and_its_negation_a_fix(said, outcome):
    # ("报这个错": "gives this error", the error word apart from its verb; the question after the comma asks, the
    # clause before it tells)
    assert outcome_of(said, "zh") == outcome


def test_the_prose_in_a_scripts_comments_is_read_for_its_tries_with_their_source_lines():
    doc = """#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Repro for the NCCL hang seen on the 4-node job.
#
# What we found while narrowing it down (each at 10 runs):
#   - NCCL_ALGO=Ring -> still hangs (3/10)
#   - NCCL_P2P_DISABLE=1 -> no hang in 10/10 runs
#   - a second pair of nodes -> same rate, so not one bad host
set -euo pipefail
for i in $(seq 1 10); do
  timeout 300 torchrun --nnodes 4 train.py --steps 50 || echo "run $i hung"
done
"""
    parsed, _ = importer.parse_document(doc, "repro.sh", model=False)
    atts = parsed[0].inv.attempts
    got = {a.title.split(" ->")[0]: (a.outcome, a.source_lines) for a in atts}
    assert got["NCCL_ALGO=Ring"] == ("failed", [6, 6]), got
    assert got["NCCL_P2P_DISABLE=1"] == ("worked", [7, 7]), got
    assert not any("SPDX" in a.title or "Repro for" in a.title for a in atts)
    units = segment(doc).units
    assert any(u.kind == "code" and u.text.startswith("# SPDX") for u in units)  # a licence line stays code


def test_a_programs_hash_prefixed_output_in_a_block_is_not_read_as_prose():
    doc = """# allreduce on two cards

```
$ ./build/all_reduce_perf -b 8 -e 128M -f 2 -g 2
# nThread 1 nGpus 2 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20
#
# Using devices
#  Rank  0 Group  0 Pid   5092 on   node-a device  0 [0x21] NVIDIA GeForce RTX 5090
#  Rank  1 Group  0 Pid   5092 on   node-a device  1 [0x41] NVIDIA GeForce RTX 5090
#       size         count      type   redop    root     time   algbw   busbw
```
"""
    assert not [u for u in segment(doc).units if u.kind == "sentence" and u.first > 2]


def test_a_caption_that_says_how_its_commands_went_covers_them_and_the_next_caption_is_not_its_result():
    doc = """# Getting vllm to install

```bash
# worked on the A100 box
pip install --upgrade pip
pip uninstall -y vllm flash-attn xformers
pip install torch==2.2.1 vllm==0.4.1
# fails
# pip install flash-attn==2.6.3
```
"""
    parsed = _read(doc)
    got = [(a.title, a.outcome, a.did, a.source_lines) for a in parsed[0].inv.attempts]
    assert [(o, lines) for _, o, _, lines in got] == [("worked", [4, 7]), ("failed", [8, 9])], got
    assert "pip uninstall -y vllm flash-attn xformers; pip install torch==2.2.1 vllm==0.4.1" in got[0][2]
    assert got[0][0].startswith("`pip install --upgrade pip;") and "flash-attn==2.6.3" in got[1][0]


def test_a_fix_reported_in_a_reply_is_one_attempt_and_a_me_too_much_later_is_no_try_of_it():
    doc = """# NaNs in the UNet with SDXL

### asker — 2024-01-02
Every img2img run with an SDXL checkpoint stops with a NansException.

### bob — 2024-01-05
Just ran into this on Linux too. Launching with `--no-half` fixes it here.

### carol — 2024-01-09
As bob pointed out, --no-half prevents the NaNs, but losing fp16 is still a problem.

### erin — 2024-02-11
Works for me.

### frank — 2024-02-20
Still broken on 1.8.

### grace — 2024-03-01
Nothing new here.

### dave — 2024-03-09
same error here
"""
    got = _attempts(doc)
    assert [(o, who) for t, o, who in got if "--no-half" in t and who == "bob"] == [("worked", "bob")], got
    assert not [a for a in got if a[2] == "dave"], got


def test_a_question_after_the_askers_own_command_is_no_suggestion_a_later_post_answers():
    doc = """# OOM with a 7B model on two 3090s

### asker — 2024-01-02
With Mistral 7B on Ubuntu I get the CUDA out of memory error at startup.

I tried to follow the AWQ advice above and this works:

```bash
python -m vllm.entrypoints.openai.api_server --model some/Model-7B-AWQ --quantization awq
```

But I'm not sure how to get the original model running. Anything I'm missing?

### bob — 2024-01-09
I'm on four 3090s.

### erin — 2024-02-01
Any news on this?

### frank — 2024-02-20
Subscribing.

### carol — 2024-03-12
Same model here. And I'm still getting this CUDA out of memory error.
"""
    got = _attempts(doc)
    assert [(o, who) for _, o, who in got] == [("worked", "asker")], got


def test_entries_numbered_the_cjk_way_in_one_paragraph_are_read_one_by_one():
    doc = """# Hang in the custom all-reduce

TP=8 serving hangs after a few hundred requests.

## Findings

（1）Rank 2 is the one that hangs; the others finish.
（2）`--disable-custom-all-reduce` seems to work.
（3）The hang shows in both 0.5.4 and 0.6.0.
"""
    sents = [(u.first, u.text) for u in segment(doc).units if u.kind == "sentence"]
    assert [first for first, _ in sents][-3:] == [6, 7, 8], sents
    parsed, _ = importer.parse_document(doc, "doc.md")  # (with the learned passes: the rules leave a bare verdict)
    got = [(a.title, a.outcome, a.source_lines) for p in parsed for a in p.inv.attempts]
    # (the learned pass may read entry (3), a version check, as part of the same try: it starts at entry (2))
    assert any("--disable-custom-all-reduce" in t and o == "worked" and lines[0] == 8 for t, o, lines in got), got
    assert not any(t.startswith(("2）", "（2）")) for t, _, _ in got), got  # the number is no part of the title


@pytest.mark.parametrize("text, lang", [
    ("Thanks! But I am already using packing with cutoff_len = 1024.", "en"),
    ("感谢回复！但是目前我已经使用packing的方式且cut off len = 1024", "zh"),
    ("Danke, aber ich nutze bereits packing.", "de"),
])
def test_an_answer_that_the_suggested_thing_was_already_in_place_is_a_failure_of_it(text, lang):
    assert outcome_of(text, lang) == "failed"
    assert outcome_of("Already fixed on main.", "en") == "worked"  # a verdict of its own wins


def test_the_askers_already_using_it_answers_a_suggestion_as_a_failed_try():
    doc = """# Low GPU use on 8 GPUs

### alice — 2024-09-01
Full finetune of GPT2 keeps one GPU busy but only 30% of each of 8.

### bob — 2024-09-01
Use packing.

### alice — 2024-09-01
Thanks! But I am already using packing with cutoff_len = 1024.
"""
    parsed, _ = importer.parse_document(doc, "doc.md")  # (the learned pass makes the try; the cue its outcome)
    got = [(a.outcome, a.who) for p in parsed for a in p.inv.attempts]
    assert got == [("failed", "alice")], got


ME_TOO_THREAD = """# undefined symbol after upgrading torch

### asker — 2023-10-20
Importing flash_attn fails with an undefined symbol after I upgraded torch.

### bob — 2023-11-08
i have the same error, how to solving the error?

### carol — 2023-11-10
I ran into this issue and solved it by doing this:
```
pip install flash_attn -U --force-reinstall
```

### dave — 2023-12-12
Using the note from carol, the error went away, but pip printed a few warnings:
```
ERROR: pip's dependency resolver does not currently take into account all the packages
```

### erin — 2023-12-20
I have the same error but when I disable eager mode it works.
"""


def test_a_fix_shown_in_a_block_under_its_sentence_is_that_command_and_output_shown_so_is_not():
    got = {a.who: (a.title, a.source_lines, a.outcome) for a in _read(ME_TOO_THREAD)[0].inv.attempts}
    assert got["carol"] == ("pip install flash_attn -U --force-reinstall", [10, 13], "worked"), got
    assert "dependency resolver" not in got.get("dave", ("",))[0], got


def test_a_me_too_question_is_no_try_even_to_the_learned_pass_and_a_me_too_with_a_try_is_one():
    parsed, _ = importer.parse_document(ME_TOO_THREAD, "doc.md")
    who = [a.who for p in parsed for a in p.inv.attempts]
    assert "bob" not in who and "erin" in who, who


def test_a_table_of_metrics_is_one_look_titled_by_its_heading_not_a_try_per_row():
    doc = """# API throughput far below the engine's

## Switch to the async engine

| Metric | Before | After |
|---|---|---|
| Throughput | 0.06 req/s | 1.66 req/s |
| Tokens/sec | 4.84 | 132.5 |
| Failed requests | 28 | 0 |
"""
    parsed, _ = importer.parse_document(doc, "doc.md", model=False)
    got = [(a.title, a.source_lines) for p in parsed for a in p.inv.attempts]
    assert got == [("Switch to the async engine", [7, 9])], got


def test_commands_pasted_into_a_paragraph_with_what_they_showed_are_looks_one_by_one():
    doc = """# nvidia-smi: Driver/library version mismatch

## What the system says

uname -r # 5.15.0-94-generic
dkms status nvidia # nvidia/570.133.07, 5.15.0-94-generic, x86_64: installed
cat /sys/module/nvidia/version # 570.124.06 (the module actually loaded)
So the module on disk and the one loaded differ.
"""
    units = [(u.kind, u.first, u.text, u.comment) for u in segment(doc).units if u.first >= 4]
    assert units[:3] == [("command", 4, "uname -r", "5.15.0-94-generic"),
                         ("command", 5, "dkms status nvidia", "nvidia/570.133.07, 5.15.0-94-generic, x86_64: installed"),
                         ("command", 6, "cat /sys/module/nvidia/version", "570.124.06 (the module actually loaded)")]
    assert units[3][:2] == ("sentence", 7)
    got = [(t, o) for t, o, _ in _attempts(doc)]
    assert ("`dkms status nvidia`", "inconclusive") in got and ("`cat /sys/module/nvidia/version`", "inconclusive") in got, got


@pytest.mark.parametrize("text, want", [
    ("undefined symbol: _ZN3c104cuda9SetDeviceEi", "undefined symbol: _ZN3c104cuda9SetDeviceEi"),
    ("Noted torch._dynamo cache-size warnings", "Noted torch._dynamo cache-size warnings"),
    ("*italic* and _also_ here", "italic and also here"),
    ("set *NCCL_P2P_DISABLE=1* again", "set NCCL_P2P_DISABLE=1 again"),
    ("**Result:** works", "Result: works"),
])
def test_emphasis_comes_off_in_pairs_and_an_identifiers_own_underscore_stays(text, want):
    assert plain(text) == want


def test_a_blog_posts_front_matter_below_a_source_comment_is_front_matter_and_names_the_investigation():
    doc = """<!-- source: https://example.com/posts/nvml-mismatch.md -->
---
title:  "[Linux] Failed to initialize NVML: Driver/library version mismatch"
excerpt: "why nvidia-smi stopped working"

categories:
  - etc
tags: [linux, nvidia]
last_modified_at: 2021-09-24T10:40:00-05:00
---

### What happened

After an unattended upgrade nvidia-smi stopped working.

### Fix

I unloaded the modules with `sudo rmmod nvidia_uvm` and rebooted; nvidia-smi works again.
"""
    units = segment(doc).units
    assert [(u.kind, u.first, u.last) for u in units[:2]] == [("html", 0, 0), ("front", 1, 9)]
    parsed = _read(doc)
    assert parsed[0].inv.title == "[Linux] Failed to initialize NVML: Driver/library version mismatch"
    assert not any("last_modified_at" in a.title for a in parsed[0].inv.attempts)


def test_a_front_matter_title_names_a_post_whose_top_level_headings_are_its_sections():
    # (a post's "# Introduction" among its other "#" sections became the investigation's title)
    doc = """---
title: "Speeding up a T5 model with TensorRT"
topics: ["ml", "python"]
---

# Introduction

This post converts a T5 model to a TensorRT engine.

# Conversion

I exported to ONNX with opset 13; the engine build then ran out of memory.

# Summary

With a 4 GiB workspace the engine built and ran 3x faster.
"""
    assert [p.inv.title for p in _read(doc)] == ["Speeding up a T5 model with TensorRT"]


def test_a_logs_numbered_try_headings_are_its_sections_and_none_of_them_names_it():
    # (an untitled passthrough log's "# Attempt 2 Log", "## Attempt 3", "# Attempt 4" made one investigation named
    # "Attempt 2 Log")
    doc = """Passing the RTX 2060 through to the Windows VM.

Tried PCI instead of PCIe: the screen goes blank and the host drops off the network.

# Attempt 2 Log

Added video=efifb:off to the kernel command line; the VM still shows a blinking cursor.

## Attempt 3

Bound the card to vfio-pci with disable_vga=1; the BAR 1 errors are still there.

# Attempt 4

Blacklisted sysfb_init; the VM now shows its boot screen and the GPU works.
"""
    parsed = _read(doc)
    assert [p.inv.title for p in parsed] == ["Passing the RTX 2060 through to the Windows VM."]
    assert len(_read(doc.replace("Passing the RTX", "# GPU passthrough\n\nPassing the RTX"))) == 1
    assert _read(doc.replace("Passing the RTX", "# GPU passthrough\n\nPassing the RTX"))[0].inv.title == "GPU passthrough"


def test_numbered_sub_headings_named_like_the_protocols_fields_make_one_try_each_with_its_verdict():
    doc = """# MI25 ollama worklog

## 17. Break the fallback down by type (2026-03-24)

### 17.1 Goal

- Split the confirmed fallback reads by kernel type.

### 17.2 Done

- Added `summarize-fallback-types.sh` and ran it on the strace log.

### 17.3 Results (excerpt)

- `matched_lines=108`; Type_CC 18, Type_ZZ 18.

### 17.4 Evidence files

- `fallback_type_summary.txt`

### 17.5 Verdict

- The fallback assets are read for both dat and hsaco: confirmed.

## 18. rocBLAS trace (2026-03-24)

### 18.1 目的

- dispatch が起きるか確認する。

### 18.2 実施

- `ROCBLAS_LAYER=2` で tinyllama を再実行。

### 18.3 判定

- dispatch の行はなく、依然として CPU fallback。
"""
    got = [(a.title, a.outcome, a.source_lines) for a in _read(doc)[0].inv.attempts]
    assert got == [("Break the fallback down by type (2026-03-24)", "worked", [3, 24]),
                   ("rocBLAS trace (2026-03-24)", "failed", [25, 38])], got
    first = _read(doc)[0].inv.attempts[0]
    assert first.hypothesis.startswith("Goal:") and "confirmed" in first.conclusion


def test_an_error_line_pasted_into_the_middle_of_a_paragraph_is_no_try():
    doc = """# Server crashes on the second prompt

### nux — 2025-05-15
llama-server on two GPUs dies with an illegal memory access after a few prompts.

### ikawrakow — 2025-05-15
Does it also happen with a single GPU?

### nux — 2025-05-15
It worked when I sent a random benchmark to it. When I redo a prompt from open-webui it crashed again:
INFO [update_slots] kv cache rm [p0, end) | id_slot=0 p0=0
CUDA error: an illegal memory access was encountered
  current device: 0, in function ggml_backend_cuda_synchronize at ggml-cuda.cu:3067
"""
    got = _attempts(doc)
    assert not any(t.startswith("CUDA error") for t, _, _ in got), got


def test_actions_told_one_after_another_then_one_verdict_are_one_try_each_with_that_verdict():
    doc = """# CRNN training crashes

Training crashes with an illegal memory access after a few steps.

### bob — 2024-01-02

Try batch size 1.

### alice — 2024-01-03

I set the batch size to 1. I disabled multi-GPU training. Still crashes.
"""
    got = [(o, w) for t, o, w in _attempts(doc) if "batch size to 1" in t or "multi-GPU" in t]
    assert got == [("failed", "alice"), ("failed", "alice")]


def test_a_fence_of_cases_each_with_an_arrow_to_its_verdict_is_one_try_per_case():
    doc = """# MoE combine hang

### Split bisection result

```
inputs-only   -> HANG  (round 2 was a fabric flake)
prealloc-only -> PASS, PASS  (2/2)
both          -> HANG   (positive control)
none(0)       -> PASS   (negative control)
```
"""
    got = {t.strip("`"): o for t, o, _ in _attempts(doc)}
    assert got == {"inputs-only": "failed", "prealloc-only": "worked", "both": "failed", "none(0)": "worked"}


def test_an_arrow_inside_program_code_is_not_a_case_with_a_verdict():
    doc = """# Notes

```
x = a -> b
y = c -> d
```
"""
    assert _attempts(doc) == []


def test_a_result_line_that_names_a_test_from_the_code_is_a_run_of_that_test():
    doc = """# HIP port notes

## Tidied up the hip-compile-fixes branch
* Builds on HIP
* Half prec blas_test ran correctly
* Double prec blas_test segfaults
"""
    got = {t: o for t, o, _ in _attempts(doc)}
    assert got.get("Half prec blas_test ran correctly") == "worked"
    assert got.get("Double prec blas_test segfaults") == "failed"


@pytest.mark.parametrize("lang, text, verb", [
    ("ja", "make validate-expを実行し、strict validationが通過した。", True),
    ("ja", "package再生成後のpushでtrain kernelを起動し、private設定を確認しました。", True),
    ("ja", "推論がとても遅かった。", False),  # an adjective's past, not something done
    ("ja", "次はバッチサイズを下げて試したい。", False),
    ("ko", "배치 크기를 1로 줄였더니 에러가 사라졌다.", True),
    ("ko", "다음에는 드라이버를 바꿀 예정이다.", False),
    ("ko", "base 환경을 clone해서 환경설정을 다시 만들어 줬다.", True),  # (줬: a contraction closed by ㅆ)
    ("ko", "GPU 메모리가 충분히 있다.", False),  # (있다 "there is": not a past)
    ("de", "Ich habe den Treiber neu installiert.", True),
    ("zh", "后来把显卡驱动降级到535版本了", True),  # (the perfective 了, whatever the verb)
    ("zh", "paddle版本都试过不行", True),
    ("zh", "为了节省显存，需要开启梯度检查点", False),  # (为了: "in order to")
    ("zh", "我不太了解这个参数", False),
])
def test_the_past_tense_is_read_by_its_shape_whatever_the_verb(lang, text, verb):
    from dbglog.docreader import cues

    assert cues.table(lang).has("forms.action", text) is verb


def test_entries_numbered_with_no_space_after_the_number_are_units_of_their_own():
    doc = """# Multi-node NCCL error

### asker — 2024-07-30
Checked both nodes so far:
1.pip list identical
2.ping works, ports mapped to the host
3.nvcc --version identical, both cuda11.8 and NCCL
2.19.3 on both.
"""
    firsts = [u.first for u in segment(doc).units if u.kind == "sentence"]
    assert firsts == [3, 4, 5, 6], firsts  # ("2.19.3" opening a line is a version carried on, not an entry)


def test_a_numbered_step_headed_in_the_past_tense_was_run_even_with_no_verdict_under_it():
    doc = """# VRAM not freed after stopping vLLM

After stopping the server the GPU memory stays in use.

## Investigation

### 2. Checked which process holds VRAM

The EngineCore child holds it, not the parent.

### 3. Upgrade to ROCm 6.3

The release notes mention a fix for leaked handles.
"""
    got = [(t, o) for t, o, _ in _attempts(doc)]
    assert got == [("Checked which process holds VRAM", "inconclusive")], got


@pytest.mark.parametrize("text, modal", [
    ("重装cudnn就解决了，可能tensorflow和paddle调用cudnn的方式不同", False),  # the hedge is on the cause, after the verdict
    ("可能是驱动的问题，我重装了驱动", True),  # a hedge before anything was done
])
def test_a_hedge_after_the_verdict_clause_hedges_the_cause_not_the_try(text, modal):
    from dbglog.docreader import cues

    doc = segment(f"# t\n\n{text}\n")
    u = next(u for u in doc.units if u.kind == "sentence")
    assert ("modal (could, should, maybe)" in cues.features(u, cues.context(doc))) is modal


def test_a_space_between_chinese_clauses_ends_a_clause_but_a_space_before_code_does_not():
    from dbglog.docreader import cues

    text = "paddle版本都试过不行 4卡的rtx5000怎么都不行 后来换成4卡的 3090可以了"
    doc = segment(f"# t\n\n{text}\n")
    u = next(u for u in doc.units if u.kind == "sentence")
    assert "a question" not in cues.features(u, cues.context(doc))  # ("怎么" asks nothing in the last clause)
    assert cues.CLAUSE_GAP.split("在 `invoke_dense_gemm` 中添加 `can_implement()` 检查") == [
        "在 `invoke_dense_gemm` 中添加 `can_implement()` 检查"]


def test_a_list_of_settings_each_with_the_number_it_measured_is_a_run_per_setting():
    doc = """# nccl-tests busbw differs by NCCL version

### asker — 2023-05-09

We ran nccl-tests with several NCCL versions; the busbw is as below:

- v2.9.9-1: 53.95
- v2.10.3-1: 57.06
- v2.11.4-1: 7.05

### other — 2023-05-10

The distribution of the scores:

- critical (w=3.0): 123 (0.7%)
- high (w=2.0): 246 (1.3%)
- noise (w=0.5): 16,429 (88.8%)
"""
    parsed, _ = importer.parse_document(doc, "doc.md")
    titles = [a.title for p in parsed for a in p.inv.attempts]
    assert titles == ["v2.9.9-1: 53.95", "v2.10.3-1: 57.06", "v2.11.4-1: 7.05"], titles  # (a category's count is no run)


def test_a_fix_given_in_the_paragraph_under_its_caption_is_the_askers_working_try_even_under_a_setup_worded_title():
    doc = """# memory requirements

### asker — 2022-05-12

Inference on an RTX 3080 Ti fails with an out-of-memory error in cudaFuncSetAttribute.

### asker — 2022-06-03

For future reference, in case anyone encounters this, the solution for me was:

export XLA_PYTHON_CLIENT_MEM_FRACTION=0.8
"""
    got = [(t, o, w) for t, o, w in _attempts(doc)]
    assert ("export XLA_PYTHON_CLIENT_MEM_FRACTION=0.8", "worked", "asker") in got, got


@pytest.mark.parametrize("text, done", [
    ("Delete `r9nano_*.yaml` from rocBLAS, rebuild rocBLAS, issue resolved.", True),
    ("Set `HSA_OVERRIDE_GFX_VERSION=10.3.0`, still hangs.", True),
    ("Delete `r9nano_*.yaml` from rocBLAS, rebuild rocBLAS, and it should work.", False),
    ("Rebuild rocBLAS, then run the sample.", False),
])
def test_steps_told_verb_first_then_how_they_went_are_done_not_advice(text, done):
    from dbglog.docreader import cues

    doc = segment(f"# Notes\n\n## Workaround\n\n{text}\n")
    u = next(u for u in doc.units if u.kind == "sentence")
    f = cues.features(u, cues.context(doc))
    assert ("imperative" not in f) is done, f


def test_a_table_of_configurations_each_with_one_measurement_is_a_run_per_row_under_a_numbered_heading():
    doc = """# DeepSeek prefill tuning

## 4. Measured results

### 4.1 Cold single-stream prefill

| Configuration | 128K cold prefill (tok/s) |
|---|---|
| `chunked_prefill_size=2048` (production) | 6,853 |
| flashmla prefill backend | 6,845 |
| `chunked_prefill_size=4096` | 6,301 |

| Parameter | Value |
|---|---|
| `tp_size` | 8 |
| `mem_fraction_static` | 0.72 |
"""
    titles = [t for t, _, _ in _attempts(doc)]
    assert titles == ["`chunked_prefill_size=2048` (production)", "flashmla prefill backend",
                      "`chunked_prefill_size=4096`"], titles  # (a table of parameters is a fact, not runs)


def test_a_verdict_mark_in_another_cell_of_a_row_says_how_the_row_went_when_its_verdict_column_does_not():
    doc = """# MTP A/B matrix

| Version | Config | decode tok/s | Verdict |
|---|---|---:|---|
| v3 | spec3 enforce_eager | 19.5 ❌ | rejected: graph loss |
| v4 | spec3 + graph, seqs512 | 133 ✅ | interim production |
"""
    got = {t: o for t, o, _ in _attempts(doc)}
    assert got == {"spec3 enforce_eager": "failed", "spec3 + graph, seqs512": "worked"}, got


def test_an_english_reply_in_a_thread_of_another_language_is_read_in_english():
    doc = """# Kandinsky 2.1: CUDA out of memory

### grigory — 2023-04-06
При генерации возникает ошибка нехватки памяти. Кто-нибудь сталкивался с этим?

### bluck — 2023-04-07
Есть проблема с освобождением памяти после генераций, скоро опубликую ноутбук.

### steadman — 2023-04-13
I found the best solution for this error was just lowering the width and height to 512.
"""
    got = [(o, w) for t, o, w in _attempts(doc) if "lowering the width" in t]
    assert got == [("worked", "steadman")], _attempts(doc)


@pytest.mark.parametrize("text, lang, want", [
    ("为了解决这个问题，我把batch size调小了", "zh", None),  # the aim, and what was done: no verdict yet
    ("为了解决这个问题我重装了驱动，还是不行", "zh", "failed"),  # the aim, then how it went
    ("要想解决显存不够的问题，先得知道是谁占了显存", "zh", None),
    ("Um den Absturz zu vermeiden, habe ich den Treiber neu installiert.", "de", None),
    ("Um den Absturz zu vermeiden, habe ich den Treiber neu installiert. Es funktioniert jetzt.", "de", "worked"),
])
def test_a_clause_of_purpose_says_what_was_aimed_at_not_how_it_went_in_any_language(text, lang, want):
    assert outcome_of(text, lang) == want


@pytest.mark.parametrize("text, want", [
    ("Pinning the allocator config does solve the OOM.", "worked"),
    ("Setting NCCL_P2P_DISABLE=1 did fix the hang on rank 3.", "worked"),
    ("Rebuilding the image did resolve it.", "worked"),
    ("Pinning the allocator config does not solve the OOM.", "failed"),
    ("The flag does solve the crash but the run is twice as slow.", "partial"),
])
def test_an_emphatic_do_before_a_verb_of_fixing_is_a_success(text, want):
    assert outcome_of(text, "en") == want


def test_a_list_captioned_as_a_routine_to_follow_is_not_a_list_of_tries_in_any_language():
    # A caption in the first person that shares a method ("here is how we go about it:") lists advice; one with a
    # verb of trying ("I tried the following:") lists tries, in Chinese as in English.
    advice = """# 显存泄漏排查

写最小复现要先降低问题的复杂度，我们的套路在这里分享给大家：

- 首先排除数据的问题，只创建一个 dataloader 不停地取数据
- 其次排除训练的问题，用固定的一批数据反复训练
- 最后检查自己写的工具函数
"""
    tries = """# 显存泄漏排查

我试了以下几种办法：

- 把 num_workers 改成 0，还是泄漏
- 关掉 pin_memory，还是泄漏
- 把 torch 降级到 1.10，正常了
"""
    assert _attempts(advice) == []
    assert [o for _, o, _ in _attempts(tries)] == ["failed", "failed", "worked"]


@pytest.mark.parametrize("text, lang, want", [
    ("换了驱动之后运行没有报错", "zh", "worked"),  # the negation before the failure word: the failure is gone
    ("跑了一晚上没有卡住", "zh", "worked"),
    ("换了驱动之后又出现了不同的错误", "zh", "failed"),  # "不同" negates nothing: a different error
    ("改了之后还是不断报错", "zh", "failed"),
    ("ドライバを入れ直したらエラーが出なくなった", "ja", "worked"),  # the negation after it, a particle between
    ("ドライバを入れ直したらエラーが出て動かない", "ja", "failed"),  # an error, then a failure: nothing negated
    ("ROCm 6.2 ではエラーは発生しなかった", "ja", "worked"),  # the error and its occurring both negated
    ("ROCm 6.3 にしたら再び発生するようになった", "ja", "failed"),  # occurring is the failure
    ("드라이버를 다시 설치하니 에러가 나지 않았다", "ko", "worked"),
    ("Nach dem Treiberwechsel gab es keinen Absturz mehr", "de", "worked"),
    ("Après la mise à jour, aucune erreur", "fr", "worked"),
    ("Con el driver nuevo ya no se cuelga", "es", "worked"),
    ("С новым драйвером больше не зависает", "ru", "worked"),
])
def test_a_negated_failure_word_says_the_failure_is_gone_in_any_language(text, lang, want):
    assert outcome_of(text, lang) == want


@pytest.mark.parametrize("text, lang, want", [
    ("Не решил, ошибка та же.", "ru", "failed"),  # was partial: "не" read twice, with "решил" and with "ошибка"
    ("Es funktioniert nicht, Fehler bleibt.", "de", "failed"),
    ("Решил её тем, что освободил место на диске.", "ru", "worked"),  # the fixer's own past: "I solved it by ..."
    ("С новым драйвером больше не зависает", "ru", "worked"),
])
def test_a_negation_read_with_its_success_word_does_not_also_negate_the_failure_after_it(text, lang, want):
    assert outcome_of(text, lang) == want


def _steps(doc):
    return [s.text for p in _read(doc) for s in p.inv.next_steps]


def test_a_heading_inside_a_post_ends_with_the_post_and_an_issue_forms_questions_heading_is_no_plan():
    # The first post opens with its issue form's heading; the replies are not under it, and thanks are no plans.
    doc = """# Cannot import the fused kernel after building from source

### mira — 2025-02-03
# ❓ Questions and Help
Next, I built the extension from source against CUDA 12.6. However, importing it fails with an undefined symbol.

### tomas — 2025-02-04
Thanks for the report! Wonderful that you have a repro.

### mira — 2025-02-05
Many thanks for the quick answer. Happy new year!
"""
    units = segment(doc)
    form = next(u for u in units.units if u.kind == "heading" and "Questions" in u.text)
    replies = [u for u in units.units if u.kind == "sentence" and u.post >= 1]
    assert replies and all(form.id not in u.path for u in replies)
    assert _steps(doc) == []


def test_korean_options_under_a_solutions_heading_are_proposals_and_a_verdict_modifier_names_tries():
    from dbglog.docreader.cues import heading_role

    assert heading_role("5. 해결 방안", "ko") == "options"  # "solution options": a noun, no verdict
    assert heading_role("실패한 방법들", "ko") == "failed"  # "the ways that failed": a modifier's ending
    doc = """# RTX 5090 빌드 보고서

## 해결 방안

### 방안 1: FlashInfer 통합
```dockerfile
RUN pip install flashinfer
```

### 방안 2: Nightly 이미지
```dockerfile
FROM vllm/vllm-openai:nightly
```
"""
    assert _attempts(doc) == []


def test_calls_in_a_python_block_with_the_comment_that_says_how_they_went_are_attempts():
    doc = """# TMA copy faults with a 64-byte stride

```python
def trial(block_k, stages):
    run_kernel(block_k, stages)  # the pipelined copy
    torch.cuda.synchronize()

trial(64, 2)  # -> OK, outputs match
trial(32, 1)  # -> OK
trial(32, 2)  # -> CUDA error: misaligned address
```
"""
    assert [(t, o) for t, o, _ in _attempts(doc)] == [
        ("`trial(64, 2)`", "worked"), ("`trial(32, 1)`", "worked"), ("`trial(32, 2)`", "failed")]
    plain_code = """# Loader

```python
batch = 8  # the batch size
model = load(path)  # from the shared cache
```
"""
    assert _attempts(plain_code) == []


@pytest.mark.parametrize("text", ["换成 cuda11.0 还是死活跑不通", "降级之后模型跑不起来", "这个版本装不上"])
def test_a_chinese_verb_with_a_negative_complement_is_a_failure(text):
    # "跑不通" (cannot get it to run through) holds no success word: the negation sits inside the verb
    assert outcome_of(text, "zh") == "failed"


def test_a_legend_of_the_fields_an_issue_log_uses_is_template_text_not_an_attempt_or_a_field():
    doc = """# Issues log

Each entry has:
- **Symptom**: How it showed up
- **Root Cause**: Why it happened
- **Fix**: How we resolved it

## 2026-03-02

### NaN in the first GroupNorm

**Symptom**: all-NaN output in fp16.
**Root Cause**: the sum over 160k elements overflows fp16.
**Fix**: computed the statistics in fp32. The output is valid now.

### OOM when decoding

**Symptom**: the VAE decode runs out of memory at 1024px.
**Root Cause**: the whole latent is decoded at once.
**Fix**: decoded in 2x2 tiles. It fits in 12 GB now.
"""
    parsed = _read(doc)
    titles = [a.title for p in parsed for a in p.inv.attempts]
    assert not any("How we resolved it" in t for t in titles)
    assert all("How it showed up" not in (p.inv.symptom or "") for p in parsed)
    # (nor does the learned pass, which a plain import runs, take the legend's "Fix" item for a try)
    learned, _ = importer.parse_document(doc + "\n```python\ntrial(64, 2)  # -> OK\ntrial(32, 2)  # -> OOM\n```\n",
                                         "doc.md")
    assert not any("How we resolved it" in a.title for p in learned for a in p.inv.attempts)


def test_a_programs_log_lines_with_annotations_in_a_fence_are_output_not_commands():
    doc = """# NaN in fp16

The debug prints showed where it starts:
```
[groupnorm] input: nan=0, inf=0          # inputs are fine
[groupnorm] mean nan=0, var nan=32       # every group's variance is NaN!
2026-01-09 10:31:02 after normalize: nan=5242880   # all of it
```
"""
    assert _attempts(doc) == []


def test_the_rows_of_a_german_before_and_after_metrics_table_are_measurements_not_tries():
    doc = """# Ollama nutzt die GPU nicht

## Ergebnis nach Fix

| Metrik | Vorher (CPU) | Nachher (GPU) |
|--------|--------------|---------------|
| RAM Verbrauch | ~28GB | ~2GB |
| VRAM Verbrauch | 0 | 21GB |
| Latenz pro Anfrage | ~20s | ~3-5s |
"""
    assert not any(t.startswith("Metrik") for t, _, _ in _attempts(doc))


@pytest.mark.parametrize("text, want", [
    ("latency went from 91ms/token to 81ms/token", "worked"),  # a lower latency, said in words
    ("throughput dropped from 40 tok/s to 20 tok/s", "failed"),
    ("we scaled from 1 to 8 GPUs", "inconclusive"),  # no metric: a setting, not a result
    ("Reduced the batch size from 8 to 4", "inconclusive"),  # the knob that was turned
    ("This gave a 40% latency improvement", "worked"),  # the metric named between the number and the gain
])
def test_a_metric_that_moved_from_one_number_to_another_in_words_is_read_like_an_arrow(text, want):
    from dbglog.core.outcome import classify

    assert classify(text) == want


def test_a_bold_label_with_where_the_change_went_in_parentheses_is_still_the_label():
    from dbglog.docreader.vocab import ATTEMPT_LABELS, label_of

    assert label_of("**Fix** (`crates/core/src/groupnorm.rs`): statistics in f32", ATTEMPT_LABELS) == (
        "did", "statistics in f32")
    assert label_of("**Fix** (see below) and more text", ATTEMPT_LABELS) is None


def test_bare_items_right_under_a_heading_of_tries_are_tries_and_a_collective_aside_is_their_verdict():
    doc = """# Cross-node NCCL init fails under Ray

`ncclCommInitRank` fails on the remote workers only.

## Attempted fixes (all failed for this cross-node setup)
1. System-wide /etc/environment on both nodes
2. Shell export before `ray start`
3. NCCL_NET=Socket, NCCL_P2P_DISABLE=1

## Things tried
- A fresh venv on the head node
"""
    got = _attempts(doc)
    assert [t for t, _, _ in got] == ["System-wide /etc/environment on both nodes", "Shell export before `ray start`",
                                      "NCCL_NET=Socket, NCCL_P2P_DISABLE=1", "A fresh venv on the head node"]
    assert [o for _, o, _ in got] == ["failed", "failed", "failed", "inconclusive"]


def test_a_list_under_a_topic_heading_or_a_not_tried_heading_or_of_properties_is_no_tries():
    doc = """# vLLM on the new card

The server starts but the first request crashes.

## Troubleshooting
- Driver and toolkit versions
- The NCCL environment

## Not tried
- fp8 KV cache on top

## What worked
- Image: vllm-nightly
- Size: 33GB
- CUDA: 12.8
"""
    assert _attempts(doc) == []


def test_a_title_that_names_the_whole_log_as_fixes_does_not_give_an_entry_without_a_verdict_one():
    doc = """# Installer - Confirmed Fixes

## Fix History

### 2025-09-25: Sync stopped

The sync job fails at start.

I rebuilt the image with rclone 1.68 in the Dockerfile.
"""
    assert [o for _, o, _ in _attempts(doc)] == ["inconclusive"]


def test_a_sentence_that_refers_back_to_an_items_try_is_how_that_try_went_not_a_try_of_its_own():
    doc = """# FP8 MoE crashes under load

Illegal memory access in the fused MoE kernel after hours of serving.

## What worked
- Upgrading to vllm 0.5.4: 5 days under load, no crash.
- Before the release, the stopgap was a custom MoE config with BLOCK_SIZE_K=64. That also held for the 3 days we ran it.
"""
    got = _attempts(doc)
    assert len(got) == 2
    assert [o for _, o, _ in got] == ["worked", "worked"]


def test_a_list_under_a_topic_heading_of_a_heading_of_tries_is_tries_even_when_short():
    doc = """# Baseline 7B OOM

Training the 7B baseline runs out of memory at the first step.

## All optimizations attempted

### 1. Memory
- [x] batch_size reduced: 2 → 1
- [x] Gradient checkpointing enabled

### 2. Code
- [x] Removed quantization
- [x] Used adamw_torch optimizer
"""
    assert [t for t, _, _ in _attempts(doc)] == ["batch_size reduced: 2", "Gradient checkpointing enabled",
                                                 "Removed quantization", "Used adamw_torch optimizer"]


def test_a_topic_heading_under_a_heading_that_only_names_a_fix_gives_its_list_no_tries():
    doc = """# Ollama runs on the CPU

The containers see no GPU.

## Required resolution

### Alternative solutions:
1. **Manual CUDA installation**: install the CUDA libraries in the existing containers
2. **Custom image build**: create GPU-enabled images
"""
    assert _attempts(doc) == []


def test_root_causes_and_verification_labels_are_reasoning_and_result_not_tries():
    doc = """# White images from SDXL

## 2026-01-08

### [FIXED] White output

**Symptom**: every pixel is 255.

**Root Causes**: three separate issues combined.

**Fix**: loaded the official CLIP vocab.json instead of building it from the merges.

**Verification**: token IDs now match exactly and the images are right.
"""
    got = _attempts(doc)
    assert len(got) == 1 and got[0][1] == "worked" and "vocab.json" in got[0][0]


def test_a_results_table_whose_attempt_column_holds_numbers_is_titled_by_the_next_column():
    doc = """# Qwen 32B on one GPU

## Timeline of attempts

| Attempt | Configuration | Result | Error |
|---|---|---|---|
| 1 | Qwen2.5-32B + AWQ quantization | ❌ | AWQ config missing |
| 2 | Compile bitsandbytes from source | ❌ | CMake: CUDA::cublas not found |
| 3 | Qwen2.5-32B-AWQ, no FP8 KV cache | ✅ | |
"""
    got = _attempts(doc)
    assert [t for t, _, _ in got] == ["Qwen2.5-32B + AWQ quantization", "Compile bitsandbytes from source",
                                      "Qwen2.5-32B-AWQ, no FP8 KV cache"]
    assert [o for _, o, _ in got] == ["failed", "failed", "worked"]


def test_a_sweep_table_whose_first_column_is_a_size_is_titled_by_its_settings_not_by_a_measurement():
    doc = """# Pipeline sizes on four A100s

## Runs

| GPUS | PP | MBS | Speed | Notes |
|---|---|---|---|---|
| 4 | 2 | 8 | 31.5 | fits |
| 4 | 2 | 16 | x | OOM |
"""
    atts = [a for p in _read(doc) for a in p.inv.attempts]
    assert [a.title for a in atts][:1] == ["GPUS 4 · PP 2 · MBS 8"], atts
    assert atts[1].title.startswith("GPUS 4 · PP 2 · MBS 16") and atts[1].outcome == "failed"
    assert [a.did for a in atts] == [a.title for a in atts]


# Two tries, then a recap that tells both again word for word (lines 5, 6 and 10, 11).
RECAP = """# Soft-impute loses precision

## 12.5

- Ran the ALS model with rank 250 on the ratings split: RMSE 0.944
- Ran the ALS model with rank 200 on the ratings split: RMSE 0.944

## Recap

- Ran the ALS model with rank 250 on the ratings split: RMSE 0.944
- Ran the ALS model with rank 200 on the ratings split: RMSE 0.944
"""


def test_a_recap_that_restates_earlier_tries_word_for_word_adds_no_tries():
    got = _read(RECAP)[0].inv.attempts
    assert [a.source_lines for a in got] == [[5, 5], [6, 6]]


def test_one_try_told_again_in_a_list_is_kept():
    doc = """# Hang at step 3

- Set NCCL_P2P_DISABLE=1 and ran the job: hangs at step 3
- Updated the driver to 550: hangs at step 3
- Set NCCL_P2P_DISABLE=1 and ran the job: hangs at step 3
"""
    assert len(_attempts(doc)) == 3


def test_a_line_break_in_chinese_prose_ends_a_sentence():
    doc = """# 使用GPU运行失败

### alice — 2024-06-02
安装:conda install pytorch==2.1.2 pytorch-cuda=11.8 -c pytorch -c nvidia
安装后程序报错：no kernel image is available for execution on the device
尝试好几个版本都出现这个问题，显卡型号是geforce 940m。
"""
    sents = [u for u in segment(doc).units if u.kind == "sentence"]
    assert [(u.first, u.last) for u in sents] == [(3, 3), (4, 4), (5, 5)]


def test_a_console_command_whose_printed_lines_show_a_known_failure_is_a_failed_try():
    doc = """# Flash attention notes

The import fails in the new env.

```bash
(gr00t) ubuntu@box:~/Isaac-GR00T$ python -c "import flash_attn"
Traceback (most recent call last):
  File "<string>", line 1, in <module>
ImportError: /home/ubuntu/.conda/envs/gr00t/lib/python3.10/site-packages/flash_attn_2_cuda.so: undefined symbol: _ZN3c104cuda
(gr00t) ubuntu@box:~/Isaac-GR00T$ python -c "import torch; print(torch.__version__)"
2.7.0+cu126
```
"""
    got = _attempts(doc)
    assert [(o, "flash_attn" in t) for t, o, _ in got] == [("failed", True)]


def test_a_reviewed_list_of_attempts_keeps_every_telling_a_recap_would_merge():
    from dbglog.docreader.read import read_document
    from dbglog.docreader.review import Correction, Corrections

    said = Corrections([Correction(n, n, f"Ran the ALS model with rank {r} on the ratings split", "worked")
                        for n, r in ((5, 250), (6, 200), (10, 250), (11, 200))])
    parsed, _ = read_document(RECAP, "doc.md", corrections=said, model=False)
    assert [a.source_lines for a in parsed[0].inv.attempts] == [[5, 5], [6, 6], [10, 10], [11, 11]]


def test_an_item_naming_a_setting_over_sub_items_each_with_an_outcome_gives_one_try_per_case():
    doc = """# NaNs in the decoder under load

### Repro

We exported the decoder with the stock converter.
1. Using bf16 weights:
    - idle card, decoding is correct and the scores match the reference.
    - card busy with another job, decoding works normally.
2. Using fp16 weights:
    - idle card, decoding is correct.
    - card busy with another job, decoding fails with NaN logits.
"""
    got = _attempts(doc)
    assert len(got) == 4, got
    assert [o for _, o, _ in got] == ["worked", "worked", "worked", "failed"]
    assert got[3][0].startswith("Using fp16 weights: card busy with another job")


def test_sub_items_that_name_tries_of_their_own_are_not_cases_of_the_item_above():
    doc = """# Loader hangs

- Environment:
    - I upgraded the driver to 560 and it works.
    - I rebuilt the image with CUDA 12.6, still hangs.
"""
    titles = [t for t, _, _ in _attempts(doc)]
    assert not any(t.startswith("Environment") for t in titles), titles


def test_paragraphs_of_a_setting_and_the_number_one_run_measured_are_a_sweep():
    doc = """# Epoch time doubled after the toolkit bump

Our training step got slower after the upgrade. The small benchmark below shows most of it:

1.13.1+cu117
epoch seconds 61.2

2.1.0+cu121
epoch seconds 118.9

2.1.0+cu118
epoch seconds 64.0
"""
    got = _attempts(doc)
    assert len(got) == 3, got
    assert any("2.1.0+cu121" in t for t, _, _ in got)


def test_two_paragraphs_of_a_setting_and_a_number_are_not_yet_a_sweep():
    doc = """# Epoch time doubled after the toolkit bump

1.13.1+cu117
epoch seconds 61.2

2.1.0+cu121
epoch seconds 118.9
"""
    assert _attempts(doc) == []


def test_a_compound_naming_a_kind_of_thing_is_not_a_past_tense_opening():
    from dbglog.docreader.cues import context, features
    doc = segment("# Notes\n\n- Thread-based parallelization\n- Rebased the branch on main\n")
    ctx = context(doc)
    f = {u.text: features(u, ctx) for u in doc.units if u.kind == "sentence"}
    assert "opens with a past-tense verb" not in f["Thread-based parallelization"]
    assert "opens with a past-tense verb" in f["Rebased the branch on main"]


@pytest.mark.parametrize("first", ["Evidence", "Phase", "Feature", "阶段"])
def test_a_table_of_evidence_phases_or_features_holds_no_tries(first):
    doc = f"""# Runner crash on the old card

## Summary

| {first} | Supports | Conclusion |
|---|---|---|
| Vendor tools run | System OK | ✅ Not a system issue |
| Other backend runs | GPU OK | ✅ Not a hardware issue |
| Both releases crash | Version independent | ❌ Still crashing |
"""
    assert _attempts(doc) == []


def test_a_table_of_settings_with_a_verdict_column_still_holds_tries():
    doc = """# Runner crash on the old card

| Setting | Supports | Conclusion |
|---|---|---|
| Vendor tools run | System OK | ✅ Not a system issue |
| Other backend runs | GPU OK | ✅ Not a hardware issue |
"""
    assert len(_attempts(doc)) == 2


@pytest.mark.parametrize("said", ["Environment variables ineffective:", "The patch was ineffective.",
                                  "Pinning the clocks was of no use."])
def test_ineffective_or_of_no_use_is_a_failed_outcome(said):
    assert outcome_of(said, "en") == "failed"


def test_a_caption_with_a_verdict_of_its_own_is_no_case_list():
    doc = """# Allocator OOM

3. **Environment variables ineffective:**
   - `expandable_segments:True` - didn't help
   - `max_split_size_mb:128` - didn't help
"""
    titles = [t for t, _, _ in _attempts(doc)]
    assert not any(t.startswith("Environment variables ineffective") for t in titles), titles


@pytest.mark.parametrize("kw", ["Hypothesis", "가설", "假设", "仮説", "Hypothese"])
def test_a_numbered_hypothesis_heading_is_no_try_in_any_language(kw):
    doc = f"""# 5090 crash

## {kw}

### {kw} 1: FlashInfer
- FlashInfer may be needed for top-k sampling
- without it the fallback path may break on this card
"""
    assert _attempts(doc) == []


_BENCH_DIARY = """# Decode speed

```
Latest numbers, 13B, 8 prompt/256 tokens, fp16
plain eager
Decode time: 12.40 sec total, 20.65 tokens/sec
Memory bandwidth: 310.20 GB/s

fused attention kernel
Decode time: 7.10 sec total, 36.06 tokens/sec
Memory bandwidth: 540.75 GB/s

Note: still launch-bound as far as I can tell (graphs crash for me at the moment)

- graph capture of the whole decoder gives garbage tokens right now, probably a missing guard
```
"""


@pytest.mark.parametrize("note", ["Note:", "NOTE:"])
def test_a_fence_holding_a_persons_benchmark_notes_is_read_as_notes(note):
    doc = segment(_BENCH_DIARY.replace("Note:", note))
    said = [u.text for u in doc.units if u.kind == "sentence"]
    assert "fused attention kernel" in said
    assert any(t.startswith(f"{note} still launch-bound") for t in said)


def test_a_setup_line_over_what_one_run_of_it_measured_is_a_run():
    titles = {t: o for t, o, _ in _attempts(_BENCH_DIARY)}
    assert titles.get("fused attention kernel") == "inconclusive", titles
    assert [o for t, o in titles.items() if t.endswith("plain eager")] == ["inconclusive"], titles


@pytest.mark.parametrize("body", [
    'Traceback (most recent call last):\n  File "x.py", line 3, in <module>\n    main()\nRuntimeError: CUDA error: '
    'an illegal memory access was encountered\n\nNote: this is the second run of the same job today\n\n- it fails '
    'the same way on the other node too\n',
    "def run():\n    return 1\n\nNote: the loop below is what we time in every config\n\n- we run it three times "
    "and keep the best number\n\nfor x in y:\n    run()\n",
    "[2024-05-01 10:00:01] step 1 loss 2.31\n\nINFO: the allocator grew the pool\n\nNote: this is what the trainer "
    "printed on the last run\n\n- the same lines show up on every rank of the job\n\n[2024-05-01 10:00:09] step 2 "
    "loss 2.29\n\nWARNING: the grad norm is large\n",
])
def test_a_fence_of_a_traceback_or_code_stays_code(body):
    doc = segment(f"# Crash\n\n```\n{body}```\n")
    assert all(u.kind == "code" for u in doc.units if u.kind != "heading")


def test_properties_over_a_measurement_are_no_run():
    doc = """# Box

GPU: NVIDIA RTX 6000 Ada Generation
Memory: 26786MiB / 257222MiB
"""
    assert _attempts(doc) == []


_RST_MATRIX = '''Getting started
===============

Drivers
~~~~~~~

Pick a driver that matches the toolkit you build with.

.. csv-table::
   :header: "GPU","Driver","Toolkit","Status"
   :widths: 20,15,15,40

   "RTX 3090","535.54","12.2","Working"
   "A10G","525.85","12.0","Working"
   "T4","470.82","11.4","Fails: kernel image not found"

Building
~~~~~~~~

Run the build script from the repository root.
'''


def test_a_rst_title_underline_of_tildes_is_a_heading_not_a_fence_that_swallows_the_page():
    doc = segment(_RST_MATRIX)
    heads = [u.text for u in doc.units if u.kind == "heading"]
    assert heads == ["Getting started", "Drivers", "Building"]
    assert not any(u.kind == "code" for u in doc.units)


def test_a_rst_csv_table_gives_one_try_per_row_with_its_status_as_the_outcome():
    doc = segment(_RST_MATRIX)
    rows = [u for u in doc.units if u.kind == "row"]
    assert [r.cells[0] for r in rows] == ["RTX 3090", "A10G", "T4"]
    assert all(r.header == ("GPU", "Driver", "Toolkit", "Status") for r in rows)
    got = _attempts(_RST_MATRIX)
    assert [o for _, o, _ in got] == ["worked", "worked", "failed"]
    assert "T4" in got[2][0]


def test_a_csv_fence_is_a_table_and_quoted_prose_is_not():
    doc = '''# Sweep

```csv
batch,precision,result
8,bf16,OOM at step 3
4,bf16,ok
```

"Fast", she said, "and cheap".
"Slow", he said, "and dear".
'''
    rows = [u for u in segment(doc).units if u.kind == "row"]
    assert [r.cells for r in rows] == [("batch", "precision", "result"), ("8", "bf16", "OOM at step 3"),
                                       ("4", "bf16", "ok")]
    assert [o for _, o, _ in _attempts(doc)] == ["failed", "worked"]


def test_a_look_the_author_says_did_not_help_was_tried_as_a_fix_and_failed():
    doc = '''# Allocator crash on the Orin

## Environment variables tried

- `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` - didn't help
- `CUDA_LAUNCH_BLOCKING=1` - didn't help
- `NCCL_DEBUG=INFO` - shows the ring is built over PCIe
'''
    got = {t: o for t, o, _ in _attempts(doc)}
    blocking = next(o for t, o in got.items() if "CUDA_LAUNCH_BLOCKING" in t)
    debug = next(o for t, o in got.items() if "NCCL_DEBUG" in t)
    assert blocking == "failed"
    assert debug == "inconclusive"


def test_workarounds_a_heading_calls_attempted_are_tries_and_possible_ones_are_not():
    doc = '''# Server dies with an illegal memory access

### Attempted workarounds

- `--no-mmap` — crash still occurs
- Smaller batch (64) — crash still occurs

### Possible workarounds

- Pin the previous release
- Build with `GGML_CUDA_FORCE_CUBLAS=1`
'''
    got = _attempts(doc)
    assert [o for _, o, _ in got] == ["failed", "failed"]
    assert "--no-mmap" in got[0][0] and "batch" in got[1][0]


TRIAL_FIELDS = """# Server crashes on MI300

### Trial 1 :

#### Image : rocm/serve:0.5.8

#### Command :
```
python -m serve.launch --tp 8
```

#### Error Log :
```
RuntimeError: HIP error: invalid device function
```

#### Resolution :
```
pip install -U transformers
```

#### Output :
```
server started, 41 tok/s
```
"""


def test_a_trials_field_headings_over_blocks_are_a_try_per_command_with_the_fields_after_it():
    atts = [a for p in _read(TRIAL_FIELDS) for a in p.inv.attempts]
    assert [(a.title, a.outcome) for a in atts] == [("python -m serve.launch --tp 8", "failed"),
                                                    ("pip install -U transformers", "worked")]
    assert "invalid device function" in atts[0].result and "41 tok/s" in atts[1].result
    assert atts[0].source_lines[0] <= 5 <= atts[0].source_lines[1]  # the image it ran in leads the first try


def test_bold_field_labels_alone_on_their_line_read_like_field_headings():
    doc = re.sub(r"^#### (.+?) :$", r"**\1:**", TRIAL_FIELDS, flags=re.M)
    atts = [a for p in _read(doc) for a in p.inv.attempts]
    assert [(a.title, a.outcome) for a in atts] == [("python -m serve.launch --tp 8", "failed"),
                                                    ("pip install -U transformers", "worked")]


CONFIG_RUNS = """## ZeRO-3 offload on 4 nodes

### Configurations

PIPELINE_STAGES=4
{"micro_batch": 2, "offload": "cpu"}

### Performance
OOM

---

### Configurations

PIPELINE_STAGES=8
{"micro_batch": 1, "offload": "cpu"}

### Performance
0.41 samples/s

---

### Configurations

### Performance
"""


def test_config_and_performance_heading_pairs_under_the_title_heading_are_a_run_each_and_an_empty_pair_is_none():
    atts = [a for p in _read(CONFIG_RUNS) for a in p.inv.attempts]
    assert [(a.title, a.outcome) for a in atts] == [("PIPELINE_STAGES=4", "failed"),
                                                    ("PIPELINE_STAGES=8", "worked")]  # (it ran, beside one that ran out)
    assert "0.41 samples/s" in atts[1].result


def test_a_check_mark_and_a_cross_in_a_result_column_are_worked_and_failed():
    doc = """# Custom all-reduce crash

| DP | TP | result |
|----|----|--------|
| 2  | 1  | ✓ |
| 1  | 2  | ✓ |
| 2  | 2  | ✕ crash |
"""
    assert [o for _, o, _ in _attempts(doc)] == ["worked", "worked", "failed"]
    assert outcome_of("☑ driver reinstalled", "en") == "worked"


def test_a_pasted_log_record_with_its_time_and_level_is_the_programs_output_not_a_try():
    doc = """# 370 스텝에서 학습이 멈춥니다

길이 텐서를 CPU로 옮긴 뒤 다시 학습을 돌렸습니다.

[2021-01-25 23:17:18,136][asr.utils][INFO] - device : GeForce GTX 1070
[2021-01-25 23:17:18,141][asr.utils][INFO] - split dataset start !!
[2021-01-25 23:17:21,310][asr.utils][INFO] - Applying spec augmentation...
[2021-01-25 23:17:22,020][asr.utils][INFO] - Applying spec augmentation...
[2021-01-25 23:17:24,438][asr.utils][INFO] - split dataset complete !!

2021-01-26 09:10 - rolled the driver back to 535: training passes step 370.
"""
    got = _attempts(doc)
    assert not any("spec augmentation" in t for t, _, _ in got), got
    assert any("rolled the driver back" in t for t, _, _ in got), got


def test_one_sentence_setting_two_named_runs_against_each_other_is_a_try_each_with_its_own_outcome():
    doc = """# 量化失败：RuntimeError: CUDA Error: no kernel image is available for execution on the device

### wqh — 2023-03-24
v100能运行不会报错，但是p100会报错。

### dev — 2023-04-02
It fails with the 2MB message size, but it runs fine with 1MB messages.
"""
    got = [(t, o) for t, o, _ in _attempts(doc)]
    assert ("v100能运行不会报错", "worked") in got and any(t.endswith("p100会报错") and o == "failed" for t, o in got), got
    assert any("2MB" in t and o == "failed" for t, o in got) and any("1MB" in t and o == "worked" for t, o in got), got


def test_a_failure_and_the_fix_that_ended_it_in_one_sentence_are_not_two_runs():
    from dbglog.docreader.cues import opposite_clauses

    assert opposite_clauses("It crashed every time before, but after the fix it works.", "en") == []
    assert [o for _c, o in opposite_clauses("It hangs with 4 cards, but 2 cards are fine.", "en")] == ["failed", "worked"]


def test_a_thread_titled_by_an_issue_form_with_its_placeholder_left_in_is_read_not_skipped_as_a_template():
    doc = """# [BUG/Help] <title>量化失败：RuntimeError: CUDA Error: no kernel image is available

### gsy — 2023-04-12
换了张新卡，重新运行了一下量化，不会出错了。
"""
    def read(text):  # (with the learned passes: a quiet section is read by neither)
        return [a.outcome for p in importer.parse_document(text, "doc.md", model=True)[0] for a in p.inv.attempts]

    assert read(doc) == ["worked"]
    form = "### Attempt N: <short description>\n\n- Tried: <what>\n- Result: <what happened>\n"
    assert read(form) == []


def test_a_short_chinese_post_saying_the_same_problem_happens_here_is_not_a_try_of_the_fix_above():
    doc = """# 量化失败：no kernel image is available

### alice — 2023-04-12
换了张新卡，重新运行了一下量化，不会出错了，应该是算力的问题。

### carol — 2023-04-12
P100 换了不同的 CUDA toolkit 仍然也不行

### bob — 2023-04-13
P100 有同样问题
"""
    got = [(a.outcome, a.who) for p in importer.parse_document(doc, "doc.md", model=True)[0] for a in p.inv.attempts]
    assert ("worked", "alice") in got and not any(w == "bob" for _o, w in got), got


@pytest.mark.parametrize("text, lang, want", [
    ("Es funktioniert leider nicht", "de", "failed"),  # German puts the negation after the verb
    ("hilft nicht", "de", "failed"),
    ("Jetzt funktioniert es", "de", "worked"),
    ("läuft jetzt, nicht mehr abgestürzt", "de", "worked"),  # (after a comma the negation is another clause's)
    ("学習を始めても治りません。", "ja", "failed"),
    ("試してみたけど上手くいきませんでした", "ja", "failed"),
    ("초기화 중 데드락", "ko", "failed"),
    ("원래 기기로 옮기면 잘 작동", "ko", "worked"),
    ("La clase se crea correctamente", "es", "worked"),
])
def test_outcome_words_read_in_each_languages_own_order_and_forms(text, lang, want):
    assert outcome_of(text, lang) == want


@pytest.mark.parametrize("said, tries", [
    # after "tried", each named thing is a try, the verdict at the end kept with the last
    ("I've tried sd_xl_base_1.0.safetensors and sd_xl_turbo_1.0.safetensors, using CPU and GPU, still the same.", 4),
    ("I tried batch size 8 and 16, still OOM.", 2),
    # the machine a bug happened on is no list of tries, nor are one try's values in brackets
    ("The bug happened where I used docker 20.10.7, nvidia driver 440.118.02 and toolkit 1.1.1, still the same.", 1),
    ("I tested 4 different seeds (None, 42, 12345, 0) before the adapter: the NaN came back every time.", 1),
    ("I tried CUDA 11.8 and the error persists.", 1),
])
def test_the_things_one_sentence_says_were_tried_are_a_try_each(said, tries):
    doc = f"# Black images from SDXL\n\nEvery image comes out black with the SDXL model on my RTX 3060.\n\n{said}\n"
    assert len(_attempts(doc)) == tries


def test_a_setting_put_away_with_the_slowdown_it_caused_is_a_failed_try_each():
    doc = """# launch script

```bash
#!/usr/bin/env bash
# export NCCL_ALGO=Tree # 8 nodes: slows the allreduce down
# export NCCL_PROTO=Simple # 8 nodes: slow-down of every step
export NCCL_IB_HCA=mlx5
torchrun --nproc-per-node 8 train.py
```
"""
    got = _attempts(doc)
    assert [(t.strip("`").split("=")[0], o) for t, o, _ in got] == [("export NCCL_ALGO", "failed"), ("export NCCL_PROTO", "failed")]


@pytest.mark.parametrize("said, want", [
    ("program slowed down", "failed"), ("slow-down of every step", "failed"), ("Slow down and read the log", None)])
def test_a_slowdown_is_a_failure_and_the_imperative_is_not(said, want):
    assert outcome_of(said, "en") == want


def test_a_row_under_an_attempt_and_result_header_is_a_try_whatever_words_its_result_uses():
    doc = """# CUDA error 802 in the VM

## What we tried

| Attempt | Result |
|---------|--------|
| Start the fabric manager | Fails, no NVSwitch found |
| `nvidia-smi -r` (GPU reset) | Fabric state goes back to "In Progress" |
"""
    got = _attempts(doc)
    assert [o for _, o, _ in got] == ["failed", "inconclusive"]
    assert "nvidia-smi -r" in got[1][0]


@pytest.mark.parametrize("heading, role", [
    ("Summary of Attempts", "tried"), ("History of attempts", "tried"), ("List of options", "options"),
    ("Summary", "lessons"), ("Key learnings from the debugging process", "lessons")])
def test_a_container_of_named_things_takes_the_role_of_what_it_holds(heading, role):
    assert heading_role(heading, "en") == role


def test_a_list_in_brackets_is_one_tries_values_not_tries():
    doc = """# NaN loss

Every run goes NaN after step 400.

I tested `init_seed` with four values (`None`, `42`, `12345`, `0`): NaN every time.
"""
    assert len(_attempts(doc)) == 1


def test_a_planned_check_under_a_bold_name_is_no_try_that_worked():
    doc = """# Eval crash on 8 GPUs

### Validation tests after the fix
1. **8-GPU validation:** Confirm the fix resolves the crash
2. **Single-GPU edge case:** Confirm no regression
"""
    assert [o for _, o, _ in _attempts(doc)] == []


def test_a_headerless_card_of_one_records_fields_gives_no_try_per_field():
    doc = """# Serve bring-up log

## Attempts

### R-019

**2026-09-24 00:58 — stage dummy**

| | |
|---|---|
| **Outcome** | **Passed**: server ready after 1537 s |
| **Duration** | still running, no crash |
| **Image** | `lab/serve:sm120-617d0cc` |
| **GPUs** | 67 GB used per card, power cap failed to apply |
"""
    titles = [t for t, _, _ in _attempts(doc)]
    assert not any(t.strip("* ").startswith(("Outcome", "Duration", "Image", "GPUs")) for t in titles), titles
    # (bold first cells under a header that names the columns are a table of runs: each row its own try)
    runs = "# Precision sweep\n\n" + ("| Setting | Result |\n|---|---|\n| **fp16** | OOM at step 3 |\n"
                                     "| **bf16** | works |\n| **fp8** | crashes on load |\n")
    assert len(_attempts(runs)) >= 3


@pytest.mark.parametrize("said, action", [
    ("Das reduziert die trainierbaren Parameter von 7 Milliarden auf 10 Millionen.", False),  # present: how it works
    ("LoRA trainiert keine neuen Vollmodelle, sondern kleine Adapter.", False),
    ("Das funktioniert, aber nur mit kleinen Batches.", False),  # how it went, not what was done
    ("Batch Size auf 4 reduziert: OOM bei Schritt 15.", True),  # a participle closing its clause: a note of a try
    ("Wir haben den Treiber gestern neu installiert.", True),
    ("Erst nachdem ich CUDA 12.1 installiert habe, lief es.", True),
    ("Der alte Kernel wurde aus dem Build entfernt.", True),
])
def test_a_german_verb_that_is_present_and_participle_alike_is_an_action_only_where_a_participle_stands(said, action):
    from dbglog.docreader.cues import table

    t = table("de")
    assert (t.has("tense.action", said) or t.has("forms.action", said)) is action


def test_a_scripts_header_of_notes_is_read_sentence_by_sentence_not_as_the_shebangs_output():
    doc = """#!/bin/bash
# Serve the 27B model on one 24 GB card.
#
# Settings that took a while to find, keep them:
#  - --max-num-batched-tokens 2048 beats 8192 here: bigger chunks raised the
#    activation peak and the server ran out of memory at start-up
#  - --gpu-memory-utilization 0.98 failed the free-memory check at start;
#    0.95 starts every time

PORT=${PORT:-8000}
# fits 64 requests at once
vllm serve my/model --port "$PORT" --max-num-batched-tokens 2048
# OOM at start-up on the 3090
# vllm serve my/model --port "$PORT" --max-num-batched-tokens 8192
"""
    units = segment(doc).units
    assert [(u.kind, u.first) for u in units if u.first == 0] == [("code", 0)]  # the shebang is code, not a command
    said = [(u.first, u.last) for u in units if u.kind == "sentence"]
    assert (4, 5) in said and (6, 7) in said  # each note its own sentence, on its lines
    assert not any(u.kind == "command" and u.first < 9 for u in units)


@pytest.mark.parametrize("doc, want", [
    ("""# Fine-tuning on a 16 GB card

## Lessons learned

**How we got the memory down:**

**Attempt 1:** batch 8, sequence 2048, no activation checkpointing
→ **OOM at step 2** (19 GB peak)

**Attempt 2:** batch 8, sequence 2048, activation checkpointing on
→ **Runs!** (11 GB peak)
""", [([7, 8], "failed"), ([10, 11], "worked")]),
    ("""# Feintuning auf einer 16-GB-Karte

## Was wir gelernt haben

**Versuch 1:** Batch 8, Sequenzlänge 2048, ohne Checkpointing
→ **OOM bei Schritt 2** (19 GB Peak)

**Versuch 2:** Batch 8, Sequenzlänge 2048, mit Checkpointing
→ **Erfolgreich!** (11 GB Peak)
""", [([5, 6], "failed"), ([8, 9], "worked")]),
])
def test_a_paragraph_labelled_with_a_tries_noun_and_number_is_a_try_and_the_arrow_under_it_its_result(doc, want):
    got = [(a.source_lines, a.outcome) for p in _read(doc) for a in p.inv.attempts]
    assert got == want, got


def test_a_japanese_sentence_of_two_versions_where_the_error_did_and_did_not_occur_is_two_tries():
    doc = """# ROCm でのメモリアクセスエラー

RX 7900 で PyTorch の学習中にメモリアクセスエラーが出る。

自分の環境で試した限りでは ROCm 6.2 では発生せず、ROCm 6.3 から発生するようになった。
"""
    got = [(a.source_lines, a.outcome) for p in _read(doc) for a in p.inv.attempts]
    assert got == [([5, 5], "worked"), ([5, 5], "failed")], got


def test_a_numbered_try_whose_sub_section_gives_its_result_is_one_try_with_its_sub_sections_as_its_account():
    doc = """# Throughput tuning log

Short runs of 5 steps each, one change at a time.

## Iter0: Baseline (FAILED — OOM)

### Settings
| Setting | Value |
|---|---|
| `GPU_MEMORY_FRACTION` | 0.70 |
| `MAX_SEQS` | 512 |

### Result: OOM in the backward pass
```
torch.OutOfMemoryError: Tried to allocate 4.21 GiB.
```

### Logs
Kept in `logs/iter0/`.

## Iter1: Smaller cache (SUCCESS)

### Changes from Iter0
| Setting | Iter0 | Iter1 |
|---|---|---|
| `GPU_MEMORY_FRACTION` | 0.70 | 0.45 |
| `MAX_SEQS` | 512 | 256 |

### Result: 5 of 5 steps completed
Step time 150 s on average.
"""
    got = [(a.source_lines, a.outcome, a.title) for p in _read(doc) for a in p.inv.attempts]
    assert [(lines, o) for lines, o, _ in got] == [([5, 20], "failed"), ([21, 31], "worked")], got
    assert got[0][2].startswith("Iter0") and got[1][2].startswith("Iter1")


def test_a_numbered_try_still_marked_in_progress_takes_the_verdict_of_its_result_when_it_helped_a_little():
    doc = """# Throughput tuning log

Short runs of 5 steps each, one change at a time.

## Iter3: Free the cache between phases (IN PROGRESS)

### Changes from Iter2
- `FREE_CACHE`: False → True

### Result: Minimal improvement
Step time 147.9 s against 149.9 s (-1.4 %).
"""
    assert [(a.source_lines, a.outcome) for p in _read(doc) for a in p.inv.attempts] == [([5, 12], "partial")]


def test_a_setup_script_kept_as_notes_reads_its_header_of_notes_sentence_by_sentence():
    doc = """#!/bin/bash
# Driver notes for the RTX 2060 box. The 535 driver from the distro
# never saw the card; the PPA's 580 driver did, after a reboot.
# Docker still could not select the GPU until the toolkit was set up.

set -xv
sudo apt-get autoremove --purge 'nvidia-*'
sudo apt-get install nvidia-driver-535 nvidia-settings
sudo add-apt-repository ppa:graphics-drivers/ppa
sudo apt install nvidia-driver-580 nvidia-settings
ubuntu-drivers devices
#driver   : nvidia-driver-535 - distro non-free recommended
nvidia-xconfig
# ERROR: Unable to find any GPUs in the system
docker run --rm --gpus all ubuntu nvidia-smi
# docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].
"""
    units = segment(doc).units
    assert [(u.first, u.last) for u in units if u.kind == "sentence"] == [(1, 1), (1, 2), (3, 3)], units
    assert units[0].kind == "code" and units[0].first == 0  # the shebang


def test_paragraphs_of_settings_each_over_its_measurement_are_one_run_each():
    # a benchmark journal: each paragraph is a run's settings, one per line, and the throughput it reached
    doc = """# Serving the 30B model on one card

## 1 card

219tok/s
temp 1
MTP 2
context 1.5M

```
Output token throughput (tok/s):         219.95
```

270tok/s
temp .6
MTP 5
context 1.5M

```
Output token throughput (tok/s):         270.71
```
"""
    got = [a.source_lines for p in _read(doc) for a in p.inv.attempts]
    assert [5, 8] in got and [14, 17] in got, got


def test_a_long_comment_over_a_setting_in_a_script_is_read_as_notes_not_as_the_settings_result():
    # nine lines of comment prose in a launch script, directly over the line it explains: the notes tell the tries
    doc = """#!/usr/bin/env bash
# 1 GPU: OK
python bench.py --gpus 1
# 2 GPUs: hangs at the first all-reduce
python bench.py --gpus 2
if [ "${CACHE:-0}" = "1" ]; then
  ARGS="--enable-prefix-caching ${ARGS}"
  # Prefix caching and a captured verify step do not mix on this path, and we
  # measured it twice before believing it. Eager mode is clean, and so is the
  # piecewise capture, which keeps the compiled graphs and leaves only the multi
  # query verify uncaptured. We tried the full capture with caching on a long
  # prompt and it fell from 132 to 38 tok/s, so that mode stays off here. We
  # also disabled the adaptive verify length and it still corrupted the cache
  # hit at one prompt length in every 128, so that was not the cause either.
  # The capture mode is fixed at boot, so this setting takes the trade. Keep
  # it this way until the residue bug is fixed upstream, whatever the cost.
  MODE=piecewise
fi
"""
    units = segment(doc).units
    assert [u.kind for u in units if 7 <= u.first <= 15] and all(
        u.kind in ("sentence", "code") for u in units if 7 <= u.first <= 15), [(u.kind, u.first) for u in units]
    assert any(a.source_lines[0] >= 8 for p in _read(doc) for a in p.inv.attempts)


def test_a_comment_sentence_that_opens_with_a_setting_it_talks_about_stays_prose():
    # "MODE=FULL as unsafe: ..." continues a sentence in a comment block; it is no command put away
    doc = """#!/usr/bin/env bash

# The capture mode is fixed at boot, so this setting takes the trade. Treat
# MODE=FULL_AND_PIECEWISE as unsafe: what it does is corrupt one prompt length
# in every 128, which a coarse sweep reads as a length threshold and misses.

python serve.py
"""
    units = segment(doc).units
    assert any(u.kind == "sentence" and "MODE=FULL_AND_PIECEWISE as unsafe" in u.text for u in units), \
        [(u.kind, u.first, u.text) for u in units]


def test_what_the_author_needed_to_do_is_a_try_that_worked_in_a_script_and_in_prose():
    script = """# llama.cpp, built for HIP on gfx1151
HIPCXX="$(hipconfig -l)/clang" HIP_PATH="$(hipconfig -R)" \\
  cmake -S . -B build -DGGML_HIP=ON -DAMDGPU_TARGETS=gfx1151 -DCMAKE_BUILD_TYPE=Release &&
  cmake --build build --config Release -- -j 16

# pytorch & ROCm
# I needed to install the nightly for ROCm 7.0 and set the following environment variable
export TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1
"""
    got = [(a.source_lines, a.outcome) for p in _read(script) for a in p.inv.attempts]
    assert ([6, 8], "worked") in got, got
    prose = """# Training hangs at the first all-reduce

Two nodes with 8 GPUs each hang at step 0.

## What we did

In the end we had to pin NCCL to 2.18.6 on both nodes to get past the first all-reduce.
"""
    got = [(a.source_lines, a.outcome) for p in _read(prose) for a in p.inv.attempts]
    assert ([7, 7], "worked") in got, got


def test_a_fence_of_cases_each_captioned_with_a_colon_over_what_it_gave_is_one_try_per_case():
    doc = """### bob — 2024-03-02

Same black output on my card. Every launch option I know, one at a time:

```
defaults :
runs, 140 s per image

--lowvram :
runs, 210 s per image

with --force-fp32 :
black images

with --force-fp32 --lowvram :
black images
```
"""
    got = {t.strip("`"): o for t, o, _ in _attempts(doc)}
    assert got == {"defaults": "worked", "--lowvram": "worked", "with --force-fp32": "failed",
                   "with --force-fp32 --lowvram": "failed"}


def test_a_fence_of_yaml_keys_over_their_values_is_no_list_of_cases():
    doc = """# Setup

```
model:
llama-3-8b

dtype:
bfloat16

device:
cuda
```
"""
    assert [u.kind for u in segment(doc).units if u.kind == "command"] == []
    assert _attempts(doc) == []


def test_items_under_a_bold_caption_of_failed_tries_are_each_a_failed_try_beside_the_fix_told_in_fields():
    doc = """# RX 6600 troubleshooting

## Issues

### 1. ✅ **RESOLVED: model loading crashes**

**Technical Details**:
- **Error**: `HIP error: out of memory` while the pipeline loads
- **Status**: ❌ **UNRESOLVED**

**What Fails**:
- ❌ Loading the pipeline onto the GPU
- ❌ Any generation on the GPU

**Attempted Solutions (All Failed)**:
- Smaller batch and attention slicing
- Loading the UNet and the VAE one at a time
- `HSA_ENABLE_SDMA=0` in the container

**FINAL FIX**: **matching ROCm versions**
- **Problem**: host ROCm 6.0 against the container's ROCm 6.3
- **Solution**: used the ROCm 6.0 image instead
- **Result**: loads and generates at 512x512
- **Status**: RESOLVED
"""
    from dbglog.docreader import structure

    d = segment(doc)
    listed = [s for s in structure.all_sections(structure.sections(d)) if s.head.text.startswith("Attempted")]
    assert structure.attempt_section(listed[0], d) is None  # the fields after the list are not the whole section's
    got = {t: o for t, o, _ in _attempts(doc)}
    assert got.get("Smaller batch and attention slicing") == "failed"
    assert got.get("Loading the UNet and the VAE one at a time") == "failed"
    assert sum(o == "failed" for o in got.values()) == 3
    assert got.get("used the ROCm 6.0 image instead") == "worked"


def test_commands_pasted_in_a_paragraph_each_with_a_chinese_verdict_after_it_are_a_try_each():
    doc = """# 量化模型输出异常

换了几种模型试了一下：

./llama-cli -m ./tiny.q4_0.gguf -p "hi" -n 32 正常
./llama-cli -m ./tiny.q4_0.gguf -p "hi" -n 32 -fa 直接异常结束
./llama-cli -m ./tiny.f16.gguf -p "hi" -n 32 乱码
"""
    tries = _attempts(doc)
    assert [o for _t, o, _w in tries] == ["worked", "failed", "failed"], tries
    assert all(t.strip("`").startswith("./llama-cli") for t, _o, _w in tries)


def test_a_chinese_caption_of_tries_without_a_subject_makes_its_items_tries():
    doc = """# 多卡推理输出乱码

### user — 2024-07-01

尝试过以下方法，都会出现乱码：
1. 原始模型使用项目自带的推理脚本；
2. 换成 vllm 推理；
3. 用 llama.cpp 跑 q4_k_m 量化模型；
"""
    tries = _attempts(doc)
    assert len(tries) == 3 and {o for _t, o, _w in tries} == {"failed"}, tries
    suggested = """# 多卡推理输出乱码

### helper — 2024-07-02

你可以尝试以下方法，都会有帮助：
1. 原始模型使用项目自带的推理脚本；
2. 用 llama.cpp 跑 q4_k_m 量化模型；
"""
    assert [o for _t, o, _w in _attempts(suggested)] != ["failed", "failed"]  # (advice: its items are no failed tries)


def test_a_block_opening_on_one_prompt_is_one_run_and_the_lines_it_printed_say_how_it_went():
    # (any program, not only the known tools: what follows the only prompt is its output, not more commands)
    doc = """# cuDNN handle fails inside the container

## Checking the rebuilt image

**Direct check of the library:**
```bash
$ singularity exec --nv env_cudnn896.sif python3 /data/probe_cudnn.py
✓ runtime 12.4
✓ cudnn 8.9.6
✓ handle created, cudnnCreate returned 0
```
"""
    got = _attempts(doc)
    assert len(got) == 1, got
    assert "probe_cudnn.py" in got[0][0] and got[0][1] == "worked"


def test_the_items_of_a_list_captioned_result_are_what_a_run_gave_not_tries():
    doc = """# Checkpoint conversion notes

## Second run

Converted the checkpoint again with the patched script:

```bash
python tools/convert.py --src ckpt/ --dst out/ --shard-size 2GB
```

Result:

- Converted shards: `12`.
- Rewrote the index file in place.
- Dropped the optimizer state from every shard.
- Loader warnings: none.
"""
    titles = [t for t, _, _ in _attempts(doc)]
    assert not any(("shards" in t or "index file" in t or "optimizer state" in t) for t in titles), titles


def test_a_first_reply_that_ran_two_requested_commands_is_two_looks_not_one():
    doc = """# Server ignores the second GPU

### dana — 2025-03-02
After upgrading to 0.9 the server only uses the CPU. The card is a Radeon RX 6800.

### lee — 2025-03-03
Can you please send the output of `rocm-smi --showproductname`?

Also, can you try starting it with the ROCm image and tell me if the GPU is picked up?

`gpuserve --image=registry.example/gpuserve-rocm --debug serve tiny-model`

### dana — 2025-03-04
- `rocm-smi --showproductname`:
```
GPU[0] : Card series: Navi 21 [Radeon RX 6800]
```
- `gpuserve --image=registry.example/gpuserve-rocm --debug serve tiny-model`:
```
loading tiny-model on rocm device 0
```
"""
    got = _attempts(doc)
    assert len(got) == 2, got
    assert any("rocm-smi" in t for t, _, _ in got) and any("gpuserve" in t for t, _, _ in got)


def test_a_caption_over_a_console_run_is_one_try_with_the_run_and_the_verdict_under_it():
    # (a blog's "did X:" / the session in a fence / "how it went": one try, not a caption, a run and a verdict apart)
    doc = """# NaN loss after the torch upgrade

## What I tried

Rebuilt the image with cuDNN 8.9.6:

```console
$ python train.py --config cfg/7b.yaml
step 1180 loss 2.31
step 1200 loss nan
```

Still NaN at the same step.

Turned off flash attention:

```console
$ python train.py --config cfg/7b.yaml --attn sdpa
step 1200 loss 2.29
step 5000 loss 1.87
```

That fixed it.

Pinned NCCL to 2.18:

```console
$ NCCL_DEBUG=INFO torchrun --nproc-per-node 8 train.py
RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1275, unhandled system error
```
"""
    got = _attempts(doc)
    assert [(t, o) for t, o, _w in got] == [("Rebuilt the image with cuDNN 8.9.6", "failed"),
                                          ("Turned off flash attention", "worked"),
                                          ("Pinned NCCL to 2.18", "failed")], got


def test_a_caption_that_points_at_its_run_is_titled_by_the_command():
    doc = """# Build fails on the cluster

## Attempts

Ran this:

```console
$ pip install flash-attn --no-build-isolation
```

It worked after that.
"""
    got = _attempts(doc)
    assert len(got) == 1 and got[0][1] == "worked" and "pip install flash-attn" in got[0][0], got


def test_settings_listed_line_by_line_under_a_verdict_caption_are_each_a_try_that_went_that_way():
    # (a reply's "Failing:" / "Working:" over flags given one per line, no bullets: a list of runs and their verdicts)
    doc = """# Server crashes on the completion endpoint

### reporter — 2025-07-03
After more tests it only crashes without one sampler:

Failing:
--samplers "top_k"
--samplers "top_k;min_p"
--sampling-seq "mt"

Working:
--samplers "dry"
--sampling-seq "dt"

### maintainer — 2025-07-03
Thanks, the next build should fix it.
"""
    got = [(t, o) for t, o, _w in _attempts(doc)]
    assert ('--samplers "top_k"', "failed") in got and ('--sampling-seq "mt"', "failed") in got, got
    assert ('--samplers "dry"', "worked") in got and ('--sampling-seq "dt"', "worked") in got, got
    assert len([1 for _t, o in got if o in ("worked", "failed")]) == 5, got


def test_a_caption_over_prose_lines_is_not_read_as_a_list():
    doc = """# Loss spikes

## Notes

Observed so far:
the loss spikes every 500 steps
and the spikes line up with checkpointing
"""
    from dbglog.docreader.units import segment
    assert not [u for u in segment(doc).units if u.kind == "heading" and u.level == 7]


@pytest.mark.parametrize("text, expected", [
    ("Thanks for the report. #578 should fix it.", None),
    ("That will solve this for you.", None),
    ("Should be resolved in the next release.", None),
    ("It should be fixed by now but it still crashes.", "failed"),
    ("That fixed it.", "worked"),
])
def test_a_verdict_foretold_is_an_expectation_not_how_a_try_went(text, expected):
    assert outcome_of(text, "en") == expected


def test_a_table_broken_down_by_class_is_what_one_evaluation_measured_not_runs_or_changes():
    doc = """# Detector precision drops after the loss change

## Train 3

Switched the box loss to GIoU.

| Class | AP@50 | Precision | Recall |
|---|---|---|---|
| dog | 0.29 | 0.41 | 0.52 |
| door | 0.34 | 0.57 | 0.40 |
| person | 0.52 | 0.48 | 0.66 |

| Class | Train 2 | Train 3 | Δ |
|---|---|---|---|
| dog | 0.2743 | 0.2994 | +9.1% |
| door | 0.3391 | 0.3520 | +3.8% |
"""
    got = _attempts(doc)
    assert not [t for t, _o, _w in got if t.split(":")[0].strip() in ("dog", "door", "person")], got


def test_a_heading_that_opens_with_its_verdict_is_a_try_that_went_that_way():
    doc = """# Multi-node training log

## Phase 11: eval subsets

#### Issue: jittery loss curves from random subsets

Random eval subsets gave inconsistent metrics from one evaluation to the next.

#### ✅ **Fixed: Deterministic Subset Selection**

```python
eval_dataset = eval_full.shuffle(seed=42).select(range(200))
```

**Result**: the same samples every evaluation, reproducible metrics.
"""
    got = _attempts(doc)
    assert [(t, o) for t, o, _w in got] == [("Fixed: Deterministic Subset Selection", "worked")], got


def test_a_caption_inside_a_section_that_says_how_its_try_went_does_not_hide_the_sections_result():
    doc = """# Multi-node training log

## Phase 12: checkpoints

#### ✅ **Fixed: Bypass FSDP when saving**

**The fix:**
```python
state = get_peft_model_state_dict(model)
```

**Impact:**
- checkpoint time: 30 min timeout -> 10 seconds

**Result**: checkpoints complete in 10 seconds with no gather.
"""
    got = _attempts(doc)
    assert len(got) == 1 and got[0][1] == "worked" and "Bypass FSDP" in got[0][0], got


def test_a_table_sweeping_one_value_row_by_row_is_one_run_not_a_try_per_row():
    doc = """# Detector precision

## Threshold sweep v1

Swept the post-NMS threshold on the Train 4 model.

| Threshold | mAP@50 | Precision | Recall | F1 |
|---|---|---|---|---|
| 0.10 | 0.6074 | 0.2746 | 0.7274 | 0.3987 |
| 0.15 | 0.6021 | 0.3038 | 0.7107 | 0.4256 |
| 0.20 | 0.5994 | 0.3269 | 0.7025 | 0.4462 |
| 0.25 | 0.5936 | 0.3462 | 0.6886 | 0.4607 |
"""
    got = _attempts(doc)
    assert not [t for t, _o, _w in got if t.startswith("Threshold 0.")], got
    # (a table of tries, numbered, with a result column, is still a try per row)
    tries = """# Kernel tuning

| # | what I tried | result |
|---|---|---|
| 1 | tile 32 -> 16 | slower, 15.4 ms |
| 2 | fp16 shared memory | slower, 16.3 ms |
| 3 | padding +8 | faster, 10.4 ms |
"""
    assert len(_attempts(tries)) == 3


def test_settings_named_as_the_subject_of_one_verdict_are_each_a_try_with_it():
    from dbglog.docreader.linker import split_several
    said = ("`NCCL_SHM_DISABLE`, `NCCL_P2P_DISABLE`, `NCCL_CUMEM_ENABLE=0` and `zero1` vs `ddp` change nothing: "
            "the collective is not implemented in this NCCL.")
    got = split_several(said, "failed")
    assert [d.split()[0] for d, _o in got] == ["`NCCL_SHM_DISABLE`", "`NCCL_P2P_DISABLE`", "`NCCL_CUMEM_ENABLE=0`",
                                                "`zero1`"], got
    assert {o for _d, o in got} == {"failed"} and "`ddp`" in got[-1][0]  # (a "vs" pair is one switch, one try)
    assert outcome_of("These flags change nothing.", "en") == "failed"


@pytest.mark.parametrize("heading, expected", [
    ("✅ Working: Basic XPU operations", "worked"), ("❌ Failing: model inference", "failed"),
    ("Testing: the XPU backend", None), ("Fix: use the eager path", None),
])
def test_a_heading_opening_with_a_participle_verdict_says_how_it_went(heading, expected):
    from dbglog.docreader.vocab import heading_outcome
    assert heading_outcome(heading.split(" ", 1)[1]) == expected


def test_a_tried_section_split_by_verdict_marks_gives_each_sub_section_its_marks_verdict():
    from dbglog.docreader.cues import context
    doc = """# Jetson PyTorch install status

## Installation Attempts

### ✅ Successfully Installed
- PyTorch 2.0.1 from PyPI - **no CUDA support**

### ❌ Issues Encountered
1. **NVIDIA wheel nv24.07** (`torch-2.4.0a0+nv24.07-cp310-linux_aarch64.whl`)

## ✅ Where it stands
- CPU-only inference works
"""
    d = segment(doc)
    roles = {u.text: r for u in d.units if u.kind == "heading" for r in [context(d).roles[u.id]]}
    assert roles["✅ Successfully Installed"] == "worked" and roles["❌ Issues Encountered"] == "failed", roles
    assert roles["✅ Where it stands"] is None  # (a marked section outside a section of tries: a status, not tries)


def test_one_setting_under_a_verdict_caption_keeps_its_verdict_and_a_sweep_measuring_tokens_is_one_run():
    doc = """# vLLM server crashes on the completions endpoint

## What I tried

Working:
--attention-backend TRITON_ATTN

`VLLM_USE_V1=0`, `--enforce-eager` and `--max-num-seqs 1` change nothing.

## Batch sweep

| max_num_seqs | tok/s | p99 latency |
|---|---|---|
| 1 | 41 | 120 ms |
| 8 | 230 | 180 ms |
| 32 | 610 | 390 ms |
"""
    got = [(t, o) for t, o, _w in _attempts(doc)]
    assert ("--attention-backend TRITON_ATTN", "worked") in got, got  # (the sentence below names tries of its own)
    assert len([t for t, _o in got if "change nothing" in t]) == 3, got
    assert [t for t, _o in got if "max_num_seqs" in t or t == "Batch sweep"] == ["Batch sweep"], got


def test_a_benchmark_tools_table_sweeping_one_setting_while_the_others_stay_put_is_one_run():
    doc = """# Vulkan prompt processing is slow

## Vulkan, no flash attention

Ran llama-sweep-bench on the 7900 XTX.

|    PP |     TG |   N_KV |   T_PP s | S_PP t/s |   T_TG s | S_TG t/s |
|-------|--------|--------|----------|----------|----------|----------|
|  1024 |    256 |      0 |    0.582 |  1759.21 |    2.841 |    90.11 |
|  1024 |    256 |   1024 |    0.611 |  1675.04 |    2.902 |    88.21 |
|  1024 |    256 |   2048 |    0.650 |  1575.38 |    2.967 |    86.28 |
|  1024 |    256 |   3072 |    0.688 |  1488.37 |    3.031 |    84.46 |
"""
    got = _attempts(doc)
    assert not [t for t, _o, _w in got if t.startswith("PP 1024")], got
    assert len(got) <= 1, got


def test_the_protocols_fields_labelled_in_chinese_are_read_as_fields():
    doc = """# Stage 3 GPU 利用率为 0

## 诊断过程

### 第二次假设（✅ 正确）

**假设**：代码从 tar 文件重复读取，而不是使用已解压的目录

**操作**：把读取改成已解压的目录，跑 I/O 对比脚本

**结果**：从 tar 读取 17.97 ms，从目录读取 3.66 ms（4.9x 加速）

**结论**：I/O 不是 258 秒的主要来源
"""
    parsed, _ = importer.parse_document(doc, "doc.md", model=False)
    tries = [a for p in parsed for a in p.inv.attempts]
    assert len(tries) == 1, [(a.title, a.did) for a in tries]
    a = tries[0]
    assert "tar" in a.hypothesis and "17.97" in a.result and "I/O" in a.conclusion, (a.hypothesis, a.result, a.conclusion)


def test_a_table_of_problems_met_and_their_fixes_is_a_try_per_row_but_a_guides_table_is_advice():
    met = """# CTranslate2 ROCm build

## Problems encountered and solutions

| # | Problem | Solution |
|---|---------|----------|
| 1 | Intel OpenMP `libiomp5` not found | `-DOPENMP_RUNTIME=NONE` |
| 2 | "Failed to find ROCm root directory" | `-DCMAKE_HIP_COMPILER_ROCM_ROOT=<path>` |
| 3 | DLL load fails at runtime | Add ROCm bin to `os.add_dll_directory()` (workaround) |
"""
    got = [(t, o) for t, o, _w in _attempts(met)]
    assert [o for _t, o in got] == ["worked", "worked", "worked"], got
    assert got[0][0] == "`-DOPENMP_RUNTIME=NONE`", got
    guide = met.replace("## Problems encountered and solutions", "## Troubleshooting")
    assert _attempts(guide) == []  # (the same table in a guide: what to do if, not what was done)


def test_a_setting_over_what_one_run_of_it_gave_is_one_try_and_a_capital_pass_is_its_verdict():
    doc = """# Guarded generation on the GB10

## Verification (guard=108GB)

1. `--max-tokens=8`:
   - output: `I once saw a UFO, maybe a plane`
   - peak sample log: `total_gpu_mem=6053MiB`
   - PASS (no kill)
2. `--max-tokens=16`:
   - output: `I once saw a UFO, just a bright light`
   - FAIL (killed at 110GB)
"""
    got = [(t, o) for t, o, _w in _attempts(doc)]
    assert got == [("`--max-tokens=8`", "worked"), ("`--max-tokens=16`", "failed")], got


def test_words_inside_a_code_span_are_the_programs_not_a_plan_of_the_author():
    from dbglog.docreader.cues import context, features
    d = segment("# Generation check\n\n## Runs\n\n- output: `We will meet at noon, maybe later`\n")
    u = next(x for x in d.units if x.kind == "sentence" and "output" in x.text)
    assert "future or plan words" not in features(u, context(d))


def test_a_table_is_judged_a_sweep_once_not_once_per_row(monkeypatch):
    from dbglog.docreader import linker
    calls = []
    real = linker._sweep
    monkeypatch.setattr(linker, "_sweep", lambda rows: calls.append(len(rows)) or real(rows))
    doc = "# Fixes\n\n## Problems encountered\n\n| Problem | Solution |\n|---|---|\n" + "\n".join(
        f"| error {i} | flag {i} |" for i in range(300)) + "\n"
    _read(doc)
    assert calls == [300]  # (once per table: per row, a table of thousands of rows read in quadratic time)


def test_a_table_sweeping_one_setting_for_each_value_of_another_is_one_run_not_a_try_per_row():
    doc = """# Video generation latency

## Four GPUs

| short side | steps | wall (s) |
|---|---|---|
| 720 | 40 | 61.02 |
| 720 | 20 | 31.40 |
| 360 | 40 | 18.33 |
| 360 | 30 | 13.91 |
| 360 | 20 | 9.87 |
| 360 | 10 | 5.12 |
"""
    got = _attempts(doc)
    assert not [t for t, _o, _w in got if t.startswith(("360", "720"))], got
    assert len(got) <= 1, got


def test_rows_of_two_settings_not_in_the_order_of_either_are_still_tries():
    doc = """# Training hangs at step 0

## What we tried

| nodes | tp | result |
|---|---|---|
| 2 | 8 | hangs |
| 1 | 8 | works |
| 2 | 4 | hangs |
| 1 | 4 | works |
"""
    assert len(_attempts(doc)) == 4


def test_a_try_told_with_later_in_the_past_is_a_try_and_later_in_the_future_is_a_plan():
    doc = """# Detections lose confidence on the A770

Running the detector in FP16 gave confidences near zero.

I later moved the runtime to the 2023.1 release, which resolved this issue.

I will try the FP32 model later.
"""
    got = _attempts(doc)
    assert [o for t, o, _w in got if "2023.1" in t] == ["worked"], got
    assert not [t for t, _o, _w in got if "FP32" in t], got


def test_tries_listed_under_an_item_that_captions_them_among_a_bugs_fields_are_a_try_each():
    doc = """# Field test learnings

## Issues

#### 1. Training killed while loading

- **Problem**: the trainer is killed before the first step
- **Configuration**:
  - Batch size: 16
  - Image size: 640
- **Mitigations Attempted**:
  - Batch size lowered to 8 → Still killed
  - Disable the image cache (`cache=False`) → Still killed
  - Workers reduced to 2 → Still killed
- **Conclusion**: 8 GB of shared memory is not enough to train here
"""
    got = _attempts(doc)
    tried = [(t, o) for t, o, _w in got if "Still killed" in t or "cache=False" in t or "Workers" in t or "8" in t]
    assert len([o for _t, o in tried if o == "failed"]) >= 3, got
    assert not [t for t, _o, _w in got if t.startswith(("- Batch size: 16", "Batch size: 16"))], got


def test_an_item_that_only_captions_its_nested_list_as_tried_makes_each_nested_item_a_try():
    doc = """# cuDNN 9 on the Jetson

The container ships cuDNN 9, and the wheel wants cuDNN 8.

- **Attempted Solutions**:
  1. Install cuDNN 8.9.7 next to cuDNN 9
  2. Create a symlink `libcudnn.so.8 -> libcudnn.so.9`
  3. Turn off benchmarking: `torch.backends.cudnn.benchmark = False`
- **Result**: none of these let training start
"""
    got = _attempts(doc)
    assert len([t for t, _o, _w in got if t.startswith(("Install cuDNN", "Create a symlink", "Turn off"))]) == 3, got


def test_my_solution_has_become_x_says_what_fixed_it():
    doc = """# Garbage output on two GPUs

### dana — 2024-01-10
Output is garbage since the update, on both cards.

### erik — 2024-01-16
My solution has become to downgrade to 0.1.17.
"""
    got = _attempts(doc)
    assert [o for t, o, _w in got if "0.1.17" in t] == ["worked"], got


def test_a_time_that_has_passed_since_tells_the_story_and_is_no_plan():
    doc = """# Arc A770 training

## Setup

The first driver install failed at the kernel check.

## Closing thoughts

My first experience with the extension left me thinking the card would not be usable for a while.

Several months later, my first tries last week had me thinking it would take even longer.

## Next steps

- Try the 6.5 kernel.
"""
    assert _steps(doc) == ["Try the 6.5 kernel."]


def test_a_fence_of_chinese_notes_between_commands_is_read_as_notes():
    doc = """# DeepSpeed 部署记录

```
服务器的显卡驱动太旧，只支持到 cuda 11.0，先看一下驱动版本
nvidia-smi

新建了一个环境，装了 torch 1.7.1，这个环境的 cuda 版本真的升级了
conda create -n dp_cuda11 python=3.8

在新环境里跑 deepspeed 还是报错了，说进程组不存在
网上说 torch 版本太低，至少要升级到 1.8
```
"""
    got = _attempts(doc)
    assert got, got
    assert any(o in ("worked", "failed") for _t, o, _w in got), got


def test_a_table_whose_first_column_names_the_changes_made_is_a_try_per_row():
    doc = """# Decode kernel port

We went through several changes and measured each one's average latency over 20 workloads:

| Change | Avg latency | Notes |
|---|---|---|
| First port, 32 splits | 121us | Baseline |
| NUM_SPLITS=8 | 170us | Too few blocks |
| NUM_SPLITS=32 | 117us | Best split |
| Reduce over head groups | 76us | Big gain |
"""
    got = _attempts(doc)
    assert len([t for t, _o, _w in got if t.startswith(("NUM_SPLITS", "Reduce over", "First port"))]) >= 3, got


def test_a_reply_that_only_says_the_bug_happens_here_too_is_no_try_in_any_wording():
    doc = """# DNN library is not found with jaxlib cuda111

### asker — 2020-11-20
Training fails with `RuntimeError: Unimplemented: DNN library is not found.` on jaxlib 0.1.57+cuda111.

### bob — 2020-11-22
I have the exact same issue here.

### carol — 2020-11-23
I am also having the same issue.

### erin — 2020-11-25
I installed cuDNN 8.0.5 by hand and pointed LD_LIBRARY_PATH at it, which fixed it.

### frank — 2020-11-26
P100 上也遇到了同样的问题。
"""
    parsed, _ = importer.parse_document(doc, "doc.md")
    who = {a.who for p in parsed for a in p.inv.attempts}
    assert "erin" in who and not who & {"bob", "carol", "frank"}, who


def test_the_same_problem_said_with_a_try_of_its_own_is_not_a_me_too():
    from dbglog.docreader.cues import me_too

    assert me_too("I am also having the same issue.") and me_too("Same here on H100") and me_too("同样的问题")
    assert not me_too("Upgraded to 2.4, same issue")
    assert not me_too("Same error, but with --enforce-eager it works")
    assert not me_too("Same for me, downgrading to 2.3 fixed it")
    assert me_too("i have the same error, how to solving the error?")


def test_a_table_of_approaches_and_their_status_under_a_comparison_heading_is_the_tries_not_key_differences():
    doc = """# MIOpen hangs on RDNA1

## Comparison

| Approach | GPU Used | Speed | Status |
|----------|----------|-------|--------|
| **Environment variables** | no | - | Failed |
| **LD_PRELOAD** | no | - | Failed |
| **Kernel parameter** | partly | 1x | Partial (MIOpen overrides it) |

## Key differences

| Factor | Working | Broken |
|---|---|---|
| GPU | gfx1030 | gfx1010 |
"""
    parsed, _ = importer.parse_document(doc, "doc.md", model=False)
    inv = parsed[0].inv
    assert [(a.title, a.outcome) for a in inv.attempts] == [
        ("Environment variables", "failed"), ("LD_PRELOAD", "failed"), ("Kernel parameter", "partial")]
    assert [d.factor for d in inv.differences] == ["GPU"]


def test_in_a_script_that_logs_runs_a_command_under_a_remark_was_run_too():
    doc = """# Max batch size per setup on 2x A5000

```bash
# Fine.
python train.py --batch_size 48 --train_type lora
# Why is the bs so much lower for qlora than for lora?
python train.py --batch_size 24 --train_type qlora
# Extremely slow.
python train.py --batch_size 96 --train_type lora --use_cpu_offload True
# Fine.
python train.py --batch_size 4 --train_type lora --use_gradient_checkpointing False
# OOM at the first step.
python train.py --batch_size 8 --train_type lora --use_gradient_checkpointing False
```
"""
    parsed, _ = importer.parse_document(doc, "doc.md", model=False)
    got = [(a.source_lines, a.outcome) for p in parsed for a in p.inv.attempts]
    assert ([6, 7], "inconclusive") in got and len(got) == 5, got
    titles = [a.title for p in parsed for a in p.inv.attempts if a.source_lines == [6, 7]]
    assert titles and "Why is the bs" not in titles[0], titles  # (the command is the try; the remark is its result)
    # (a how-to's commands under instructions are not runs, however many of them there are)
    howto = doc.replace("# Why is the bs so much lower for qlora than for lora?", "# Restart the shell to apply it")
    parsed, _ = importer.parse_document(howto, "doc.md", model=False)
    assert [6, 7] not in [a.source_lines for p in parsed for a in p.inv.attempts]


def test_a_heading_of_thirty_thousand_spaces_before_a_bracket_reads_in_linear_time():
    import time

    from dbglog.docreader.structure import _field_heading_value

    t = time.process_time()
    assert _field_heading_value("Results" + " " * 30_000 + "x") == (None, "")
    assert _field_heading_value("Results (excerpt)")[0] is not None
    assert time.process_time() - t < 1.0  # (the trailing-bracket pattern once tried every space: 2 s here)


@pytest.mark.parametrize("caption, items", [
    ("Things tried:", ["fixed the batch size", "kept the effective batch with gradient accumulation",
                       "wrapped validation in `torch.no_grad()`"]),
    ("시도한 방법:", ["배치 크기 고정", "gradient accumulation으로 유효 배치 유지", "검증 단계 `torch.no_grad()` 적용"]),
])
def test_a_caption_line_that_names_tries_without_a_person_makes_each_item_below_it_a_try(caption, items):
    doc = "# OOM with memory left\n\nTraining dies with OOM although nvidia-smi shows free memory.\n\n" + caption \
        + "\n\n" + "".join(f"- {t}\n" for t in items)
    got = [t for t, _, _ in _attempts(doc)]
    assert got[-3:] == items


def test_a_heading_of_solutions_opened_by_a_verb_of_trying_names_tries_in_german_too():
    from dbglog.docreader.cues import heading_role
    assert heading_role("Versuchte Lösungen", "de") == "tried"
    assert heading_role("Lösungen", "de") == "options"  # (solutions alone are still options)


def test_a_table_of_a_runs_progress_by_windows_of_steps_is_one_run_not_a_try_per_window():
    doc = """# GRPO on a 16 GB card

## Full run, 501 steps

Ran the full math run for 501 steps, exit 0.

| steps | reward | rollout correct | KL | mean len | s/step |
|---|---|---|---|---|---|
| 0–49 | 0.275 | 0.239 | 0.000 | 473 | 179 |
| 50–99 | 0.317 | 0.277 | 0.001 | 467 | 182 |
| 100–149 | 0.341 | 0.296 | 0.003 | 458 | 183 |
| 150–199 | 0.360 | 0.306 | 0.007 | 445 | 171 |
| 200 | 0.344 | 0.250 | 0.136 | 351 | 162 |
"""
    got = [t for t, _o, _w in _attempts(doc)]
    assert len(got) <= 2 and not [t for t in got if t[:1].isdigit()], got
    # (a table of a procedure's steps, each naming what was done, is still a try per row)
    steps = """# Driver repair

| step | action | result |
|---|---|---|
| 1 | reinstalled the driver | still fails |
| 2 | disabled secure boot | still fails |
| 3 | removed nouveau | works |
"""
    assert len(_attempts(steps)) == 3


def test_fixes_told_as_done_under_a_heading_of_causes_are_tries_not_options():
    doc = """# Custom node troubleshooting log

## Root Causes Discovered

### 1. **Missing Utility Files** (First Issue)
The repository was missing `drop_path.py` and `layer_scale.py`.

**Solution:** Created these files with implementations from standard vision transformer libraries.

### 2. **Wrong Logger Import** (Second Issue)
`vision_transformer.py` imports a logger that only exists in training.

**Solution:** Changed to standard Python logging.

### 3. **Outdated gsplat Package** (Third Issue)
The package was 0.1.11, but the code needs 1.5.3.

**Solution:** Upgraded gsplat with `pip install --upgrade gsplat`.
"""
    got = [t for t, _o, _w in _attempts(doc)]
    assert len(got) == 3 and all(("Created", "Changed", "Upgraded")[k] in t or ("Missing", "Logger", "gsplat")[k] in t
                                 for k, t in enumerate(got)), got
    # (each keeps its action beside the heading that names it: what `tried` matches an agent's question against)
    assert "pip install --upgrade gsplat" in [a for p in _read(doc) for a in p.inv.attempts][2].did
    # (the same heading over fixes offered, not done, is still a list of options)
    offered = doc.replace("Created these", "Create these").replace("Changed to", "Change to").replace(
        "Upgraded gsplat", "Upgrade gsplat")
    assert _attempts(offered) == []


def test_a_heading_about_gpu_usage_is_not_a_section_of_usage_instructions():
    from dbglog.docreader.cues import heading_role
    assert heading_role("Checking GPU Usage", "en") is None
    assert heading_role("Limiting TensorFlow memory usage", "en") is None
    assert heading_role("Usage", "en") == heading_role("Example usage", "en") == "boilerplate"
    doc = """# RX 7600 on Ubuntu

## Checking GPU Usage

I ran glxgears with vsync off: the GPU shows activity but the fan is still idle.
"""
    parsed, _ = importer.parse_document(doc, "doc.md")  # (as import reads it, its learned passes on)
    # (the try under it is read, not dropped as instructions; its outcome is the learned pass's to say: "shows
    # activity but the fan is still idle" was failed by the outcome model fitted on 2,066 tries, open by the one
    # refitted on 3,172)
    assert len([a for p in parsed for a in p.inv.attempts if a.title.startswith("I ran glxgears")]) == 1



def test_a_try_right_above_the_error_it_printed_failed():
    doc = """# ROCm on kernel 7.0

The card is not seen by ROCm after the kernel upgrade.

## Tuesday

I rebuilt the driver with DKMS.

```
Error! Bad return status for module build on kernel: 7.0.0-31-generic (x86_64)
```

## Wednesday

I reinstalled the same driver from the vendor's repository.

```
Reading package lists... Done
```
"""
    parsed, _ = importer.parse_document(doc, "doc.md")
    tries = [a for p in parsed for a in p.inv.attempts]
    assert [(a.outcome, a.source_lines) for a in tries][0] == ("failed", [7, 11])
    assert "Bad return status" in tries[0].result
    # (a block of output that opens with no error says nothing of how it went)
    assert [a.outcome for a in tries][1:] in ([], ["inconclusive"])


@pytest.mark.parametrize("heading, lang", [("Actions taken", "en"), ("Actions Effectuées", "fr"),
                                           ("Acciones realizadas", "es"), ("Durchgeführte Maßnahmen", "de"),
                                           ("Ações realizadas", "pt")])
def test_a_heading_of_actions_performed_names_tries_in_each_language(heading, lang):
    assert heading_role(heading, lang) == "tried"


def test_a_japanese_note_closing_on_its_verb_noun_is_a_try_done():
    doc = """# gfx900 で Ollama が CPU に落ちる

## 11.2 復旧

- `build-ollama-gfx900.sh` を再実行し、`build-gfx900/lib/ollama` を再生成。
- `libggml-hip.so` を含む backend ライブラリ群の存在を確認。
"""
    assert len(_attempts(doc)) == 2


def test_a_chinese_sentence_of_what_came_after_a_change_is_a_try_with_its_result():
    doc = """# 语音识别模型量化

## 优化效果

* 使用ORT量化后，模型测试结果WER：6.06%，耗时：Encoder 7.34ms，Decoder 3.32ms。
* 使用PPQ量化后，模型测试结果WER：5.71%，耗时：Encoder 12.14ms，Decoder 2.68ms。
"""
    assert len(_attempts(doc)) == 2


def test_a_row_is_titled_by_its_names_and_by_its_values_with_their_columns():
    doc = """# HeCBench porting notes

## Benchmarks that fail in the log

| Benchmark | ROCm | flash attn | Result |
|---|---|---|---|
| allreduce | 6.0 | on | MPI CUDA version ran, fails on AMD |
| bscan | 6.2 | off | verify = FAIL |
"""
    assert [t for t, _o, _w in _attempts(doc)] == ["allreduce · ROCm 6.0 · flash attn on", "bscan · ROCm 6.2 · flash attn off"]


def test_a_workaround_column_is_what_was_tried_and_only_whole_words_name_a_result_column():
    from dbglog.docreader.cues import column_roles

    assert column_roles(("Workaround", "Result")) == (0, 1)
    assert column_roles(("Framework", "Version", "Status")) == (0, 2)  # ("Framework" holds no "works")
    assert column_roles(("Notebook", "Outcome")) == (0, 1)  # (nor "Notebook" an "ok")
    assert column_roles(("Prefix", "Change", "Result")) == (1, 2)  # (nor "Prefix" a "fix")
    doc = """# Render loop panics under load

**Workarounds tried.**

| Workaround | Result |
|---|---|
| Read back f32 instead of f16 | Helps in isolation; does not eliminate under load. |
| Move the colour conversion to the CPU | Does not eliminate. |
| Tile the upscaler internally (640px) | Still fails on the largest frames. |
"""
    got = [a.source_lines for p in _read(doc) for a in p.inv.attempts]
    assert got == [[7, 7], [8, 8], [9, 9]]


def test_a_commands_comment_that_is_the_systems_error_makes_it_a_failed_try():
    doc = """# NCCL over RDMA in the pod

### Raising the memlock limit

```bash
ulimit -l unlimited              # Operation not permitted
prlimit --memlock=unlimited      # Operation not permitted
ls /dev/infiniband               # Permission denied
```
"""
    got = [(a.source_lines, a.outcome) for p in _read(doc) for a in p.inv.attempts]
    assert got == [([6, 6], "failed"), ([7, 7], "failed"), ([8, 8], "failed")]


def test_the_shells_error_printed_below_a_try_is_its_failed_result():
    from dbglog.docreader.units import ERROR_LINE

    assert ERROR_LINE.match("bash: /opt/tools/env-manager.sh: No such file or directory")
    assert ERROR_LINE.match("sudo: env-manager.sh: command not found")
    assert not ERROR_LINE.match("The file was not there, so we copied it")


@pytest.mark.parametrize("text, lang, want", [
    ("helm 업데이트(@2.5.13)도 진행 -> 해결되지 않음", "ko", "failed"),
    ("드라이버를 다시 설치했지만 해결 안 됨", "ko", "failed"),
    ("드라이버를 다시 설치했더니 해결됨", "ko", "worked"),
    ("ドライバを入れ直したが解決しなかった", "ja", "failed"),
    ("ドライバを入れ直したら解決した", "ja", "worked"),
])
def test_japanese_and_korean_negate_a_success_after_its_verb(text, lang, want):
    assert outcome_of(text, lang) == want


def test_counters_repeated_in_one_listing_a_program_printed_are_rows_not_a_case_and_its_result():
    doc = """# Test suite fails after the kernel update

The test run has lots of fails:

    1  /3   Test #1  : CudaTest.allocTest                 Passed      0.08
    2  /3   Test #2  : CudaTest.randTest                  ***Failed   0.08
    1  /2   Test #1  : ThrustTest.bufTest                 Child aborted***Exception:   0.25
    2  /2   Test #2  : ThrustTest.sortTest                Child aborted***Exception:   0.21

Rebooting into the older kernel brought the driver back.
"""
    got = [(a.source_lines, a.title) for p in _read(doc) for a in p.inv.attempts]
    assert not any(lines[0] in (5, 6) for lines, _ in got), got


@pytest.mark.parametrize("problem, fix", [("Problem 1", "Solution"), ("Issue 2", "Fix"), ("문제 1", "해결 방법")])
def test_a_problem_entrys_try_is_titled_by_the_fix_said_under_it(problem, fix):
    doc = f"""# llama.cpp server dies on the GPU

## {problem}: CUDA kernel mul_mat_vec has no device code

{fix}: rebuilt with CMAKE_CUDA_ARCHITECTURES=61 and it works now
"""
    [a] = [a for p in _read(doc) for a in p.inv.attempts]
    assert a.title.startswith("rebuilt with CMAKE_CUDA_ARCHITECTURES=61"), a.title


def test_a_fix_written_in_a_field_of_its_own_takes_the_verdict_written_beside_it():
    # "solution : X the problem is solved": no result line of its own carries the verdict, the field's text does
    doc = """# cuDNN mismatch after the upgrade

error 2:

Loaded runtime CuDNN library: 5005 but source was compiled with 5110.

solution : update the cudnn to 5.1 the problem is solved.
"""
    got = [(a.title, a.outcome) for p in _read(doc) for a in p.inv.attempts]
    assert ("update the cudnn to 5.1 the problem is solved.", "worked") in got, got


def test_a_tries_own_sentence_and_the_next_one_in_its_item_say_how_it_went():
    # "Tried X; haven't been able to ..." is a try with its verdict in its own sentence; "Set X. I have not seen the
    # OOM since." is a try and its result in one list item ("I" alone is no new doing there)
    doc = """# vLLM OOM on the 4090 box

## What I tried

1. Set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`. I have not seen the OOM since.
2. Tried `--enforce-eager`; haven't been able to eliminate the error with it alone.
"""
    got = [(a.source_lines, a.outcome) for p in _read(doc) for a in p.inv.attempts]
    assert got == [([5, 5], "worked"), ([6, 6], "failed")], got


def test_a_linked_page_title_with_middle_dots_does_not_make_a_try_a_metadata_line():
    # (GitHub titles its pages "error: ... · Issue #119 · owner/repo"; a link's text is that title, not "a · b · c")
    doc = """# 编译 instant-ngp 失败

环境：ubuntu 22.04, CUDA 11.8

## 尝试

根据这篇把 gcc/g++ 降级了，还是不行 [error: parameter packs not expanded · Issue #119 · NVlabs/instant-ngp](https://github.com/NVlabs/instant-ngp/issues/119)
"""
    assert [(t[:17], o) for t, o, _ in _attempts(doc)] == [("根据这篇把 gcc/g++ 降级了", "failed")]
    meta = segment("# Notes\n\nalice · 2024-03-01 · 3 min read\n")
    from dbglog.docreader.cues import context, features
    line = next(u for u in meta.units if u.kind == "sentence" and "alice" in u.text)
    assert "a metadata line (a · b · c)" in features(line, context(meta))


ENTRY_LOG = """# Debug log: serving issues

1. Cannot see CUDA ✅
- **Problem:** `RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED`
- **Solution:** `export CUDA_VISIBLE_DEVICES=0` on the H100 nodes.
- **Status:** solved.

2. Wrong environment ✅
- **Problem:** mixed up two virtual environments.
- **Solution:** `source vllm-env/bin/activate` before the server starts.
- **Status:** solved.

3. Build killed on the login node ✅
- **Problem:** the build exits with code -9 on the login node.
- **Solution:** requested a compute node and built vLLM there.
- **Status:** solved.
"""


def test_an_issue_logs_own_entries_are_not_a_legend_of_their_fields():
    # (each entry's "- **Problem** / - **Solution** / - **Status**" list is followed by the others: that made every
    # entry but the last two "a legend", template text, and its fix was never read)
    titles = [t for t, _, _ in _attempts(ENTRY_LOG)]
    for fix in ("CUDA_VISIBLE_DEVICES=0", "vllm-env/bin/activate", "requested a compute node"):
        assert any(fix in t for t in titles), (fix, titles)


def test_the_status_of_each_entry_in_a_log_of_issues_is_how_its_fix_went_not_the_investigations_status():
    parsed = _read(ENTRY_LOG)
    assert [(a.outcome, a.result) for p in parsed for a in p.inv.attempts] == [("worked", "solved.")] * 3
    assert parsed[0].inv.status == "open" and not parsed[0].inv.symptom


def test_a_command_under_its_caption_with_the_output_in_a_comment_is_a_look():
    doc = """# ROCm sees the wrong architecture

### Verification commands
```bash
# ROCm info
rocminfo | grep -E "Name:|ISA"
# Output: Name: gfx1030

# PyTorch detection
python -c "import torch; print(torch.cuda.get_device_properties(0))"
# Output: gcnArchName='gfx1030'
```
"""
    got = [(t, o) for t, o, _ in _attempts(doc)]
    assert got == [('`rocminfo | grep -E "Name:|ISA"`', "inconclusive"),
                   ('`python -c "import torch; print(torch.cuda.get_device_properties(0))"`', "inconclusive")]


def test_a_fix_field_whose_text_reads_like_a_verdict_is_titled_by_that_text_not_by_its_label():
    # ("**Solution:** built on a compute node instead." read as "Solution: <it built>": the try was titled "Solution")
    doc = ENTRY_LOG.replace("requested a compute node and built vLLM there.", "built on a compute node instead.")
    assert [(t, o) for t, o, _ in _attempts(doc)][2:] == [("built on a compute node instead.", "worked")]
    assert [t for t, _, _ in _attempts(doc.replace("**Solution:** built", "**Fix:** rebuilt"))][2:] == \
        ["rebuilt on a compute node instead."]


def test_a_sections_first_paragraph_after_entries_listed_under_the_title_is_no_problem_statement():
    # (with no paragraph under the title, the first section's first paragraph states the problem -- unless the story
    # began before that section: here a list of entries did, and the last try was read as the problem)
    doc = """# Bring-up log

1. Workers cannot see CUDA ✅
- **Problem:** `RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED`
- **Solution:** exported `CUDA_VISIBLE_DEVICES=0,1,2,3` in the job script.
- **Status:** solved.

### Driver

Reinstalling the driver did not yield any improvement.
"""
    assert ("Reinstalling the driver did not yield any improvement.", "failed") in \
        [(t, o) for t, o, _ in _attempts(doc)]
    # (a section first under the title still opens with the problem)
    plain = "# Conv2d segfaults\n\n## Status\n\nPyTorch 2.3 on gfx1010: every Conv2d forward segfaults.\n"
    assert _attempts(plain) == []


def test_an_issue_forms_checklist_gives_no_next_steps_and_a_plan_list_still_does():
    doc = """# [Bug] OOM while quantizing a 70B model

### alice — 2024-06-18

Checklist

- [X] 1. I have searched related issues but cannot get the expected help.
- [ ] 2. The bug has not been fixed in the latest version.

Describe the bug

Quantizing runs out of memory at layer 40.

## Next steps

- [ ] Lower the calibration samples to 64.
- [ ] Try the fp8 path instead.
"""
    (p,), _ = importer.parse_document(doc, "issue.md")
    assert [s.text for s in p.inv.next_steps] == ["Lower the calibration samples to 64.", "Try the fp8 path instead."]


def test_a_command_pasted_in_a_paragraph_and_continued_with_backslashes_is_one_command():
    # (a reply's server command, one flag per line, was read as eighteen tries, one per flag)
    doc = """### ana — 2025-06-10

Two 3090s here, built with CUDA on.

started with:
./bin/llama-server -m model.gguf \\
    -ctk q8_0 \\
    -fa \\
    --n-gpu-layers 63 \\
    --no-mmap
"""
    units = segment(doc).units
    cmd = [u for u in units if u.kind == "command"]
    assert [(u.first + 1, u.last + 1) for u in cmd] == [(6, 10)]
    assert cmd[0].text == "./bin/llama-server -m model.gguf -ctk q8_0 -fa --n-gpu-layers 63 --no-mmap"
    assert not any(u.kind == "sentence" and "--n-gpu-layers" in u.text for u in units)
    assert len(_attempts(doc)) <= 1


def test_an_indented_block_of_a_persons_sentences_is_read_as_sentences_not_code():
    # (a reply's last lines indented by accident became a code block, never read)
    doc = """### ana — 2025-06-10

It still drops prompt speed with the BLAS build.

    BUT, if i build it without BLAS and with CUDA only
    
    no prompt speed drop anymore, but no generation speedup either.
"""
    units = segment(doc).units
    said = [u.text for u in units if u.kind == "sentence"]
    assert "no prompt speed drop anymore, but no generation speedup either." in said
    assert not any(u.kind == "code" for u in units)
    code = doc.replace("    BUT, if i build", "    cmake -B build").replace("    no prompt", "    make -j8 # no prompt")
    assert any(u.kind in ("code", "command") for u in segment(code).units)


def test_cases_line_by_line_each_with_its_verdict_mark_are_tries_with_their_own_outcomes():
    # (a caption over "q8_0 / q4_0  ❌ crashes" lines was one sentence; read as items, a sentence after them that
    # says "runs without problems ... on both machines" gave every case its verdict)
    doc = """# Fatal error over RPC with some KV cache types

With flash-attention on and RPC offload, some cache type combinations crash the RPC server.

Tested combinations over RPC:
q4_0 / q4_0  ✅ works
q8_0 / q8_0  ✅ works
q8_0 / q4_0  ❌ crashes
q5_0 / q5_0  ❌ crashes

I verified that the same model and config runs without problems locally on both machines.
"""
    units = segment(doc).units
    cases = [u for u in units if "q" in u.text and "/" in u.text]
    assert [(u.first + 1, u.last + 1, u.item >= 0) for u in cases] == [(6, 6, True), (7, 7, True), (8, 8, True),
                                                                      (9, 9, True)]
    got = [(" ".join(t.split()[:3]), o) for t, o, _ in _attempts(doc) if "/" in t]
    assert got == [("q4_0 / q4_0", "worked"), ("q8_0 / q8_0", "worked"), ("q8_0 / q4_0", "failed"),
                   ("q5_0 / q5_0", "failed")]


def test_a_sentence_cut_at_a_labelled_line_keeps_only_its_own_words():
    # (the cut took whole lines: the piece before the label repeated the sentence that ended earlier on its line)
    doc = "# Notes\n\nWe moved to the new allocator and reran it. The second run\nResult: still OOM at step 40.\n"
    said = [u.text for u in segment(doc).units if u.kind == "sentence"]
    assert said == ["We moved to the new allocator and reran it.", "The second run", "Result: still OOM at step 40."]


def test_a_version_series_at_the_start_of_a_wrapped_line_carries_on_the_sentence():
    doc = ("# Notes\n\nThe backend dispatches compute capability\n10.x/11.x to the upstream kernels, with 128x128 tiles. "
           "The missing work is not a build flag.\n")
    said = [u.text for u in segment(doc).units if u.kind == "sentence"]
    assert said == ["The backend dispatches compute capability 10.x/11.x to the upstream kernels, with 128x128 tiles.",
                    "The missing work is not a build flag."]


def test_a_sentence_does_not_end_inside_a_code_span():
    doc = "# Log\n\nWith the fix live (`bootstrap inputs: ... Requested port=None` confirms it) the run started. It passed.\n"
    said = [u.text for u in segment(doc).units if u.kind == "sentence"]
    assert said == ["With the fix live (`bootstrap inputs: ... Requested port=None` confirms it) the run started.",
                    "It passed."]


BISECT_SESSION = """# Memory use doubled since May

I bisected it between the two releases:

```
D:\\src\\llama.cpp>git bisect start
status: waiting for both good and bad commits

D:\\src\\llama.cpp>git bisect good d894f352bf433157232dc8dc54eacd50014e898e
status: waiting for bad commit, 1 good commit known

D:\\src\\llama.cpp>git bisect bad f8ec8877b75774fc6c47559d529dac423877bcad
Bisecting: 385 revisions left to test after this (roughly 9 steps)
[d2c898f746a527f09effb061829e68b2e1812a28] ci : tmp disable gguf-split (#6983)

D:\\src\\llama.cpp>git bisect good d2c898f746a527f09effb061829e68b2e1812a28
Bisecting: 192 revisions left to test after this (roughly 8 steps)
```
"""


def test_a_windows_prompt_opens_each_command_of_a_console_session():
    cmds = [(u.first + 1, u.last + 1, u.text) for u in segment(BISECT_SESSION).units if u.kind == "command"]
    assert [c[2].split()[2] for c in cmds] == ["start", "good", "bad", "good"]
    assert cmds[2][:2] == (12, 14)  # (the command and what it printed)


@pytest.mark.parametrize("unix", [False, True])
def test_each_commit_a_bisection_marks_is_a_try_that_passed_or_failed(unix):
    doc = BISECT_SESSION.replace("D:\\\\src\\\\llama.cpp>", "$ ") if unix else BISECT_SESSION
    for rules_only in (True, False):
        kw = {"model": False} if rules_only else {}
        (p,), _ = importer.parse_document(doc, "doc.md", **kw)
        got = [(a.did.strip("`").split()[2], a.outcome) for a in p.inv.attempts]
        assert got == [("good", "worked"), ("bad", "failed"), ("good", "worked")], (rules_only, got)


def test_a_posts_own_section_heading_keeps_its_author_and_a_heading_after_the_last_post_ends_the_thread():
    # (a first post's "## The defect" section was read as the thread's end: its sentences had no author)
    doc = """# Pinned memory OOM on WSL

### dan — 2025-05-01

## The defect

Training with gradient checkpointing set to "unsloth" dies with a pinned-memory OOM.

### eve — 2025-05-02

I switched use_gradient_checkpointing to True and it trains.

## Summary

The fix is to turn the offloaded checkpointing off on WSL.
"""
    by_text = {u.text: u.author for u in segment(doc).units if u.kind == "sentence"}
    assert by_text['Training with gradient checkpointing set to "unsloth" dies with a pinned-memory OOM.'] == "dan"
    assert by_text["I switched use_gradient_checkpointing to True and it trains."] == "eve"
    assert by_text["The fix is to turn the offloaded checkpointing off on WSL."] == ""
    # (a last post that opens with its own section heading keeps its author too)
    last = doc.replace("I switched use_gradient_checkpointing", "## What I did\n\nI switched use_gradient_checkpointing")
    last = last[:last.index("## Summary")]
    by_text = {u.text: u.author for u in segment(last).units if u.kind == "sentence"}
    assert by_text["I switched use_gradient_checkpointing to True and it trains."] == "eve"


def test_a_programs_output_pasted_into_a_paragraph_after_the_writers_lines_is_one_code_unit():
    # (a reply's log, pasted without a fence, was cut into sentences: "@hiyouga /…/optimization.py:411: FutureWarning")
    doc = """### li — 2023-09-18

With the longer timeout it still fails; worker1 stops at 47% of the tokenizing.
@maintainer
/home/u/envs/x/lib/python3.10/site-packages/transformers/optimization.py:411: FutureWarning: This AdamW is deprecated
warnings.warn(
[2023-09-18 08:36:08,272] [INFO] [logging.py:96:log_dist] [Rank 0] DeepSpeed info: version=0.10.1
File "/home/u/src/train_bash.py", line 14, in
main()
"""
    units = segment(doc).units
    code = [(u.first + 1, u.last + 1) for u in units if u.kind == "code"]
    said = [u.text for u in units if u.kind == "sentence"]
    assert code == [(5, 9)]
    assert said == ["With the longer timeout it still fails; worker1 stops at 47% of the tokenizing.", "@maintainer"]


COMMENTED_LOG = """# Soak log of the stream-pool branch
#
# Older entries are kept below for reference.

# Soak run 12 - Tue Mar 3 09:10 2026
# Correctness: 18/20 PASS (the attention block fails now and then at 4 threads)
#   - every single op PASS
# Stress test: CRASHED (SIGBUS, the test binary was stale)
# Branch head: 5d1e09a

# Soak run 11 - Mon Mar 2 17:40 2026
# Correctness: 20/20 PASS
# Stress test: PASS
"""


def test_a_note_with_a_hash_before_every_line_reads_each_block_as_a_heading_over_its_text():
    doc = segment(COMMENTED_LOG)
    heads = [(u.first, u.text) for u in doc.units if u.kind == "heading"]
    assert heads == [(0, "Soak log of the stream-pool branch"), (4, "Soak run 12 - Tue Mar 3 09:10 2026"),
                     (10, "Soak run 11 - Mon Mar 2 17:40 2026")]
    assert any(u.first == 5 and u.text.startswith("Correctness: 18/20 PASS") for u in doc.units)
    assert doc.lines == COMMENTED_LOG.split("\n")  # (the document keeps its lines as written)
    from import_thread_doc import lost_lines

    from dbglog.core import markdown

    assert lost_lines(COMMENTED_LOG, "\n".join(markdown.render(p.inv) for p in _read(COMMENTED_LOG))) == []


def test_a_document_of_headings_alone_is_not_a_commented_note():
    doc = "# Title\n\n# Part one\n\ntext\n\n# Part two\n\nmore\n\n# Part three\n\n# Part four\n"
    assert [u.text for u in segment(doc).units if u.kind == "heading"] == [
        "Title", "Part one", "Part two", "Part three", "Part four"]


ISSUES_HIT = """# Bringing up the 8-GPU inference box

## Every issue we hit

### 1. Wheels built for a newer CUDA
- **What happened:** the install pulled CUDA 12.9 wheels; the host driver stops at 12.8.
- **Error:** CUDA initialization failed at the first import.
- **Fix:** `uv pip install --system vllm --torch-backend=cu128`
- **Root cause:** pip cannot see the driver and picks the newest wheels.

### 2. Warmup ran out of memory
- **What happened:** the sampler warmup allocated for 1024 sequences.
- **Error:** CUDA out of memory during sampler warmup.
- **Fix:** `--max-num-seqs 64`
- **Root cause:** the defaults are sized for small models.
"""


def test_a_fix_field_after_the_problem_fields_is_a_try_that_worked_with_the_problem_as_its_context():
    tries = [a for p in _read(ISSUES_HIT) for a in p.inv.attempts]
    assert [(a.outcome, a.result) for a in tries] == [("worked", ""), ("worked", "")]
    assert tries[1].hypothesis == "Problem: the sampler warmup allocated for 1024 sequences."


def test_a_fix_field_followed_by_its_result_is_judged_by_that_result():
    doc = ISSUES_HIT.replace("- **Fix:** `--max-num-seqs 64`",
                             "- **Fix:** `--max-num-seqs 64`\n- **Result:** still out of memory at warmup")
    tries = [a for p in _read(doc) for a in p.inv.attempts]
    assert tries[-1].outcome == "failed"


HISTORY_BLOCK = """# Bring-up notes

```bash
    1  export NCCL_DEBUG=WARN
    2  # Attempt: NCCL env vars
    3  export NCCL_NVLS_ENABLE=0
    4  vllm serve ~/model -tp 8
    5  # Attempt: system NCCL
    6  export VLLM_NCCL_SO_PATH=/usr/lib/x86_64-linux-gnu/libnccl.so.2
    7  vllm serve ~/model -tp 8
```
"""


def test_shell_history_in_a_fence_is_read_without_its_numbers():
    units = segment(HISTORY_BLOCK).units
    texts = [u.text for u in units if u.first > 2 and u.kind in ("command", "code")]
    assert not any(t.lstrip()[:1].isdigit() for t in texts)
    assert any("vllm serve ~/model -tp 8" in t and u.first == 6 for u, t in
               ((u, u.text) for u in units if u.kind in ("command", "code")))
    assert segment(HISTORY_BLOCK).lines == HISTORY_BLOCK.split("\n")


def test_a_long_fenced_script_with_many_commented_runs_gives_each_run_its_own_unit():
    runs = "\n".join(f"# try {k}: NCCL_ALGO variant {k}\nNCCL_ALGO=Ring{k} python bench.py  # NOK hangs" for k in range(6))
    setup = "\n".join(f"pip install pkg{k}" for k in range(14))
    doc = f"# Session\n\n```bash\n{setup}\n{runs}\n```\n"
    cmds = [u for u in segment(doc).units if u.kind == "command" and "bench.py" in u.text]
    assert len(cmds) == 6


PREREGISTERED = """# Memory probe log

## Entry Log

### 2026-07-29 10:19 - P-001 preregistration

- Hypothesis: at 64k tokens per device the remat policy fits in 80 GiB.
- Command: Not submitted.
- Config: `SEQ=4096`, `REMAT=all_but_moe`.
- Result: Pending.
- Next action: build the branch with both features and smoke-test its imports.

### 2026-07-29 11:02 - P-002 compile probe

- Hypothesis: unchanged.
- Command: `python probe.py --remat all_but_moe`
- Result: compiled; 92 GiB of temporary arena, fits.
- Next action: run the full-size arm next.
"""


def test_an_entry_whose_command_was_never_submitted_is_no_try():
    tries = [a for p in _read(PREREGISTERED) for a in p.inv.attempts]
    assert [(a.title, a.outcome) for a in tries] == [("P-002 compile probe", "worked")]


def test_next_action_fields_are_next_steps():
    steps = [s.text for p in _read(PREREGISTERED) for s in p.inv.next_steps]
    assert steps == ["build the branch with both features and smoke-test its imports.", "run the full-size arm next."]


@pytest.mark.parametrize("text, want", [
    ("SIGSEGV, exit 139.", "failed"), ("SIGBUS in the loader", "failed"), ("killed by SIGKILL (exit code 137)", "failed"),
    ("`16/16 tests passed`.", "worked"), ("`--no-fail`", None), ("`use_fail_safe`.", None),
])
def test_a_signal_is_a_failure_and_a_programs_verdict_quoted_as_code_is_read(text, want):
    assert outcome_of(text, "en") == want


def test_a_setting_with_an_arrow_to_a_signal_is_a_failed_try():
    doc = """# Persistent cache crash

The op test segfaults on the first JIT compile of the attention kernel.

I ran the op test twice. With `CACHE_PERSISTENT=1` → SIGSEGV, exit 139. With `CACHE_PERSISTENT=0` → 16/16 tests passed.
"""
    got = [a.outcome for p in _read(doc) for a in p.inv.attempts if "CACHE_PERSISTENT" in a.title + a.did]
    assert got == ["failed", "worked"]


def test_version_bounds_in_a_sentence_are_text_not_an_html_tag():
    doc = "# Pins\n\n- pinned to `diffusers<0.30.0` which blocks the edit model (requires `diffusers>=0.30.0`).\n"
    (s,) = [u.text for u in segment(doc).units if u.kind == "sentence"]
    assert "which blocks the edit model" in s and "`diffusers>=0.30.0`" in s
    assert [u.text for u in segment("# x\n\ncase0: OOM<br>case1: ok<br>\n").units if u.kind == "sentence"] == [
        "case0: OOM case1: ok"]


WORKAROUNDS = """# Loop collapse lost with derived-type bounds

## Summary

The kernel runs 30 % slower since the bounds moved into the grid type.

## Workarounds

- **`-Minline=reshape`**: one flag, no source change, brought the collapse back.
- **Plain integer dummies**: fixed the collapse; on the real kernel it recovered only part of the loss.
- **Inline body, no call**: recovered the full loss for us, at the price of a large source change.

## Recommendation

1. Use the plain dummies in the solver for now.
2. Ask the compiler team for a diagnostic.
"""


def test_options_each_told_with_how_it_went_are_no_next_steps_and_options_without_a_verdict_still_are():
    steps = [s.text for p in _read(WORKAROUNDS) for s in p.inv.next_steps]
    assert steps == ["Use the plain dummies in the solver for now.", "Ask the compiler team for a diagnostic."]


def test_an_issue_forms_sections_in_the_last_post_keep_its_author():
    # (a one-post issue "### ana — date" over "## Your current environment", "## Describe the bug": the second
    # section was read as the thread's end, and agents had to fill in who tried what by hand)
    doc = """# Silent corruption with full CUDA graphs

### ana — 2026-06-12

## Your current environment

vLLM 0.11 on 8x H200.

## Describe the bug

I ran with --enforce-eager and the output is correct again.

## Mechanism

The decode kernel lacks varlen support under DCP.
"""
    by_text = {u.text: u.author for u in segment(doc).units if u.kind == "sentence"}
    assert by_text["I ran with --enforce-eager and the output is correct again."] == "ana"
    assert by_text["The decode kernel lacks varlen support under DCP."] == "ana"


LAUNCH_SCRIPT_WITH_EARLIER_RUNS = """# Llama 7B benchmark launch

```bash
#!/bin/bash
export OMP_NUM_THREADS=8

# torchrun --standalone --nproc_per_node 8 bench.py --plugin zero3 --batch_size 16   # OOM
# torchrun --standalone --nproc_per_node 8 bench.py --plugin zero2 --batch_size 8    # OOM (no grad ckpt)
# torchrun --standalone --nproc_per_node 8 bench.py --plugin zero2 --batch_size 8 --grad_checkpoint  # 41 GB/GPU, ok
torchrun --standalone --nproc_per_node 8 bench.py --plugin gemini --batch_size 16 --grad_checkpoint
```
"""


def test_each_long_command_put_away_in_a_comment_with_how_it_went_is_a_run_of_its_own():
    # (a commented-out command longer than six words with "# OOM" after it was a caption of the next one: two runs,
    # one unit, and the third read as code)
    cmds = [u for u in segment(LAUNCH_SCRIPT_WITH_EARLIER_RUNS).units if u.kind == "command"]
    told = [(u.first + 1, u.comment) for u in cmds if u.comment]
    assert told == [(7, "OOM"), (8, "OOM (no grad ckpt)"), (9, "41 GB/GPU, ok")]
    got = {tuple(a.source_lines): a.outcome for p in _read(LAUNCH_SCRIPT_WITH_EARLIER_RUNS) for a in p.inv.attempts}
    assert got.get((7, 7)) == "failed" and got.get((8, 8)) == "failed" and got.get((9, 9)) == "worked"


PARAGRAPH_OVER_A_RULE = """I tried to get xformers working on the K80 by forcing the module to load through sys.modules. It loaded, but the
first image failed halfway with "no Tensor core support". Then I reverted the import logic to the original, and
xformers stopped loading again.
---

## Setup

Short Title Over A Rule
---
"""


def test_a_paragraph_with_a_rule_right_under_it_is_read_as_sentences_not_as_a_heading():
    # (markdown makes it a setext heading: the whole story became the investigation's title, and no attempt)
    units = segment(PARAGRAPH_OVER_A_RULE).units
    assert [u.kind for u in units if u.first <= 3] == ["sentence", "sentence", "sentence", "rule"]
    assert any(u.kind == "heading" and u.text == "Short Title Over A Rule" for u in units)  # a title stays one
    parsed, _ = importer.parse_document(PARAGRAPH_OVER_A_RULE, "doc.md", explain=True)
    assert not parsed[0].inv.title.startswith("I tried")
    # (its sentences are judged as any paragraph's: the first tells a try that failed)
    judged = {j.unit.first + 1: j for p in parsed for j in p.judged if j.unit.kind == "sentence"}
    assert judged[1].features.get("outcome: failed") or judged[2].features.get("outcome: failed")


WORD_EXPORT_TABLE = """# Word export

<table>
<tbody>
<tr>
<td><p><strong>Problem</strong></p></td>
<td><p><strong>What I did</strong></p></td>
<td><p><strong>Result</strong></p></td>
</tr>
<tr>
<td><p>cudnn missing</p></td>
<td><p>conda install cudnn=8.2</p></td>
<td><p>works</p></td>
</tr>
<tr>
<td><p>wrong CUDA</p></td>
<td><p>pip install paddlepaddle-gpu==2.4.2.post112</p>
<p>and rebooted</p></td>
<td><p>still fails with the same error</p></td>
</tr>
</tbody>
</table>
"""


def test_an_html_table_is_read_row_by_row_with_its_header_as_a_markdown_table_is():
    # (a word processor's or a wiki's export: each row was one unit of glued text, "StepProblemSolution", and no try)
    rows = [u for u in segment(WORD_EXPORT_TABLE).units if u.kind == "row"]
    assert [(u.first + 1, u.last + 1) for u in rows] == [(5, 9), (10, 14), (15, 20)]
    assert rows[0].cells == ("Problem", "What I did", "Result")
    assert rows[2].cells == ("wrong CUDA", "pip install paddlepaddle-gpu==2.4.2.post112 and rebooted",
                             "still fails with the same error") and rows[2].header == rows[0].cells
    got = {tuple(a.source_lines): a.outcome for p in _read(WORD_EXPORT_TABLE) for a in p.inv.attempts}
    assert got == {(10, 14): "worked", (15, 20): "failed"}
    # every line is still some unit's: the table's own tags are html units
    covered = {i for u in segment(WORD_EXPORT_TABLE).units for i in range(u.first, u.last + 1)}
    assert all(i in covered for i, line in enumerate(WORD_EXPORT_TABLE.split("\n")) if line.strip())


JAPANESE_FIX_NOTE = """# WSL2 で vLLM の評価環境を作る

## 発生した問題と対処

### 1. fire モジュールが見つからない

`ModuleNotFoundError: No module named 'fire'` が出た。`pip install fire` で解決。
"""


def test_an_error_quoted_in_a_code_span_and_told_about_is_the_writers_sentence_not_pasted_output():
    from dbglog.docreader.cues import context, features

    doc = segment(JAPANESE_FIX_NOTE)
    ctx = context(doc)
    said = [u for u in doc.units if u.kind == "sentence" and u.first == 6]
    feats = [features(u, ctx) for u in said]
    assert [("pasted error output" in f) for f in feats] == [False, False]
    # (one kana in a sentence of code and kanji: the document's Japanese, so "解決" is read with the Japanese cues)
    assert feats[1].get("outcome: worked") == 1.0
    pasted = "# x\n\n`RuntimeError: CUDA error: out of memory`\n\nThen I lowered the batch size.\n"
    d2 = segment(pasted)
    assert "pasted error output" in features(next(u for u in d2.units if u.first == 2), context(d2))


HEREDOC_BLOCK = """# Testing GPU support

```bash
sycl-ls   # no level-zero device listed
cat > /tmp/probe.py <<'EOF'
import torch
print(torch.xpu.is_available())
x = torch.ones(4, device="xpu")
EOF
python /tmp/probe.py   # False, then RuntimeError: no XPU device
```
"""


def test_a_here_documents_lines_are_its_commands_input_not_commands_of_their_own():
    # (each line of the script written by "cat <<'EOF'" was a command, and the block's two told runs were lost among
    # them: the whole block read as code)
    cmds = [(u.first + 1, u.last + 1, u.comment) for u in segment(HEREDOC_BLOCK).units if u.kind == "command"]
    assert cmds == [(4, 4, "no level-zero device listed"), (5, 9, ""),
                    (10, 10, "False, then RuntimeError: no XPU device")]


def test_a_bold_exclamation_opening_a_paragraph_is_its_sentence_not_a_run_in_heading():
    # ("**All 191/191 shards loaded successfully!** 🎉" kept only the emoji as its text: the result was lost)
    said = [u for u in segment("# x\n\n1. **All 191/191 shards loaded successfully!** 🎉\n").units if u.kind == "sentence"]
    assert [(u.text, u.lead) for u in said] == [("**All 191/191 shards loaded successfully!** 🎉", "")]
    named = [u for u in segment("# x\n\n**Important!** Pin the driver first.\n").units if u.kind == "sentence"]
    assert [(u.text, u.lead) for u in named] == [("Pin the driver first.", "**Important!**")]


POST_WITH_ITS_OWN_TITLE = """# Segfault in ifft on gfx906

### alex — 2026-08-17

# Segfault in ifft on gfx906

## Summary

Any inverse FFT crashes the process with SIGSEGV on gfx906.
I tried the CPU backend and it works.

## Environment

jax 0.9.1 on ROCm 6.4.
"""


def test_sections_under_the_title_a_post_opens_with_keep_the_posts_author():
    # (an issue's description repeats its title as "# ...", then "## Summary": the thread was read as over there, and
    # every line after had no author, so the asker's tries were nobody's)
    units = [u for u in segment(POST_WITH_ITS_OWN_TITLE).units if u.first >= 4]
    assert {u.author for u in units} == {"alex"}
