"""The output stage (issue 33): every format of every command's model, drawn
in one place, between the matrix and the command line.

``models`` holds the frozen values the renderers draw (ReportModel,
CodeModel, CheckModel, CompareModel, the matrix's), ``emit`` the one format
dispatch and where a document goes; one module per format: ``table`` (the
terminal, and plain lines when piped), ``json``, ``tsv``, ``markdown``,
``junit``, ``sarif``, ``github``, ``html``, and ``code`` (spillway code's
text).  Text from binaries reaches every sink through spillway.untrusted.
"""

from spillway.untrusted import shown


def name_shown(name: str, names: str = "short") -> str:
    """A kernel's name as a line output (the terminal, GitHub's log, an
    annotation) shows it: its table name (``names``: short or full), at most
    untrusted.LINE_STRING_LIMIT characters (untrusted.shown); raw otherwise."""
    from spillway.resources.names import table_name

    return shown(table_name(name, names))
