"""Markdown pieces every Markdown renderer shares (check, compare, the matrix)."""

from __future__ import annotations

from spillway.untrusted import markdown_code


def md_code(text: str) -> str:
    """A code span that survives a GitHub table, whatever ``text`` holds
    (spillway.untrusted.markdown_code: one line, pipes escaped, a fence no
    backtick run in it closes, cut at MARKDOWN_NAME_LIMIT characters)."""
    return markdown_code(text)
