"""One chat completion from an OpenAI-compatible endpoint (a vLLM, SGLang, llama.cpp or Ollama server), stdlib only.

Shared by the opt-in model paths (``import --llm``, ``tried --llm``): the address rule, the optional key
(``DBGLOG_LLM_API_KEY``), the reply's first message, a fenced answer unwrapped, and one deadline for the whole
exchange. Failures are the caller's to turn into its fallback: ``OSError`` (``urllib.error.URLError`` and
``TimeoutError`` included) and ``ValueError`` (a URL that is no usable address among them).
"""

from __future__ import annotations

import functools
import http.client
import json
import os
import socket
import threading
import urllib.error
import urllib.request
from dbglog.util import jsonsafe


def endpoint(url: str) -> str:
    """A base URL, one ending in /v1, or the full .../chat/completions."""
    u = url.rstrip("/")
    if u.endswith("/chat/completions"):
        return u
    return u + ("/chat/completions" if u.endswith("/v1") else "/v1/chat/completions")


def chat(url: str, body: dict, timeout: float) -> str:
    """The first choice's message content (a ```-fenced answer unwrapped), within ``timeout`` seconds in all."""
    headers = {"Content-Type": "application/json"}
    key = os.environ.get("DBGLOG_LLM_API_KEY")
    if key:
        headers["Authorization"] = f"Bearer {key}"
    req = urllib.request.Request(endpoint(url), data=json.dumps(body).encode(), headers=headers, method="POST")
    deadline = _Deadline(timeout)
    try:
        with _opener(deadline).open(req, timeout=timeout) as resp:
            raw = resp.read(4 << 20)
    except (OSError, http.client.HTTPException) as e:
        if deadline.expired:  # (what the shut socket made of it: a reset, a short read)
            raise TimeoutError(f"no whole reply within {timeout:g} s") from None
        if isinstance(e, OSError):
            raise
        # (a URL http.client refuses, a reply that is no HTTP: no OSErrors, and said in one line)
        raise ValueError(f"{type(e).__name__}: {' '.join(str(e).split())[:200]}") from None
    finally:
        deadline.timer.cancel()
    if deadline.expired:  # (a reply without a length ends where the socket was shut)
        raise TimeoutError(f"no whole reply within {timeout:g} s")
    return _content(jsonsafe.loads(raw.decode("utf-8", "replace")))


def _content(reply) -> str:
    try:
        content = reply["choices"][0]["message"]["content"] or ""
    except (KeyError, IndexError, TypeError):
        raise ValueError("the reply has no choices[0].message.content") from None
    if not isinstance(content, str):  # (an object or a number where the model's text should be)
        raise ValueError("the reply's message content is not text")
    content = content.strip()
    if content.startswith("```"):  # (a model that fences its JSON)
        content = content.split("\n", 1)[-1].rsplit("```", 1)[0]
    return content


class _Deadline:
    """Shuts the exchange's sockets when the time is up: urllib's timeout bounds each read, not the reply, so a
    server that sends a byte a second would hold the caller for ever."""

    def __init__(self, seconds: float):
        self.expired = False
        self.socks: list = []
        self.lock = threading.Lock()
        self.timer = threading.Timer(seconds, self.expire)
        self.timer.daemon = True
        self.timer.start()

    def watch(self, sock) -> None:
        with self.lock:
            self.socks.append(sock)
            if self.expired:
                _shut(sock)

    def expire(self) -> None:
        with self.lock:
            self.expired = True
            for s in self.socks:
                _shut(s)


def _shut(sock) -> None:
    try:  # (the plain socket's shutdown, also of a TLS one: a blocked read in the other thread returns)
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass  # (closed already, or a socket TLS took over: nothing to shut)


class _Watched(http.client.HTTPConnection):
    deadline: _Deadline

    def connect(self):
        super().connect()
        self.deadline.watch(self.sock)


class _WatchedTLS(http.client.HTTPSConnection, _Watched):  # (_Watched.connect runs before the TLS handshake)
    def connect(self):
        super().connect()
        self.deadline.watch(self.sock)  # (the TLS socket that took the plain one's place)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is a failure: followed, it would take the document and the key to an address nobody gave."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        raise urllib.error.HTTPError(req.full_url, code, "a redirect, not followed (give --llm the address it "
                                     "points to)", headers, fp)


def _made(cls, deadline: _Deadline, host, **kw):
    conn = cls(host, **kw)
    conn.deadline = deadline
    return conn


def _opener(deadline: _Deadline) -> urllib.request.OpenerDirector:
    class Plain(urllib.request.HTTPHandler):
        def http_open(self, req):
            return self.do_open(functools.partial(_made, _Watched, deadline), req)

    class TLS(urllib.request.HTTPSHandler):
        def https_open(self, req):
            return self.do_open(functools.partial(_made, _WatchedTLS, deadline), req)

    return urllib.request.build_opener(Plain, TLS, _NoRedirect)
