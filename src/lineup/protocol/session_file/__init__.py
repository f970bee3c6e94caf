"""Session files (seed 003 §1.4): one conversation as JSONL, the format for export and exchange.

One session per file, one JSON object per line: a header line with the format version and
the session's metadata, then entries whose ``id`` / ``parentId`` make a tree, branches made in
place by appending (never a new file, never a changed line) — the shape of Pi's session files,
so LineUp reads Pi's as well as its own. docs/sessions.md describes every line.

Why here, in ``lineup.protocol``: a session file is a wire format like LAP's frames — written
by the hub, read by the hub, by the command line and by anyone's program in any language —
and the protocol package is where LineUp's wire formats are defined, as pure models and
functions with no I/O (DESIGN.md, "Parts"). Reading and writing a file, checking it, walking
its tree, migrating an older version, mapping Pi's entries and mapping the hub's recorded
facts are all functions of values; the hub does the reading of its database and the HTTP,
and passes in what the protocol cannot know (the canonical JSON digest, which lives with
governance; the files it stores).

Modules: :mod:`.lines` (the line models), :mod:`.codec` (bytes ↔ lines, the limits),
:mod:`.tree`, :mod:`.migrations`, :mod:`.scrub` (redaction, summaries, digests), :mod:`.pi`
(Pi's files), :mod:`.history` (a conversation's facts → entries).
"""

from lineup.protocol.session_file.codec import (
    MAX_FILE_BYTES,
    MAX_LINE_BYTES,
    MAX_LINES,
    Loaded,
    SessionFile,
    dump_session,
    encode,
    encode_line,
    line_object,
    load,
)
from lineup.protocol.session_file.history import Happened, HistoryWriter
from lineup.protocol.session_file.lines import (
    FORMAT_VERSION,
    AnyEntry,
    Entry,
    FileRef,
    Header,
    MessageEntry,
    Origin,
)
from lineup.protocol.session_file.scrub import Digester
from lineup.protocol.session_file.tree import active_branch, branch_count, check_tree

__all__ = [
    "FORMAT_VERSION",
    "MAX_FILE_BYTES",
    "MAX_LINES",
    "MAX_LINE_BYTES",
    "AnyEntry",
    "Digester",
    "Entry",
    "FileRef",
    "Happened",
    "Header",
    "HistoryWriter",
    "Loaded",
    "MessageEntry",
    "Origin",
    "SessionFile",
    "active_branch",
    "branch_count",
    "check_tree",
    "dump_session",
    "encode",
    "encode_line",
    "line_object",
    "load",
]
