"""Parsers for harness and tool outputs, one module per format.

Importing this package imports every module in it, so each module's ``@register`` runs.
Use :func:`get_parser` to look one up by the name a bundle manifest gives.
"""

import importlib
import pkgutil

from ingest.parsers.base import (
    ParseError,
    ParseResult,
    UnknownParserError,
    get_parser,
    parser_names,
)

for _module in pkgutil.iter_modules(__path__):
    if _module.name not in {"base", "numbers", "text"}:
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["ParseError", "ParseResult", "UnknownParserError", "get_parser", "parser_names"]
