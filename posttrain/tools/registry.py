"""The tool registry: every tool a domain can hand the policy, by name.

What it is: :data:`TOOLS`, a :class:`~posttrain.core.registry.Registry` (entry-point group
``posttrain.tools``) of tool factories — a class or function whose call with keyword
arguments returns a tool (``name``, ``spec``, ``__call__(sandbox, **arguments)``) or, for a
family of tools sharing state, a list of tools (``documents``). Built-ins are registered by
``"module:attribute"`` so listing them imports nothing heavy (the CAD tool's kernel, the PDF
parser). :func:`make_tools` builds a :class:`~posttrain.tools.ToolSet` from names.

Guarantees: an unknown name raises a RegistryError naming the registered ones. Does not:
decide which tools a domain offers (the domain does).
"""

from __future__ import annotations

from typing import Any, Mapping

from posttrain.core.errors import RegistryError
from posttrain.core.registry import Registry

from .toolset import ToolSet

TOOLS: Registry[Any] = Registry("tool", entry_point_group="posttrain.tools", versioned=False)
for _name, _target in (
    ("shell", "posttrain.tools.exec_tools:ShellTool"),
    ("python", "posttrain.tools.exec_tools:PythonTool"),
    ("read_file", "posttrain.tools.file_tools:ReadFileTool"),
    ("write_file", "posttrain.tools.file_tools:WriteFileTool"),
    ("edit_file", "posttrain.tools.file_tools:EditFileTool"),
    ("list_files", "posttrain.tools.file_tools:ListFilesTool"),
    ("cad", "posttrain.tools.cad_tool:CadTool"),
    ("documents", "posttrain.tools.document_tool:document_tools"),
):
    TOOLS.add_lazy(_name, _target)


def make_tools(names: Mapping[str, Mapping[str, Any]] | list[str]) -> ToolSet:
    """A ToolSet of the named tools; ``{"shell": {"timeout": 10}}`` passes keyword arguments."""
    spec = {n: {} for n in names} if isinstance(names, list) else dict(names)
    unknown = [n for n in spec if n not in TOOLS]
    if unknown:
        raise RegistryError(f"unknown tools {unknown}; allowed: {', '.join(TOOLS.ids())}")
    tools: list[Any] = []
    for name, kwargs in spec.items():
        made = TOOLS.get(name)(**dict(kwargs))
        tools += list(made) if isinstance(made, (list, tuple)) else [made]
    return ToolSet(tools)
