"""What: .cuda(async=True): async written as a keyword argument.
Why: async is a reserved word since Python 3.7, so the file does not parse. The rule reads the file's
tokens (torch's .cuda/.to/.type/.copy_ only), and the rest of the file is checked from a copy with it renamed.
Fix: write non_blocking=True.
"""

from __future__ import annotations

import io
import tokenize

from torch_pitfalls.lint.fixes import Edit, Fix, Refused, Source
from torch_pitfalls.lint.rules.base import Rule


def keyword_async_positions(text: str) -> list[tuple[int, int]]:
    """Where ``async=`` is used as a keyword argument (``.cuda(async=True)``): a SyntaxError since
    Python 3.7, found in the tokens of a file that does not parse."""
    out = []
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return out
    for a, b, c in zip(tokens, tokens[1:], tokens[2:]):
        if a.string in ("(", ",") and b.string == "async" and c.string == "=":
            out.append((b.start[0], b.start[1] + 1))
    return out


# ``async`` as a keyword argument, renamed to an identifier of the same length: every later column
# of the line stays where it was, so findings and fixes point into the original text.
_ASYNC_STANDIN = "_sync"


# torch's methods that took ``async=`` before 0.4 renamed it non_blocking (Tensor.cuda, .to, .type, .copy_)
_TORCH_ASYNC_METHODS = frozenset(("cuda", "to", "type", "copy_"))


def _torch_calls(text: str, asyncs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The ``async=`` keywords passed to one of torch's methods that took it (``x.cuda(async=True)``): not a
    function's own parameter (``def __init__(self, async=True)``) or another call's (``Replay(async=True)``),
    which is the project's own spelling and no torch pitfall (the file still does not parse on 3.7+: PTF000)."""
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    opened, callee = [], {}
    for i, tok in enumerate(tokens):
        if tok.string == "(":
            before = tokens[i - 1] if i else None
            dotted = i >= 2 and tokens[i - 2].string == "."
            opened.append(before.string if before is not None and before.type == tokenize.NAME and dotted else "")
        elif tok.string == ")" and opened:
            opened.pop()
        elif tok.string == "async" and opened:
            callee[(tok.start[0], tok.start[1] + 1)] = opened[-1]
    return [at for at in asyncs if callee.get(at) in _TORCH_ASYNC_METHODS]


def _found_and_repaired(text: str) -> tuple[list[tuple[int, int]], str]:
    """Each ``async=`` keyword of a torch method (line, 1-based column), and the text with every ``async=``
    keyword renamed (the rest of the file is read either way)."""
    asyncs = keyword_async_positions(text)
    lines = text.splitlines(keepends=True)
    for line, col in asyncs:  # col is 1-based (a finding's), the keyword starts at col - 1
        start = col - 1
        lines[line - 1] = lines[line - 1][:start] + _ASYNC_STANDIN + lines[line - 1][start + len("async") :]
    return (_torch_calls(text, asyncs) if asyncs else []), "".join(lines)


def _async_keyword(src: Source, finding) -> list[Edit]:
    """``async=`` -> ``non_blocking=``, in the line's text (the file does not parse)."""
    line = finding.line
    text = src.lines[line - 1] if 0 < line <= len(src.lines) else ""
    col = finding.col - 1  # tokenize counts characters
    if text[col : col + 5] != "async":
        raise Refused("no async keyword at the finding's position")
    start = src._starts[line - 1] + col
    if not text[col + 5 :].lstrip().startswith("="):
        raise Refused("async is not a keyword argument here")
    return [Edit(start, start + 5, "non_blocking")]


RULE = Rule(
    "PTF003",
    ("cuda-async-keyword",),
    "async is a reserved word since Python 3.7: .cuda(async=True) is a SyntaxError; write non_blocking=True",
    None,  # nothing to match in a tree: a file with the pitfall has none (on_syntax_error)
    nodes=(),
    on_syntax_error=_found_and_repaired,
    # "compile": the fixed file must compile, its symptom go and torch accept the keyword (fix_proofs.py)
    fix=Fix(".cuda(async=True) -> .cuda(non_blocking=True)", _async_keyword, proof="compile"),
)
