__version__ = "0.1.0"

__distribution__ = "sanctum-rituals"
"""The name sanctum is installed under (``pip install 'sanctum-rituals[postgres]'``).

``sanctum`` on PyPI is an unrelated package; the import name (``import sanctum``) and
the command (``sanctum``) stay ``sanctum``.
"""
