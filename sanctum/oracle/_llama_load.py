"""Waking a GGUF model safely: extra buffer types off, and a probe in a child process.

Private to :mod:`sanctum.oracle.llamacpp`. llama.cpp's "extra buffer types" repack
weights for CPU-specific kernels; on recent Intel server CPUs its AMX kernel
(``ggml_backend_amx_mul_mat``, ggml-org/llama.cpp#20824) dies with SIGSEGV on any
prompt longer than one token, which takes the whole process down. llama-cpp-python
exposes no argument for ``llama_model_params.use_extra_bufts``, so
:func:`load_llama` sets it while the model loads.

:func:`probe_model` loads the model in a child process and evaluates a short prompt
there first: a crash kills the child, and the Oracle raises a clear
:class:`~sanctum.errors.OracleConnectionError` instead of dying. Run as
``python -m sanctum.oracle._llama_load PATH JSON_KWARGS EXTRA_BUFTS`` it is that child.
"""

from __future__ import annotations

import faulthandler
import importlib
import json
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping
from typing import Any

from sanctum.errors import OracleConnectionError

__all__ = ["PROBE_TIMEOUT", "load_llama", "probe_model"]

PROBE_TIMEOUT = 300.0
"""Seconds the child process may take to load the model and answer the probe."""

_PROBE_PROMPT = "Count the words of this short sentence, please."
_PATCH_LOCK = threading.Lock()  # llama_model_default_params is patched while loading
_PROBED: set[tuple[str, str, bool]] = set()
_PROBED_LOCK = threading.Lock()


def load_llama(
    llama_cpp: Any, model_path: str, kwargs: Mapping[str, Any], *, extra_buffer_types: bool
) -> Any:
    """Construct ``llama_cpp.Llama``, with extra buffer types off unless asked for.

    Args:
        llama_cpp: The imported ``llama_cpp`` package.
        model_path: The GGUF file.
        kwargs: Further ``Llama`` arguments (``n_ctx``, ``seed``...).
        extra_buffer_types: Keep llama.cpp's default (extra buffer types on).

    Returns:
        The ``llama_cpp.Llama`` instance.

    Raises:
        ValueError, RuntimeError, OSError: What llama-cpp-python raises for a model
            it cannot load.
    """
    low = None if extra_buffer_types else getattr(llama_cpp, "llama_cpp", None)
    original = getattr(low, "llama_model_default_params", None)
    if low is None or original is None:
        return llama_cpp.Llama(model_path=model_path, **kwargs)

    def without_extra_bufts() -> Any:
        params = original()
        if hasattr(params, "use_extra_bufts"):
            params.use_extra_bufts = False
        return params

    with _PATCH_LOCK:
        low.llama_model_default_params = without_extra_bufts
        try:
            return llama_cpp.Llama(model_path=model_path, **kwargs)
        finally:
            low.llama_model_default_params = original


def probe_model(
    model_path: str,
    kwargs: Mapping[str, Any],
    *,
    extra_buffer_types: bool,
    timeout: float = PROBE_TIMEOUT,
) -> None:
    """Load the model and evaluate a short prompt in a child process, once per process.

    Args:
        model_path: The GGUF file.
        kwargs: The ``Llama`` arguments the Oracle will use (JSON-serialisable ones are
            passed on; ``n_ctx`` is capped at 512 for the probe).
        extra_buffer_types: As for :func:`load_llama`.
        timeout: Seconds the child may take.

    Raises:
        OracleConnectionError: The child crashed (a signal such as SIGSEGV), could not
            load the model, or took longer than ``timeout``; the message says which and
            the likely fix.
    """
    plain = {k: v for k, v in kwargs.items() if isinstance(v, str | int | float | bool)}
    plain["n_ctx"] = min(int(plain.get("n_ctx", 512)), 512)
    plain["verbose"] = False
    encoded = json.dumps(plain, sort_keys=True)
    key = (model_path, encoded, extra_buffer_types)
    with _PROBED_LOCK:
        if key in _PROBED:
            return
    command = [
        sys.executable,
        "-m",
        "sanctum.oracle._llama_load",
        model_path,
        encoded,
        "1" if extra_buffer_types else "0",
    ]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise OracleConnectionError(
            f"llama.cpp took more than {timeout:g} s to load {model_path!r} and answer a "
            "probe in a child process. Likely fix: check the file and the machine's free "
            "memory, or pass probe=False.",
            endpoint=model_path,
        ) from exc
    if done.returncode == 0:
        with _PROBED_LOCK:
            _PROBED.add(key)
        return
    raise OracleConnectionError(
        _probe_failure(model_path, done, extra_buffer_types), endpoint=model_path
    )


def _probe_failure(
    model_path: str, done: subprocess.CompletedProcess[str], extra_buffer_types: bool
) -> str:
    """The message for a probe that did not end well."""
    tail = " ".join(done.stderr.strip().splitlines()[-3:])[-400:]
    if done.returncode < 0:
        try:
            name = signal.Signals(-done.returncode).name
        except ValueError:
            name = f"signal {-done.returncode}"
        fix = (
            "extra_buffer_types=False (the default) avoids llama.cpp's AMX crash "
            "(ggml-org/llama.cpp#20824)"
            if extra_buffer_types
            else "try a smaller n_ctx or n_threads, or another llama-cpp-python build"
        )
        return (
            f"llama.cpp crashed ({name}) while a child process loaded {model_path!r} and "
            f"evaluated a short prompt, so this process did not load it. Likely fix: {fix}."
            + (f" Its last words: {tail}" if tail else "")
        )
    return (
        f"llama.cpp could not load the model {model_path!r} (probe exit status "
        f"{done.returncode}): {tail or 'no message'}. Likely fix: check that the file is a "
        "complete GGUF model and that n_ctx fits in memory."
    )


def _main(argv: list[str]) -> int:
    """The probe child: load, evaluate a few tokens, exit 0; 3 when loading fails."""
    model_path, encoded, extra = argv
    llama_cpp = importlib.import_module("llama_cpp")
    try:
        model = load_llama(
            llama_cpp, model_path, json.loads(encoded), extra_buffer_types=extra == "1"
        )
    except (ValueError, RuntimeError, OSError) as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 3
    model.create_completion(_PROBE_PROMPT, max_tokens=2)
    return 0


if __name__ == "__main__":  # pragma: no cover - run in the probe's child process
    faulthandler.enable()
    sys.exit(_main(sys.argv[1:]))
