"""`dbglog import --llm URL`: the document's units sent to an OpenAI-compatible endpoint (here a fake one, an
http.server on 127.0.0.1 in a thread), its answer validated and used; any failure -- a cited unit that does
not exist, an answer that is not JSON, an HTTP error, nobody listening -- falls back to the built-in reader
with one line on stderr, and the import still succeeds."""

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import run_cli_inproc
from import_thread_doc import THREAD_DOC, as_json, built_in_reading, lost_lines, mirror_files, write_doc



class FakeModel:
    """An endpoint answering /v1/chat/completions with ``answer(request) -> (status, content)``."""

    def __init__(self, answer):
        self.answer = answer
        self.requests: list[tuple[str, dict]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append((self.path, body))
                status, content = fake.answer(body)
                reply = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def units_of(body: dict) -> list[dict]:
    return json.loads(body["messages"][-1]["content"])["units"]


def reads_like_a_model(body: dict):
    """Two attempts, cited by unit id as a model would: the eager run, and the suggestion with its answer."""
    units = units_of(body)
    eager = [u["id"] for u in units if "enforce_eager=True" in u["text"] and u["kind"] == "sentence"]
    backend = [u["id"] for u in units if "XFORMERS" in u["text"] and u["kind"] == "sentence"]
    return 200, json.dumps({"attempts": [
        {"units": eager, "title": "enforce_eager=True", "outcome": "worked"},
        {"units": backend, "title": "XFORMERS attention backend", "outcome": "worked", "who": "bob"},
    ]})


@pytest.fixture
def cli():
    return run_cli_inproc


def test_a_valid_extraction_is_used_exactly_as_the_model_said(ws, cli, tmp_path):
    doc = write_doc(tmp_path)
    with FakeModel(reads_like_a_model) as model:
        p = cli(ws, "import", doc, "--llm", model.url, "--model", "qwen-test", "--json", check=0)
    assert p.stderr == ""
    [inv] = json.loads(p.stdout)["investigations"]
    got = [(a["source_lines"], a["title"], a["outcome"], a["who"]) for a in inv["attempt_list"]]
    assert got == [([9, 9], "enforce_eager=True", "worked", ""),
                   ([17, 21], "XFORMERS attention backend", "worked", "bob")]
    [(path, body)] = model.requests
    assert path == "/v1/chat/completions" and body["model"] == "qwen-test"
    assert body["response_format"]["type"] == "json_schema"
    assert all({"id", "kind", "lines", "text", "label", "confidence"} <= set(u) for u in units_of(body))
    shown = as_json(cli(ws, "show", inv["id"], "--json"))
    assert [a["title"] for a in shown["attempts"]] == ["enforce_eager=True", "XFORMERS attention backend"]
    [mirror] = mirror_files(ws)
    assert lost_lines(THREAD_DOC, mirror.read_text()) == []  # what the model did not cite stays as text


def test_a_fenced_answer_and_a_url_ending_in_v1_are_accepted(ws, cli, tmp_path):
    doc = write_doc(tmp_path)

    def fenced(body):
        status, content = reads_like_a_model(body)
        return status, f"```json\n{content}\n```"

    with FakeModel(fenced) as model:
        p = cli(ws, "import", doc, "--llm", model.url + "/v1/", "--json", check=0)
    assert p.stderr == "" and model.requests[0][0] == "/v1/chat/completions"
    assert len(json.loads(p.stdout)["investigations"][0]["attempt_list"]) == 2


def not_a_unit(body):
    return 200, json.dumps({"attempts": [{"units": [99999], "title": "x", "outcome": "worked"}]})


def not_json(body):
    return 200, "Sure! Here are the attempts: enforce_eager worked."


def nested_too_deeply(body):
    return 200, "[" * 50_000  # deeper than the JSON decoder recurses


def server_error(body):
    return 500, "overloaded"


def unknown_investigation(body):
    units = units_of(body)
    return 200, json.dumps({"attempts": [{"units": [units[0]["id"]], "title": "t", "outcome": "worked",
                                          "investigation": 7}]})


def content_an_object(body):
    return 200, {"attempts": []}


def content_a_list(body):
    return 200, [{"attempts": []}]


def content_a_number(body):
    return 200, 5


def unknown_outcome(body):
    units = units_of(body)
    return 200, json.dumps({"attempts": [{"units": [units[0]["id"]], "title": "x", "outcome": "fixed"}]})


@pytest.mark.parametrize("answer, says", [
    (not_a_unit, "cites unit 99999, which this document does not have"),
    (not_json, "JSONDecodeError"),
    (nested_too_deeply, "nested too deeply"),
    (server_error, "HTTPError"),
    (unknown_outcome, "outcome 'fixed'"),
    (unknown_investigation, "attempt 1 is filed under investigation 7"),
    (content_an_object, "the reply's message content is not text"),
    (content_a_list, "the reply's message content is not text"),
    (content_a_number, "the reply's message content is not text"),
])
def test_an_unusable_answer_falls_back_to_the_built_in_reader(ws, cli, tmp_path, answer, says):
    doc = write_doc(tmp_path)
    with FakeModel(answer) as model:
        p = cli(ws, "import", doc, "--llm", model.url, "--json", check=0)
    assert p.stderr.count("\n") == 1 and says in p.stderr, p.stderr
    assert p.stderr.startswith(f"dbglog: {doc}: the model's answer was not used (")
    assert p.stderr.rstrip().endswith("read by the built-in reader")
    [inv] = json.loads(p.stdout)["investigations"]
    assert [(a["source_lines"], a["who"]) for a in inv["attempt_list"]] == built_in_reading(ws, doc)


def test_nobody_listening_falls_back_to_the_built_in_reader(ws, cli, tmp_path):
    doc = write_doc(tmp_path)
    with socket.socket() as s:  # a port that was free a moment ago: connection refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = cli(ws, "import", doc, "--llm", f"http://127.0.0.1:{port}", check=0)
    assert p.stderr.count("\n") == 1 and "the model's answer was not used" in p.stderr
    assert f"{len(built_in_reading(ws, doc))} attempt(s)" in p.stdout


def test_a_directory_is_read_by_the_built_in_reader_and_said_so(ws, cli, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    write_doc(notes)
    with FakeModel(reads_like_a_model) as model:
        p = cli(ws, "import", notes, "--llm", model.url, "--json", check=0)
    assert model.requests == [] and p.stderr.count("\n") == 1 and "name the files" in p.stderr
    assert [(a["source_lines"], a["who"]) for a in json.loads(p.stdout)["investigations"][0]["attempt_list"]] \
        == built_in_reading(ws, notes)
