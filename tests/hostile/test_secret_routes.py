"""Secrets over the routes that leave the process by way of a server, a test run or a URL.

* An Oracle's HTTP 500 whose body echoes the prompt and the Authorization header (a
  real server on 127.0.0.1): nothing of it reaches stderr, ``--json``, the Seals, the
  trace and its HTML, or the audit file.
* ``sanctum test``: its table and its JUnit XML mask the ritual's and the test file's
  secrets themselves.
* A PostgreSQL codex URL's password (a real server, a role with a password): never in
  the resume hint, ``codex_url``, listings or connection errors.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree

import pytest

from sanctum.api import junit_xml
from sanctum.ritualfile import TestResult
from sanctum.wards.secrets import Secrets
from tests.cli.helpers import invoke, sanctum
from tests.oracle.servers import ModelServer, Recorded, Reply

API_KEY = "sk-live-4f9a1c2b7d8e9f0aKEY"
ENV_VALUE = "envSECRET-0b7d1f2a9c"
PATTERNED = "tok-90817263"
SECRETS = (API_KEY, ENV_VALUE, PATTERNED)


def _echo_500(request: Recorded) -> Reply:
    """HTTP 500 with a body echoing the request: its prompt and its Authorization."""
    said = request.body.decode("utf-8", "replace")
    echo = {
        "error": {"message": f"cannot answer {said}", "auth": request.headers.get("authorization")}
    }
    return Reply(500, json.dumps(echo).encode("utf-8"), content_type="application/json")


@pytest.fixture
def echo_server(server: ModelServer) -> str:
    server.respond = _echo_500
    return f"{server.url}/v1"


RITUAL = """\
sanctum: 1
name: echoed
inputs:
  token: {{type: string}}
aether:
  said: {{}}
  after: {{default: ""}}
oracles:
  cloud: {{provider: openai, model: m, base_url: "{url}", api_key: "${{CLOUD_KEY}}"}}
entry: ask
sigils:
  ask:
    oracle: cloud
    prompt: "Banner ${{BANNER}}, token {{{{ token }}}}"
    output: said
    policy: {{retries: 1, backoff: {{base: 0.01, cap: 0.01}}{on_error}}}
    next: END
  recover:
    set: {{after: "'recovered'"}}
    next: END
wards:
  - redact: {{patterns: ['tok-[0-9]{{8}}']}}
  - audit: {{path: audit.jsonl}}
"""


def _leaks(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


def _artefacts(folder: Path) -> str:
    texts = []
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.suffix in (".json", ".jsonl", ".html", ".xml", ".txt"):
            texts.append(path.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(texts)


@pytest.mark.parametrize("recovers", [False, True], ids=["fails", "on_error"])
def test_an_oracle_500_echoing_the_prompt_reaches_no_artefact(
    tmp_path: Path, echo_server: str, recovers: bool
) -> None:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    # `recover` must be reachable: only with on_error
    text = RITUAL.format(url=echo_server, on_error=", on_error: recover" if recovers else "")
    if not recovers:
        text = text.replace("  recover:\n    set: {after: \"'recovered'\"}\n    next: END\n", "")
    ritual = tmp_path / "echoed.yaml"
    ritual.write_text(text, encoding="utf-8")
    env = {"CLOUD_KEY": API_KEY, "BANNER": ENV_VALUE}
    outputs = []
    modes = (["--json", "--stream", "omens,tokens,updates,values"], ["--stream", "omens"])
    for index, mode in enumerate(modes):
        done = sanctum(
            ["run", str(ritual), "-i", f"token={PATTERNED}", "--trace", f"t{index}.json", *mode],
            tmp_path,
            env=env,
        )
        assert done.returncode == (0 if recovers else 1), done.stderr
        outputs += [done.stdout, done.stderr]
    debug = sanctum(["--debug", "run", str(ritual), "-i", f"token={PATTERNED}"], tmp_path, env=env)
    outputs += [debug.stdout, debug.stderr]
    if not recovers:
        assert "HTTP 500" in outputs[1]
        assert "[REDACTED]" in outputs[1]
    listing = invoke(["invocations", "--json"], tmp_path, env=env)
    assert listing.exit_code == 0, listing.output
    ids = [json.loads(line)["invocation_id"] for line in listing.stdout.splitlines()]
    assert len(ids) == 3 or not recovers
    for invocation in ids:
        seals = invoke(["seals", "--invocation", invocation, "--json", "--values"], tmp_path)
        outputs.append(seals.stdout)
    for name in ("t0.json", "t1.json"):
        rendered = invoke(["trace", "render", name, "-o", f"{name}.html"], tmp_path)
        assert rendered.exit_code == 0, rendered.output
        outputs.append(invoke(["trace", "show", name, "--all"], tmp_path).output)
    shown = "\n".join(outputs)
    if recovers:
        assert "__errors__" in shown
    assert "cannot answer" in shown  # the body was echoed, and masked
    assert _leaks(shown) == []
    on_disk = _artefacts(tmp_path)
    assert "cannot answer" in on_disk
    assert _leaks(on_disk) == []


TEST_RITUAL = """\
sanctum: 1
name: stamped
inputs:
  token: {type: string}
aether:
  banner: {}
entry: stamp
sigils:
  stamp:
    set: {banner: "'${BANNER} ' ~ token"}
    next: END
wards:
  - redact: {patterns: ['tok-[0-9]{8}']}
"""

TEST_FILE = """\
ritual: stamped.yaml
cases:
  - name: "stamps ${BANNER}"
    inputs: {token: tok-90817263}
    expect:
      status: done
      aether: {banner: "${BANNER} ${TEST_ONLY}"}
  - name: fails on purpose
    inputs: {token: "${TEST_ONLY}"}
    expect:
      status: interrupted
"""


def test_sanctum_test_and_its_junit_xml_mask_secrets(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    (tmp_path / "stamped.yaml").write_text(TEST_RITUAL, encoding="utf-8")
    (tmp_path / "stamped.test.yaml").write_text(TEST_FILE, encoding="utf-8")
    only_test = "test-only-SECRET-77"
    env = {"BANNER": ENV_VALUE, "TEST_ONLY": only_test}
    done = sanctum(["test", ".", "--junit-xml", "report.xml"], tmp_path, env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    report = (tmp_path / "report.xml").read_text(encoding="utf-8")
    root = ElementTree.fromstring(report)
    assert len(list(root.iter("failure"))) == 2
    assert "[REDACTED]" in done.stdout
    assert "[REDACTED]" in report
    for text in (done.stdout, done.stderr, report):
        assert _leaks(text) == []
        assert only_test not in text


def test_junit_xml_masks_with_the_secrets_it_is_given() -> None:
    result = TestResult(
        file="x.test.yaml",
        name=f"case {ENV_VALUE}",
        passed=False,
        message=f"aether['k'] is '{API_KEY}'\x1b\x01",
        status="done",
        secrets=Secrets([ENV_VALUE]),
    )
    report = junit_xml([result], secrets=Secrets([API_KEY]))
    root = ElementTree.fromstring(report)
    failure = next(root.iter("failure"))
    assert failure.get("message") == "aether['k'] is '[REDACTED]'\\u001b\\u0001"
    assert next(root.iter("testcase")).get("name") == "case [REDACTED]"
    assert _leaks(report) == []


@pytest.fixture
def pg_role() -> Iterator[tuple[str, str]]:
    """A database owned by a fresh role with a password: (its URL, the password)."""
    base = os.environ.get("SANCTUM_TEST_POSTGRES_URL", "")
    if not base:
        if os.environ.get("CI"):
            pytest.fail("SANCTUM_TEST_POSTGRES_URL is not set; PostgreSQL tests must run in CI")
        pytest.skip("SANCTUM_TEST_POSTGRES_URL is not set")
    import psycopg
    from psycopg import sql

    suffix = uuid.uuid4().hex[:10]
    role, database, password = f"s_role_{suffix}", f"s_db_{suffix}", f"Pa55-{suffix}-w0rd"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(
                sql.Identifier(role), sql.Literal(password)
            )
        )
        conn.execute(
            sql.SQL("CREATE DATABASE {} OWNER {}").format(
                sql.Identifier(database), sql.Identifier(role)
            )
        )
    parts = psycopg.conninfo.conninfo_to_dict(base)
    host, port = parts.get("host", "127.0.0.1"), parts.get("port", "5432")
    try:
        yield f"postgresql://{role}:{password}@{host}:{port}/{database}", password
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database))
            )
            conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


PAUSE = """\
sanctum: 1
name: pause
aether:
  ok: {default: false}
entry: wait
sigils:
  wait:
    interrupt: "Go?"
    until: "ok"
    next: END
"""


@pytest.mark.postgres
def test_a_postgres_password_is_never_printed(tmp_path: Path, pg_role: tuple[str, str]) -> None:
    url, password = pg_role
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    ritual = tmp_path / "pause.yaml"
    ritual.write_text(PAUSE, encoding="utf-8")
    written = url.replace(password, password.replace("-", "%2D"))  # percent-encoded too
    shown: list[str] = []
    for invocation, codex in (("pg-1", url), ("pg-2", written)):
        paused = sanctum(
            ["run", str(ritual), "--codex", codex, "--invocation", invocation, "--json"], tmp_path
        )
        assert paused.returncode == 3, paused.stderr
        result = json.loads(paused.stdout.splitlines()[-1])
        assert result["codex_url"] == url.replace(f":{password}", "")
        assert result["resume"].endswith(f"--codex {result['codex_url']}")
        people = sanctum(["run", str(ritual), "--codex", codex], tmp_path)
        assert people.returncode == 3
        shown += [paused.stdout, paused.stderr, people.stdout, people.stderr]
    with_env = sanctum(["run", str(ritual), "--json"], tmp_path, env={"SANCTUM_CODEX": url})
    assert with_env.returncode == 3, with_env.stderr
    listing = sanctum(["invocations", "--codex", url, "--json"], tmp_path)
    seals = sanctum(["seals", "--invocation", "pg-1", "--codex", url, "--json"], tmp_path)
    resumed = sanctum(
        ["resume", "--invocation", "pg-1", "--codex", url, "-u", "ok=true", "--json"], tmp_path
    )
    assert resumed.returncode == 0, resumed.stderr
    refused = url.rsplit("/", 1)[0] + "/nodb"
    failed = sanctum(["--debug", "run", str(ritual), "--codex", refused, "--json"], tmp_path)
    assert failed.returncode == 2
    assert "nodb" in failed.stderr
    for done in (with_env, listing, seals, resumed, failed):
        shown += [done.stdout, done.stderr]
    text = "\n".join(shown)
    for form in (password, password.replace("-", "%2D")):
        assert form not in text
    hint = json.loads(shown[0].splitlines()[-1])["resume"]
    echoed = subprocess.run(
        ["sh", "-c", f"printf '%s\\n' {hint.removeprefix('sanctum ')}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert echoed == ["resume", "--invocation", "pg-1", "--codex", url.replace(f":{password}", "")]


def test_the_ritual_files_own_codex_url_password_is_masked(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    ritual = tmp_path / "pause.yaml"
    password = "file-Pa55-w0rd-1"
    ritual.write_text(
        PAUSE + f"codex: postgresql://someone:{password}@127.0.0.1:1/nodb\n", encoding="utf-8"
    )
    failed = sanctum(["run", str(ritual), "--json"], tmp_path)
    assert failed.returncode in (1, 2)  # no server there
    assert "127.0.0.1:1" in failed.stderr
    assert password not in failed.stdout + failed.stderr
    checked = sanctum(["validate", str(ritual)], tmp_path)
    assert password not in checked.stdout + checked.stderr
