"""What a table's header words say its columns hold: the column-role vocabularies the reader's cues and its linker
read tables by, in one place (data, one pattern per role; English first, then the languages the pool holds)."""

from __future__ import annotations

import re

from dbglog.util import recache

# (English words whole at the start: "Workaround" is no "works?", "Framework" and "Notebook" no verdict)
RESULT_COL = recache.compile(r"\b(?:result|outcome|status|verdict|works?\b\??|effect|pass(?:ed|es)?\b|ok\b)|结果|状态|ergebnis|funktioniert|notes?\b|"
                         r"コメント|結果|備考|결과|비고|"
                         r"findings?|observ|comments?\b|remarks?|bemerkung|备注|wynik|rezultat|uwagi|résultats?|resultados?|estado|statut|"
                         r"результат|статус",
                         re.I)

WHAT_COL = recache.compile(r"\b(?:approach|attempt|try|tried|change|fix|workaround|what|action|config|setting|flag|option|step|test|"
                       r"case|experiment|variant|command)|方案|尝试|操作|versuch|änderung|komenda|polecenie|krok|próba|zmiana|essai|tentative|"
                       r"modification|commande|intento|prueba|cambio|acción|comando|попытка|изменение|команда|試行|変更|시도|변경", re.I)

# A header's word for "what was tried" (not a setting, a case or a config: a sweep's table names those)
ATTEMPT_COL = recache.compile(r"\b(?:attempts?|tried|try|tries|approach(?:es)?|fix(?:es)?|fix attempted|workarounds?|action(?:s| taken)?|changes?|experiments?|"
                          r"what (?:i|we) (?:tried|did)|尝试|方案|操作|versuch|prób[ay]|essais?|tentatives?|intentos?|pruebas?|попытк[аи]|試行|시도)\b", re.I)

NUMBER_COL = recache.compile(r"\W*(?:#|no\.?|nr\.?|lp\.?|n°|id|idx|index|序号|编号|番号|번호)?\W*", re.I)

# A change table: what was set, its value before and after ("| Parameter | Iter0 | Iter1 | Reason |",
# "| Aspect | Before | After | Impact |"): each row is a knob turned, as a key-differences table's row is a factor.
KNOB_COL = recache.compile(r"param|setting|flag|option|config|knob|variable|env\b|aspect|参数|配置|设置|einstellung|"
                       r"パラメータ|設定|파라미터|설정", re.I)

BEFORE_COL = recache.compile(r"^(?:before|old|from|original|previous|prev|default|was|vorher|alt|之前|修改前|原|旧|変更前|이전)"
                         r"(?:\b|(?=[\s(]|$))", re.I)

AFTER_COL = recache.compile(r"^(?:after|new|to|changed|fixed|updated|now|nachher|neu|之后|修改后|新|変更後|이후)"
                        r"(?:\b|(?=[\s(]|$))", re.I)

RUN_COL = recache.compile(r"^(?:iter(?:ation)?|run|round|exp(?:eriment)?|v)\s*#?\s*(\d+)$", re.I)

EXPECTED = recache.compile(r"expect|hope|hypothes|goal|why|reason|预期|erwart", re.I)

BEST_RESULT = recache.compile(r"outcome|verdict|status|结果|ergebnis", re.I)

WEAK_RESULT = recache.compile(r"notes?\b|findings?|observ|comments?\b|remarks?|bemerkung|备注", re.I)

# "| Problem | Solution |" under "## Problems encountered and solutions": a row per problem met and the fix applied to
# it. Only where a heading above says they happened: the same table in a guide ("| Scenario | Solution |") is advice.
PROBLEM_COL = recache.compile(r"^\W*(?:problems?|issues?|errors?|symptoms?|what (?:went wrong|broke)|错误|问题|报错|現象|"
                               r"エラー|問題|문제|오류|fehler|problème|błąd|błędy)\W*$", re.I)

FIX_COL = recache.compile(r"^\W*(?:solutions?|fix(?:es)?|fixed by|how (?:it was )?fixed|resolutions?|(?P<w>workarounds?)|"
                           r"解决(?:方法|方案|办法)?|对策|対処|対策|解決策?|해결(?:책|방법)?|lösung|solution appliquée|rozwiązanie)\W*$", re.I)

# A column that names what a run measured ("Speed", "t/s", "TFLOPs", "Peak VRAM (GB)"): its numbers are results,
# while a bare number under any other name is a setting of the run ("| GPUS | PP | MBS |").
MEASURE_HEAD = recache.compile(r"\b(?:speed\w*|slowdown|ratio|throughput|latency|time|duration|t/s|tok/s|tokens?/s|it/s|samples?/s|"
                                r"gb/s|[gt]flops?|tps|qps|fps|bandwidth|vram|memory|mem|peak|loss|accuracy|acc|score|r?mse|mae|ppl|"
                                r"perplexity|f1|bleu|auc|wer|"
                                r"ms|sec|s|mib|gib|gb|mb)\b", re.I)

# A column of things looked at ("Check", "What we verified", "Probe"): its rows are looks, each with its finding.
CHECK_COL = recache.compile(r"^\W*(?:checks?|checked|verif\w*|probes?|diagnostics?|inspect\w*|what (?:we |i )?(?:checked|looked at"
                        r"|verified)|prüfung|检查|確認|확인|sprawdzenie)\W*$", re.I)

# A first column that names what is measured or compared: its rows are qualities of one setup, not tries.
MEASURE_COL = recache.compile(r"^\W*(?:metrics?|measures?|measurements?|aspects?|propert(?:y|ies)|criteri(?:on|a)|kpis?|"
                               r"dimensions?|statistics?|stats|characteristics?|指标|指標|지표|kennzahl\w*|metrik(?:en)?|messgrößen?|"
                               r"métriques?|метрик[аи]|métricas?)\W*$", re.I)

# A first column naming the parts of an argument or a schedule ("| Evidence | Supports | Conclusion |", "| Phase | Time |",
# "| Feature | Status | Impact |"): its rows are the write-up's reasoning, plan or description, not runs.
FACT_COL = recache.compile(r"^\W*(?:evidence|phases?|stages?|features?|tasks?|tâches?|aufgaben?|phasen?|证据|阶段|任务|功能|"
                            r"証拠|段階|タスク|機能|증거|단계|작업|기능|этап|фаза|задача|etapas?|fases?|tareas?)\W*$", re.I)

# A first column naming the items one evaluation's results are broken down by ("| Class | AP@50 | Recall |", "| Class |
# Train 2 | Train 3 | Δ |", "| Layer | Time |"): a row per class of what was measured, neither a run nor a change
BREAKDOWN_COL = recache.compile(r"^\W*(?:class(?:es)?|categor(?:y|ies)|labels?|layers?|clases?|classe|klassen?|categorías?|"
                                 r"catégories?|kategorien?|类别|类|クラス|클래스|класс)\b[^|]{0,20}$", re.I)

GOAL_COL = recache.compile(r"\b(?:target|goal|budget|expect\w*|required|spec)\b", re.I)
