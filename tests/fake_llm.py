"""A fake OpenAI-compatible endpoint (an http.server on 127.0.0.1 in a thread), shared by the tests of
`import --llm` and `tried --llm`."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DRIP_S = 0.05  # between two bytes of a dripped reply: well within a read's timeout, so only a deadline stops it


class FakeModel:
    """An endpoint answering /v1/chat/completions with ``answer(request) -> (status, content[, headers[, reason]])``.
    ``drip``: "all" sends the reply a byte at a time from its status line on, "body" after its headers."""

    def __init__(self, answer, drip: str = ""):
        self.answer = answer
        self.requests: list[tuple[str, dict]] = []
        self.done = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append((self.path, body))
                status, content, *more = fake.answer(body)
                reply = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()
                if drip:
                    return self.drip(status, reply)
                self.send_response(status, more[1] if len(more) > 1 else None)  # (a reason phrase of its own)
                for k, v in (more[0] if more else {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def do_GET(self):  # (a redirected request: recorded, never answered with a model's reply)
                fake.requests.append((self.path, None))
                self.send_error(404)

            def drip(self, status, reply):
                head = (f"HTTP/1.1 {status} OK\r\nContent-Type: application/json\r\n"
                        f"Content-Length: {len(reply)}\r\n\r\n").encode()
                data, at = head + reply, len(head) if drip == "body" else 0
                try:
                    self.wfile.write(data[:at])
                    for i in range(at, len(data)):
                        if fake.done.wait(DRIP_S):
                            return
                        self.wfile.write(data[i:i + 1])
                except OSError:
                    pass  # (the client gave up)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.server.shutdown()
        self.server.server_close()
