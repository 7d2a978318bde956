"""posttrain.tools: the tool-calling layer the policy uses inside a sandbox.

``default_tools()`` gives shell, python, read_file, write_file, edit_file and list_files;
``document_tools(documents)`` gives open_document, read_page, search_document and
extract_tables over PDFs a task placed in /work (:mod:`.document_tool`);
``CadTool`` (``cad``: a build123d script run in the sandbox, its solid exported; see
:mod:`.cad_tool`) is added by the CAD domains. Each has ``name``, ``spec`` (OpenAI
function-calling JSON schema) and
``__call__(sandbox, **arguments) -> ToolResult``. ``ToolSet`` validates a call against the
schema and dispatches it; a malformed call is an error result, never an exception.

Guarantees: tools only touch the sandbox they are given (and through it only /work for the
file tools). Does not: parse tool calls out of model text (the rollout layer does).
"""

from .document_tool import document_tools
from .cad_tool import CadTool
from .exec_tools import PythonTool, ShellTool
from .file_tools import EditFileTool, ListFilesTool, ReadFileTool, WriteFileTool
from .result import ToolResult
from .schema import function_spec, validate
from .toolset import Tool, ToolSet


def default_tools(timeout: float = 30.0) -> ToolSet:
    return ToolSet([ShellTool(timeout), PythonTool(timeout), ReadFileTool(), WriteFileTool(),
                    EditFileTool(), ListFilesTool()])


__all__ = ["CadTool", "EditFileTool", "ListFilesTool", "PythonTool", "ReadFileTool", "ShellTool", "Tool",
           "ToolResult", "ToolSet", "WriteFileTool", "default_tools", "document_tools", "function_spec",
           "validate"]
