"""The facade's parts; import them from :mod:`sanctum.api`, which re-exports them."""

__all__: list[str] = []
