"""Messages an Oracle cuts short are masked before the cut, and the cut is marked.

Against a loopback server speaking the OpenAI wire format: an error body echoing a
prompt that holds a secret, an API key, or the password of ``base_url``.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from sanctum.errors import OracleResponseError
from sanctum.oracle._http import SNIPPET_CHARS
from sanctum.oracle.openai_compat import OpenAICompatibleOracle
from sanctum.oracle.robust import PromptedSpellCalling
from sanctum.wards import Secrets
from tests.oracle.servers import ModelServer, Reply, llama_server_error, oa_completion

SECRET = "SEKRIT-4242-xyz"
API_KEY = "sk-local-0123456789abcdef"
HELLO = [{"role": "user", "content": "hi"}]
ADD = {"name": "add", "description": "Add.", "parameters": {"type": "object"}}


async def _error(oracle: OpenAICompatibleOracle) -> OracleResponseError:
    with pytest.raises(OracleResponseError) as caught:
        await oracle.generate(HELLO)
    await oracle.aclose()
    return caught.value


async def test_an_error_message_keeps_no_front_of_the_api_key(server: ModelServer) -> None:
    message = "p" * (SNIPPET_CHARS - 8) + API_KEY  # the cut at SNIPPET_CHARS goes through it
    server.reply(llama_server_error(400, message))
    error = await _error(
        OpenAICompatibleOracle("local-model", base_url=server.url, api_key=API_KEY)
    )
    text = str(error)
    assert "p" * 100 in text  # the message is quoted, cut at SNIPPET_CHARS
    assert API_KEY[:4] not in text
    assert "…" in text


async def test_a_secret_the_cut_went_through_is_masked_by_the_rite_s_policy(
    server: ModelServer,
) -> None:
    # a raw (not JSON) 500 body echoing the prompt, the secret across character 500
    body = "boom " + "p" * (SNIPPET_CHARS - 5 - 6) + SECRET + " and the rest"
    server.reply(Reply(500, body.encode(), content_type="text/plain"))
    error = await _error(OpenAICompatibleOracle("local-model", base_url=server.url))
    assert SECRET[:6] + "…" in str(error)  # what the oracle, which knew no secret, quoted
    masked = Secrets([SECRET]).mask_text(str(error))
    assert SECRET[:4] not in masked
    assert "p[REDACTED]…" in masked


async def test_the_password_of_base_url_and_its_basic_token_are_masked(
    server: ModelServer,
) -> None:
    password = "PWSEKRIT@77/77"
    token = base64.b64encode(f"user:{password}".encode()).decode()

    def echo(request: Any) -> Reply:
        auth = {k.lower(): v for k, v in request.headers.items()}.get("authorization")
        said = f"denied: {auth} for {password}"
        return llama_server_error(401, said)

    server.respond = echo
    url = server.url.replace("http://", "http://user:PWSEKRIT%4077%2F77@")
    error = await _error(OpenAICompatibleOracle("local-model", base_url=url))
    headers = {k.lower(): v for k, v in server.requests[0].headers.items()}
    assert headers["authorization"] == f"Basic {token}"
    text = str(error)
    assert "denied: Basic ***" in text
    assert token not in text
    assert "PWSEKRIT" not in text


async def test_a_fallback_notice_is_cut_with_a_marker(server: ModelServer) -> None:
    rejection = "tools param requires --jinja flag; "
    server.reply(llama_server_error(500, rejection + "MARK"), oa_completion("done"))
    probe = PromptedSpellCalling(OpenAICompatibleOracle("m", base_url=server.url), mode="auto")
    await probe.generate(HELLO, [ADD])
    await probe.aclose()
    notice = probe.take_notice()
    assert notice is not None
    said = f"native spell calling was refused by {probe.arcana}: "
    lead = notice.index("MARK") - len(said)  # where the server's words start in the reason
    server.reply(
        llama_server_error(500, rejection + "p" * (300 - lead - 6) + SECRET + " tail"),
        oa_completion("done"),
    )
    oracle = PromptedSpellCalling(OpenAICompatibleOracle("m", base_url=server.url), mode="auto")
    await oracle.generate(HELLO, [ADD])
    await oracle.aclose()
    notice = oracle.take_notice()
    assert notice is not None
    assert SECRET[:6] + "…" in notice
    assert SECRET[:4] not in Secrets([SECRET]).mask_text(notice)
