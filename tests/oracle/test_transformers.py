"""TransformersOracle: the chat template, generation, streaming, parsed calls, errors.

transformers and torch are not installed on the build machine (and no model could be
downloaded there), so these tests hand the Oracle a loaded model and tokenizer of their
own: a character-level tokenizer with a Jinja chat template and a "model" that answers
a fixed text through ``generate`` and its streamer protocol — the same calls a
transformers model receives. A model given by name needs the library: that path is
checked for its error message.
"""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Sequence
from typing import Any

import jinja2
import pytest

from sanctum.errors import OracleResponseError
from sanctum.grimoire import Tome, spell, summon
from sanctum.oracle import OracleResponse, SpellCall
from sanctum.oracle.transformers import TransformersOracle, to_chat_template_messages

TEMPLATE = (
    "{% if tools %}<tools>{{ tools | tojson }}</tools>\n{% endif %}"
    "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}"
    "{% if m.tool_calls %}{{ m.tool_calls | tojson }}{% endif %}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


class Ids(list[list[int]]):
    """A batch of token ids with the bits of a tensor the adapter uses."""

    def tolist(self) -> list[list[int]]:
        return [list(row) for row in self]


class CharTokenizer:
    """One token per character (its code point); 0 is the end-of-sequence token."""

    eos_token_id = 0
    pad_token_id = None

    def __init__(self, template: str | None = TEMPLATE) -> None:
        self.template = template
        self.rendered: list[str] = []

    def apply_chat_template(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        add_generation_prompt: bool = False,
        tokenize: bool = True,
    ) -> str:
        if self.template is None:
            raise ValueError("this tokenizer has no chat_template")
        env = jinja2.Environment()
        text = env.from_string(self.template).render(
            messages=messages, tools=tools, add_generation_prompt=add_generation_prompt
        )
        self.rendered.append(text)
        return text

    def __call__(self, text: str, return_tensors: str, add_special_tokens: bool) -> dict[str, Any]:
        assert return_tensors == "pt"
        return {"input_ids": Ids([[ord(c) for c in text]])}

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = False) -> str:
        return "".join(chr(i) for i in ids if not (skip_special_tokens and i == 0))


class EchoModel:
    """Answers each prompt with the next scripted text, token by token."""

    name_or_path = "tiny/echo-model"

    def __init__(self, answers: list[str]) -> None:
        self.answers = list(answers)
        self.options: list[dict[str, Any]] = []
        self.threads: list[str] = []

    def generate(self, input_ids: Ids, streamer: Any = None, **options: Any) -> Ids:
        self.options.append(options)
        self.threads.append(threading.current_thread().name)
        prompt = list(input_ids[0])
        answer = [*[ord(c) for c in self.answers.pop(0)][: options["max_new_tokens"]], 0]
        if streamer is not None:
            streamer.put(Ids([prompt]))
            for token in answer:
                streamer.put(Ids([[token]]))
            streamer.end()
        return Ids([prompt + answer])


def oracle(*answers: str, template: str | None = TEMPLATE, **kwargs: Any) -> TransformersOracle:
    return TransformersOracle(EchoModel(list(answers)), tokenizer=CharTokenizer(template), **kwargs)


async def test_generate_renders_the_chat_template_and_counts_tokens() -> None:
    voice = oracle("Hello there.", max_new_tokens=64)
    reply = await voice.generate([{"role": "user", "content": "hi"}])
    assert reply.text == "Hello there."
    assert reply.spell_calls == []
    prompt = "<|user|>hi\n<|assistant|>"
    assert voice._tokenizer.rendered == [prompt]
    assert reply.usage == {
        "prompt_tokens": len(prompt),
        "completion_tokens": len("Hello there.") + 1,
        "total_tokens": len(prompt) + len("Hello there.") + 1,
    }
    model = voice._model
    assert model.options[0]["max_new_tokens"] == 64
    assert model.options[0]["do_sample"] is False
    assert model.options[0]["pad_token_id"] == 0  # eos when the tokenizer has no pad
    assert model.threads[0] != threading.current_thread().name  # off the event loop
    assert voice.arcana == "transformers:tiny/echo-model"


async def test_spells_go_to_the_template_as_tools_and_calls_are_parsed() -> None:
    answer = 'Checking.<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>'
    voice = oracle(answer)
    schemas = [{"name": "add", "description": "Add.", "parameters": {"type": "object"}}]
    reply = await voice.generate([{"role": "user", "content": "2+3?"}], schemas)
    assert reply.text == "Checking."
    assert reply.spell_calls == [SpellCall("add", {"a": 2, "b": 3})]
    rendered = voice._tokenizer.rendered[0]
    tools = json.loads(rendered[len("<tools>") : rendered.index("</tools>")])
    assert tools == [
        {
            "type": "function",
            "function": {"name": "add", "description": "Add.", "parameters": {"type": "object"}},
        }
    ]


def test_the_transcript_is_translated_for_chat_templates() -> None:
    transcript: list[dict[str, Any]] = [
        {"role": "user", "content": "2+3?"},
        {
            "role": "assistant",
            "content": "",
            "spell_calls": [{"spell": "add", "arguments": {"a": 2, "b": 3}, "call_id": "c1"}],
        },
        {"role": "spell", "name": "add", "call_id": "c1", "content": "5"},
    ]
    assert to_chat_template_messages(transcript) == [
        {"role": "user", "content": "2+3?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "type": "function",
                    "id": "c1",
                    "function": {"name": "add", "arguments": {"a": 2, "b": 3}},
                }
            ],
        },
        {"role": "tool", "content": "5", "name": "add", "tool_call_id": "c1"},
    ]


async def test_streaming_yields_text_then_the_response() -> None:
    voice = oracle("Grüße, 世界")
    items = [item async for item in voice.stream_response([{"role": "user", "content": "hi"}])]
    *chunks, final = items
    assert all(isinstance(chunk, str) for chunk in chunks)
    assert "".join(str(chunk) for chunk in chunks) == "Grüße, 世界"
    assert len(chunks) > 1
    assert isinstance(final, OracleResponse)
    assert final.text == "Grüße, 世界"
    texts = [c async for c in oracle("a b").stream_generate([{"role": "user", "content": "x"}])]
    assert "".join(texts) == "a b"


async def test_a_template_without_tools_support_is_a_tool_rejection() -> None:
    voice = oracle("unused", template=None)
    with pytest.raises(OracleResponseError, match="cannot render tools") as caught:
        await voice.generate([{"role": "user", "content": "hi"}], [{"name": "add"}])
    assert "spell_calling='auto'" in str(caught.value)


async def test_summon_runs_the_react_loop_on_it() -> None:
    @spell
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    voice = oracle('<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>', "5.")
    final = await summon(voice, Tome([add])).ainvoke(
        {"messages": [{"role": "user", "content": "2+3?"}]}
    )
    assert [m["role"] for m in final["messages"]] == ["user", "assistant", "spell", "assistant"]
    assert final["messages"][2]["content"] == "5"
    # the second prompt shows the call and its result the way templates expect
    second = voice._tokenizer.rendered[1]
    assert '"name": "add"' in second
    assert "<|tool|>5" in second


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="tokenizer="):
        TransformersOracle(EchoModel([]))
    with pytest.raises(ValueError, match="max_new_tokens"):
        oracle(max_new_tokens=0)


@pytest.mark.skipif(
    importlib.util.find_spec("transformers") is not None, reason="transformers is installed"
)
def test_a_model_by_name_needs_the_library() -> None:
    with pytest.raises(ImportError, match=r"pip install 'sanctum-rituals\[transformers\]'"):
        TransformersOracle("Qwen/Qwen2.5-0.5B-Instruct")
