"""`tried --llm URL`: the opt-in model judge against a fake OpenAI-compatible endpoint (a tiny local
HTTP server in this process): its answer is used when valid, the built-in judge stands when not."""

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from conftest import run_cli, run_cli_inproc
from fake_llm import FakeModel

REPLY: dict = {}
SEEN: list = []


class _Fake(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        SEEN.append((self.path, body))
        if REPLY.get("status", 200) != 200:
            self.send_response(REPLY["status"])
            self.end_headers()
            return
        out = json.dumps({"choices": [{"message": {"role": "assistant", "content": REPLY["content"]}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def endpoint():
    srv = HTTPServer(("127.0.0.1", 0), _Fake)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def ws(workdir):
    run_cli("new", "server deadlocks under load", "--no-env", cwd=workdir)
    run_cli("attempt", "add", "Client without keep-alive", "--did", "python client.py --no-keep-alive",
            "--result", "no deadlock in 5 runs", "--conclusion", "persistent connections pin workers",
            "--outcome", "worked", cwd=workdir)
    run_cli("attempt", "add", "Bigger backlog", "--did", "python server.py --request-queue-size 128",
            "--result", "still deadlocks", "--conclusion", "the backlog is not it", "--outcome", "failed", cwd=workdir)
    return workdir


def _tried(ws, endpoint, idea, *extra):
    SEEN.clear()
    p = run_cli("tried", idea, "--llm", endpoint, "--model", "judge-1", "--json", *extra, cwd=ws)
    return p, json.loads(p.stdout)


def test_a_valid_model_answer_is_used(ws, endpoint):
    REPLY.clear()
    REPLY["content"] = json.dumps({"verdicts": [{"id": 0, "tier": "other", "differs": "the record changed the "
                                                 "client, the idea the server"}]})
    p, d = _tried(ws, endpoint, "turn off keep-alive on the server")
    assert SEEN and SEEN[0][0] == "/v1/chat/completions"
    body = SEEN[0][1]
    assert body["model"] == "judge-1" and body["response_format"]["type"] == "json_schema"
    records = json.loads(body["messages"][1]["content"])["records"]
    assert records[0]["experiment"]["knobs"] and "persistent connections" in records[0]["text"]
    assert p.returncode == 1 and d["answer"] == "tried another way"
    top = d["another_way"][0]
    assert top["judged_by"] == "model" and top["differs"].startswith("the record changed the client")


@pytest.mark.parametrize("content", ["not json", json.dumps({"verdicts": [{"id": 99, "tier": "same", "differs": ""}]}),
                                     json.dumps({"verdicts": [{"id": 0, "tier": "maybe", "differs": ""}]}),
                                     json.dumps({"answer": "yes"}), {"verdicts": []}, [{"verdicts": []}], 5])
def test_an_unusable_answer_leaves_the_built_in_judge(ws, endpoint, content):
    REPLY.clear()
    REPLY["content"] = content
    p, d = _tried(ws, endpoint, "disable keep-alive in the client")
    assert p.returncode == 0 and d["answer"] == "tried"  # the built-in judge: the same experiment
    assert d["close"][0]["judged_by"] == "built-in" and "--llm:" in p.stderr and "built-in judge" in p.stderr


def test_an_endpoint_error_leaves_the_built_in_judge(ws, endpoint):
    REPLY.clear()
    REPLY["status"] = 500
    p, d = _tried(ws, endpoint, "disable keep-alive in the client")
    assert p.returncode == 0 and d["close"][0]["judged_by"] == "built-in" and "--llm:" in p.stderr


def test_bad_llm_options_are_refused(ws):
    p = run_cli("tried", "disable keep-alive", "--llm", "localhost:8000", cwd=ws)
    assert p.returncode == 2 and "--llm 'localhost:8000': give the endpoint's URL" in p.stderr
    p = run_cli("tried", "disable keep-alive", "--model", "m", cwd=ws)
    assert p.returncode == 2 and "give --llm too" in p.stderr


def same_as_the_record(body):
    return 200, json.dumps({"verdicts": [{"id": 0, "tier": "unrelated", "differs": ""}]})


def test_a_reply_dripped_a_byte_at_a_time_is_given_up_at_the_timeout(ws, monkeypatch):
    monkeypatch.setattr("dbglog.kb.llmjudge.TIMEOUT_S", 0.5)  # (for the whole exchange; each read is far quicker)
    with FakeModel(same_as_the_record, drip="body") as model:
        p = run_cli_inproc(ws, "tried", "disable keep-alive in the client", "--llm", model.url, "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["close"][0]["judged_by"] == "built-in"
    assert p.stderr == "dbglog: warning: --llm: no whole reply within 0.5 s; the built-in judge's answer is shown\n"


def test_the_idea_sent_to_the_model_holds_no_secret(ws):
    with FakeModel(same_as_the_record) as model:
        run_cli_inproc(ws, "tried", "disable keep-alive with HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123", "--llm",
                       model.url)
    [(_, body)] = model.requests
    assert "hf_abcdefghijklmnopqrstuvwxyz0123" not in json.dumps(body)
    assert "HF_TOKEN=<redacted>" in json.loads(body["messages"][1]["content"])["idea"]


def test_a_redirect_is_not_followed_and_leaves_the_built_in_judge(ws):
    elsewhere = FakeModel(same_as_the_record)
    redirecting = FakeModel(lambda body: (303, "", {"Location": elsewhere.url + "/v1/chat/completions"}))
    with elsewhere, redirecting as model:
        p = run_cli_inproc(ws, "tried", "disable keep-alive in the client", "--llm", model.url, "--json",
                           env={"DBGLOG_LLM_API_KEY": "k"})
    assert elsewhere.requests == [] and p.returncode == 0
    assert json.loads(p.stdout)["close"][0]["judged_by"] == "built-in"
    assert p.stderr.count("\n") == 1 and "HTTP Error 303: a redirect, not followed" in p.stderr


@pytest.mark.parametrize("url", ["http://127.0.0.1:notaport", "http://127.0.0.1:9/v1\r\nX-Injected: 1"])
def test_a_url_that_is_no_usable_address_leaves_the_built_in_judge(ws, url):
    p = run_cli_inproc(ws, "tried", "disable keep-alive in the client", "--llm", url, "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["close"][0]["judged_by"] == "built-in"
    assert p.stderr.count("\n") == 1 and "--llm: InvalidURL: " in p.stderr, p.stderr


def test_an_endpoints_reason_phrase_reaches_the_terminal_without_its_escapes(ws):
    """A reason phrase is the server's text: one holding terminal escapes reached stderr as it was."""
    with FakeModel(lambda body: (500, "", {}, "\x1b[31mboom\x1b]0;pwned\x07")) as model:
        p = run_cli_inproc(ws, "tried", "disable keep-alive in the client", "--llm", model.url, "--json")
    assert p.returncode == 0 and "boom" in p.stderr and "\x1b" not in p.stderr and "\x07" not in p.stderr, p.stderr
