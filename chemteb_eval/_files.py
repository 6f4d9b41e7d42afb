"""Files written so that a reader sees the old one or the new one, never half of one, and the
readers' shared checks (JSON that fails only with ``ValueError``, the line of a byte that is not
UTF-8): a leaf module every room may use (results, ChemBench reports, run metadata)."""

from __future__ import annotations

import codecs
import errno
import json
import os
import stat
import tempfile
from io import FileIO
from pathlib import Path
from typing import Any

__all__ = [
    "append_json_line",
    "csv_safe",
    "first_non_utf8",
    "open_regular",
    "parse_json",
    "public_url",
    "read_json_lines",
    "read_regular",
    "shared_mode",
    "write_json_atomic",
    "write_text_atomic",
]


def parse_json(data: str | bytes) -> Any:
    """``json.loads`` that fails only with ``ValueError``: bytes that are not UTF-8 and JSON
    nested past Python's recursion limit (``[`` x 100,000) are named, not raised as
    ``UnicodeDecodeError`` or ``RecursionError`` from deep inside the parser."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


_SCAN_BLOCK = 1 << 16  # bytes read at a time by first_non_utf8


def first_non_utf8(path: Path) -> tuple[int, str] | None:
    """The line (from 1) of the first byte of ``path`` that is not UTF-8, and the decoder's
    reason; ``None`` when every byte is UTF-8 (or the file can no longer be read).

    For a reader whose text stream raised ``UnicodeDecodeError``: the stream decodes in blocks,
    so the line it was on (``csv``'s ``line_num``) is not the line of the byte, and the error's
    offset is into a block. Lines end as text files and ``csv`` count them (``\\n``, ``\\r\\n``
    or a lone ``\\r``); a byte-order mark is UTF-8. Read again in blocks: a large file costs one.
    """
    if not path.is_file():  # read once already; a FIFO opened again would wait for a writer
        return None
    decoder = codecs.getincrementaldecoder("utf-8")()
    ends, after_cr = 0, False
    try:
        with path.open("rb") as handle:
            while True:
                block = handle.read(_SCAN_BLOCK)
                try:
                    decoder.decode(block, final=not block)
                except UnicodeDecodeError as exc:
                    # exc.object: the bytes held back (a character cut by the last block's
                    # end, so no line end among them), then this block
                    return ends + _line_ends(exc.object[: exc.start], after_cr) + 1, exc.reason
                if not block:
                    return None
                ends += _line_ends(block, after_cr)
                after_cr = block.endswith(b"\r")
    except OSError:
        return None


def _line_ends(data: bytes, after_cr: bool) -> int:
    """Line ends in ``data``: each ``\\n``, ``\\r\\n`` or lone ``\\r`` (``after_cr``: the data
    before ended with ``\\r``, so a ``\\n`` first completes that ``\\r\\n``, no new end)."""
    count = data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n")
    return count - 1 if after_cr and data.startswith(b"\n") else count


def write_json_atomic(path: Path, payload: Any) -> None:
    """Write JSON so that readers see the old file or the new one, never half of one."""
    text = json.dumps(payload, indent=2, sort_keys=False, allow_nan=False)
    write_text_atomic(path, text + "\n")


def shared_mode() -> int:
    """The mode a plain ``open`` would give a new file (0644 under the usual umask 022):
    ``mkstemp`` makes 0600, so results written atomically were unreadable to the others
    sharing a results folder."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def write_text_atomic(path: Path, text: str) -> None:
    """Write text so that readers see the old file or the new one; a symlink at ``path`` is
    replaced, never followed (a planted link cannot redirect the write)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, shared_mode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def append_json_line(path: Path, payload: Any) -> None:
    """Append one JSON record as a line. One ``write`` on an ``O_APPEND`` file: two processes
    appending at once interleave whole lines, and a crash loses at most the line being written
    (which ``read_json_lines`` then skips; the next record starts on a line of its own). A link
    is never followed and only a regular file is written (``ValueError`` otherwise: a planted
    link, a FIFO or ``/dev/zero`` named like the log)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(payload, allow_nan=False, separators=(",", ":")) + "\n"
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if path.is_symlink():
            raise ValueError(f"{path}: a link; not followed") from None
        raise ValueError(f"{path}: cannot be appended to ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"{path}: not a regular file")
        if info.st_size and os.pread(fd, 1, info.st_size - 1) != b"\n":
            line = "\n" + line  # a torn last line (a crash mid-write) stays apart from this one
        os.write(fd, line.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def read_json_lines(path: Path, *, max_bytes: int = 64 * 2**20) -> tuple[list[Any], list[str]]:
    """The records of a JSON-lines file and, for each line that is not one, its number and the
    reason (a torn last line, hostile bytes); ``ValueError`` for a file over ``max_bytes``."""
    info = path.stat()  # follows links: a dangling one raises OSError
    if not stat.S_ISREG(info.st_mode):  # a FIFO would hang, /dev/zero never end
        raise ValueError(f"{path}: not a regular file")
    size = info.st_size
    if size > max_bytes:
        raise ValueError(f"{path}: {size:,} bytes, over the {max_bytes:,} a run log reaches")
    records, bad = [], []
    for n, line in enumerate(path.read_bytes().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(parse_json(line))
        except ValueError as exc:
            bad.append(f"{path}: line {n}: {exc}")
    return records, bad


def open_regular(path: Path) -> FileIO:
    """A regular file opened to read without waiting (a FIFO named like it would block an open
    for ever; ``/dev/zero`` never end): ``OSError`` (``EINVAL``) for anything else."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return os.fdopen(fd, "rb", buffering=0)


def read_regular(path: Path, max_bytes: int = 64 * 2**20) -> bytes:
    """A regular file's bytes (``open_regular``): ``ValueError`` for anything else, or past
    ``max_bytes``; ``OSError`` where it cannot be read."""
    try:
        file = open_regular(path)
    except OSError as exc:
        if exc.errno == errno.EINVAL:
            raise ValueError(f"{path}: not a regular file") from None
        raise
    with file:
        size = os.fstat(file.fileno()).st_size
        if size > max_bytes:
            raise ValueError(f"{path}: {size:,} bytes, over {max_bytes:,}")
        return file.read(max_bytes + 1)[:max_bytes]


# A query parameter whose name holds one of these carries a secret (``?api_key=``, ``&sig=``)
_SECRET_NAMES = ("key", "token", "secret", "pass", "pwd", "auth", "sig", "credential", "session")


def public_url(text: str) -> str:
    """``text`` fit to record in a file made to be shared: a URL loses its user-info
    (``https://user:password@host`` becomes ``https://host``) and every query parameter whose
    name says it carries a secret (its value becomes ``REDACTED``); anything else is itself."""
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    try:
        parts = urlsplit(text)
    except ValueError:
        return text
    if not parts.scheme or not parts.netloc:
        return text
    host = parts.netloc.rpartition("@")[2]
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    secret = [any(n in k.lower() for n in _SECRET_NAMES) for k, _ in pairs]
    if host == parts.netloc and not any(secret):
        return text  # nothing to hide: the URL as it was written
    query = urlencode(
        [(k, "REDACTED" if s else v) for (k, v), s in zip(pairs, secret, strict=True)]
    )
    return urlunsplit(
        (parts.scheme, host, parts.path, query if any(secret) else parts.query, parts.fragment)
    )


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(cell: Any) -> Any:
    """A CSV cell a spreadsheet will not run: text starting with ``=``, ``+``, ``-``, ``@``, a
    tab or a carriage return (a contributed model named ``=HYPERLINK(...)``) gets a leading
    ``'``, as OWASP advises. Numbers, and text that reads as one ("-0.25"), stay as they are.
    A character a spreadsheet would not show as itself (an escape, a right-to-left override
    that reverses the rest of the cell) becomes ``?``, as on every page."""
    if isinstance(cell, str) and not cell.isprintable():
        cell = "".join(c if c.isprintable() or c in "\t\r\n" else "?" for c in cell)
    if not isinstance(cell, str) or not cell.startswith(_FORMULA_START):
        return cell
    try:
        float(cell)
    except ValueError:
        return "'" + cell
    return cell
