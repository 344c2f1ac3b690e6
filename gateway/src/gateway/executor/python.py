"""``python`` tools: ``module:function`` inside an allowlisted package.

The function receives the validated arguments as keyword arguments and
returns something JSON-serialisable. Coroutine functions run on the event loop
and are cancelled at the deadline. Plain functions run in a worker thread; at
the deadline the caller gets ``tool_timeout`` at once, but Python cannot stop
the thread, which finishes in the background — so plain-function tools should
be quick and side-effect free.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
from collections.abc import Callable, Sequence
from typing import Any

from gateway.catalog.spec import PythonTarget, ToolSpec
from gateway.executor.errors import ToolFailed


class PythonExecutor:
    def __init__(self, packages: Sequence[str]) -> None:
        self._packages = tuple(packages)
        self._functions: dict[str, Callable[..., Any]] = {}

    def _allowed(self, module: str) -> bool:
        return any(module == p or module.startswith(p + ".") for p in self._packages)

    def function(self, target: PythonTarget) -> Callable[..., Any]:
        cached = self._functions.get(target.function)
        if cached is not None:
            return cached
        module_name, _, name = target.function.partition(":")
        if not self._allowed(module_name):
            raise ToolFailed(
                f"Module {module_name!r} is not in PYTHON_TOOL_PACKAGES.", counts_as_failure=False
            )
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ToolFailed(f"Python tool module {module_name!r} cannot be imported.") from exc
        function: Any = getattr(module, name, None)
        if not callable(function):
            raise ToolFailed(f"{target.function!r} is not a function.", counts_as_failure=False)
        checked: Callable[..., Any] = function
        self._functions[target.function] = checked
        return checked

    async def call(self, spec: ToolSpec, target: PythonTarget, arguments: dict[str, Any]) -> Any:
        """Run the function; the caller enforces the deadline around it."""
        function = self.function(target)
        try:
            if inspect.iscoroutinefunction(function):
                result = await function(**arguments)
            else:
                result = await asyncio.to_thread(function, **arguments)
        except (asyncio.CancelledError, TimeoutError):
            raise
        except Exception as exc:  # the tool's own failure, reported to the caller as tool_error
            raise ToolFailed(
                f"Tool {spec.tool_id!r} raised {type(exc).__name__}: {str(exc)[:500]}"
            ) from exc
        try:
            json.dumps(result)
        except (TypeError, ValueError) as exc:
            raise ToolFailed(
                f"Tool {spec.tool_id!r} returned a {type(result).__name__}, which is not JSON."
            ) from exc
        return result
