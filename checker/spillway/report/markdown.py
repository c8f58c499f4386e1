"""Markdown pieces every Markdown renderer shares (check, compare, the matrix)."""

from __future__ import annotations


def md_code(text: str) -> str:
    """A code span that survives a GitHub table: pipes escaped, backticks fenced."""
    text = text.replace("|", "\\|")
    if "`" not in text:
        return f"`{text}`"
    fence = "``" if "``" not in text else "```"
    return f"{fence} {text} {fence}"
