"""A failure's fingerprint: what makes two failures "the same failure" (issue 27).

Error trackers group events by a fingerprint (Sentry: exception type, normalised message, in-app
frames; syzkaller: a normalised crash title). A GPU failure's fingerprint combines:

* the signature (``gpu.illegal_address``), from ``run/signatures.py``;
* the key line, normalised: addresses, pointers, pids, ranks, timestamps, sizes, temporary paths,
  hashes and line numbers stripped, log prefixes (``[rank3]:``, vLLM's ``ERROR 06-20 10:37:01
  [x.py:12]``, glog, NCCL's ``host:pid:tid [dev]``) dropped, a wrapped line joined;
* the innermost frames in the user's code (``file.py:function``; the standard library, torch and
  the like are not the user's code);
* the faulting kernel's name when the text (or a dump's evidence) names it, exact case;
* for collectives, the operation (``ALLREDUCE``) and the missing ranks.

Two forms: ``key``, an exact key (a hash of everything but the ranks: two ranks' reports of one
collective timeout name different missing ranks from where they stand), and ``similarity``, the
fuzzy form (rapidfuzz over the normalised line, refused outright when kernels, operations or
frames say otherwise) for the same crash from another rank, version or machine.

Pure: text in, values out; no I/O, no database. Rule tables are data (``PREFIXES``, ``SCRUB``,
``LIBRARY_PATHS``), applied in order.
"""

from __future__ import annotations

import builtins
import functools
import hashlib
import re
from dataclasses import dataclass, field
from dbglog.util import recache

# --- the key line ----------------------------------------------------------------------------

# Log prefixes, stripped from the start of the key line repeatedly (one pass each, in this order).
PREFIXES = tuple(recache.compile(p) for p in (
    r"^\s*`+(?=\S)",                                                          # the paste's own inline-code mark
    r"^\s*[\u2800-\u28ff]\s*(?=\S)",                                            # a CLI's spinner frame ("⠋ mmq.cuh:...")
    # a progress bar the record was printed after, on its line ("Running tokenizer: 47%|███▊ | 31/68 [30:11<38:27]")
    r"^[^|\n]{0,120}\d{1,3}%\|[^|\n]{0,200}\|[^\[\n]{0,80}\[[^\]\n]{0,80}\]\s*",
    r"^\s*\[?\s*(?:rank|default|local_rank)\s*\d+\s*\]?\s*:\s*",            # torchrun [rank3]: / [default0]:
    r"^\s*\[\d+,\d+\]<std(?:out|err)>:\s*",                                   # mpirun [1,3]<stderr>:
    r"^\s*[\w.-]+ \[std(?:out|err)\]:?\s*",                                       # a runner's host [stderr]
    # the host mpirun --tag-output or pdsh puts before each line ("g0010: ", "node-03: ", a container's id): a
    # name with two digits or more, or twelve hex digits ("collect2: error", "python3: can't open" keep theirs)
    r"^\s*(?:[A-Za-z][A-Za-z-]*\d{2,}[\w.-]*|[0-9a-f]{12}):\s+(?=\S)",
    r"^\s*[A-Z][a-z]{2} [ \d]\d [\d:]{8} \S+ [\w.-]+(?:\[\d+\])?:\s*",          # journald: Dec 09 13:35:40 host x[1]: / kernel:
    r"^\s*\((?:[A-Za-z_][\w-]*\s+)?(?:(?:rank|pid|ip)=[\w.]+[,\s]*)+\)\s*",       # Ray / vLLM (VllmWorker rank=5 pid=1)
    r"^\s*(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)\s+\d\d-\d\d\s+[\d:.]+\s*(?:\[[^\]]*\]\s*|[\w.]+:\d+\]\s*)?",
    r"^\s*\[?\d{4}-\d\d-\d\d[T ][\d:.,]+(?:Z|[+-]\d\d:?\d\d)?\]?\s*",          # ISO timestamps
    r"^\s*[EWIF]\d{3,4}\s+[\d:.]+\s+\d+\s+\S+:\d+\]\s*",                        # glog E1203 12:00:00.1 77 x.cc:45]
    r"^\s*:?\s*[EWIF] [\w./-]+\.(?:cc|cpp|h|py):\d+\]\s*",                       # TF/XLA (after the time): E xla/x.cc:427]
    r"^\s*(?:[\w.-]+/)+[\w.-]+\.(?:cc|cpp|h):\d+\]\s*",                          # the same site, its level cut off: xla/x.cc:427]
    r"^\s*\S+:\d+:\d+\s+\[\d+\]\s*",                                          # NCCL host:pid:tid [dev]
    r"^\s*\[[\w.-]+:\d+(?:\s*:\d+)*\]\s*",                                    # [host:pid] / [file.py:12] / UCX [h:1 :0:381]
    r"^\s*\[[EWIF](?:\d{3,4} [\d:.]+(?: \d+)?)? [\w.]+:\d+\]\s*",                 # c10 [E ProcessGroupNCCL.cpp:607]
    r"^\s*\[\d+\]\s+",                                                        # a viewer's line number [80747]
    r"^\s*\[PG\b[^\]\n]{0,80}\bRank \d+\]\s*",                                # c10d's [PG ID 0 PG GUID 0(default_pg) Rank 3]
    r"^\s*-?\s*(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)\s*[:|-]?\s+",  # a bare level
    r"^\s*[\d:.]+\s+-\s+",                                                    # 12:00:01.123 -
    r"^\s*\d+\.\d\d\.\d{3}\.\d{3}\s+[IWED]\s+",                                   # llama.cpp's log: 7.51.240.943 E
    r"^\s*=+\s+",                                                             # compute-sanitizer's =========
    r"^\s*>\s+",                                                              # a line quoted in a reply: "> ..."
    # an error report form's bold field label ("- **Exception Message:** CUDA error: ...", ComfyUI's error report)
    r"^\s*(?:[-*+]\s+)?\*\*[^*\n]{1,40}?:?\*\*:?\s+",
    # ONNX Runtime's logger ("[E:onnxruntime:Default, cuda_call.cc:123 CudaCall]"): the logger's name varies by
    # session ("Default", "Model", a user's id) and the site is the logging macro, the same for every call
    r"^\s*\[[EWIF]:onnxruntime:[^,\]\n]{0,80},\s*[\w.]+:\d+\s+\w+\]\s*",
    r"^\s*what\(\):\s+",                                                       # std::terminate's what():
    r"^\s*[│┃]\s*(?:❱\s*)?(?:\d+\s*[│┃]\s*)?(?:[│┃]\s*)*",                         # rich's traceback box: │ ❱ 20 │ │
    # c10d re-raising the watchdog's own timeout: "[Rank 7] NCCL watchdog thread terminated with exception: [Rank 7]
    # Watchdog caught collective operation timeout: ..." is that timeout, as another rank printed it bare
    r"^\s*(?:\[Rank \d+\]\s*)?NCCL watchdog thread terminated with exception:\s*",
))

_KEEP = "\u2063"  # (an invisible separator: marks a number the N rule keeps)

# A GPU's product name ("Tesla T4", "NVIDIA GeForce RTX 5090", "A100-SXM4-80GB", "Radeon RX 7900 XTX"): the
# machine, not the failure (its architecture, sm_120 or gfx906, is kept: that can be the cause).
_GPU_FAMILY = r"(?-i:(?:RTX|GTX|RX)\s?\d{3,4}(?:\s(?:Ti|XTX|XT|SUPER|D)\b)?|[AHL]\d{2,3}S?(?:-\w+)*|MI\d{2,3}X?)"
_GPU_MODEL = (r"\b(?:(?-i:NVIDIA|AMD)\s+)?(?:(?-i:GeForce|Tesla|Quadro|Radeon|Instinct|TITAN)\s+(?:Pro\s+)?(?:"
              + _GPU_FAMILY + r"|[\w-]+)|" + _GPU_FAMILY + r")\b")

def _kib(n: str) -> str:
    """A byte count in KiB to two significant figures ("135200" -> "130", "663808" -> "650", "49152" -> "48")."""
    kib = int(n) / 1024
    return f"{float(f'{kib:.2g}'):g}"


# What varies between two occurrences of one failure, replaced in this order (the order matters:
# a temporary path before a number inside it, an address before a plain number).
_SCRUB_RULES = (
    (r"\x1b\[[0-9;]*[A-Za-z]", ""),                                                  # terminal colours
    # A device assert is its kernel and its check, wherever the kernel lives (THC's THCTensorIndex.cu and ATen's
    # Indexing.cu hold the same indexSelectLargeIndex): the site and a kernel's C++ signature come off
    (r"^(?:\S*[/\\])?[\w-]+\.(?:cu|cuh|hip):\d+: (?=(?:void )?\w+(?:\(|: block: \[))", ""),
    (r"^(?:void )?(\w+)\((?:[^()\n]|\([^()\n]*\)){0,600}\)(?: \[with [^\]\n]{0,600}\])?(?=: block: \[)", r"\1"),
    (r"\s*\[repeated \d+x across cluster\]", ""),                                     # Ray's log deduplication
    (r"[ \t]*[│┃][ \t]*$", ""),                                                       # ... and its right border
    (_GPU_MODEL, "<gpu>"),                                                            # the machine's GPU, by name
    # (a shared library loaded from a temporary directory, a pip build's overlay, keeps its name: which library
    # failed to load is the failure, wherever it was unpacked)
    (r"(?:/tmp|/var/tmp|/dev/shm|/private/var/folders|/var/folders|[A-Z]:\\Temp)[/\\](?:[^\s'\"),:/\\]*[/\\])*"
     r"(?=[\w.+-]+\.(?:so|dll|dylib)\b)", ""),
    # (pip's build directory is a checkout of the package's source tree: "/tmp/pip-req-build-jh50/aten/src/THC/
    # THCBlas.cu:259" is the package's THCBlas.cu, as "/opt/conda/conda-bld/pytorch_1549/work/aten/..." is: its
    # folders then come off as any path's do)
    (r"(?:/tmp|/var/tmp|/dev/shm|/private/var/folders|/var/folders|[A-Z]:\\Temp)[/\\]pip-(?:req-build|install|build-env"
     r"|ephem-wheel-cache)-[^\s'\"),:/\\]+(?=[/\\][^\s'\"),:]*[/\\])", ""),
    # (so is any C/C++/CUDA source three folders or more down a temporary tree: a package's sources unpacked there to
    # be built, "/tmp/tmpd_q/llama_cpp_python-0.3.6/vendor/llama.cpp/ggml/src/ggml-cuda/mmv.cu:53" is ggml's mmv.cu;
    # a compiler's scratch file sits one or two folders down)
    (r"(?:/tmp|/var/tmp|/dev/shm|/private/var/folders|/var/folders|[A-Z]:\\Temp)(?=(?:[/\\][^\s'\"),:/\\]+){3,}"
     r"[/\\][^\s'\"),:/\\]+\.(?:c|cc|cpp|cxx|cu|cuh|h|hpp)\b)", ""),
    (r"(?:/tmp|/var/tmp|/dev/shm|/private/var/folders|/var/folders|[A-Z]:\\Temp)[/\\][^\s'\"),:]*", "<tmp>"),
    (r"(?<![\w.~])(?:[A-Z]:|\.{1,3}|\u2026)?[/\\](?:[^\s'\"():/\\]+[/\\])+", ""),  # a path's folders (elided too: "...\\bin\\x.dll")
    # ... and a relative one before a source file ("ggml/src/ggml-cuda/template-instances/../mmq.cuh:2589": mmq.cuh)
    (r"(?<![\w./~-])(?:[\w.-]+/)+(?=[\w.-]+\.(?:cuh?|cc|cpp|cxx|c|h|hpp|hip)\b)", ""),
    (r"\b(hostname)\s*=\s*[^\s;,]+", r"\1=<host>"),                                   # the machine, by name
    (r"(cannot find -l[\w.+-]+): No such file or directory", r"\1"),                  # newer binutils' wording
    (r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", "<uuid>"),
    (r"\b0x[0-9a-f]+\b", "0x?"),                                                     # addresses, pointers
    (r"\b0x(?:\.{2,}|…|x{3,})", "0x?"),                        # an address the poster blanked out ("0x...", "0xXXXX")
    (r"0x\?\.(?=\s|$)", "0x?"),                              # (whose dots may have eaten a sentence's own period)
    # a network address and its port ("peer fe80::966d:ae03:8b:df78%ib0<53249>", "10.0.0.7:29500"): the other host
    (r"(?<![\w.:])[0-9a-f]{1,4}(?::[0-9a-f]{1,4}){0,6}::(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4}){0,6})?(?:%[\w.-]+)?(?:<\d+>)?"
     r"(?![\w:])|(?<![\w.:])[0-9a-f]{1,4}(?::[0-9a-f]{1,4}){7}(?:%[\w.-]+)?(?:<\d+>)?(?![\w:])", "<addr>"),
    # (four numbers alone may be a version, cuDNN's 8.9.7.29: an IPv4 address is one with its port or named as one)
    (r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?::\d{2,5}|<\d+>)(?![\w.])", "<addr>"),
    (r"\b((?:peer|host|addr(?:ess)?|ip|from|to|at)\s+)\d{1,3}(?:\.\d{1,3}){3}(?![\w.])", r"\1<addr>"),
    (r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{12,}\b", "<hex>"),               # hashes, ids
    (r"\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d)?(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?", "<time>"),
    (r"\b\d\d:\d\d:\d\d(?:[.,]\d+)?\b", "<time>"),
    # A kernel's shared-memory need and the GPU's limit (Triton's "Required: 135200, Hardware limit: 101376") are
    # the kernel's configuration and the GPU's class: kept, to two significant figures of KiB, so one kernel
    # compiled a little differently still matches (133136 and 135200 are both ~130k) and another does not
    (r"\b(Required|Hardware limit):\s*(\d{3,12})\b", lambda m: f"{m.group(1)}: ~{_KEEP}{_kib(m.group(2))}k"),
    # ... worded two ways by Triton's versions ("OutOfResources: out of resource: shared memory" or "OutOfResources:
    # shared memory"), with or without its advice after: one message
    (r"(?<=OutOfResources: )out of resource: ", ""),
    (r"(?<=Hardware limit: ~" + _KEEP + r")(\d+k)\.? ?Reducing block sizes or `num_stages` may help\.?", r"\1"),
    (r"\b(pid|tid|rank|ranks|local_rank|global_rank|device|gpu|node|worker|process|thread)(\s*[=:#]?\s*)\d+",
     r"\1\2N"),
    (r"\b\d+(?:\.\d+)?\s*(?:[KMGTP]i?B|bytes?|B)\b", "<size>"),
    (r"\b(Numel(?:In|Out))=(\d+)", r"\1=#\2"),  # a collective's tensor, the same on every rank: kept (see below)
    # What a number names rather than counts, kept (marked, the mark dropped below): an error's code (the
    # OS's, CUDA's, cuBLAS's: 126 is "not found", 127 "another version") and a library's soname version
    # (libcudart.so.10.0 is not libcudart.so.11.0)
    (r"(?-i:\b((?:[Ee]rror|[Cc]ode|errno|failure)(?: code)?\s*[=:(]?\s*))(\d+)\b", "\\1" + _KEEP + "\\2"),
    (r"(\.so)((?:\.\d+)+)\b", lambda m: m.group(1) + m.group(2).replace(".", "." + _KEEP)),
    # ... and the versions a version check names: the library loaded and the one the build was made with
    # ("Loaded runtime CuDNN library: 8.0.5 but source was compiled with: 8.6.0" is jaxlib's build, not TF's 8.1.0)
    (r"\b((?:library|compiled (?:with|against)|built (?:with|against)):\s*)(\d+(?:\.\d+)+)\b",
     lambda m: m.group(1) + _KEEP + m.group(2).replace(".", "." + _KEEP)),
    (r"(?<![#" + _KEEP + r"])\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b", "N"),                          # the rest: counts, lines
)
SCRUB = tuple((recache.compile(p, re.I), r) for p, r in _SCRUB_RULES)

_SPACE = recache.compile(r"\s+")
_RUN = recache.compile(r"(?<! ) {3,}")
_READ_HEAD = 4 * 1024
_KEPT = recache.compile(r"\b(Numel(?:In|Out))=(#\d+)")  # numbers SCRUB marked to keep (the N rule skips "#1")
_KEPT_NUMBERS = recache.compile(r"\bNumel(?:In|Out)=\d+")  # ... as a normalised line holds them
_END_OF_SENTENCE = (".", ":", ")", "]", "}", "!", "?", ";")
# a wrapped line's tail: starts lower-case (not "File", "Traceback"), and is not a tool's own line ("collect2: error:
# ld returned 1", "ninja: build stopped")
# (nor a line whose first word stands in a column of its own, "srv    operator(): ...": a log's tag, as llama.cpp's
# server writes every record; a wrapped sentence goes on with single spaces)
_CONTINUES = recache.compile(r"^ {0,8}(?![\w.+-]+: )(?![a-z]\w* {2,}\S)[a-z(]")
MAX_LINE = 240  # a normalised key line is cut here (a giant line's tail is not what names a failure)


def strip_prefixes(line: str) -> str:
    """The key line without its log prefixes (rank, pid, time, level, NCCL's host:pid:tid)."""
    prev = None
    while prev != line:
        prev = line
        for rx in PREFIXES:
            line = rx.sub("", line, count=1)
    return line


# (after anything but an ASCII word: a sentence in Chinese runs straight into "RuntimeError: ...")
# (and a warning's category, as Python's warnings print it: "conv.py:605: UserWarning: Plan failed ...")
_EXCEPTION = recache.compile(r"(?<![A-Za-z0-9_.])(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Warning)(?=: )")


def _from_exception(line: str) -> str:
    """The line from its first exception name on (``RuntimeError: ...``): words before it are a
    prefix nobody wrote twice alike (an issue title's prose, an unknown logger's fields). A name
    repeated (``RuntimeError: RuntimeError: x``) is read once."""
    m = _EXCEPTION.search(line)
    if m is None:
        return line
    line = line[m.start():]
    name = m.group(0) + ": "
    while line.startswith(name + name):
        line = line[len(name):]
    return line


# torch's THC check prints its failure twice, as a check line and as the exception it raises: one line, either way
_THC_CHECK = recache.compile(r"THCudaCheck FAIL file=(?:\S*/)?(\S+) line=(\d+) error=(\d+) : (.*)")


def normalise_line(line: str) -> str:
    """One key line as it reads on every rank, machine and day: prefixes stripped, then what varies
    (``SCRUB``), whitespace collapsed, cut at ``MAX_LINE``."""
    # (a run of spaces kept to two and the line to its head first: what the patterns read is then short, and a
    # progress bar's thousands of spaces cannot make a scrubbing pattern try every split of them)
    line = _RUN.sub("  ", line.replace("\t", " "))[:_READ_HEAD]
    line = _THC_CHECK.sub(r"RuntimeError: cuda runtime error (\3) : \4 at \1:\2", line)
    line = _from_exception(strip_prefixes(line))
    for rx, repl in SCRUB:
        line = rx.sub(repl, line)
    line = _KEPT.sub(lambda m: m.group(1) + "=" + m.group(2).replace("#", ""), line).replace(_KEEP, "")
    return _SPACE.sub(" ", line).strip()[:MAX_LINE]


def unwrap(lines: list[str], i: int, most: int = 3, width: int = 0) -> str:
    """Line ``i`` joined with the lines a terminal or a log wrapped it onto: a line that does not end
    a sentence, followed by one that starts lower-case and is not a log record of its own (NCCL's
    ``host:pid:tid [dev]``, a rank's prefix); and a line cut at a fixed ``width`` (``wrap_width``),
    mid-word or not, continued on the next as it was (no space added)."""
    from dbglog.diagnose.signatures import cut_length  # (loaded already: a key line comes from its scan)

    out = lines[i].rstrip()
    if _BOX_LINE.match(out):
        return out  # (a box's next line is the box's next line)
    cut = width and cut_length(lines[i]) == width  # (a line a capture padded with spaces was not cut)
    for j in range(i + 1, min(len(lines), i + 1 + (max(most, 12) if cut else most))):
        # (a line a log record opens, "Jan 09 18:55:45 host kernel: ...", is a record of its own, whatever its length)
        if cut and not _starts_alike(lines[i], lines[j]) and strip_prefixes(lines[j]) == lines[j]:
            out = lines[i] if j == i + 1 else out
            out += lines[j]
            cut = cut_length(lines[j]) == width
            continue
        if out.endswith(_END_OF_SENTENCE) or not _CONTINUES.match(lines[j]) or strip_prefixes(lines[j]) != lines[j] \
                or _SITE_LINE.search(lines[j]) or _PROMPT_LINE.match(lines[j]):
            break  # (a check's report of where it fired is a record of its own; so is the next command typed)
        out += " " + lines[j].strip()
    return out.rstrip()


# a shell prompt with its user and host ("root@genai:~/llama.cpp/build/bin# ./llama-cli --version"): a command typed
_PROMPT_LINE = recache.compile(r"^\s*(?:\([\w.-]+\)\s*)?[\w.-]+@[\w.-]+:\S*[$#]\s")


def wrap_width(lines: list[str]) -> int:
    """The width a terminal or a paste cut these lines at: no line is longer and at least two lines
    are exactly that long (>= 60); 0 when they do not look cut. A banner's rules ("=====BUG REPORT=====") have a width
    of their own, which says nothing about where the text was cut."""
    from dbglog.diagnose.signatures import cut_length

    lengths = [cut_length(x) for x in lines if not (_RULE_LINE.match(x) or _BOX_LINE.match(x))]
    width = max(lengths, default=0)
    return width if width >= 60 and lengths.count(width) >= 2 else 0


_RULE_LINE = recache.compile(r"^\s*([=*#~_-])\1{9}")  # a line that opens with ten of one rule character
# a line of a box drawn around a traceback (rich's "│ ❱ 20 │ raise RuntimeError(... │"): its width is the box's, and
# its next line is the next source line, not the rest of this one
_BOX_LINE = recache.compile(r"^\s*[│┃╭╰]")


def _starts_alike(a: str, b: str) -> bool:
    """Does ``b`` start the way ``a`` does (a record of the same kind: the next assert of a burst,
    the next rank's line), rather than continue it?"""
    return a[:12].strip() != "" and a[:12] == b[:12]


# --- frames in the user's code ---------------------------------------------------------------

_PY_FRAME = recache.compile(r'(?:^|\s)File "([^"]+)", line \d+, in (\S+)')  # (behind any prefix: vLLM's workers)
_GDB_FRAME = recache.compile(r"^\s*#\d+\s+(?:0x[0-9a-fA-F]+ in )?([\w:~<>]+?)\s*\(.*?\)(?: at ([^\s:]+):\d+)?")
# Paths that are not the user's code: the interpreter, frameworks whose frames every failure shares.
LIBRARY_PATHS = recache.compile(
    r"(?:^<|/lib/python\d[\d.]*/(?!site-packages|dist-packages)|(?:^|[/\\])(?:torch|triton|numpy|cupy|cupyx|_pytest|"
    r"pytest|pluggy|click|multiprocessing|concurrent|asyncio|threading|runpy|importlib|accelerate|deepspeed)[/\\]|"
    r"^(?:libc|libpthread|libcuda|libtorch|libc10|libnccl|libamdhip|ld-linux)[\w.-]*$)")
MAX_FRAMES = 3
_TRACEBACK = "Traceback (most recent call last)"


def user_frames(lines: list[str], end: int | None = None) -> tuple[str, ...]:
    """The innermost ``MAX_FRAMES`` frames in the user's code (``file.py:function``) of the last Python
    traceback before line ``end`` (the key line), else of gdb's ``#N`` frames; innermost first."""
    end = len(lines) if end is None else min(end + 1, len(lines))
    start = max(0, end - 400)
    tb = max((i for i in range(start, end) if _TRACEBACK in lines[i]), default=None)
    found: list[str] = []
    for line in lines[tb if tb is not None else start:end]:
        m = _PY_FRAME.search(line) if 'File "' in line else None
        if m is not None:
            found.append(_frame(m.group(1), m.group(2)))
    if not found:  # gdb / cuda-gdb backtraces print innermost first: reverse to Python's order
        found = [_frame(m.group(2) or "", m.group(1)) for line in lines[start:end]
                 if (m := _GDB_FRAME.match(line)) is not None][::-1]
    return tuple(f for f in reversed(found) if f)[:MAX_FRAMES]


# A C/C++ check's report of where it fired, under the error it prints (ggml's CUDA_CHECK: "CUDA error: out of
# memory" over "current device: 0, in function alloc at .../ggml-cuda.cu:476"): the one frame such a report has.
_SITE_LINE = recache.compile(r"\bin function (\w+) at (\S{1,300}?):\d+")
_SITE_REACH = 3  # lines under the key line
# ... not for a fault the device reports later, at whatever call synchronises next (ggml_backend_cuda_synchronize
# for any bad kernel): there the site is only where the error surfaced
ASYNCHRONOUS = ("gpu.illegal_address", "gpu.illegal_instruction", "gpu.invalid_pc", "gpu.launch_failure",
                "gpu.misaligned", "gpu.device_assert", "gpu.stack_overflow", "gpu.exception", "gpu.ecc_error",
                "gpu.device_lost", "gpu.launch_timeout", "gpu.cuda_failure", "rocm.memory_", "hip.")


def error_site(lines: list[str], key_index: int | None) -> tuple[str, ...]:
    """The frame a C/C++ error report names under its key line (``_SITE_LINE``), as ``file:function``; () when none."""
    if key_index is None:
        return ()
    for line in lines[key_index:key_index + 1 + _SITE_REACH]:
        m = _SITE_LINE.search(line)
        if m is not None:
            name = m.group(2).replace("\\", "/").rsplit("/", 1)[-1].lstrip(".")  # (".../x.cu", "...x.cu")
            return (f"{name}:{m.group(1)}",)
    return ()


def _frame(path: str, function: str) -> str:
    if LIBRARY_PATHS.search(path.replace("\\", "/")):
        return ""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return f"{name}:{function}" if name else function


# --- kernel, collective ---------------------------------------------------------------------

KERNEL_PATTERNS = tuple(recache.compile(p) for p in (
    r"\bin (?:kernel )?([A-Za-z_][\w:]*)<<<",                                 # cuda-gdb: in fused_moe_kernel<<<(...)>>>
    r"^[=\s]*at 0x[0-9a-fA-F]+ in (?:void )?([A-Za-z_][\w:]*(?:<[^>]*>)?)\(",  # compute-sanitizer: at 0x.. in k(
    r"\b[Kk]ernel(?: name)?\s*[:=]\s*['\"]?([A-Za-z_][\w:]*)",                 # Kernel Name: k / kernel=k
    r"\bin kernel '([A-Za-z_][\w:]*)'",
    r"\bCUDA kernel ([A-Za-z_]\w*) has no device code",                             # ggml: the kernel the build lacks
    r"\.(?:cu|cuh|hip):\d+: (?:void )?(?![A-Z]+:)([A-Za-z_]\w*)[:(<]",              # a device assert's site (not "ERROR:")
    r"\bggml_cuda_compute_forward: ([A-Z][A-Z0-9_]*) failed",                       # llama.cpp: the op that failed
))
_COLLECTIVE_HINT = recache.compile(r"OpType|nccl|ollective|[Rr]ank", re.I)
# A collective's operation, most explicit wording first (c10d's OpType=, NCCL's API name, prose).
_OPS = tuple(recache.compile(p, re.I) for p in (
    r"\bOpType=(\w+)",
    r"\bnccl(AllReduce|AllGather|ReduceScatter|Broadcast|Reduce|Send|Recv|AllToAll)\b",
    r"\bcollective(?: operation)?\s*[:=]\s*'?(\w+)",
))
_MISSING = recache.compile(r"(?:[Rr]anks?|missing ranks?|waiting for ranks?|ranks? that (?:did not|have not) \w+)"
                      r"[:\s]*\[?((?:\d+\s*,\s*)*\d+)\]?\s*(?:failed|(?:did|have) not|missing|timed out|never)", re.I)
_MISSING_LIST = recache.compile(r"(?:missing|absent|not joined|stuck) ranks?\s*[:=]?\s*\[?((?:\d+\s*,\s*)*\d+)", re.I)


def kernel_name(lines: list[str], evidence: list[dict] | None = None) -> str | None:
    """The faulting kernel's name, exact case: a dump's evidence first, then the text's own words."""
    for e in evidence or ():
        k = e.get("kernel")
        if isinstance(k, str) and k.strip():
            return _SPACE.sub("", k)[:160]  # (no spaces: the mirror line carries it as one word)
    for line in lines:
        if "ernel" not in line and "<<<" not in line and " at 0x" not in line and ".cu" not in line and \
                ".hip:" not in line and "_forward: " not in line:
            continue  # (a cheap look first: most lines name no kernel)
        for rx in KERNEL_PATTERNS:
            m = rx.search(line)
            if m is not None:
                return _SPACE.sub("", m.group(1))[:160]
    return None


def collective(lines: list[str]) -> tuple[str | None, tuple[int, ...]]:
    """A collective's operation (upper case) and the ranks said to be missing, sorted."""
    lines = [ln for ln in lines if _COLLECTIVE_HINT.search(ln)]  # (one C scan a line; the rest on a few)
    op, missing = None, set()
    for rx in _OPS:
        op = next((m.group(1).upper() for line in lines if (m := rx.search(line)) is not None), None)
        if op is not None:
            break
    for line in lines:
        for rx in (_MISSING, _MISSING_LIST):
            for mm in rx.finditer(line):
                missing.update(int(x) for x in re.findall(r"\d+", mm.group(1)))
    return op, tuple(sorted(missing))


# --- the fingerprint -------------------------------------------------------------------------

@dataclass(frozen=True)
class Fingerprint:
    signature: str
    line: str  # the normalised key line
    frames: tuple[str, ...] = ()
    kernel: str | None = None
    op: str | None = None
    missing_ranks: tuple[int, ...] = field(default=(), compare=False)

    @functools.cached_property  # (a frozen dataclass: computed once, kept in the instance's __dict__)
    def key(self) -> str:
        """The exact key: ``fp-`` and 10 hex digits of everything but the ranks."""
        raw = "\x1f".join((self.signature, self.line, "|".join(self.frames), self.kernel or "", self.op or ""))
        return "fp-" + hashlib.sha1(raw.encode("utf-8", "surrogatepass")).hexdigest()[:10]

    def to_dict(self) -> dict:
        return {"key": self.key, "signature": self.signature, "line": self.line, "frames": list(self.frames),
                "kernel": self.kernel, "op": self.op, "missing_ranks": list(self.missing_ranks)}

    @classmethod
    def from_dict(cls, d: dict) -> "Fingerprint":
        return cls(d["signature"], d.get("line") or "", tuple(d.get("frames") or ()), d.get("kernel"), d.get("op"),
                   tuple(d.get("missing_ranks") or ()))

    def mirror_line(self) -> str:
        """What reaches ``logs/`` (issue 27: runs stay local): the short id, the signature, the kernel and
        the normalised key line, one line."""
        kernel = f" in {self.kernel}" if self.kernel else ""
        return f"failure {self.key} [{self.signature}]{kernel}: {self.line}"


MIRROR_LINE = recache.compile(r"failure (fp-[0-9a-f]{10}) \[([^\]\s]+)\](?: in (\S+))?: (.*)$")


def from_mirror_line(text: str) -> tuple[str, Fingerprint] | None:
    """(exact key, fingerprint) of a ``mirror_line`` found in a record's text (its frames are not in
    the mirror: the key carries them)."""
    m = MIRROR_LINE.search(text)
    if m is None:
        return None
    return m.group(1), Fingerprint(m.group(2), m.group(4).strip(), (), m.group(3))


WINDOW = 400  # lines either side of the key line read for the kernel and the collective


# A runtime compiler's failure to build a kernel (MIOpen's and HIP's hiprtc, NVRTC): which kernel it was building is
# where it failed, not why, and one cause (a host header missing) fails every kernel the program compiles. Its
# identity is the compiler's first error diagnostic, with the file it was in taken off: "fatal error: 'limits' file
# not found" whether naive_conv.cpp or data_type.hpp included <limits>.
_COMPILED_AT_RUN = recache.compile(r"\b(?:HIPRTC|NVRTC)_ERROR_COMPILATION\b|\bError \[Compile\]")
_DIAGNOSTIC = recache.compile(r"\S:\d+(?::\d+)?:\s+(?P<d>(?:fatal )?error:\s+\S.*?)\s*$")


def compile_cause(line: str, near: list[str]) -> str | None:
    """The first error diagnostic of a runtime compiler among ``near`` when ``line`` says a kernel failed to compile
    at run time, else None."""
    if not _COMPILED_AT_RUN.search(line):
        return None
    return next((m.group("d") for t in near if (m := _DIAGNOSTIC.search(strip_prefixes(t)))), None)


def build(signature: str, key_lines: list[str], text_lines: list[str], key_index: int | None = None,
          evidence: list[dict] | None = None) -> Fingerprint:
    """A fingerprint from a classified failure: its signature, its deciding key line (``key_lines[0]``,
    as the signature scan displayed it), the text's lines around it (frames, kernel, collective) and
    ``key_index``, the key line's 0-based index in ``text_lines`` when known."""
    line = key_lines[0] if key_lines else ""
    # (the lines around the failure, not a whole log: a bounded cost per run, whatever it printed)
    at = len(text_lines) if key_index is None else key_index
    near = text_lines[max(0, at - WINDOW):at + WINDOW]
    if key_index is not None and 0 <= key_index < len(text_lines):
        line = unwrap(text_lines, key_index, width=wrap_width(near))
    line = compile_cause(line, near) or line
    op, missing = collective(key_lines + near)
    frames = user_frames(text_lines, key_index) or (
        () if signature.startswith(ASYNCHRONOUS) else error_site(text_lines, key_index))
    return Fingerprint(signature, normalise_line(line), frames,
                       kernel_name(near or key_lines, evidence), op, missing)


@functools.cache
def _builtin_needles() -> tuple[str, ...]:
    from dbglog.diagnose.signatures import BUILTIN

    return tuple(sorted({n for sig in BUILTIN for group in sig.needles if group for n in group}))


def _may_fail(text: str, signatures) -> bool:
    """Can any signature match ``text``? Every built-in match holds one of its literal needles (the
    signature scan's own rule: see run/signatures.py), so a note without one is skipped for ~20 us
    instead of a scan's ~0.6 ms; a user's regex has none, and is always tried."""
    if signatures is not None and any(s.source != "builtin" for s in signatures):
        return True
    return any(n in text for n in _builtin_needles())


# When no signature reads a text (a library's own error the catalog does not know: lmdeploy's
# "[TM][ERROR] ... allocator.h:197", a worker's "RuntimeError: Out of workspace memory"), its error line
# still names the failure: the first of these kinds found, its last line (the final error of a paste).
FALLBACK_LINES = tuple(recache.compile(p) for p in (
    r"(?<![A-Za-z0-9_.])(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception): +\S",  # a Python exception with a message
    r"\bLLVM ERROR: +\S",                                                  # LLVM / MLIR (Triton, XLA)
    r"\S:\d+(?::\d+)?\)?: (?:fatal )?error: +\S",                          # a compiler: file:line:col: error:
    r"\b[Aa]ssertion\b.{0,200}\bfail",                                     # a C/C++ assertion
    r"\bterminate called after throwing\b",
))
FALLBACK = "error.line"  # the signature of a fingerprint read that way


def _fallback_line(lines: list[str]) -> int | None:
    """The index of the error line of a text no signature reads (``FALLBACK_LINES``), else None."""
    for rx in FALLBACK_LINES:
        for i in range(len(lines) - 1, -1, -1):
            if rx.search(lines[i]):
                return i
    return None


_OPEN_END = recache.compile(r"[,:=(][ \t]*$")  # a line that stops mid-clause: after a comma, a colon, "=", "("


def _join_soft_wraps(text: str) -> str | None:
    """The text with the lines a viewer wrapped at a word (not at a fixed width) joined back: a line
    that stops mid-clause (``_OPEN_END``) and a next line that starts at the margin and is no record
    of its own (no log prefix, no traceback line). None when nothing is joined."""
    out: list[str] = []
    joined = False
    for line in text.splitlines():
        if out and _OPEN_END.search(out[-1]) and line[:1].isalnum() and strip_prefixes(line) == line \
                and not line.startswith(("Traceback", "File ", "frame #", "Exception raised")):
            out[-1] = out[-1].rstrip() + " " + line
            joined = True
        else:
            out.append(line)
    return "\n".join(out) + "\n" if joined else None


# a paste cut at a fixed width inside a word ("Loaded runtime CuDNN l" / "ibrary: 7.4.1"): read joined only when the
# text as it is reads as no failure, and kept only when the joined text does
_MID_WORD = recache.compile(r"(?<=[a-z])\n(?=[a-z])")
# a line's tail on the next line (the spaces before the break bounded: a line of thousands of tabs stays linear)
_WRAPPED = recache.compile(r"(?<![.:)\]}!?;])[ \t]{0,256}\n[ \t]{1,8}(?=[a-z])")


def fingerprint_text(text: str, signatures=None, fallback: bool = True) -> Fingerprint | None:
    """The fingerprint of a failure told in ``text`` (a log, an error block an import found in a
    document), None when nothing in it reads as a failure. ``signatures``: the catalog (default:
    built-in). ``fallback``: when no signature matches, an error line (``FALLBACK_LINES``) still names
    the failure, as signature ``error.line``."""
    from dbglog.diagnose import signatures as sigmod

    if not text or not text.strip():
        return None
    m = sigmod.classify_text(text, signatures, max_key_lines=4) if _may_fail(text, signatures) else None
    # a message a terminal, a viewer or a paste wrapped: read it joined once, each way in turn, only while nothing matched
    for joined in (lambda t: _WRAPPED.search(t) and _WRAPPED.sub(" ", t), _join_soft_wraps,
                   lambda t: _MID_WORD.search(t) and _MID_WORD.sub("", t)):
        join = joined(text) if m is None else None
        if join:
            m = sigmod.classify_text(join, signatures, max_key_lines=4) if _may_fail(join, signatures) else None
            text = join if m is not None else text
    if m is not None and _OPEN_END.search(m.line):
        # the key line stops mid-clause ("OutOfResources: out of resource: shared memory," over "Required: 98304, ..."):
        # the message wrapped, and its tail is part of it when the joined text reads as the same failure
        join = _join_soft_wraps(text)
        again = sigmod.classify_text(join, signatures, max_key_lines=4) if join else None
        if again is not None and again.name == m.name:
            m, text = again, join
    lines = text.splitlines()
    if m is not None:
        return build(m.name, [t for _, t in m.key_lines], lines, m.line_no - 1)
    return _fallback(lines) if fallback else None


def _fallback(lines: list[str]) -> Fingerprint | None:
    """The fingerprint of the error line of lines no signature reads (``FALLBACK_LINES``), else None."""
    at = _fallback_line(lines)
    if at is None:
        return None
    # (a Python exception is named as its traceback would name it: the same line with and without one)
    exc = _EXCEPTION.search(strip_prefixes(lines[at]))
    return build(f"py.traceback:{exc.group(0).rsplit('.', 1)[-1]}" if exc else FALLBACK, [lines[at]], lines, at)


_FENCE = recache.compile(r"^ {0,3}(```|~~~)[^\n]*\n(.*?)^ {0,3}\1", re.M | re.S)


def error_blocks(text: str) -> list[str]:
    """The blocks of a document or note that may hold one error each: its fenced code blocks, and the
    prose around them as one more block."""
    blocks = [m.group(2) for m in _FENCE.finditer(text)]
    rest = _FENCE.sub("", text)
    return blocks + ([rest] if rest.strip() else [])


def fingerprint_blocks(text: str, signatures=None, memo: dict | None = None) -> list[Fingerprint]:
    """One fingerprint per error block an import (or a record) holds, each key once, in order: the
    hook the importer calls (``fingerprint_text`` for one block). ``memo``: blocks already read, by
    text (an import reads each block in the document and again where the record keeps it)."""
    out: dict[str, Fingerprint] = {}
    blocks = error_blocks(text or "")
    fenced = len(blocks) - (1 if _FENCE.sub("", text or "").strip() else 0)
    for n, block in enumerate(blocks):
        # (the prose around code blocks is read by the signatures only: a sentence naming an error is
        # not one; a text without code blocks, a log, is read whole)
        key = (block.rstrip("\n"), n < fenced or not fenced)  # (a fenced block keeps its last newline)
        fp = memo.get(key, False) if memo is not None else False
        if fp is False:
            fp = fingerprint_text(block, signatures, fallback=key[1])
            if memo is not None:
                memo[key] = fp
        if fp is not None:
            out.setdefault(fp.key, fp)
    return list(out.values())


def fingerprint_run(run: dict, output: str = "") -> Fingerprint | None:
    """The fingerprint of a recorded run (``runner`` / ``runs show`` dict) that failed, from its key
    lines, its evidence and its output's tail (``output``: may be empty, a pruned run's)."""
    if run.get("outcome") in (None, "pass") or not (run.get("signature") or run.get("outcome")):
        return None
    keys = [k.get("text", "") for k in run.get("key_lines") or [] if isinstance(k, dict)]
    lines = output.splitlines() if output else []
    if not run.get("signature"):  # (no signature read it: its error line may still name it, as import reads it)
        fp = _fallback(lines[-2 * WINDOW:])
        if fp is not None:
            return fp
        if not any(k.strip() for k in keys):
            return None  # (a silent failure, a bare hang: nothing that tells it from any other)
    idx = _find_line(lines, keys[0]) if keys and lines else None
    return build(run.get("signature") or run["outcome"], keys, lines, idx, run.get("evidence") or [])


def _find_line(lines: list[str], key: str) -> int | None:
    want = key.strip()[:120]
    if not want:
        return None
    for i in range(len(lines) - 1, -1, -1):  # (the last occurrence: a tail read starts mid-file)
        if want in lines[i]:
            return i
    return None


# --- near matches ----------------------------------------------------------------------------

@functools.cache
def _ratio():
    from rapidfuzz import fuzz  # (imported on the first comparison: fingerprinting alone never needs it)

    return fuzz.ratio


MIN_PREFIX = 40  # a key line cut short still names its failure from this many characters on
NEAR = 88  # normalised key lines at least this similar (rapidfuzz ratio, 0-100) are one failure


@dataclass(frozen=True)
class Likeness:
    level: str  # exact | near | similar | none
    score: int  # 0-100: how alike the key lines' messages are (rapidfuzz ratio; 100 for a line cut short)
    why: str  # what matched, or what differs

    @property
    def guess(self) -> bool:
        """Is this a judgement rather than the same fingerprint? Every match but an exact one is: a near
        match is "same failure" by similarity, and on rounds of real logs the rules had not seen, near
        matches were wrong often enough (docs/seen-before.md) that the output says so."""
        return self.level != "exact"

    def evidence(self) -> str:
        """The match in words, for a guess's label: the key lines' likeness and what matched."""
        if self.level == "exact":
            return self.why
        return f"key lines {self.score}% alike; {self.why}"


def similarity(a: Fingerprint, b: Fingerprint, near: int = NEAR, score: float | None = None) -> Likeness:
    """How alike two failures are. ``exact``: the same key. ``near``: the same signature, nothing that
    disagrees (kernel, operation, user frames), key lines at least ``near`` alike and a shared kernel or
    frame or both sides without either. ``similar``: the same, without that shared detail on one side
    (a note that quotes the line). ``none``: anything else. ``score``: the key lines' ratio when the
    caller has it already (a batch compared in C)."""
    same = (a.signature, a.line, a.frames, a.kernel, a.op) == (b.signature, b.line, b.frames, b.kernel, b.op)
    if same and not _siteless(a, b):
        return Likeness("exact", 100, "same fingerprint")  # (what the key hashes, without hashing)
    differs = disagreement(a, b)
    if differs:
        return Likeness("none", 0, differs)
    if names_cause(a):  # (the diagnosis is the failure: its wording and torch's site vary)
        # (the score is only evidence here: torch words one cause many ways)
        score = int(round(_ratio()(message(a.line), message(b.line)) if score is None else score))
        return Likeness("near", score, f"a signature that names the cause ({a.signature})")
    ma, mb = message(a.line), message(b.line)
    score = int(round(_ratio()(ma, mb) if score is None else score))
    cut = holds(ma, mb)
    if score < near and cut:
        score = near
    if score < near:
        return Likeness("none", score, "different key line")
    changed = "" if cut else _changed_words(a.line, b.line)
    if changed:  # (words added or left out are a version's or a paste's; a word replaced is another error)
        return Likeness("none", score, f"a different word: {changed}")
    shared = _shared(a, b)
    bare = not (a.kernel or a.frames) and not (b.kernel or b.frames)
    if _siteless(a, b):
        return Likeness("similar", score, "the same message, and nothing names where it happened")
    if shared or bare:
        return Likeness("near", score, shared or "same key line")
    if not _names_no_site(a, b):  # (a message that is its own site: one check, one fix)
        return Likeness("near", score, "same key line, a message that says where it failed")
    return Likeness("similar", score, "same key line; one side names no kernel or frames")


def _shared(a: Fingerprint, b: Fingerprint) -> str:
    """What two failures share that says where they happened ('' if nothing): the kernel, a user frame."""
    if a.kernel and a.kernel == b.kernel:
        return f"same kernel {a.kernel}"
    frame = next((f for f in a.frames if f in b.frames), None)
    return f"same frame {frame}" if frame else ""


def disagreement(a: Fingerprint, b: Fingerprint) -> str:
    """What tells two failures apart whatever their lines say ('' when nothing does): another signature,
    kernel, operation, collective size or innermost user frame."""
    if a.signature != b.signature:
        return "different signature"
    for what, x, y in (("kernel", a.kernel, b.kernel), ("operation", a.op, b.op)):
        if x and y and x != y:
            return f"different {what} ({x} vs {y})"
    if a.signature in _PER_LIBRARY:
        la, lb = _library(a.line), _library(b.line)
        if la and lb and la != lb:  # flash-attn and apex built against another torch are two fixes
            return f"different library ({la} vs {lb})"
    op = _PER_OP.get(a.signature)
    if op is not None:
        oa, ob = op.search(a.line), op.search(b.line)
        if oa and ob and oa.group(1) != ob.group(1):
            return f"different op ({oa.group(1)} vs {ob.group(1)})"
    if names_cause(a):
        return ""
    kept_a, kept_b = _KEPT_NUMBERS.findall(a.line), _KEPT_NUMBERS.findall(b.line)
    if kept_a and kept_b and kept_a != kept_b:  # two collectives of other sizes: the line's numbers that stay
        return f"different collective ({' '.join(kept_a)} vs {' '.join(kept_b)})"
    if a.frames and b.frames and a.frames[0] not in b.frames and b.frames[0] not in a.frames:
        return f"different frames ({a.frames[0]} vs {b.frames[0]})"
    return ""


def fields_text(fp: Fingerprint) -> str:
    """The fingerprint's fields as one text, for a similarity over all of them: the key line's message,
    the user frames, the kernel and the operation."""
    return " ".join((message(fp.line), *fp.frames, fp.kernel or "", fp.op or "")).strip()


def siteless(a: Fingerprint, b: Fingerprint) -> bool:
    """Do two failures of one message say nothing about where they happened (no kernel, frames or
    collective on either side, a message that names no site)? Such a pair is at most similar."""
    return not names_cause(a) and _siteless(a, b)


# Signatures that name the cause and its fix whatever line reported them (a driver older than the CUDA
# runtime, no driver, a CPU-only torch, NVML refusing a query): torch words and places them differently
# by version ("THCudaCheck FAIL file=THCGeneral.cpp ..." vs "RuntimeError: cuda runtime error (35) : ...
# at Module.cpp:34", 'raise AssertionError("Torch not compiled ...")' vs the exception line), so two of
# one of them are the same failure. (Not where the line names which part failed: the container
# toolkit's mount vs initialization error, a missing library's name.)
CAUSE_SIGNATURES = frozenset(("driver.insufficient", "driver.no_driver", "build.torch_without_gpu",
                              "nvml.no_permission", "runtime.cuda_in_forked_child", "build.xformers_without_cuda",
                              "build.cuda_version_mismatch", "build.gpu_too_old", "build.xformers_torch_mismatch",
                              "build.extension_torch_mismatch", "build.extension_cxx11_abi",
                              "gpu.xformers_bf16_unsupported", "build.cuda_headers_missing",
                              "build.bitsandbytes_windows", "gpu.xformers_gpu_too_new", "build.trt_library_mismatch",
                              "build.xformers_device_unsupported",
                              "mps.unsupported_op", "build.jax_cuda_library"))
# ... of which these name the library that failed to load (or whose header is missing): two libraries are two failures
_PER_LIBRARY = frozenset(("build.extension_torch_mismatch", "build.extension_cxx11_abi", "build.cuda_headers_missing",
                          "build.bitsandbytes_binary"))
# ... and this one the op that has no kernel ("aten::index.Tensor", however torch's version words it): two ops are two
_PER_OP = {"mps.unsupported_op": recache.compile(r"'(\w+::[\w.]+)'"),
          "build.jax_cuda_library": recache.compile(r"\b(cu[A-Z][A-Za-z]+|NCCL)\b")}  # (cuSPARSE and cuDNN: two)
# ... and signatures that name the cause by the library they name, but one: bitsandbytes falling back to its CPU binary
# has several causes (Windows, no CUDA runtime on the path), a CUDA binary its package lacks ("libbitsandbytes_cuda122")
# one, whether the log shows it loaded ("bin ...") or missing ("Required library version not found: ...")
_CAUSE_UNLESS_LIBRARY = {"build.bitsandbytes_binary": "libbitsandbytes_cpu"}


def names_cause(fp: Fingerprint) -> bool:
    """Does the fingerprint's signature name the failure's cause (``CAUSE_SIGNATURES``, ``_CAUSE_UNLESS_LIBRARY``)?"""
    if fp.signature in CAUSE_SIGNATURES:
        return True
    unless = _CAUSE_UNLESS_LIBRARY.get(fp.signature)
    return unless is not None and _library(fp.line) not in ("", unless)


_SO_NAME = recache.compile(r"([\w.+-]+?)(?:\.cpython[\w.-]*|\.abi3)?\.so\b")
_HEADER_NAME = recache.compile(r"(\w+)\.h(?:pp)?\b")


def _library(line: str) -> str:
    """The shared library a loader line names, without its directory and Python tag, else the header a compiler
    line names ('' when none)."""
    m = _SO_NAME.search(line) or _HEADER_NAME.search(line)
    return m.group(1) if m else ""

# Signatures whose message says what happened but never where (every OOM, every illegal address, every
# bare cuBLAS status reads alike): two of them without a kernel, frames or collective on either side are
# only similar. (vLLM's KV-cache check is not one: the message is the check, and names its own fix.)
SITELESS = ("oom.torch", "oom.runtime", "oom.exception_type", "oom.mps", "oom.shm", "oom.host_killer", "gpu.",
            "rocm.memory_fault", "rocm.memory_violation", "hip.", "py.traceback:", "cuda.", "nccl.error",
            "nccl.result_text", "cublas:", "blas.", "cudnn", "triton.compilation_error", FALLBACK)
# ... except a free-text message (any exception's, an error line no signature reads) that names the source
# file it failed in ("[TM][ERROR] Assertion fail: Barrier.h:N"), or is a check about the machine long
# enough to say which (``_MACHINE``): "only supported on GPUs with compute capability of at least 8.0"
# names its failure; Triton's "PassManager::run failed" (any kernel, any pass) or "CUDA error: invalid
# argument" could be any of a thousand.
FREE_TEXT = ("py.traceback:", "triton.compilation_error", FALLBACK)
SPECIFIC_WORDS = 5  # words of three letters or more, beyond the exception's name
_WORD = recache.compile(r"(?<![<\w])[A-Za-z][A-Za-z_]{2,}")
_SOURCE_SITE = recache.compile(r"\b[\w-]+\.(?:c|cc|cpp|cxx|cu|cuh|h|hpp|hip):N\b")
# ... or that names what it could not import and from where ("cannot import name 'triton_key' from
# 'triton.compiler.compiler'"): one package's API against another's version, whatever program imported it
_NAMED_SITE = recache.compile(r"\bcannot import name \w+ from [\w.]+"
                               # ... or the class whose attribute is missing ("'DeepSpeedCPUAdam' object has no
                               # attribute 'ds_opt_adam'"): a library's object half built, not any None in any program
                               r"|\b(?!(?:NoneType|str|int|float|list|dict|tuple|bool|bytes|set|function|module|type|object)\b)"
                               r"[A-Za-z_]\w{2,60} object has no attribute \w+")
# NCCL's warning names the file of its own source that failed ("transport/nvls.cc:N NCCL WARN Cuda failure 1 'invalid
# argument'"): where the failure happened, as a frame would say
_WARN_SITE = recache.compile(r"\b[\w-]+\.(?:cc|cpp|cu|h):N NCCL WARN\b"
                            # ... as a CUDA-call check does, with the call that failed ("CUDNN failure 9: ... ;
                            # file=batch_norm.cc ; line=N ; expr=cudnnBatchNormalizationForwardInference(...)")
                            r"|\bfile=[\w.-]+\.(?:c|cc|cpp|cu|h)\b.{0,40}\bexpr=\w+\(")


# A check about the machine (its GPU, its driver, what the build supports) names the failure whatever
# program ran into it; a check about the program's own values ("Expected all tensors to be on the same
# device", a shape, an index) is each program's own bug, told apart only by its frames.
_MACHINE = recache.compile(r"\b(?:GPUs?|compute capability|CUDA capability|sm_\d+|gfx\d+|Ampere|Turing|Volta|Pascal|Hopper"
                      r"|Blackwell|driver|compiled|kernel image|architecture|[Bb]float16|bf16|<gpu>)\b")


# Python's own exceptions, raised anywhere for anything; a library's own class ("MissingCUDAException") is raised at the
# few places that library checks one thing
_BUILTIN_EXCEPTIONS = frozenset(n for n in dir(builtins) if isinstance(getattr(builtins, n), type)
                                and issubclass(getattr(builtins, n), BaseException))


def _own_exception(signature: str) -> bool:
    name = signature.removeprefix("py.traceback:").rsplit(".", 1)[-1]
    return signature.startswith("py.traceback:") and name not in _BUILTIN_EXCEPTIONS


def _specific(fp: Fingerprint) -> bool:
    if not fp.signature.startswith(FREE_TEXT):
        return False
    msg = message(fp.line)
    if _own_exception(fp.signature) and len(_WORD.findall(msg)) >= SPECIFIC_WORDS:
        return True
    if _SOURCE_SITE.search(msg) is not None or _NAMED_SITE.search(msg) is not None:
        return True
    return len(_WORD.findall(msg)) >= SPECIFIC_WORDS and _MACHINE.search(msg) is not None


def _names_no_site(a: Fingerprint, b: Fingerprint) -> bool:
    """Is this a message that says what happened but not where (``SITELESS``, not ``_specific``, not a library's
    warning that names its own source file, ``_WARN_SITE``)?"""
    return a.signature.startswith(SITELESS) and not (_specific(a) or _specific(b)) \
        and not (_WARN_SITE.search(a.line) and _WARN_SITE.search(b.line))


def _siteless(a: Fingerprint, b: Fingerprint) -> bool:
    return _names_no_site(a, b) and not (a.kernel or a.frames or a.op or b.kernel or b.frames or b.op)


_QUOTES = recache.compile(r"[`'\"\u2018\u2019\u201c\u201d]")


# What frames a message without being it: the exception's name, C++'s terminate handler, a "what():".
_HEAD = recache.compile(r"^(?:(?:terminate called after throwing an instance of '[\w:]+'\s*)?"
                   r"(?:(?:[\w.]*(?:Error|Exception))|what\(\)):\s*)+")


@functools.lru_cache(maxsize=8192)  # (a lookup compares one line with thousands: each read once)
def message(line: str) -> str:
    """A normalised line's message, for comparing two: without its heading (``_HEAD``), quotes and
    backticks taken out (``_plain``)."""
    return _plain(_HEAD.sub("", line))


def holds(x: str, y: str) -> bool:
    """Does one message hold the other whole (``MIN_PREFIX`` characters at least)? One is the other cut
    short (an issue's title, a pasted first line) or quoted in a wrapper's sentence ("Process group
    watchdog thread terminated with exception: [Rank N] Watchdog caught ...")."""
    short, long_ = (x, y) if len(x) <= len(y) else (y, x)
    return len(short) >= MIN_PREFIX and short in long_


def _plain(line: str) -> str:
    """A normalised line as its words read, for comparing two: quotes and backticks (markdown's, a
    version's) read as spaces."""
    return _SPACE.sub(" ", _QUOTES.sub(" ", line)).strip()  # (a space: "the`dtype`" reads as "the dtype")


_SOURCE_AT = recache.compile(r"^(?:[\w.-]*/)*([\w-]+)\.(?:c|cc|cpp|cxx|cu|cuh|h|hpp|hip|py):N:?$")


def _source_stem(word: str) -> str:
    m = _SOURCE_AT.match(word)
    return m.group(1) if m else ""


def _changed_words(x: str, y: str) -> str:
    """The first word of one line replaced by another in the other ('' when the lines differ only by
    words added or left out, quotes aside); the exception's own name may change (``RuntimeError``
    became ``torch.AcceleratorError``), and a line cut short mid-word (an issue title) ends in a
    prefix of the other's word."""
    import difflib

    wx, wy = _plain(x).split(), _plain(y).split()
    lx, ly = [w.lower() for w in wx], [w.lower() for w in wy]  # (a version's capitals: "CuDNN error", "cuDNN error")
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, lx, ly, autojunk=False).get_opcodes():
        if op != "replace" or (i1 == j1 == 0 and _EXCEPTION.match(wx[0] + " ") and _EXCEPTION.match(wy[0] + " ")):
            continue
        if "".join(lx[i1:i2]) == "".join(ly[j1:j2]):
            continue  # a word broken by a terminal's wrap ("a n" over "on-contiguous input")
        if (i2 == len(wx) and i2 - i1 == 1 and wy[j1].startswith(wx[i1])) or \
                (j2 == len(wy) and j2 - j1 == 1 and wx[i1].startswith(wy[j1])):
            continue  # the end of a line cut short mid-word
        if i2 - i1 == j2 - j1 == 1 and _source_stem(wx[i1]) and _source_stem(wx[i1]) == _source_stem(wy[j1]):
            continue  # the logging code's own file, moved or renamed by a version (ibvwrap.c:N, misc/ibvwrap.cc:N)
        return f"{' '.join(wx[i1:i2])} vs {' '.join(wy[j1:j2])}"
    return ""


def same_failure(a: Fingerprint, b: Fingerprint) -> bool:
    """The bench's and recall's "same failure": an exact or near match."""
    return similarity(a, b).level in ("exact", "near")
