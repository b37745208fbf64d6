"""What every part of a manifest's validation shares: the error, and the checks of a table's keys
and types (kernellab.manifest reads the file, kernellab.manifest_tasks its [[tasks]]; the speed
calibration file, kernellab.grading.speed.calibration, is checked the same way)."""

from datetime import datetime

from kernellab.errors import InputError

_TYPE_NAMES = {
    str: "a string",
    int: "an integer",
    float: "a number with a decimal point",
    bool: "true or false",
    list: "an array",
    dict: "a table",
    datetime: "a date and time with its offset (2026-05-01T12:00:00+00:00)",
}


class ManifestError(InputError):
    pass



def check_fields(table: dict, where: str, required: dict[str, type], optional: dict[str, type]) -> dict:
    """Check that `table` has exactly the allowed keys with the right types; return it."""
    allowed = required | optional
    for key in table:
        if key not in allowed:
            raise field_error(key_path(where, key), f"unknown key (allowed: {', '.join(allowed)})")
    for key in required:
        if key not in table:
            raise field_error(key_path(where, key), "missing")
    for key, value in table.items():
        # `type() is` because TOML booleans are Python ints too.
        if type(value) is not allowed[key]:
            raise field_error(key_path(where, key), f"expected {_TYPE_NAMES[allowed[key]]}, got {value!r}")
    return table


def string_list(values: list, field: str) -> tuple[str, ...]:
    for value in values:
        if type(value) is not str or not value:
            raise field_error(field, f"expected non-empty strings, got {value!r}")
    if len(set(values)) != len(values):
        raise field_error(field, "lists a name twice")
    return tuple(values)


def field_error(field: str, message: str) -> ManifestError:
    # The caller, load_manifest, adds the file's path.
    return ManifestError(f"{field}: {message}")


def key_path(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key
