"""Wards — middleware — and the Wards sanctum ships."""

from sanctum.errors import WardRejection
from sanctum.wards.base import Ward

__all__ = ["Ward", "WardRejection"]
