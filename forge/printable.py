"""Untrusted text made safe to print: control and invisible format characters become visible escapes.

Candidates and LLMs choose the characters of exception messages, log tails, compiler output and advice.
Printed raw, an ESC sequence repaints the terminal (a `runtime_error` made to read `passed`), a carriage
return overwrites the line, and a bidi override reorders it. Everything forge prints from them goes through
`printable` first; newlines and tabs stay, so messages and code keep their shape.
"""

from __future__ import annotations

import functools
import re
import unicodedata

# Controls (C0, DEL, C1: Cc), invisible format characters (bidi overrides and isolates, zero-width spaces,
# the BOM: Cf), lone surrogates (Cs, which a terminal cannot encode), and the line and paragraph separators.
_HIDDEN_CATEGORIES = {"Cc", "Cf", "Cs", "Zl", "Zp"}
# Zero-width (non-)joiners are letters' glue in Persian and Indic scripts and inside emoji sequences; they can
# neither move the cursor nor reorder a line.
_KEPT = {"\n", "\t", "\u200c", "\u200d"}
_NOT_PLAIN_ASCII = re.compile(r"[^\t\n\x20-\x7e]")


def printable(text: str) -> str:
    """`text` with every control and invisible format character written as an escape: ESC as `\\x1b`,
    a one-byte CSI as `\\x9b`, a right-to-left override as `\\u202e`. Newlines, tabs and visible Unicode
    (accents, CJK, emoji) are unchanged; the result is the same however often this is applied."""
    return _NOT_PLAIN_ASCII.sub(_shown, text)


def printable_data(value):
    """`printable` applied to every string in a structure of dicts, lists and tuples, keys included."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable_data(k): printable_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [printable_data(v) for v in value]
    if isinstance(value, tuple):
        return tuple(printable_data(v) for v in value)
    return value


def _shown(match: re.Match) -> str:
    return _escape(match.group())


@functools.cache
def _escape(char: str) -> str:
    if char in _KEPT or unicodedata.category(char) not in _HIDDEN_CATEGORIES:
        return char
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"
