"""Read the record files that test executables write in record mode (harness `kernellab/record.hpp`).

A record file comes from a process that ran student code, so nothing in it is trusted: a
malformed or truncated file ends the reading where it breaks, and the records before that stay
usable. The judge (judge.py) decides what the records mean.
"""

import json
import struct
from dataclasses import dataclass, fields
from pathlib import Path

MAGIC = b"KLR1"
# Bounds on what one record may claim, so a hostile file cannot make the reader allocate wildly.
MAX_HEADER_BYTES = 1 << 16
MAX_PAYLOAD_BYTES = 1 << 31

# "property": a measurement for a task's [[tasks.requires]] (properties.py); "end" closes a
# run's records (written by the harness's main once the tests have run).
_ROLES = ("device", "expected", "bound", "property", "end")


@dataclass(frozen=True)
class Record:
    test: str
    case: str
    check: str
    ordinal: int
    role: str
    format: str
    count: int
    element_size: int
    whole: bool
    chunk: int
    block_size: int
    elems_per_block: int
    elems_per_thread: int
    payload: bytes
    # The end record's own (record.hpp: the harness's main writes them once the tests have run): the
    # CPU backend's first warning of warp-synchronous code, and whether failed test cases beside it
    # leave the verdict to a GPU.
    lockstep_warning: str = ""
    needs_gpu: bool = False

    @property
    def key(self) -> tuple[str, str, str, int]:
        """What names a check: the same in the reference's records and the student's."""
        return (self.test, self.case, self.check, self.ordinal)


@dataclass(frozen=True)
class RecordFile:
    records: tuple[Record, ...]
    # Why reading stopped before the end of the file, or "" when the whole file was read.
    problem: str = ""


def read_records(path: Path) -> RecordFile:
    """Every well-formed record of `path` up to the first malformed one; a missing file has none."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return RecordFile(())
    records: list[Record] = []
    offset = 0
    while offset < len(data):
        record, offset, problem = _read_one(data, offset)
        if record is None:
            return RecordFile(tuple(records), f"{problem} at byte {offset} of {path.name}")
        records.append(record)
    return RecordFile(tuple(records))


def _read_one(data: bytes, offset: int) -> tuple[Record | None, int, str]:
    if data[offset : offset + 4] != MAGIC:
        return None, offset, "not a record"
    if offset + 8 > len(data):
        return None, offset, "truncated record header"
    (header_size,) = struct.unpack_from("<I", data, offset + 4)
    if header_size > MAX_HEADER_BYTES or offset + 8 + header_size + 8 > len(data):
        return None, offset, "truncated or oversized record header"
    try:
        header = json.loads(data[offset + 8 : offset + 8 + header_size].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None, offset, "unreadable record header"
    payload_at = offset + 8 + header_size + 8
    (payload_size,) = struct.unpack_from("<Q", data, payload_at - 8)
    if payload_size > MAX_PAYLOAD_BYTES or payload_at + payload_size > len(data):
        return None, offset, "truncated record payload"
    try:
        record = _record(header, data[payload_at : payload_at + payload_size])
    except (KeyError, TypeError, ValueError) as error:
        return None, offset, f"malformed record ({error})"
    return record, payload_at + payload_size, ""


def _record(header: dict, payload: bytes) -> Record:
    ending = {name: _typed(header, name, kind) for name, kind in _END_FIELDS.items() if name in header}
    record = Record(**{name: _typed(header, name, kind) for name, kind in _HEADER_FIELDS.items()}, payload=payload, **ending)
    if ending and record.role != "end":
        raise ValueError(f"{', '.join(ending)} in a record of role {record.role!r}")
    if record.role not in _ROLES:
        raise ValueError(f"role {record.role!r}")
    if record.element_size <= 0 or record.chunk <= 0 or record.count < 0:
        raise ValueError("sizes must be positive")
    expected_size = record.count * record.element_size if record.whole else 8 * chunk_count(record)
    if len(payload) != expected_size:
        raise ValueError(f"payload of {len(payload)} bytes, expected {expected_size}")
    return record


# The header's fields and their types: every field of Record but the payload; the end record's
# own, which only it may hold.
_END_FIELDS = {"lockstep_warning": str, "needs_gpu": bool}
_HEADER_FIELDS = {field.name: field.type for field in fields(Record) if field.name != "payload" and field.name not in _END_FIELDS}


def end_record(records: RecordFile) -> Record | None:
    """The end record that closes `records`, or None where the run did not reach it."""
    return records.records[-1] if records.records and records.records[-1].role == "end" else None


def chunk_count(record: Record) -> int:
    return (record.count + record.chunk - 1) // record.chunk


def _typed(header: dict, key: str, kind: type):
    value = header[key]
    # bool is an int in Python: keep the two apart.
    if type(value) is not kind:
        raise TypeError(f"{key} is not {kind.__name__}")
    return value
