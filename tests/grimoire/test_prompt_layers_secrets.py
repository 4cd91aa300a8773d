"""A frozen system prompt holding a secret: the Conduit keeps the mask, the model the bytes.

The Rite masks every delta, so the ``system_prompt`` Conduit holds ``key [REDACTED]``
where ``stable`` said ``key ${API_TOKEN}``. The model must still be sent the very
bytes of the first consultation at every later one (the prefix a server caches, and the
key the prompt hands over), while the Seals never hold the secret.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from sanctum.codex.sqlite import SqliteCodex
from sanctum.errors import Interrupt
from sanctum.grimoire.prompt_layers import SYSTEM_PROMPT, PromptLayers, frozen_prompt
from sanctum.oracle import OracleResponse, ScriptedOracle, SpellCall
from sanctum.ritualfile import compile_ritual
from sanctum.wards import Secrets

SECRET = "SEKRIT-4242-xyz"
SECRETS = Secrets([SECRET])


class Context:
    """A context layer that renders ``text`` and counts its renderings."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.count = 0

    def __call__(self, aether: Mapping[str, Any]) -> str:
        self.count += 1
        return self.text


def test_the_first_consultation_freezes_the_prompt_as_rendered() -> None:
    role = PromptLayers(stable=f"key {SECRET}")
    assert frozen_prompt(role, {}, SECRETS) == (f"key {SECRET}", {SYSTEM_PROMPT: f"key {SECRET}"})


def test_a_frozen_prompt_masked_by_the_rite_is_sent_as_first_rendered() -> None:
    context = Context(f"tier gold, token {SECRET}")
    role = PromptLayers(stable=f"key {SECRET}", context=context)
    stored = SECRETS.mask_text(role.assemble({}))
    assert stored == "key [REDACTED]\n\ntier gold, token [REDACTED]"
    text, delta = frozen_prompt(role, {SYSTEM_PROMPT: stored}, SECRETS)
    assert text == f"key {SECRET}\n\ntier gold, token {SECRET}"
    assert delta == {}


def test_a_context_that_renders_otherwise_now_keeps_the_frozen_text() -> None:
    role = PromptLayers(stable=f"key {SECRET}", context=Context("tier silver"))
    stored = "key [REDACTED]\n\ntier gold"
    assert frozen_prompt(role, {SYSTEM_PROMPT: stored}, SECRETS) == (stored, {})
    assert frozen_prompt(role, {SYSTEM_PROMPT: stored}) == (stored, {})


def test_a_frozen_prompt_without_a_mask_is_not_rendered_again() -> None:
    context = Context("tier gold")
    role = PromptLayers(stable="plain rules", context=context)
    assert frozen_prompt(role, {SYSTEM_PROMPT: "plain rules\n\ntier old"}, SECRETS)[0] == (
        "plain rules\n\ntier old"
    )
    assert context.count == 0


def test_the_rite_s_own_mask_is_recognised() -> None:
    custom = Secrets([SECRET], mask="<hidden>")
    role = PromptLayers(stable=f"key {SECRET} and {SECRET}")
    stored = "key <hidden> and <hidden>"
    assert frozen_prompt(role, {SYSTEM_PROMPT: stored}, custom)[0] == role.stable
    assert frozen_prompt(role, {SYSTEM_PROMPT: stored}, SECRETS)[0] == stored  # not its mask


def test_without_a_policy_the_default_mask_stands_where_the_texts_differ() -> None:
    role = PromptLayers(stable=f"key {SECRET}, then {SECRET}.")
    sent = role.stable
    assert frozen_prompt(role, {SYSTEM_PROMPT: "key [REDACTED], then [REDACTED]."})[0] == sent
    assert frozen_prompt(role, {SYSTEM_PROMPT: "key [REDACTED]."})[0] == sent  # one span
    for stored in (
        "key [REDACTED], than [REDACTED].",  # other text between the masks
        "kay [REDACTED], then [REDACTED].",  # other text before
        "key [REDACTED], then [REDACTED]!",  # other text after
        "key [REDACTED], then [REDACTED]. Be brief.",  # more text than rendered
    ):
        assert frozen_prompt(role, {SYSTEM_PROMPT: stored})[0] == stored, stored


RITUAL = """
sanctum: 1
name: keyed
inputs:
  question: {type: string}
aether:
  messages: {reducer: append}
  approvals: {reducer: merge_dict}
  answer: {}
oracles:
  main: {provider: scripted}
tomes:
  desk: {path: spells}
entry: desk
sigils:
  desk:
    agent:
      oracle: main
      tome: desk
      approve: [write]
      role:
        stable: "You hold the key ${API_TOKEN}."
    prompt: "{{ question }}"
    output: answer
    next: END
"""

SPELLS = {
    "peek": ("read", "Peek at something."),
    "stamp": ("write", "Stamp something."),
}


class Recorder(ScriptedOracle):
    """A ScriptedOracle the agent kind keeps as it is (it replaces a plain one behind an
    approving agent), so :attr:`calls` records every request sent."""


def _ritual(tmp_path: Path) -> Path:
    for name, (access, summary) in SPELLS.items():
        folder = tmp_path / "spells" / name
        folder.mkdir(parents=True)
        code = f'def {name}(what: str) -> str:\n    """{summary}\n\n    Args:\n'
        code += f'        what: What.\n    """\n    return f\'{name} {{what}}\'\n'
        (folder / "spell.py").write_text(code, encoding="utf-8")
        entry = {"name": name, "entrypoint": f"spell.py:{name}", "access": access}
        (folder / "spell.json").write_text(json.dumps(entry), encoding="utf-8")
    (tmp_path / ".git").mkdir()
    path = tmp_path / "ritual.yaml"
    path.write_text(RITUAL, encoding="utf-8")
    return path


def test_every_consultation_sends_the_first_system_message_and_seals_hold_none(
    tmp_path: Path,
) -> None:
    oracle = Recorder(
        [
            OracleResponse("", [SpellCall("peek", {"what": "a"})]),
            OracleResponse("", [SpellCall("stamp", {"what": "b"})]),  # waits for approval
            "done",
        ]
    )
    codex = SqliteCodex(tmp_path / "codex.db")
    rite = compile_ritual(
        _ritual(tmp_path), oracles={"main": oracle}, codex=codex, env={"API_TOKEN": SECRET}
    )

    async def go() -> dict[str, Any]:
        with pytest.raises(Interrupt):
            await rite.ainvoke({"question": "look"}, invocation_id="inv")
        seal = await codex.get("inv")
        assert seal is not None
        approvals = seal.aether["approvals"]
        assert approvals["loop"] == {SYSTEM_PROMPT: "You hold the key [REDACTED]."}
        (pending,) = [key for key, item in approvals.items() if item.get("decision")]
        decision = {pending: {"decision": "approve", "by": "me"}}
        final: dict[str, Any] = await rite.ainvoke(
            invocation_id="inv", updates={"approvals": decision}
        )
        await codex.aclose()
        return final

    final = asyncio.run(go())
    assert final["answer"] == "done"
    requests = [messages for messages, _ in oracle.calls]
    assert len(requests) == 3  # two before the pause, one after resuming from the Seal
    first = json.dumps(requests[0][0])
    assert first == json.dumps({"role": "system", "content": f"You hold the key {SECRET}."})
    assert all(json.dumps(request[0]) == first for request in requests[1:])
    disk = "".join(f.read_bytes().decode("utf-8", "replace") for f in tmp_path.glob("codex.db*"))
    assert "You hold the key [REDACTED]." in disk  # the loop state sealed at the pause
    assert SECRET not in disk
