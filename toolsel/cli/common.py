"""What every subcommand module shares: the :func:`command` registry and argument types."""

from __future__ import annotations

import argparse
from collections.abc import Callable

__all__ = ["command", "COMMANDS", "csv_list", "int_list", "always_include_names",
           "MAX_TOP_K"]

#: name -> (help, add_arguments(parser), run(args) -> exit code)
COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None],
                          Callable[[argparse.Namespace], int]]] = {}


def command(name: str, help: str, add_arguments: Callable[[argparse.ArgumentParser], None]):
    """Decorator registering ``run(args) -> int`` as the subcommand ``name``."""
    def deco(run: Callable[[argparse.Namespace], int]):
        COMMANDS[name] = (help, add_arguments, run)
        return run
    return deco


def csv_list(value: str) -> list[str]:
    """``"a,b, c"`` → ``["a", "b", "c"]`` (empty items dropped)."""
    return [v.strip() for v in value.split(",") if v.strip()]


#: The largest cut-off a command takes (no registry comes near it; beyond it K overflows
#: the 64-bit arrays rankings are kept in).
MAX_TOP_K = 10**9


def int_list(value: str) -> list[int]:
    try:
        out = [int(v) for v in csv_list(value)]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {value!r}")
    if not out or min(out) < 1 or max(out) > MAX_TOP_K:
        raise argparse.ArgumentTypeError(f"expected integers from 1 to {MAX_TOP_K:,}, got "
                                         f"{value!r}")
    return out


def always_include_names(value: list[str] | None, registry) -> list[str]:
    """``--always-include`` values: names as given, or ``marked`` for the registry's own."""
    if not value:
        return []
    if value == ["marked"]:
        return sorted(registry.always_include, key=registry.index)
    return value
