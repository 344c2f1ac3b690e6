"""Home of ``python`` tools: the package PYTHON_TOOL_PACKAGES allows by default.

A manifest names a function here as ``gateway.pytools.<module>:<function>``;
it receives the validated arguments as keyword arguments and returns JSON.
"""
