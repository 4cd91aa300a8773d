"""Issue 22's rough edges, each through the real command line (CliRunner)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli.helpers import GREET, REPO, invoke, write_ritual


def test_a_codex_in_a_missing_folder_is_refused(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    result = invoke(["run", str(ritual), "--codex", "sqlite:///no/such/dir/x.db"], tmp_path)
    assert result.exit_code == 2
    folder = tmp_path / "no" / "such" / "dir"
    assert result.stderr.splitlines() == [
        f"error: the folder of the codex {folder / 'x.db'} does not exist ({folder}); check "
        "the path, or create the folder first — a typo never becomes a new folder (only "
        "the default .sanctum/ is created when missing)"
    ]
    assert not (tmp_path / "no").exists()


def test_the_default_codex_folder_is_created(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "greet.yaml", GREET)
    result = invoke(["run", str(ritual), "-q"], tmp_path)
    assert result.exit_code == 0, result.output
    assert (tmp_path / ".sanctum" / "codex.db").is_file()


def _project(tmp_path: Path, marker: str) -> Path:
    """The shipped rituals and spells in a project marked by ``marker``, with a codex
    folder inside ``rituals/`` too (what a run started there leaves)."""
    shutil.copytree(REPO / "rituals", tmp_path / "rituals")
    shutil.copytree(REPO / "spells", tmp_path / "spells")
    (tmp_path / marker).mkdir()
    (tmp_path / "rituals" / ".sanctum").mkdir()
    return tmp_path / "rituals"


@pytest.mark.parametrize("marker", [".git", ".sanctum"])
def test_a_codex_folder_in_rituals_does_not_move_the_project_root(
    tmp_path: Path, marker: str
) -> None:
    rituals = _project(tmp_path, marker)
    result = invoke(["validate", "--resolve", "triage.yaml", "research.yaml"], rituals)
    assert result.exit_code == 0, result.output
    assert "outside the project folder" not in result.output


def _ollama_ritual(tmp_path: Path) -> Path:
    return write_ritual(
        tmp_path,
        "ask.yaml",
        """\
sanctum: 1
name: ask
oracles:
  local: {provider: openai, model: m, base_url: "http://127.0.0.1:9/v1"}
aether:
  answer: {type: string}
entry: ask
sigils:
  ask:
    oracle: local
    prompt: "Say hi."
    output: answer
    next: END
""",
    )


def test_an_oracle_override_takes_a_bare_host_and_port() -> None:
    from sanctum.cli._parsing import parse_oracle_overrides

    (override,) = parse_oracle_overrides(["local=openai:m@127.0.0.1:18431/v1"]).values()
    assert override.base_url == "http://127.0.0.1:18431/v1"
    assert override.model == "m"
    (tagged,) = parse_oracle_overrides(["local=ollama:qwen2.5:0.5b"]).values()
    assert (tagged.model, tagged.base_url) == ("qwen2.5:0.5b", None)  # a tag is no address


def test_a_scripted_override_of_a_model_oracle_says_how_to_answer_offline(
    tmp_path: Path,
) -> None:
    ritual = _ollama_ritual(tmp_path)
    result = invoke(
        ["run", str(ritual), "--oracle", "local=scripted:x", "--codex", "memory:"], tmp_path
    )
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "error: --oracle local=scripted:x: a scripted oracle answers from a script, and the "
        "file's oracle 'local' (openai) has none; to answer offline, replay a recording "
        "(--replay CASSETTE) or write a test file (`sanctum test`)"
    ]


CALLS = """\
sanctum: 1
name: calls
aether:
  out: {}
entry: a
sigils:
  a:
    call: nosuchmodule:fn
    next: b
  b:
    call: steps:fn
    next: END
"""


def test_validate_finds_a_missing_module_without_importing(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "calls.yaml", CALLS)
    (tmp_path / "steps.py").write_text("raise SystemExit('imported!')\n", encoding="utf-8")
    result = invoke(["validate", "calls.yaml"], tmp_path)
    assert result.exit_code == 2
    assert result.stdout.splitlines() == [
        "calls.yaml:8:11: call: no module 'nosuchmodule': neither nosuchmodule.py nor a "
        "package nosuchmodule/ is beside the ritual file, and no installed module has that "
        "name; check the spelling"
    ]
    ritual.write_text(CALLS.replace("nosuchmodule:fn", "steps:fn"), encoding="utf-8")
    found = invoke(["validate", "calls.yaml"], tmp_path)
    assert found.exit_code == 0, found.output  # steps.py was found, never run
    assert found.stdout.splitlines() == ["calls.yaml: ok"]
    assert found.stderr.splitlines() == [
        "note: the Python code the rituals name (module:function) was found but not "
        "imported; `sanctum validate --resolve` imports it and checks the functions"
    ]


SWITCH = """\
sanctum: 1
name: switch
inputs:
  version: {type: string, default: "1.0"}
aether:
  approved: {default: false}
  typed: {type: boolean, default: false}
entry: ask
sigils:
  ask:
    interrupt: "approve?"
    until: "approved"
    next: END
"""


def test_an_update_of_a_switch_must_be_true_or_false(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "switch.yaml", SWITCH)
    paused = invoke(["run", str(ritual), "--invocation", "s1", "-q"], tmp_path)
    assert paused.exit_code == 3, paused.output
    untyped = invoke(["resume", "--invocation", "s1", "--update", "approved=yes"], tmp_path)
    assert untyped.exit_code == 2
    assert untyped.stderr.splitlines() == [
        "error: conduit 'approved' holds true or false (its default is false), got string "
        '"yes"; give true or false; nothing was resumed'
    ]
    typed = invoke(["resume", "--invocation", "s1", "--update", "typed=yes"], tmp_path)
    assert typed.exit_code == 2
    assert typed.stderr.splitlines() == [
        "error: conduit 'typed' must be of type boolean, got string \"yes\"; give true or "
        "false; nothing was resumed"
    ]
    listed = invoke(["invocations", "--status", "paused", "--json"], tmp_path)
    assert '"invocation_id": "s1"' in listed.stdout  # still paused: nothing ran
    done = invoke(["resume", "--invocation", "s1", "--update", "approved=true", "-q"], tmp_path)
    assert done.exit_code == 0, done.output


def test_a_number_for_a_string_input_says_quote_it(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "switch.yaml", SWITCH)
    (tmp_path / "in.yaml").write_text("version: 3.10\n", encoding="utf-8")
    result = invoke(["run", str(ritual), "--input-file", "in.yaml", "--codex", "memory:"], tmp_path)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "error: input 'version' must be of type string, got float 3.1; YAML and JSON read an "
        "unquoted number as a number (3.10 becomes 3.1): quote it to keep the text as written"
    ]


def test_resume_force_after_a_sigil_was_renamed_names_the_sigil(tmp_path: Path) -> None:
    ritual = write_ritual(tmp_path, "switch.yaml", SWITCH)
    paused = invoke(["run", str(ritual), "--invocation", "s1", "-q"], tmp_path)
    assert paused.exit_code == 3, paused.output
    seal = json.loads(invoke(["invocations", "show", "s1", "--json"], tmp_path).stdout)["seal_id"]
    ritual.write_text(SWITCH.replace("  ask:", "  asking:").replace("entry: ask", "entry: asking"))
    args = ["resume", "--invocation", "s1", "--force", "--update", "approved=true"]
    result = invoke(args, tmp_path)
    assert result.exit_code == 2
    assert result.stdout == ""  # no "✗ failed": nothing ran
    assert result.stderr.splitlines() == [
        f"error: the ritual file {ritual.resolve()} no longer has the sigil 'ask' that "
        f"invocation 's1' continues with (renamed or removed since seal {seal[:12]}); "
        "restore the sigil, or resume from an earlier seal with --seal (see `sanctum seals "
        "--invocation s1`); nothing was resumed"
    ]
    status = json.loads(invoke(["invocations", "show", "s1", "--json"], tmp_path).stdout)
    assert status["status"] == "paused"
