"""A ritual file's secrets stay masked however they are written: escaped, encoded or cut.

Real ``sanctum`` processes over ritual files reading ``${API_TOKEN}``: a value with a
backslash, a quote, a newline or a non-ASCII letter is written escaped by ``repr`` (an
error message), by JSON (a model server's error body echoing the request, the Seals,
``--json``), by HTML (the trace viewer) and by XML (JUnit); a message cut at a length
limit keeps the front of a value. None of it may reach stdout, stderr, the Seals, the
trace, its HTML or the JUnit report.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli.helpers import sanctum
from tests.oracle.servers import ModelServer, Recorded, Reply

from .helpers import write

CORE = "K42Q"
"""What every secret here holds and no other text does (not hex, not digits: no id,
hash or timestamp can hold it by chance)."""

TOKENS = [
    "SEKRIT\\K42Q-xyz",  # a backslash: repr and JSON double it
    'SEKRIT"K42Q-xyz',  # a quote: JSON escapes it
    "SEKRIT-K42Q-xyzé",  # JSON writes \u00e9
    "-----BEGIN KEY-----\nSEKRIT/K42Q+xyz=\n-----END KEY-----",  # a PEM-like key
    "SEKRIT<K42Q>&'xyz",  # HTML and XML escape all of these
]


def _disk(folder: Path) -> str:
    """Every byte written under ``folder``, as text."""
    return "".join(
        f.read_bytes().decode("utf-8", "replace") for f in sorted(folder.rglob("*")) if f.is_file()
    )


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return sanctum(args, cwd, env={"API_KEY": "sk-apikey-0000111", **env})


CONVERT = """
sanctum: 1
name: convert
aether:
  x: {default: 1}
  z: {default: 1}
policies:
  p: {on_error: recover}
entry: a
sigils:
  a: {set: {x: "int('${API_TOKEN}')"}, policy: p, next: b}
  recover: {set: {z: "3"}, next: b}
  b: {set: {x: "int('${API_TOKEN}')"}, next: END}
"""


@pytest.mark.parametrize("token", TOKENS, ids=range(len(TOKENS)))
def test_an_error_quoting_a_secret_in_repr_leaves_no_copy(tmp_path: Path, token: str) -> None:
    write(tmp_path, CONVERT)
    env = {"API_TOKEN": token}
    done = _run(["run", "ritual.yaml", "--json", "--trace", "t.json"], tmp_path, env)
    assert done.returncode == 1, done.stderr
    assert "invalid literal for int() with base 10" in done.stderr
    assert "[REDACTED]" in done.stderr
    shown = _run(["trace", "show", "t.json"], tmp_path, env)
    drawn = _run(["trace", "render", "t.json", "-o", "t.html"], tmp_path, env)
    assert drawn.returncode == 0, drawn.stderr
    assert "__errors__" in _disk(tmp_path / ".sanctum")  # the on_error jump's Seal
    for text in (done.stdout, done.stderr, shown.stdout, _disk(tmp_path)):
        assert CORE not in text


ECHOED = """
sanctum: 1
name: echoed
aether:
  said: {default: ""}
oracles:
  bad: {provider: openai, model: m, base_url: "URL/v1", api_key: "${API_KEY}"}
public: [PAD]
entry: a
sigils:
  a: {oracle: bad, prompt: "use ${PAD}${API_TOKEN}", output: said, next: END}
"""


def _echo_json(request: Recorded) -> Reply:
    """HTTP 500 whose JSON error message quotes the request (JSON in JSON)."""
    said = request.body.decode("utf-8")
    body = json.dumps({"error": {"message": f"bad request: {said}"}})
    return Reply(500, body.encode("utf-8"))


def _echo_raw(request: Recorded) -> Reply:
    """HTTP 500 with a plain-text body echoing the request as it came."""
    return Reply(500, b"boom " + request.body, content_type="text/plain")


@pytest.mark.parametrize("token", TOKENS, ids=range(len(TOKENS)))
def test_a_server_echoing_the_request_as_json_leaks_nothing(
    tmp_path: Path, server: ModelServer, token: str
) -> None:
    server.respond = _echo_json
    write(tmp_path, ECHOED.replace("URL", server.url))
    env = {"API_TOKEN": token, "PAD": ""}
    done = _run(["run", "ritual.yaml", "--json", "--trace", "t.json"], tmp_path, env)
    assert done.returncode == 1, done.stderr
    assert CORE in server.requests[0].body.decode()  # the model server was sent it
    assert "bad request" in done.stderr
    drawn = _run(["trace", "render", "t.json", "-o", "t.html"], tmp_path, env)
    assert drawn.returncode == 0, drawn.stderr
    for text in (done.stdout, done.stderr, _disk(tmp_path)):
        assert CORE not in text


def test_a_body_cut_through_a_secret_keeps_no_front_of_it(
    tmp_path: Path, server: ModelServer
) -> None:
    server.respond = _echo_raw
    write(tmp_path, ECHOED.replace("URL", server.url))
    # the body quoted is cut at 500 characters, 8 into the token
    sent = json.dumps({"model": "m", "messages": [{"role": "user", "content": "use "}]})
    pad = "p" * (500 - len("boom ") - sent.index('use "') - len("use ") - 8)
    env = {"API_TOKEN": "SEKRIT-K42Q-xyz", "PAD": pad}
    done = _run(["run", "ritual.yaml", "--json"], tmp_path, env)
    assert done.returncode == 1, done.stderr
    assert "pp[REDACTED]…" in done.stderr
    for text in (done.stdout, done.stderr, _disk(tmp_path)):
        assert "SEKRIT" not in text


TESTED = """
sanctum: 1
name: tested
inputs:
  q: {type: string}
aether:
  out: {default: ""}
entry: a
sigils:
  a: {set: {out: "q ~ '${API_TOKEN}'"}, next: END}
"""

CASES = """
ritual: ritual.yaml
cases:
  - name: "case ${CASE_SECRET}"
    inputs: {q: "${CASE_SECRET}"}
    expect:
      status: done
      aether: {out: "nope ${CASE_SECRET}"}
"""


def test_sanctum_test_and_junit_mask_escaped_secrets(tmp_path: Path) -> None:
    write(tmp_path, TESTED)
    write(tmp_path, CASES, "ritual.test.yaml")
    env = {"API_TOKEN": "SEKRIT\\K42Q\n99", "CASE_SECRET": "CASESEKRIT\\K42Q\n99"}
    done = _run(["test", "ritual.test.yaml", "--junit-xml", "j.xml"], tmp_path, env)
    assert done.returncode == 1, done.stdout + done.stderr
    report = (tmp_path / "j.xml").read_text(encoding="utf-8")
    assert "<failure" in report
    for text in (done.stdout, done.stderr, report):
        assert CORE not in text


SCREEN = """
sanctum: 1
name: screen
inputs:
  num: {type: integer}
aether:
  tok: {default: "${API_TOKEN}"}
entry: ENTRY
sigils:
  a: {set: {tok: "'x'"}, next: END}
"""


@pytest.mark.parametrize("token", TOKENS[:3], ids=range(3))
def test_screen_errors_quote_no_escaped_secret(tmp_path: Path, token: str) -> None:
    write(tmp_path, SCREEN.replace("ENTRY", '"${API_TOKEN}"'), "named.yaml")
    write(tmp_path, SCREEN.replace("ENTRY", "a"))
    env = {"API_TOKEN": token}
    named = _run(["run", "named.yaml"], tmp_path, env)
    typed = _run(["run", "ritual.yaml", "--input", f"num={token}"], tmp_path, env)
    assert "which is not a sigil" in named.stdout + named.stderr
    assert "must be of type integer" in typed.stdout + typed.stderr
    for done in (named, typed):
        assert done.returncode == 2, done.stderr
        assert "[REDACTED]" in done.stdout + done.stderr
        assert CORE not in done.stdout + done.stderr


USERINFO = """
sanctum: 1
name: userinfo
aether:
  said: {default: ""}
oracles:
  auth: {provider: openai, model: m, base_url: "http://user:${PW}@HOST/v1"}
entry: a
sigils:
  a: {oracle: auth, prompt: "hi", output: said, next: END}
"""


def test_a_password_in_a_url_is_encoded_and_masked(tmp_path: Path, server: ModelServer) -> None:
    def refuse(request: Recorded) -> Reply:
        auth = {k.lower(): v for k, v in request.headers.items()}.get("authorization")
        body = json.dumps({"error": {"message": f"denied {auth}; {request.path}"}})
        return Reply(401, body.encode("utf-8"))

    server.respond = refuse
    write(tmp_path, USERINFO.replace("HOST", server.url.removeprefix("http://")))
    done = _run(["run", "ritual.yaml"], tmp_path, {"PW": "PWSEKRIT@K42Q/77"})
    assert done.returncode == 1, done.stderr
    assert len(server.requests) == 1  # the host the file names, not "K42Q/77@..."
    assert "HTTP 401" in done.stderr
    assert "denied Basic ***" in done.stderr
    for text in (done.stdout, done.stderr, _disk(tmp_path)):
        assert CORE not in text
