"""Module paths from before the package was split by job, kept importable.

``toolsel.sweep``, ``toolsel.metrics``, ``toolsel.plots``, ``toolsel.importers`` and the other
modules that moved into :mod:`toolsel.eval`, :mod:`toolsel.report` and
:mod:`toolsel.integrations` still import under their old names: the old name is an alias of
the same module object (not a copy), so ``toolsel.metrics.recall_at_k is
toolsel.eval.metrics.recall_at_k``. Aliases resolve lazily, when first imported.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

__all__ = ["MOVED", "install_aliases"]

#: old module name -> where it lives now
MOVED: dict[str, str] = {
    **{f"toolsel.{m}": f"toolsel.eval.{m}" for m in ("metrics", "stats", "sweep")},
    **{f"toolsel.{m}": f"toolsel.tables.{m}" for m in (
        "discovery", "failure_modes", "conversations", "cost", "compare", "compare_styles",
        "replication", "scenario", "runs", "benchmark")},
    "toolsel.plots": "toolsel.report.plots",
    "toolsel.explorer": "toolsel.report.explorer",
    "toolsel.importers": "toolsel.integrations.importers",
}


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old module name and hands back the module it moved to."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname in MOVED:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module):  # already executed under its new name
        pass


_FINDER = _AliasFinder()


def install_aliases() -> None:
    """Make the old module names importable (idempotent)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.append(_FINDER)
    # already-imported modules are aliased now, so ``import toolsel.sweep`` never rebinds the
    # ``toolsel.sweep`` *function* exported by the package to the module of the same name
    for old, new in MOVED.items():
        if new in sys.modules:
            sys.modules.setdefault(old, sys.modules[new])
