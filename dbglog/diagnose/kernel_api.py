"""Kernel-API logs (SGLang ``@debug_kernel_api``, FlashInfer ``@flashinfer_api``): the last call a
process started and whether it finished -- the in-flight boundary. Call lines in the documented form
and in the forms the seeds' collection scripts also accept (a prefix, fractional seconds, no
timestamp; said in the note); lines that mention an API call in no known form are reported."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from dbglog.util import recache


# The call line as the reference gives it, and the forms the seeds' collection scripts also accept
# (a grep for "API Call:"): a prefix before it (a rank or logger prefix, a container's timestamp),
# fractional seconds or a "T" in the timestamp, no timestamp at all. The prefix is taken off the
# block's other lines too.
_API_CALL = recache.compile(r"^(?P<pre>.*?)(?:\[(?P<ts>\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?)\] ?)?"
                       r"(?P<fw>SGLang Kernel|FlashInfer) API Call: (?P<name>.+?)\s*$")
_API_DONE = recache.compile(r"^(Output:|Output value:)\s*$")
# "%s SGLang Kernel API Exception: %s (%s: %s)" with the exception's str(), which for torch errors
# spans several lines ("CUDA error: ...\nCUDA kernel errors might be ...\n...)"): the first line
# has no closing parenthesis. Older/abridged logs print the name alone.
_API_EXC = recache.compile(r"^(?:\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?\] ?)?SGLang Kernel API Exception: (\S+)"
                      r"(?: \(([\w.]+): ?(.*?))?\s*$")
_API_ARG = recache.compile(r"^  (arg\[\d+\]|[A-Za-z_]\w*)(?:=|:\s*$)(.*)$")
_API_SHAPE = recache.compile(r"shape=(\([^)]*\))")
_API_DTYPE = recache.compile(r"dtype=(torch\.\w+)")
_API_DEVICE = recache.compile(r"device=([\w:]+)")
_API_DUMP = recache.compile(r"^(?:Dumped inputs to|Inputs dumped to|Outputs dumped to|Dumped outputs to):\s*(\S.*?)\s*$")


@dataclass
class ApiBoundary:
    """The last kernel-API call in a log and whether it finished (status "unread": lines mention
    an API call but none is in a form this reader knows; ``note`` says so)."""

    framework: str | None  # "SGLang Kernel" or "FlashInfer"
    name: str | None
    timestamp: str | None
    line_no: int
    status: str  # "in_flight" | "completed" | "exception" | "started" (level 1: no markers) | "unread"
    exception: str | None = None
    calls: int = 0
    source: str | None = None
    inputs: list[dict] = field(default_factory=list)  # level >= 3: [{"arg", "shape", "dtype", "device"}]
    dump_dir: str | None = None  # level 10: where the call's inputs were saved
    note: str | None = None  # a form read with a prefix, or lines not read at all

    def to_dict(self) -> dict:
        d = dict(self.__dict__)
        d["inputs"] = [dict(i) for i in self.inputs]
        return d


def _close_exception(call: dict, lines: list[str]) -> None:
    msg = " ".join(x.strip() for x in lines if x.strip())
    if msg.endswith(")"):
        msg = msg[:-1].rstrip()
    call["exc"] = f"{call['exc_type']}: {msg}" if call.get("exc_type") else (msg or None)


class _ApiReader:
    """One pass over a kernel-API log: the calls, their markers, inputs and dump dirs."""

    def __init__(self):
        self.calls: list[dict] = []
        self.markers_seen = False
        self.exc_lines: list[str] | None = None  # continuation lines of a multi-line exception message
        self.arg: dict | None = None
        self.prefix = ""
        self.prefixed = 0
        self.dropped = 0  # calls let go of while streaming (only the last ones can matter)

    def line(self, no: int, raw: str) -> None:
        m = _API_CALL.match(raw)
        if self.exc_lines is not None and not self._exception_goes_on(raw, m):
            return
        if m:
            self.prefix = m.group("pre")
            self.prefixed += bool(self.prefix) or not m.group("ts")
            self.calls.append({"ts": m.group("ts"), "fw": m.group("fw"), "name": m.group("name"), "line": no,
                               "status": "in_flight", "exc": None, "inputs": [], "dump": None})
            self.arg = None
            return
        if self.calls:
            self._in_call(raw[len(self.prefix):] if self.prefix and raw.startswith(self.prefix) else raw)

    def _exception_goes_on(self, raw: str, call: re.Match | None) -> bool:
        """Feed a line to an open multi-line exception; False while it is taken."""
        if call or raw.startswith("====") or len(self.exc_lines) >= 40:
            _close_exception(self.calls[-1], self.exc_lines)
            self.exc_lines = None
            return True
        self.exc_lines.append(raw)
        if raw.rstrip().endswith(")"):
            _close_exception(self.calls[-1], self.exc_lines)
            self.exc_lines = None
        return False

    def _in_call(self, raw: str) -> None:
        call = self.calls[-1]
        if _API_DONE.match(raw):
            self.markers_seen, call["status"], self.arg = True, "completed", None
        elif (m := _API_EXC.match(raw)) is not None:
            self.markers_seen, call["status"], call["exc_type"] = True, "exception", m.group(2)
            first = m.group(3) or ""
            if m.group(2) is None:
                call["exc"] = None
            elif first.endswith(")"):
                _close_exception(call, [first])
            else:
                self.exc_lines = [first]
        elif (m := _API_DUMP.match(raw)) is not None:
            call["dump"] = m.group(1)
        elif call["status"] == "in_flight":  # (the return value's tensors are not inputs)
            self._input(call, raw)

    def _input(self, call: dict, raw: str) -> None:
        m = _API_ARG.match(raw)
        if m:
            self.arg = {"arg": m.group(1), "shape": None, "dtype": None, "device": None}
            call["inputs"].append(self.arg)
            raw = m.group(2)
        if self.arg is not None:
            for key, rx in (("shape", _API_SHAPE), ("dtype", _API_DTYPE), ("device", _API_DEVICE)):
                if self.arg[key] is None and (mm := rx.search(raw)) is not None:
                    self.arg[key] = mm.group(1).replace(" ", "") if key == "shape" else mm.group(1)


def parse_kernel_api_log(text: str | bytes, source: str | None = None) -> ApiBoundary | None:
    """Find the in-flight boundary: the last API call that started and did not finish.

    "API Call" is written before the kernel runs and "Output:"/"Output value:" only after a
    successful return, so the last call without a completion marker is where the process was
    when it died (host side; CUDA errors are asynchronous, so the faulting kernel may be earlier).
    An "API Exception" line (whose message may run over several lines) closes the call with status
    "exception". Returns the last call with its status when every call finished; a boundary with
    status "unread" when lines mention an API call in no form read here; None when none does.
    """
    if isinstance(text, (bytes, bytearray)):
        if b" API Call: " not in text:
            return None  # the common case, decided without decoding megabytes
        text = bytes(text).decode("utf-8", errors="replace")
    if " API Call: " not in text:
        return None
    r = _ApiReader()
    for no, raw in enumerate(text.splitlines(), 1):
        r.line(no, raw)
    return _boundary(r, source, text.count(" API Call: "))


def _boundary(r: _ApiReader, source: str | None, mentions: int) -> ApiBoundary | None:
    """What a reader that has seen the whole log says: the last call and its status."""
    if r.exc_lines is not None and r.calls:
        _close_exception(r.calls[-1], r.exc_lines)
    if not r.calls:
        return ApiBoundary(None, None, None, 0, "unread", source=source,
                           note=f"{mentions} line(s) mention 'API Call:' but none names SGLang Kernel or FlashInfer "
                                "in a form read here: no last boundary")
    # Calls in one file (one process) are sequential, so only the last one can be in flight.
    chosen = r.calls[-1]
    status = chosen["status"]
    if status == "in_flight" and not r.markers_seen:
        status = "started"  # level 1 logs have no completion markers: only "last call started"
    inputs = [a for a in chosen["inputs"] if a["shape"] or a["dtype"]]
    note = (f"{r.prefixed} call line(s) read with a prefix or without a timestamp (not the exact documented form)"
            if r.prefixed else None)
    return ApiBoundary(framework=chosen["fw"], name=chosen["name"], timestamp=chosen["ts"],
                       line_no=chosen["line"], status=status, exception=chosen["exc"],
                       calls=len(r.calls) + r.dropped, source=source, inputs=inputs, dump_dir=chosen["dump"], note=note)


class ApiStream:
    """``parse_kernel_api_log`` over a log read in blocks: memory bounded by the last calls kept."""

    _KEEP = 64

    def __init__(self, source: str | None = None):
        self.reader = _ApiReader()
        self.source = source
        self.mentions = 0

    def feed(self, block: bytes, first_line: int) -> None:
        """Read ``block`` (whole lines; 0-based index of its first line in the log)."""
        n = block.count(b" API Call: ")
        if not n and not self.reader.calls:
            return  # no call started yet: nothing here is read
        self.mentions += n
        r = self.reader
        for no, raw in enumerate(block.decode("utf-8", "replace").splitlines(), first_line + 1):
            r.line(no, raw)
        if len(r.calls) > 2 * self._KEEP:
            r.dropped += len(r.calls) - self._KEEP
            del r.calls[:-self._KEEP]

    def result(self) -> ApiBoundary | None:
        return _boundary(self.reader, self.source, self.mentions) if self.mentions else None


def parse_kernel_api_file(path) -> ApiBoundary | None:
    """``parse_kernel_api_log`` of a file read in blocks (a level-10 log can be large)."""
    from dbglog.util.blocks import line_blocks

    s = ApiStream(str(path))
    line = 0
    with open(path, "rb") as f:
        for piece in line_blocks(f):
            s.feed(piece, line)
            line += piece.count(b"\n")
    return s.result()
