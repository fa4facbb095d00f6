"""An object named as `"module:name"` text (a table's opener, session class or maker), its module
imported only when it is asked for: the tables that name them import nothing heavy."""

from __future__ import annotations

import importlib
from typing import Any


def named_object(target: str) -> Any:
    """The object `target` ("package.module:name") names, importing its module now."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)
