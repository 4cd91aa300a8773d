"""Words borrowed from the world outside the circle: ``${VAR}`` interpolation.

A ritual file may read the environment at load time with ``${NAME}`` or
``${NAME:-default}`` inside any string value. Substitution is plain text replacement —
nothing is ever evaluated, executed or looked up beyond the named variable — and
``$${`` writes a literal ``${``. An unset variable without a default is an error that
names it. Values read for an Oracle's credentials (``api_key``) and values of
variables whose names look secret (``*KEY*``, ``*TOKEN*``, ``*SECRET*``,
``*PASSWORD*``) are remembered as secrets, so the compiler can redact them and error
messages never repeat them.

A value substituted inside the user information of a URL (``http://user:${PW}@host``,
``postgresql://${USER}:${PW}@db/x``: the scalar starts with ``scheme://`` and the
reference stands before the ``@`` that ends it) is percent-encoded, so an ``@``, ``/``,
``?`` or ``#`` in a password stays in the password instead of moving the host (a
``%XX`` already in the value is kept as written; ``:`` and RFC 3986's sub-delimiters
are left as they are).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = [
    "Interpolation",
    "InterpolationError",
    "interpolate",
    "looks_secret",
    "scrub",
]

_REFERENCE = re.compile(r"\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$\{")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_USERINFO_SAFE = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:"
)
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_SECRET_NAME = re.compile(r"(?i)(key|token|secret|passw(or)?d|credential|auth)")
MASK = "[REDACTED]"
"""What a secret value is replaced with in messages."""


@dataclass(frozen=True, slots=True)
class Interpolation:
    """One ``${NAME}`` substitution: the variable, the text it became, its offset.

    ``offset`` is the 0-based character offset of the reference inside the scalar;
    ``from_default`` is true when the variable was unset and the default was used;
    ``at`` is where ``value`` starts in the substituted text (-1 when unknown), so an
    expression or a template can take those characters out before it is parsed and
    bind them back as data, never as source
    (:mod:`sanctum.ritualfile.expressions`).
    """

    name: str
    value: str
    offset: int
    from_default: bool
    at: int = -1


class InterpolationError(ValueError):
    """A ``${...}`` reference could not be substituted.

    ``offset`` is the 0-based character offset of the reference in the scalar.
    """

    def __init__(self, message: str, *, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


def looks_secret(name: str) -> bool:
    """Whether an environment variable's name suggests a credential.

    Args:
        name: The variable name, e.g. ``OPENAI_API_KEY``.

    Returns:
        True for names containing key, token, secret, password, credential or auth.
    """
    return _SECRET_NAME.search(name) is not None


def interpolate(text: str, env: Mapping[str, str]) -> tuple[str, list[Interpolation]]:
    """Substitute every ``${NAME}`` / ``${NAME:-default}`` in ``text``.

    Plain substitution: the variable's text replaces the reference verbatim, and the
    result is never scanned again (a value containing ``${X}`` stays literal).

    Args:
        text: The scalar as written in the ritual file.
        env: The environment to read (usually ``os.environ``).

    Returns:
        The substituted text and the substitutions made, in order.

    Raises:
        InterpolationError: For an unset variable without default (the message names
            it) or a malformed reference.
    """
    if "$" not in text:
        return text, []
    out: list[str] = []
    done: list[Interpolation] = []
    userinfo = _userinfo_end(text)
    position = 0
    length = 0  # of the text built so far
    for match in _REFERENCE.finditer(text):
        out.append(text[position : match.start()])
        length += match.start() - position
        position = match.end()
        token = match.group(0)
        if token == "$${":
            out.append("${")
            length += 2
            continue
        name = match.group(1)
        if name is None:
            raise InterpolationError(
                "malformed variable reference; write ${NAME} or ${NAME:-default} "
                "(escape a literal with $${)",
                offset=match.start(),
            )
        default = match.group(2)
        if name in env:
            value, from_default = env[name], False
        elif default is not None:
            value, from_default = default, True
        else:
            raise InterpolationError(
                f"environment variable {name} is not set; set it, or give a default "
                f"with ${{{name}:-default}}",
                offset=match.start(),
            )
        if match.start() < userinfo:
            value = _userinfo_quoted(value)
        out.append(value)
        done.append(Interpolation(name, value, match.start(), from_default, length))
        length += len(value)
    out.append(text[position:])
    return "".join(out), done


def _userinfo_end(text: str) -> int:
    """Where the user information of the URL ``text`` starts with ends (its ``@``), as
    written before substitution; 0 when ``text`` is no URL with user information.

    Only the file's own characters count: ``/``, ``?``, ``#`` or ``@`` inside a
    reference (a default) neither ends the authority nor marks the user information.
    """
    if _SCHEME.match(text) is None:
        return 0
    outside = _REFERENCE.sub(lambda m: "x" * len(m.group(0)), text)
    start = text.index("://") + 3
    authority = re.match(r"[^/?#]*", outside[start:])
    at = authority.group(0).rfind("@") if authority else -1
    return start + at if at >= 0 else 0


def _userinfo_quoted(value: str) -> str:
    """``value`` percent-encoded for a URL's user information (``%XX`` kept as written)."""
    out: list[str] = []
    position = 0
    for escape in _ESCAPE.finditer(value):
        out.append(_quote(value[position : escape.start()]))
        out.append(escape.group(0))
        position = escape.end()
    out.append(_quote(value[position:]))
    return "".join(out)


def _quote(text: str) -> str:
    return "".join(
        char
        if char in _USERINFO_SAFE
        else "".join(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))
        for char in text
    )


def scrub(message: str, secrets: Iterable[str]) -> str:
    """Replace every secret value inside ``message`` with a mask.

    Args:
        message: Text about to be shown (an error message, a log line).
        secrets: The secret values (empty strings are ignored).

    Returns:
        ``message`` with each secret replaced by ``[REDACTED]``, longest first; a
        secret shorter than 8 characters only where it stands alone as a token
        (:func:`sanctum.wards.redact.secret_pattern`), so ``api_key: x`` never garbles
        a message.
    """
    from sanctum.wards.redact import mask_secrets  # lazy: `validate` stays light

    return mask_secrets(message, secrets, MASK)
