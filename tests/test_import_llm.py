"""`dbglog import --llm URL`: the document's units sent to an OpenAI-compatible endpoint (here a fake one, an
http.server on 127.0.0.1 in a thread), its answer validated and used; any failure -- a cited unit that does
not exist, an answer that is not JSON, an HTTP error, nobody listening -- falls back to the built-in reader
with one line on stderr, and the import still succeeds."""

import json
import socket

import pytest

from conftest import run_cli_inproc
from fake_llm import FakeModel
from import_thread_doc import THREAD_DOC, as_json, built_in_reading, lost_lines, mirror_files, write_doc


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


def a_list_for_a_title(body):
    units = units_of(body)
    return 200, json.dumps({"attempts": [{"units": [units[0]["id"]], "title": ["t", "u"], "outcome": "worked"}]})


def a_list_for_who(body):
    units = units_of(body)
    return 200, json.dumps({"attempts": [{"units": [units[0]["id"]], "title": "t", "outcome": "worked",
                                          "who": ["x"]}]})


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
    (a_list_for_a_title, "attempt 1: `title` must be text, not ['t', 'u']"),
    (a_list_for_who, "attempt 1: `who` must be text, not ['x']"),
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


@pytest.mark.parametrize("drip", ["body", "all"])
def test_a_reply_dripped_a_byte_at_a_time_is_given_up_at_the_timeout(ws, cli, tmp_path, monkeypatch, drip):
    monkeypatch.setattr("dbglog.docreader.llm.TIMEOUT_S", 0.5)  # (for the whole exchange; each read is far quicker)
    doc = write_doc(tmp_path)
    with FakeModel(reads_like_a_model, drip=drip) as model:
        p = cli(ws, "import", doc, "--llm", model.url, "--json", check=0)
    assert p.stderr.count("\n") == 1 and "TimeoutError: no whole reply within 0.5 s" in p.stderr, p.stderr
    [inv] = json.loads(p.stdout)["investigations"]
    assert [(a["source_lines"], a["who"]) for a in inv["attempt_list"]] == built_in_reading(ws, doc)


SECRETS = ("hf_abcdefghijklmnopqrstuvwxyz0123", "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB", "hunter2pass",
           "abcdefghijklmnopqrstu")
SECRET_DOC = f"""\
# Model download fails

- I exported `HF_TOKEN={SECRETS[0]}` and the download worked.
- Pushed with {SECRETS[1]}, it failed.
- Connected to postgres://admin:{SECRETS[2]}@db.internal:5432/app and it worked.
- `curl -H "Authorization: Bearer {SECRETS[3]}" https://hub.example/api` failed.
"""


def test_the_units_sent_to_the_model_hold_no_secret(ws, cli, tmp_path):
    doc = write_doc(tmp_path, SECRET_DOC)
    with FakeModel(not_json) as model:
        cli(ws, "import", doc, "--llm", model.url, check=0)
    [(_, body)] = model.requests
    sent = json.dumps(body)
    assert [s for s in SECRETS if s in sent] == [] and "<redacted>" in sent
    assert "postgres://admin:<redacted>@db.internal" in sent  # (the rest of each unit is sent as written)


def test_a_redirect_is_not_followed_and_falls_back_to_the_built_in_reader(ws, cli, tmp_path):
    doc = write_doc(tmp_path)
    elsewhere = FakeModel(reads_like_a_model)
    redirecting = FakeModel(lambda body: (302, "", {"Location": elsewhere.url + "/v1/chat/completions"}))
    with elsewhere, redirecting as model:
        p = cli(ws, "import", doc, "--llm", model.url, "--json", env={"DBGLOG_LLM_API_KEY": "k"}, check=0)
    assert elsewhere.requests == []  # (neither the document nor the key went to the other address)
    assert p.stderr.count("\n") == 1 and "HTTP Error 302: a redirect, not followed" in p.stderr, p.stderr
    [inv] = json.loads(p.stdout)["investigations"]
    assert [(a["source_lines"], a["who"]) for a in inv["attempt_list"]] == built_in_reading(ws, doc)


@pytest.mark.parametrize("url, says", [("http://127.0.0.1:notaport", "InvalidURL: nonnumeric port: 'notaport'"),
                                       ("http://127.0.0.1:9/v1\r\nX-Injected: 1", "InvalidURL: URL can't contain "
                                                                                    "control characters")])
def test_a_url_that_is_no_usable_address_falls_back_to_the_built_in_reader(ws, cli, tmp_path, url, says):
    doc = write_doc(tmp_path)
    p = cli(ws, "import", doc, "--llm", url, "--json", check=0)
    assert p.stderr.count("\n") == 1 and says in p.stderr, p.stderr
    [inv] = json.loads(p.stdout)["investigations"]
    assert [(a["source_lines"], a["who"]) for a in inv["attempt_list"]] == built_in_reading(ws, doc)


def test_a_directory_is_read_by_the_built_in_reader_and_said_so(ws, cli, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    write_doc(notes)
    with FakeModel(reads_like_a_model) as model:
        p = cli(ws, "import", notes, "--llm", model.url, "--json", check=0)
    assert model.requests == [] and p.stderr.count("\n") == 1 and "name the files" in p.stderr
    assert [(a["source_lines"], a["who"]) for a in json.loads(p.stdout)["investigations"][0]["attempt_list"]] \
        == built_in_reading(ws, notes)


def test_an_endpoints_reason_phrase_reaches_the_terminal_without_its_escapes(ws, cli, tmp_path):
    """A reason phrase is the server's text: one holding terminal escapes reached stderr as it was."""
    doc = write_doc(tmp_path)
    with FakeModel(lambda body: (500, "", {}, "\x1b[31mboom\x1b]0;pwned\x07")) as model:
        p = cli(ws, "import", doc, "--llm", model.url, "--json", check=0)
    assert p.returncode == 0 and "boom" in p.stderr and "\x1b" not in p.stderr and "\x07" not in p.stderr, p.stderr
