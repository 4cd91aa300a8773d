"""Real-model smoke run: a summoned Entity on SmolLM2-135M-Instruct, twice.

1. In-process, through LlamaCppOracle (llama-cpp-python).
2. Over HTTP, through llama-cpp-python's own OpenAI-compatible server started on
   127.0.0.1 and OpenAICompatibleOracle.

Both runs use prompted spell calling with one Spell (``add``) and print the transcript,
the repairs and the rejections. A 135M model says odd things; whatever it says, the
run must end either with an answer or with one of sanctum's documented errors
(SpellCallParseError, RecursionLimitError, an OracleError...) — never with an
unhandled exception. Exit status: 0 on that, 1 otherwise.

Run ``scripts/real-model-smoke.sh`` (it installs what this needs), or directly:
``python scripts/real_model_smoke.py [--skip-server] [--max-tokens N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sanctum.errors import SanctumError
from sanctum.grimoire import Tome, spell, summon
from sanctum.omens import RiteManifested, SpellCallRejected, SpellCallRepaired
from sanctum.oracle import Oracle
from sanctum.oracle.llamacpp import LlamaCppOracle, smollm2_model_path
from sanctum.oracle.openai_compat import OpenAICompatibleOracle

QUESTION = "What is 17 + 25? Use the add spell, then tell me the sum."
ROLE = "You are a careful assistant. Use the spells you are given when they help."


@spell
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first addend.
        b: The second addend.
    """
    return a + b


def banner(title: str) -> None:
    print(f"\n{'=' * 72}\n{title}\n{'=' * 72}", flush=True)


def show_message(message: dict[str, Any]) -> None:
    role = message.get("role")
    content = str(message.get("content") or "")
    print(f"[{role}] {content}")
    for call in message.get("spell_calls") or []:
        print(f"    -> spell_call {json.dumps(call, ensure_ascii=False)}")
    if message.get("usage"):
        print(f"    usage {message['usage']}")


async def run_entity(oracle: Oracle, label: str) -> bool:
    """Run one summoned Entity; True when it ended in an answer or a documented error."""
    banner(f"{label}: {oracle!r}")
    rite = summon(
        oracle,
        Tome([add]),
        role=ROLE,
        spell_calling="prompted",
        max_repair_rounds=2,
        recursion_limit=12,
    )
    final: dict[str, Any] | None = None
    repairs = 0
    rejections = 0
    started = time.perf_counter()
    try:
        async for omen in rite.astream(
            {"messages": [{"role": "user", "content": QUESTION}]}, mode={"omens"}
        ):
            if isinstance(omen, SpellCallRepaired):
                repairs += 1
                print(f"  REPAIRED {omen.spell}: {omen.detail} (raw: {omen.raw[:120]!r})")
            elif isinstance(omen, SpellCallRejected):
                rejections += 1
                print(f"  REJECTED {omen.spell!r}: {omen.reason[:200]!r}")
            elif isinstance(omen, RiteManifested):
                final = dict(omen.aether)
    except SanctumError as err:
        print(f"\nended with a documented error: {type(err).__name__}: {err}")
        rejected = getattr(err, "rejected", None)
        if rejected:
            print(f"  rejected raw calls: {rejected!r}"[:1000])
        print(
            f"({time.perf_counter() - started:.1f} s, {repairs} repairs, {rejections} rejections)"
        )
        return True
    print("\ntranscript:")
    for message in (final or {}).get("messages", []):
        show_message(message)
    print(f"({time.perf_counter() - started:.1f} s, {repairs} repairs, {rejections} rejections)")
    return final is not None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def llama_cpp_server(model: Path, n_ctx: int) -> Iterator[str]:
    """Start ``python -m llama_cpp.server`` on a free loopback port; yield its /v1 URL."""
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(n_ctx),
        "--verbose",
        "False",
    ]
    print("starting:", " ".join(command), flush=True)
    log = open(os.devnull, "wb")  # noqa: SIM115 - closed below
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        url = f"http://127.0.0.1:{port}"
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with status {process.returncode}")
            try:
                with urllib.request.urlopen(f"{url}/v1/models", timeout=1) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("llama_cpp.server did not come up within 120 s")
            time.sleep(0.25)
        yield f"{url}/v1"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


async def stream_once(oracle: Oracle) -> None:
    print("\nstreaming one answer:", end=" ", flush=True)
    async for chunk in oracle.stream_generate(
        [{"role": "user", "content": "Say hello in five words."}]
    ):
        print(chunk, end="", flush=True)
    print()


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-server", action="store_true", help="only the in-process run")
    parser.add_argument("--max-tokens", type=int, default=160)
    parser.add_argument("--n-ctx", type=int, default=2048)
    args = parser.parse_args()

    model = smollm2_model_path()
    print(f"model file: {model} ({model.stat().st_size / 1e6:.0f} MB)")
    ok = True

    local = LlamaCppOracle(
        model, n_ctx=args.n_ctx, max_tokens=args.max_tokens, temperature=0.2, seed=7
    )
    try:
        ok &= await run_entity(local, "in-process LlamaCppOracle")
        await stream_once(local)
    finally:
        await local.aclose()

    if not args.skip_server:
        with llama_cpp_server(model, args.n_ctx) as base_url:
            remote = OpenAICompatibleOracle(
                "smollm2",
                base_url=base_url,
                timeout=120,
                extra_body={"max_tokens": args.max_tokens, "temperature": 0.2, "seed": 7},
            )
            try:
                ok &= await run_entity(remote, "llama_cpp.server + OpenAICompatibleOracle")
                await stream_once(remote)
            finally:
                await remote.aclose()

    banner("smoke run finished: " + ("OK" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
