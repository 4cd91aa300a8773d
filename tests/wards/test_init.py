"""sanctum.wards exports its Wards with a sorted, exhaustive __all__."""

from __future__ import annotations

import sanctum.wards
from sanctum.errors import WardRejection as RootRejection


def test_all_is_sorted_and_exhaustive() -> None:
    public = {
        name
        for name, value in vars(sanctum.wards).items()
        if not name.startswith("_") and isinstance(value, type)
    }
    assert sanctum.wards.__all__ == sorted(sanctum.wards.__all__)
    assert set(sanctum.wards.__all__) == public
    assert public == {"AuditWard", "RedactWard", "Secrets", "UsageWard", "Ward", "WardRejection"}


def test_every_shipped_ward_is_a_ward_and_rejection_is_the_root_class() -> None:
    for name in ("AuditWard", "RedactWard", "UsageWard"):
        assert issubclass(getattr(sanctum.wards, name), sanctum.wards.Ward)
    assert sanctum.wards.WardRejection is RootRejection
