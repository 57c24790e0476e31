# SPDX-License-Identifier: Apache-2.0
"""Reads the generator's inputs: the spec JSON, and the integer constants of the runtime
headers that the spec's widths must equal.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from .common import SpecError


def load_spec(path: Path) -> dict:
    """Parses the spec JSON, naming the file on a syntax error."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise SpecError(f"{path}: {exc}") from exc


def runtime_constants(runtime_dir: Path, header: str) -> dict[str, int]:
    """Integer `inline constexpr <type> kName = <int>;` definitions of a runtime header."""
    text = (runtime_dir / header).read_text(encoding="utf-8")
    pattern = re.compile(r"inline\s+constexpr\s+[\w:]+\s+(k\w+)\s*=\s*(-?\d+)\s*;")
    return {name: int(value) for name, value in pattern.findall(text)}
