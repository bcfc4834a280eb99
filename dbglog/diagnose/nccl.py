"""NCCL and torch.distributed text: TORCH_DISTRIBUTED_DEBUG=DETAIL collective mismatches, the
ProcessGroupNCCL watchdog's work counters per rank, NCCL_DEBUG=INFO rings, trees and transports.
"""

from __future__ import annotations

import re
from typing import Iterable



# --- TORCH_DISTRIBUTED_DEBUG=DETAIL: collectives that differ across ranks -------------------------

_CM_HEAD = "Detected mismatch between collectives on ranks"
_CM_RANK = re.compile(r"Rank (\d+) is running (?:inconsistent )?collective:\s*")
_CM_FIELDS = (("seq", re.compile(r"SequenceNumber=(\d+)")), ("op", re.compile(r"OpType=(\w+)")),
              ("shape", re.compile(r"TensorShape=\[([^\]]*)\]")), ("dtype", re.compile(r"TensorDtypes=(\w+)")),
              ("device", re.compile(r"TensorDeviceTypes=TensorOptions\([^,]*, device=(\w+)")))
_CM_ASPECT = re.compile(r"^\s*([A-Za-z][A-Za-z ]*?):\s*(.*?)\s*vs\s*(.*?)\s*$")


def _balanced(s: str, i: int) -> int:
    """The index just past the parenthesis group that opens at s[i] (or len(s) if unclosed)."""
    depth = 0
    for k in range(i, min(len(s), i + 4000)):
        if s[k] == "(":
            depth += 1
        elif s[k] == ")":
            depth -= 1
            if depth == 0:
                return k + 1
    return len(s)


def _cm_ranks(seg: str) -> list[dict]:
    """The two ranks the report names and their fingerprints (seq, op, shape, dtype, device)."""
    ranks: list[dict] = []
    for m in _CM_RANK.finditer(seg):
        rest = seg[m.end():]
        if rest.startswith("CollectiveFingerPrint("):
            fp = rest[:_balanced(rest, len("CollectiveFingerPrint"))]
        else:  # older torch names only the other rank's op ("but Rank 1 is running collective: REDUCE.")
            fp = "OpType=" + (re.match(r"\w*", rest).group(0))
        r: dict = {"rank": int(m.group(1))}
        for key, rx in _CM_FIELDS:
            f = rx.search(fp)
            if f:
                r[key] = int(f.group(1)) if key == "seq" else f.group(1).replace(" ", "").replace(",", ", ")
        ranks.append(r)
        if len(ranks) == 2:
            break
    return ranks


def _cm_differ(ranks: list[dict], tail: str) -> list[dict]:
    """What differs: the report's own "differ in the following aspects" list, else worked out."""
    differ = []
    for piece in re.split(r"[\n\t]", tail)[:8] if tail else []:
        a = _CM_ASPECT.match(piece)
        if a and a.group(2):
            name = re.sub(r"^Tensor (?=Tensor)", "", a.group(1)).strip()
            differ.append({"aspect": name, "values": [a.group(2), a.group(3)]})
    if not differ and len(ranks) == 2:
        for key, label in (("seq", "Sequence number"), ("op", "Op type"), ("shape", "Tensor shapes"),
                           ("dtype", "Tensor dtypes"), ("device", "Tensor devices")):
            va, vb = ranks[0].get(key), ranks[1].get(key)
            if va is not None and vb is not None and va != vb:
                differ.append({"aspect": label, "values": [str(va), str(vb)]})
    return differ


def parse_collective_mismatch(text: str | bytes) -> dict | None:
    """ProcessGroupWrapper's report under ``TORCH_DISTRIBUTED_DEBUG=DETAIL`` ("Detected mismatch
    between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(...), but Rank
    2 is running collective: ..."): per rank the sequence number, op, tensor shape, dtype and device,
    and what differs ("Collectives differ in the following aspects", or worked out here)."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    at = text.find(_CM_HEAD)
    if at < 0:
        return None
    raw = text[at:at + 8000]
    # a terminal- or issue-wrapped report has runs of spaces inside words ("collecti     ve")
    seg = re.sub(r" {3,}", "", raw.replace("\t", " "))
    tail = ""
    cut = seg.find("Collectives differ in the following aspects:")
    if cut >= 0:
        tail, seg = seg[cut:].split(":", 1)[1], seg[:cut]
    seg = seg.replace("\n", " ")
    ranks = _cm_ranks(seg)
    if not ranks:
        return None
    differ = _cm_differ(ranks, tail)

    def side(r: dict) -> str:
        s = f"rank {r['rank']} runs {r.get('op') or '?'}"
        if r.get("shape") is not None:
            s += f" [{r['shape']}]"
        if r.get("dtype"):
            s += f" {r['dtype']}"
        if r.get("seq") is not None:
            s += f" (seq {r['seq']})"
        return s

    summary = "collective mismatch: " + " but ".join(side(r) for r in ranks)
    if differ:
        summary += "; they differ in " + ", ".join(f"{d['aspect'].lower()} ({d['values'][0]} vs {d['values'][1]})"
                                                    for d in differ)
    findings = [summary]
    if any(d["aspect"].lower().startswith("sequence") for d in differ):
        findings.append("the ranks are at different points of the program; guess: one issued a collective the "
                        "other skipped (a collective under a rank-dependent branch, or an early exit)")
    if any("shape" in d["aspect"].lower() for d in differ):
        findings.append("same collective with different tensor shapes; guess: the ranks built different inputs "
                        "(uneven data split, padding, or parameters that differ across ranks)")
    return {"kind": "collective-mismatch", "ranks": ranks, "differ": differ, "summary": summary, "findings": findings}



# --- ProcessGroupNCCL watchdog: where each rank's work stopped -------------------------------------

_WD_RANK_PREFIX = re.compile(r"\[rank(\d+)\]:")
# "[PG ID 0 PG GUID 0(default_pg) Rank 5]", "[PG 0 (default_pg) Rank 3]", "[PG 1 Rank 0]", "[Rank 118]"
_WD_PG_RANK = re.compile(r"\[(?:PG (?:ID )?(\d+)(?: PG GUID (\d+))? ?(?:\(([^)\s]*)\))? )?Rank (\d+)\]")
# the words of a message may be wrapped onto the next line by whoever pasted the log: \s+ between them
_WD_FAILURE = re.compile(r"failure detected by watchdog at work sequence id:\s+(-?\d+)\s+PG\s+status:\s+last\s+"
                         r"enqueued\s+work:\s+(-?\d+),\s+last\s+completed\s+work:\s+(-?\d+)")
_WD_TIMEOUT_AT = re.compile(r"Timeout at NCCL work:\s+(-?\d+),\s+last\s+enqueued\s+NCCL\s+work:\s+(-?\d+),\s+last\s+"
                            r"completed\s+NCCL\s+work:\s+(-?\d+)")
_WD_CAUGHT = re.compile(r"Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(\d+), OpType=(\w+)"
                        r"(?:, NumelIn=(\d+), NumelOut=(\d+))?[^\n]*?Timeout\(ms\)=(\d+)\) ran for (\d+) milliseconds")


def _wd_hit(ranks: dict[int, dict], head: str, what: str, m: re.Match) -> None:
    """One watchdog line into its rank's record (the rank from torchrun's prefix, else the group's)."""
    pr = _WD_RANK_PREFIX.search(head)
    pgs = list(_WD_PG_RANK.finditer(head))
    pg = pgs[-1] if pgs else None
    rank = int(pr.group(1)) if pr else int(pg.group(4)) if pg else -1
    r = ranks.setdefault(rank, {"rank": rank if rank >= 0 else None})
    if pg and pg.group(1) is not None:
        r["pg"] = pg.group(1) + (f" ({pg.group(3)})" if pg.group(3) else "")
    if pg and pr and int(pg.group(4)) != rank:
        r["pg_rank"] = int(pg.group(4))
    if what == "counters":
        r["failed_seq"], r["last_enqueued"], r["last_completed"] = (int(m.group(i)) for i in (1, 2, 3))
    else:
        r.setdefault("failed_seq", int(m.group(1)))
        r.update(op=m.group(2), timeout_ms=int(m.group(5)), ran_ms=int(m.group(6)))
        if m.group(3) and int(m.group(3)) < 1 << 63:  # 2**64-1 is "unknown" (a coalesced group)
            r["numel"] = int(m.group(3))


def _wd_findings(rows: list[dict], text: str) -> list[str]:
    """Ranks that fell behind, work that never completed, the flight recorder's state."""
    findings: list[str] = []
    done = [r for r in rows if r.get("last_completed") is not None]
    if len({r["last_completed"] for r in done}) > 1:
        low = min(r["last_completed"] for r in done)
        high = max(r["last_completed"] for r in done)
        behind = [str(r["rank"]) for r in done if r["last_completed"] == low]
        findings.append(f"rank(s) {', '.join(behind)} completed work only up to {low} while others reached {high}: "
                        "they fell behind (guess: stuck before the next collective, or never launched it)")
    if any(r["last_completed"] < 0 for r in done):
        findings.append("no work of the process group ever completed (last completed -1); guess: a rank never "
                        "joined the first collective, or a communicator never finished its init")
    if "FlightRecorder is disabled" in text:
        findings.append("the flight recorder was off, so no rank kept its collective history: re-run with "
                        "TORCH_NCCL_TRACE_BUFFER_SIZE set (dbglog run --capture nccl-fr)")
    elif "preparing to dump debug info" in text:
        findings.append("the ranks dumped their flight-recorder buffers (TORCH_NCCL_DUMP_ON_TIMEOUT): read them with "
                        "python -m torch.distributed.flight_recorder.fr_trace")
    return findings


def parse_nccl_watchdog(text: str | bytes) -> dict | None:
    """ProcessGroupNCCL watchdog lines of every rank in the output: the work that timed out (seq,
    op, element count, timeout, how long it ran) and the process group's last enqueued and last
    completed work — the rank whose last completed work is lowest fell behind the others. The rank
    is the global one of torchrun's ``[rankN]:`` prefix where there is one (``pg_rank`` the rank
    inside a sub-group), else the one in the process group's bracket."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    if not ("failure detected by watchdog" in text or "Timeout at NCCL work" in text
            or "Watchdog caught collective operation timeout" in text):
        return None
    ranks: dict[int, dict] = {}
    hits = sorted([(m.start(), "counters", m) for rx in (_WD_FAILURE, _WD_TIMEOUT_AT) for m in rx.finditer(text)]
                  + [(m.start(), "caught", m) for m in _WD_CAUGHT.finditer(text)], key=lambda h: h[0])
    for at, what, m in hits[:2000]:
        _wd_hit(ranks, text[text.rfind("\n", 0, at) + 1:at], what, m)
    if not ranks:
        return None
    rows = sorted(ranks.values(), key=lambda r: (r["rank"] is None, r["rank"] or 0))
    findings = _wd_findings(rows, text)
    first = next((r for r in rows if r.get("failed_seq") is not None), rows[0])
    who = f"rank {first['rank']}" if first.get("rank") is not None else "a rank"
    s = f"NCCL watchdog: {who} timed out on work {first.get('failed_seq')}"
    if first.get("op"):
        s += f" ({first['op']}" + (f", {first['numel']} elements" if first.get("numel") is not None else "") \
             + (f", ran {first['ran_ms']} ms of a {first['timeout_ms']} ms timeout" if first.get("ran_ms") else "") + ")"
    if first.get("last_completed") is not None:
        s += f"; last enqueued work {first['last_enqueued']}, last completed {first['last_completed']}"
    if len(rows) > 1:
        s += f"; {len(rows)} rank(s) reported"
    return {"kind": "nccl-watchdog", "ranks": rows[:64], "summary": s, "findings": [s] + findings}



# --- NCCL_DEBUG=INFO: rings, trees and transports ------------------------------------------------
def _lines_with(text: str, needle: str, limit: int = 10000) -> Iterable[str]:
    """The lines of ``text`` holding ``needle``, found by str.find (a big log is not split)."""
    pos = n = 0
    while n < limit and (i := text.find(needle, pos)) >= 0:
        start = text.rfind("\n", 0, i) + 1
        end = text.find("\n", i)
        end = len(text) if end < 0 else end
        yield text[start:end]
        pos, n = end + 1, n + 1



# (the host starts a word and the message is stripped after: both linear on a 64 KB line, which
# "(.*?)\s*$" and a host tried at every offset were not)
_NI_LINE = re.compile(r"(?<![^\s\[\]`])([^\s\[\]`]+):(\d+):(\d+) \[(\d+)\] NCCL INFO (.*)$")
_NI_RING = re.compile(r"^(?:Channel|Ring) (\d+)(?:/(\d+))? :((?:\s+\d+)+)$")
_NI_EDGE = re.compile(r"^(?:Channel|Ring) (\d+)(?:/\d+)? : (\d+)(?:\[[^\]]*\])? -> (\d+)(?:\[[^\]]*\])?"
                      r"(?: \[(send|receive)\])? via (\S.*)$")
_NI_COMM = re.compile(r"comm 0x[0-9a-fA-F]+ rank (\d+) n[Rr]anks (\d+)(?: nNodes (\d+))?")
_NI_VERSION = re.compile(r"NCCL version (\S+)")
_NI_NETWORK = re.compile(r"Using network (\w+)")
_NI_NET_IF = re.compile(r"NET/(IB|Socket) : Using (\[\d+\]\S+(?: \[\d+\]\S+)*)")


def _transport(via: str) -> str:
    """'P2P/IPC/read' -> 'P2P/IPC', 'NET/IB/0/GDRDMA' -> 'NET/IB', 'SHM/direct/direct' -> 'SHM'."""
    parts = via.split("/")
    if parts[0] in ("P2P", "NET") and len(parts) > 1:
        return f"{parts[0]}/{parts[1]}"
    return parts[0]


def _nccl_init_only(version: str | None, network: str | None, hosts: set[str], procs: set[tuple[str, str]],
                    no_ib: bool) -> dict | None:
    """NCCL_DEBUG=INFO start-up lines without a communicator, ring or channel line yet (a hang in
    init, a paste cut early): the version, the network NCCL chose and the processes and hosts seen."""
    if version is None and network is None:
        return None
    n, h = len(procs), len(hosts)
    out = {"kind": "nccl-topology", "version": version, "network": network, "processes": n or None,
           "nodes": h or None, "ranks": None, "rings": {}, "transports": {}, "edges": []}
    s = "NCCL start-up (no communicator line yet): " + ", ".join(x for x in (
        f"NCCL {version}" if version else None, f"network {network}" if network else None,
        f"{n} process(es) on {h} host(s)" if n else None) if x) \
        + (f" ({', '.join(sorted(hosts)[:4])}{', ...' if h > 4 else ''})" if n else "")
    findings = [s]
    if network == "Socket":
        findings.append("NCCL uses TCP sockets (NET/Socket), not InfiniBand/RoCE"
                        + (" — the verbs library (libibverbs) or an IB device was not found" if no_ib else "")
                        + ": fine on one node, slow between nodes; check the RDMA devices and libraries")
    out["summary"] = s
    out["findings"] = findings
    return out


def _topology_findings(transports: dict[str, int], edges: dict[tuple, str], no_ib: bool) -> list[str]:
    """Sockets between nodes (no InfiniBand/RoCE); rank pairs joined through host memory, not P2P."""
    findings = []
    if "NET/Socket" in transports:
        findings.append("inter-node traffic goes over TCP sockets (NET/Socket), not InfiniBand/RoCE"
                        + (" — NET/IB found no device" if no_ib else "") + ": expect low bandwidth; check NCCL_IB_* "
                        "settings and the RDMA devices in the container")
    shm = [f"{a}->{b}" for (a, b), via in edges.items() if _transport(via) == "SHM"]
    if shm and any(t.startswith("P2P") for t in transports):
        findings.append(f"rank pairs joined through host shared memory (SHM), not P2P: {', '.join(shm[:8])} — no "
                        "peer-to-peer path between those GPUs (different PCIe root/NUMA node, or P2P disabled)")
    return findings


def _topology_lines(text: str) -> dict:
    """One pass over the NCCL INFO lines: rings, channels, rank-pair transports, hosts, counts."""
    st: dict = {"rings": {}, "channels": 0, "edges": {}, "hosts": set(), "procs": set(), "nranks": None,
                "nnodes": None, "version": None, "network": None, "no_ib": False}
    for line in _lines_with(text, " NCCL INFO ", limit=20000):
        m = _NI_LINE.search(line)
        if not m:
            continue
        msg = m.group(5).rstrip()
        st["hosts"].add(m.group(1))
        st["procs"].add((m.group(1), m.group(2)))
        if st["network"] is None and (n := _NI_NETWORK.match(msg)) is not None:
            st["network"] = n.group(1)
        if (e := _NI_EDGE.match(msg)) is not None:
            st["edges"].setdefault((int(e.group(2)), int(e.group(3))), e.group(5).strip())
            continue
        if (r := _NI_RING.match(msg)) is not None:
            st["rings"].setdefault(r.group(1), " ".join(r.group(3).split()))
            if r.group(2):
                st["channels"] = max(st["channels"], int(r.group(2)))
            continue
        if (c := _NI_COMM.search(msg)) is not None:
            st["nranks"] = int(c.group(2))
            if c.group(3):
                st["nnodes"] = int(c.group(3))
            continue
        if st["version"] is None and (v := _NI_VERSION.search(msg)) is not None:
            st["version"] = v.group(1)
        if "NET/IB : No device found" in msg:
            st["no_ib"] = True
    return st


def parse_nccl_topology(text: str | bytes) -> dict | None:
    """``NCCL_DEBUG=INFO`` init lines: the NCCL version, ranks and nodes, the ring order of each
    channel, and the transport between each pair of ranks (P2P, SHM, NET/Socket, NET/IB, ...).
    Findings: inter-node traffic over TCP sockets (no InfiniBand/RoCE), ranks joined through host
    shared memory instead of P2P."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    if " NCCL INFO " not in text:
        return None
    st = _topology_lines(text)
    rings, channels, edges, hosts, procs = st["rings"], st["channels"], st["edges"], st["hosts"], st["procs"]
    nranks, nnodes, version, network, no_ib = st["nranks"], st["nnodes"], st["version"], st["network"], st["no_ib"]
    if version is None:
        # the version line is printed bare by rank 0 ("NCCL version 2.10.3+cuda11.3"), no INFO prefix
        version = next((v.group(1) for v in map(_NI_VERSION.search, _lines_with(text, "NCCL version ", limit=50)) if v), None)
    # the InfiniBand verbs library could not be loaded (misc/ibvwrap.cc): NCCL falls back to sockets
    no_verbs = any("ibvwrap" in ln for ln in _lines_with(text, "NCCL WARN ", limit=200))
    if not rings and not edges and nranks is None:
        return _nccl_init_only(version, network, hosts, procs, no_ib or no_verbs)
    transports: dict[str, int] = {}
    for via in edges.values():
        t = _transport(via)
        transports[t] = transports.get(t, 0) + 1
    ring0 = next(iter(rings.values()), None)
    net = any(_transport(v).startswith("NET") for v in edges.values())
    # an excerpt may hold a few ranks' lines only: the rank count comes from a comm line or a full ring
    seen = max((max(a, b) for a, b in edges), default=-1) + 1  # the highest rank an edge names
    out: dict = {"kind": "nccl-topology", "version": version,
                 "ranks": nranks or (len(ring0.split()) if ring0 else None),
                 "ranks_seen": None if nranks or ring0 else (seen or None),
                 "nodes": nnodes or (len(hosts) if len(hosts) > 1 or not net else None),
                 "channels": channels or len(rings) or None,
                 "rings": dict(list(rings.items())[:16]), "transports": transports,
                 "edges": [{"from": a, "to": b, "via": via} for (a, b), via in list(edges.items())[:64]]}
    findings = _topology_findings(transports, edges, no_ib)
    if network:
        out["network"] = network
    s = "NCCL topology: " + (f"{out['ranks']} rank(s)" if out["ranks"] else
                             f"at least {seen} rank(s)" if seen else "ranks ?") \
        + (f" on {out['nodes']} node(s)" if out["nodes"] else "") \
        + (f" ({', '.join(sorted(hosts)[:4])}{', ...' if len(hosts) > 4 else ''})" if len(hosts) > 1 else "") \
        + (f", {out['channels']} channel(s)" if out["channels"] else "") + (f", ring {ring0}" if ring0 else "") \
        + ("; transports (rank pairs): " + ", ".join(f"{t} {n}" for t, n in transports.items()) if transports else "") \
        + ("; GPUDirect RDMA (GDRDMA) between nodes" if any("GDRDMA" in v for v in edges.values()) else "") \
        + (f"; network {network}" if network else "") + (f"; NCCL {version}" if version else "")
    out["summary"] = s
    out["findings"] = [s] + findings
    return out
