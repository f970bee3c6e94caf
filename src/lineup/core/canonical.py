"""The one canonical form of JSON that digests and the audit chain are made over.

RFC 8785 (the JSON Canonicalization Scheme): keys sorted by UTF-16 code units, no whitespace,
numbers as ECMAScript writes them, strings minimally escaped. Two parties who hold the same
JSON value compute the same bytes, whatever their language or JSON library.
"""

from __future__ import annotations

import hashlib
from typing import Any

import rfc8785


def canonical(value: Any) -> bytes:
    """``value`` (JSON types only) in its canonical bytes; ``ValueError`` for anything else,
    including integers beyond what IEEE 754 doubles hold exactly."""
    try:
        return rfc8785.dumps(value)
    except (rfc8785.CanonicalizationError, TypeError) as exc:
        raise ValueError(f"not canonicalisable JSON: {exc}") from exc


def digest(value: Any) -> str:
    """``sha256:<hex>`` of the canonical form: what an approval is bound to."""
    return "sha256:" + hashlib.sha256(canonical(value)).hexdigest()
