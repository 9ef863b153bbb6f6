"""A contract type of our own for import-linter: modules that must not exist.

The old module paths were removed outright (tests/test_old_paths.py); import-linter's
``forbidden`` contract refuses to name a module that does not exist, so the contract that
keeps them gone is this one, registered in ``pyproject.toml`` (``contract_types``): it is
broken when one of its ``modules`` is back in the packages -- a file or folder at the old
path, shim or not. ``tests/test_architecture.py`` plants one to show that it can break.
"""

from __future__ import annotations

from importlinter import Contract, ContractCheck, fields, output

__all__ = ["GoneContract"]


class GoneContract(Contract):
    """Broken when any of ``modules`` is in the import graph (exists in the packages)."""

    type_name = "gone"

    modules = fields.ListField(subfield=fields.StringField())

    def check(self, graph, verbose: bool) -> ContractCheck:
        back = sorted(name for name in self.modules if name in graph.modules)  # type: ignore
        return ContractCheck(kept=not back, metadata={"back": back})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for name in check.metadata["back"]:
            output.print_error(f"{name} exists again: its names have a new home, no shim")
            output.new_line()
