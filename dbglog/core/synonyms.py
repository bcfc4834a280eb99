"""The field's language, as data: abbreviations, synonyms and environment variables of GPU/ML-infra
debugging, and the identifier splitting search uses on queries.

``GROUPS`` are sets of phrases that mean the same thing to someone chasing a GPU bug (``IMA`` and
"illegal memory access"; ``TP`` and "tensor parallel"). ``ENV_VARS`` maps an environment variable
to the words people use for what it does (``PYTORCH_NO_CUDA_MEMORY_CACHING`` and "caching
allocator off"); the variable's own words (``no cuda memory caching``) need no entry, the index
already splits identifiers at ``_``. Search expands a query phrase found here into all of its
group's phrases (see ``search.parse_query``). Edit this file to teach search a new word; keep each
phrase in the words a person would write (case, ``-``, ``_`` and ``.`` do not matter).
"""

from __future__ import annotations

from functools import lru_cache

from dbglog.core.gloss import gloss
from dbglog.util import recache  # (compiled once per install: see util/recache.py)

GROUPS: list[tuple[str, ...]] = [
    # errors and symptoms
    ("ima", "illegal memory access", "illegal address", "cudaErrorIllegalAddress", "illegal memory"),
    ("oom", "out of memory", "outofmemory", "OutOfMemoryError", "cudaErrorMemoryAllocation", "ooms", "oomed"),
    ("nan", "nans", "not a number"),
    ("inf", "infs", "infinity"),
    ("segfault", "seg fault", "segmentation fault", "sigsegv", "segv"),
    ("sigabrt", "abort", "core dumped"),
    ("hang", "hung", "hangs", "stuck", "freeze", "freezes", "frozen", "stall", "stalls", "deadlock"),
    ("misaligned address", "cudaErrorMisalignedAddress", "misaligned"),
    ("device side assert", "device-side assertion", "device side assertion", "dsa", "TORCH_USE_CUDA_DSA"),
    ("xid", "xid error", "gpu fell off the bus", "fallen off the bus"),
    ("ecc", "ecc error", "uncorrectable ecc"),
    ("nccl timeout", "watchdog timeout", "collective timeout", "watchdog caught collective operation timeout"),
    ("ring timeout", "gpu reset", "device lost", "VK_ERROR_DEVICE_LOST"),
    ("slow", "slowdown", "slower", "regression", "perf regression", "throughput drop", "low throughput"),
    ("memory leak", "leak", "leaks", "memory growth", "growing memory"),
    ("fragmentation", "fragmented", "reserved but unallocated"),
    ("race", "race condition", "data race", "racecheck"),
    # parallelism
    ("tp", "tensor parallel", "tensor parallelism", "tensor-parallel-size", "tp size"),
    ("dp", "data parallel", "data parallelism"),
    ("pp", "pipeline parallel", "pipeline parallelism", "pipeline-parallel-size"),
    ("ep", "expert parallel", "expert parallelism"),
    ("sp", "sequence parallel", "sequence parallelism"),
    ("context parallel", "context parallelism", "context-parallel"),  # not "cp": that is the copy command
    ("ddp", "distributed data parallel", "DistributedDataParallel"),
    ("fsdp", "fully sharded data parallel", "FullyShardedDataParallel"),
    ("zero", "deepspeed zero", "zero stage", "zero3"),
    ("moe", "mixture of experts"),
    ("allreduce", "all reduce", "all_reduce"),
    ("allgather", "all gather", "all_gather"),
    ("reducescatter", "reduce scatter", "reduce_scatter"),
    ("alltoall", "all to all", "all_to_all"),
    ("p2p", "peer to peer", "peer-to-peer", "NCCL_P2P"),
    ("ib", "infiniband", "NCCL_IB"),
    ("nvlink", "nvl"),
    ("rdma", "gpudirect", "gdr", "gpu direct rdma"),
    # kernels, attention, compilers
    ("fa", "fa2", "fa3", "flash attention", "flashattention", "flash attn", "flashattn", "flash_attn",
     "flash-attention"),
    ("sdpa", "scaled dot product attention", "scaled_dot_product_attention"),
    ("kv cache", "kvcache", "kv-cache", "key value cache"),
    ("gemm", "matmul", "matrix multiply"),
    ("cudagraphs", "cuda graphs", "cuda graph", "cudagraph", "graph capture", "cuda-graph", "cudagraph trees"),
    ("eager", "eager mode", "enforce eager", "enforce-eager", "no cudagraphs", "disable cuda graphs",
     "disable cudagraphs", "cuda graphs off", "without cuda graphs"),
    # a bisection is how one finds which change / switch / call does it
    ("bisect", "bisection", "bisecting", "find which", "narrow down", "pinpoint", "git bisect"),
    ("torch.compile", "torch compile", "inductor", "torchinductor", "dynamo", "torchdynamo"),
    ("triton", "triton kernel"),
    ("bwd", "backward", "backward pass"),
    ("fwd", "forward", "forward pass"),
    ("smem", "shared memory"),
    ("hbm", "device memory", "global memory"),
    # clocks (AMD's pp_dpm_mclk / pp_dpm_sclk, overclocking notes): the memory clock and the core (shader) clock
    ("mclk", "memory clock", "mem clock", "vram clock", "pp_dpm_mclk"),
    ("sclk", "core clock", "gpu clock", "shader clock", "graphics clock", "pp_dpm_sclk"),
    ("tma", "tensor memory accelerator"),
    ("warp specialization", "warp specialisation", "warp-specialized"),
    ("jit", "just in time"),
    ("ptx", "ptxas"),
    # precision
    ("bf16", "bfloat16"),
    ("fp16", "float16", "half precision"),
    ("fp32", "float32", "single precision"),
    ("fp8", "float8", "e4m3", "e5m2"),
    ("tf32", "tensorfloat32", "allow_tf32"),
    ("amp", "autocast", "mixed precision"),
    # memory management
    ("caching allocator", "cuda caching allocator", "CUDACachingAllocator"),
    ("uvm", "unified memory", "managed memory", "cudaMallocManaged", "unified virtual memory"),
    ("expandable segments", "expandable_segments"),
    ("activation checkpointing", "gradient checkpointing", "recompute", "activation recomputation"),
    ("offload", "cpu offload", "offloading"),
    # tools
    ("ncu", "nsight compute", "nsight-compute", "nv-nsight-cu-cli"),
    ("nsys", "nsight systems", "nsight-systems"),
    ("compute-sanitizer", "compute sanitizer", "memcheck", "cuda-memcheck", "sanitizer"),
    ("cuda-gdb", "cuda gdb"),
    ("py-spy", "pyspy", "py spy"),
    ("rocprof", "rocprofv2", "rocprofv3", "omniperf"),
    ("hip", "rocm", "amdgpu", "amd gpu"),
    # (miopen, rocblas and hipblaslt are three libraries: one is not the other)
    ("vulkan", "vk"),
    ("nvidia-smi", "nvidia smi", "nvsmi"),
    ("dcgm", "dcgmi"),
    ("ld_preload", "ld preload"),
    # libraries and runtimes people name by their short forms
    ("ort", "onnxruntime", "onnx runtime", "onnxruntime-gpu"),
    ("trt-llm", "tensorrt-llm", "tensorrt llm", "trtllm"),
    ("caching allocator", "cudacachingallocator", "cuda caching allocator", "cuda allocator"),
    ("nvml", "nvidia management library"),
    # hardware: product names and the architecture names logs and build flags use
    ("jetson", "orin", "jetson orin", "agx orin", "orin nx", "xavier", "jetpack", "l4t", "tegra"),
    ("h100", "hopper", "sm90", "sm_90", "gh100"),
    ("h200", "hopper"),
    ("a100", "ampere", "sm80", "sm_80", "ga100"),
    ("mi250x", "mi250", "gfx90a"),
    ("mi300x", "mi300", "gfx942"),
    ("mi210", "gfx90a"),
    ("rdna3", "gfx1100", "7900 xtx", "rx 7900"),
    # frameworks and general words
    ("vllm", "v-llm"),
    ("sglang", "sg-lang"),
    ("llama.cpp", "llamacpp", "llama cpp", "ggml"),
    ("checkpoint", "ckpt"),
    ("lr", "learning rate"),
    ("eps", "epsilon"),
    ("gas", "gradient accumulation steps", "gradient_accumulation_steps", "grad accum", "gradient accumulation"),
    ("bs", "batch size", "batch_size", "batchsize", "batch-size"),
    ("seq len", "sequence length", "seqlen", "max_seq_len", "context length", "seq", "sequence"),
    ("single node", "one node", "1 node", "single-node"),
    ("multi node", "multinode", "multi-node", "two nodes", "several nodes", "cross node"),
    ("dataloader", "data loader", "data-loader"),
    ("conv", "convolution", "convolutions", "conv2d", "conv3d"),
    ("nic", "network interface", "network interfaces", "network card"),
    ("env var", "environment variable"),
    ("config", "configuration", "cfg"),
    ("mem", "memory"),
    ("perf", "performance"),
    ("repro", "reproducer", "reproduce", "minimal repro"),
    ("upgrade", "update", "bump", "newer version"),
    ("downgrade", "older version", "roll back", "rollback"),
    ("checkout", "check out", "checked out"),  # a verb's compound and its parts: git checkout
    ("rebuild", "rebuilt", "recompile", "recompiled"),  # (an irregular past: porter keeps "rebuilt")
    ("disable", "disabled", "turn off", "switch off", "off"),
    ("enable", "enabled", "turn on", "switch on"),
    ("increase", "raise", "bigger", "larger", "higher"),
    ("decrease", "reduce", "lower", "smaller"),
    ("limit", "cap", "capped", "limited", "limits", "caps"),
    ("machine", "box", "host", "server", "runner", "workstation"),
]

# Environment variable -> the words people write for what setting it does.
ENV_VARS: dict[str, tuple[str, ...]] = {
    "PYTORCH_NO_CUDA_MEMORY_CACHING": ("caching allocator off", "disable caching allocator",
                                       "disable the caching allocator", "no caching allocator",
                                       "without the caching allocator", "turn off caching allocator"),
    "PYTORCH_CUDA_ALLOC_CONF": ("allocator config", "allocator settings", "expandable segments",
                                "max_split_size_mb"),
    "CUDA_LAUNCH_BLOCKING": ("synchronous launches", "synchronous kernel launches", "launch blocking",
                             "blocking launches", "sync launches", "serialize kernel launches"),
    "TORCH_USE_CUDA_DSA": ("device side assertions", "device-side assertions"),
    "CUDA_VISIBLE_DEVICES": ("visible devices", "restrict gpus", "pin gpus"),
    "NCCL_P2P_DISABLE": ("disable p2p", "p2p off", "no p2p", "disable peer to peer"),
    "NCCL_P2P_LEVEL": ("p2p level",),
    "NCCL_IB_DISABLE": ("disable infiniband", "infiniband off", "no infiniband", "disable ib"),
    "NCCL_SHM_DISABLE": ("disable shared memory transport", "shm off"),
    "NCCL_DEBUG": ("nccl debug logging", "nccl logs", "nccl debug"),
    "NCCL_DEBUG_SUBSYS": ("nccl debug subsystems",),
    "NCCL_ALGO": ("nccl algorithm", "ring algorithm", "tree algorithm"),
    "NCCL_PROTO": ("nccl protocol", "ll128", "simple protocol"),
    "NCCL_SOCKET_IFNAME": ("network interface", "socket interface"),
    "NCCL_CUMEM_ENABLE": ("cumem",),
    "NCCL_NVLS_ENABLE": ("nvls", "nvlink sharp"),
    "NCCL_NET_GDR_LEVEL": ("gpudirect rdma level", "gdr level"),
    "TORCH_NCCL_ASYNC_ERROR_HANDLING": ("async error handling",),
    "NCCL_ASYNC_ERROR_HANDLING": ("async error handling",),
    "TORCH_NCCL_BLOCKING_WAIT": ("blocking wait",),
    "TORCH_NCCL_DUMP_ON_TIMEOUT": ("flight recorder", "dump on timeout"),
    "TORCH_NCCL_TRACE_BUFFER_SIZE": ("flight recorder", "trace buffer"),
    "TORCH_DISTRIBUTED_DEBUG": ("distributed debug", "ddp debug"),
    "TORCH_COMPILE_DEBUG": ("compile debug",),
    "TORCHDYNAMO_DISABLE": ("disable dynamo", "disable torch.compile", "no torch.compile", "eager"),
    "TORCHINDUCTOR_COMPILE_THREADS": ("compile threads",),
    "TORCH_LOGS": ("torch logs", "recompilation logs"),
    "CUDA_MODULE_LOADING": ("lazy loading", "lazy module loading"),
    "CUDA_DEVICE_MAX_CONNECTIONS": ("max connections", "hardware queues"),
    "VLLM_ATTENTION_BACKEND": ("attention backend",),
    "VLLM_USE_V1": ("v1 engine",),
    "VLLM_ENFORCE_EAGER": ("enforce eager", "eager"),
    "HIP_LAUNCH_BLOCKING": ("synchronous launches", "launch blocking"),
    "AMD_SERIALIZE_KERNEL": ("serialize kernels", "serialise kernels"),
    "AMD_LOG_LEVEL": ("hip logging", "amd log level"),
    "HSA_ENABLE_SDMA": ("sdma", "dma engines"),
    "HSA_OVERRIDE_GFX_VERSION": ("gfx version override", "override gfx"),
    "HSA_XNACK": ("xnack", "page migration"),
    "HIP_VISIBLE_DEVICES": ("visible devices",),
    "GGML_CUDA_ENABLE_UNIFIED_MEMORY": ("unified memory", "uvm"),
    "OMP_NUM_THREADS": ("openmp threads", "omp threads"),
    "TRITON_CACHE_DIR": ("triton cache",),
    "TRITON_INTERPRET": ("triton interpreter",),
    "CUBLAS_WORKSPACE_CONFIG": ("cublas workspace", "deterministic cublas"),
}

_IDENT_SPLIT = recache.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_WORDS = recache.compile(r"[^\W_]+")
_ENV = recache.compile(r"^([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?:=.*)?$")


def stem(w: str) -> str:
    """A crude English stem, enough to match phrases in queries (the index itself uses porter)."""
    for suf in ("ations", "ation", "ings", "ing", "ions", "ion", "ers", "er", "edly", "ed", "ies", "es", "s", "ly"):
        if len(w) - len(suf) >= 3 and w.endswith(suf):
            return w[: -len(suf)]
    return w


def split_identifier(token: str) -> list[str]:
    """``cudaMallocAsync`` -> cuda malloc async; ``NCCL_P2P_DISABLE`` -> nccl p2p disable;
    ``flash-attn.v2`` -> flash attn v 2: split at ``_``, ``-``, ``.``, case changes and digits."""
    out = []
    for w in _WORDS.findall(token):
        if w.isupper() or w.islower() or w.isdigit():
            # letters<->digits boundaries are only split inside mixed words (fa2 stays, FlashAttention2 splits)
            out.append(w.lower())
        else:
            out += [p.lower() for p in _IDENT_SPLIT.findall(w)] or [w.lower()]
    return out


# A word (a run of ``_WORDS``) holding a case change: found in one pass over the text, not word by word (an
# import stores thousands of attempts). From a word's start only, so each word is tried once: linear time.
_COMPOUND_WORD = recache.compile(r"(?<![^\W_])[^\W_]*?(?:[a-z][A-Z]|[A-Z]{2}[a-z])[^\W_]*")


# A Latin word written against Chinese, Japanese or Korean text with no space ("已经使用packing的方式"): the index's
# tokenizer reads the whole run as one word, so "packing" alone would not find it.
_GLUED_LATIN = recache.compile(r"(?<=[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7a3])[A-Za-z][A-Za-z0-9_.+-]{0,60}"
                               r"|[A-Za-z][A-Za-z0-9_.+-]{0,60}(?=[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7a3])")

_CASE_CHANGE = recache.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")  # in every _COMPOUND_WORD
_CJK_CHAR = recache.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7a3]")  # beside every _GLUED_LATIN


def identifier_words(*texts: str) -> str:
    """The words inside the compound identifiers of some text (``cudaMallocAsync`` -> "cuda malloc
    async", ``ShardedEvalSampler`` -> "sharded eval sampler"), and the Latin words glued to CJK text
    ("使用packing的方式" -> "packing"), and the English words of another language's ("降级" -> "downgrade",
    ``gloss.gloss``), one per line: what the search index holds beside the text, since its tokenizer splits at
    ``_``, ``-``, ``.`` but not at case changes, nor between scripts, and an English question shares no word with
    a note in Chinese."""
    seen: dict[str, None] = {}
    for text in texts:
        if not text:
            continue
        # (each pattern's matches hold what these look for: most texts have neither, and the pass over them costs a
        # fifth of the patterns' own)
        for m in _COMPOUND_WORD.finditer(text) if _CASE_CHANGE.search(text) else ():
            w = m.group(0)
            if len(w) <= 100:  # a 200 KB run of letters is no identifier
                seen.setdefault(" ".join(split_identifier(w)), None)
        for m in _GLUED_LATIN.finditer(text) if _CJK_CHAR.search(text) else ():
            seen.setdefault(" ".join(split_identifier(m.group(0))), None)
        for w in gloss(text):  # English words for another language's ("降级" -> downgrade): core/gloss.py
            seen.setdefault(w, None)
    return "\n".join(seen)


def words(phrase: str) -> tuple[str, ...]:
    """The normalised word sequence of a phrase (how queries and table entries are compared)."""
    return tuple(stem(w) for w in split_identifier(phrase))


def env_name(token: str) -> str | None:
    """``PYTORCH_NO_CUDA_MEMORY_CACHING=1`` -> its name; None if the token is not an env assignment/name."""
    m = _ENV.match(token)
    return m.group(1) if m else None


@lru_cache(maxsize=1)
def table() -> dict[tuple[str, ...], tuple[str, ...]]:
    """normalised phrase -> every phrase equivalent to it (its own included)."""
    out: dict[tuple[str, ...], list[str]] = {}

    def add(key_phrase: str, phrases):
        k = words(key_phrase)
        if not k:
            return
        lst = out.setdefault(k, [])
        for p in phrases:
            if p not in lst:
                lst.append(p)

    for group in GROUPS:
        for p in group:
            add(p, group)
    for name, phrases in ENV_VARS.items():
        add(name, (name, *phrases))
        if name.count("_") >= 3:  # NO_CUDA_MEMORY_CACHING without its PYTORCH_ prefix names it too
            add(name.split("_", 1)[1], (name, *phrases))
        for p in phrases:  # "caching allocator off" -> the variable (not every other phrase of it)
            add(p, (p, name))
    return {k: tuple(v) for k, v in out.items()}


@lru_cache(maxsize=1)
def max_phrase() -> int:
    """The most words an entry has (built lazily: `attempt add` imports this module for
    ``identifier_words`` and should not pay for the table)."""
    return max(len(k) for k in table())


@lru_cache(maxsize=1)
def _bag_index() -> dict[frozenset, tuple[tuple[str, ...], ...]]:
    """The entries of two or more distinct words, by their set of words (order-free lookup)."""
    out: dict[frozenset, list] = {}
    for k in table():
        if len(k) >= 2 and len(set(k)) == len(k):
            out.setdefault(frozenset(k), []).append(k)
    return {k: tuple(v) for k, v in out.items()}


def bags(query_words: frozenset) -> list[frozenset]:
    """Entries (as word sets) whose every word is among ``query_words``, the longest first."""
    found = [k for k in _bag_index() if k <= query_words]
    return sorted(found, key=lambda k: (-len(k), sorted(k)))


def bag_keys(words: frozenset) -> list[tuple[str, ...]]:
    """The table keys a set of words stands for: every entry made of some of them (two or more),
    so "kernel launches synchronous" reaches both "synchronous kernel launches" and "synchronous
    launches" (the variables of two vendors)."""
    return [k for ws, keys in _bag_index().items() if ws <= words for k in keys]


@lru_cache(maxsize=1)
def known_words() -> frozenset:
    """Every (normalised) word of the table: words of the field, never a misspelling of another
    ("deepspeed" is not a typo of "deeper")."""
    return frozenset(w for k in table() for w in k if len(w) >= 4)


def expansions(phrase_words: tuple[str, ...]) -> tuple[str, ...]:
    """Equivalent phrases for an already normalised word sequence (empty if none)."""
    return table().get(phrase_words, ())
