"""The command line: a Typer app over :mod:`sanctum.api` (rich lives only here).

``sanctum.cli.app`` holds the root app and :func:`~sanctum.cli.app.main`, the console
script's entry point. Nothing here is library logic: what a library user needs is in
:mod:`sanctum.api`.
"""

__all__: list[str] = []
