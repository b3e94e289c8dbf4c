"""The `--where` filter grammar over typed fields (see gmtool.index.fields).

    level=3   school=evocation   cr<=5   cr=1/4..2   concentration=yes   rarity!=common
    armor=heavy (a list field: one of its words)   hit_die>=10   tags=solitary

`parse_where` turns the expressions into Conditions (raising UsageError INVALID_FILTER on
anything it cannot read), and `matches` tests an entry's fields against all of them.
A field that is None never satisfies a condition, not even `!=`. Pure Python.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gmtool.errors import UsageError
from gmtool.fieldspec import FIELD_TYPES

ALIASES: dict[str, str] = {"cr": "challenge", "lvl": "level", "ac": "armor_class", "hp": "hit_points"}

OPS: tuple[str, ...] = ("=", "!=", "<", "<=", ">", ">=", "..")  # ".." is an inclusive range

_EXPR = re.compile(r"^\s*(?P<field>[A-Za-z_][A-Za-z0-9_-]*)\s*(?P<op><=|>=|!=|==|=|<|>)\s*(?P<value>.*?)\s*$")
_TRUE = {"true", "yes", "y", "1", "on"}
_FALSE = {"false", "no", "n", "0", "off"}


@dataclass(frozen=True, slots=True)
class Condition:
    field: str  # canonical field name (aliases resolved)
    op: str  # one of OPS
    value: Any  # typed value; for "..", a (low, high) tuple


def _fail(message: str, hint: str = "") -> UsageError:
    return UsageError("INVALID_FILTER", message, hint=hint or _usage_hint())


def _usage_hint() -> str:
    return "use field=value, field<=n, field>=n, field<n, field>n, field!=value or field=a..b, e.g. --where cr<=5"


def _fields_hint() -> str:
    aliases = ", ".join(f"{a}={f}" for a, f in ALIASES.items())
    return f"valid fields: {', '.join(FIELD_TYPES)} (aliases: {aliases})"


def _field(name: str) -> str:
    key = name.strip().lower().replace("-", "_")
    key = ALIASES.get(key, key)
    if key not in FIELD_TYPES:
        raise _fail(f"unknown field '{name.strip()}'", hint=_fields_hint())
    return key


def _number(field: str, kind: str, text: str) -> int | float:
    t = text.strip().replace(" ", "")
    try:
        if "/" in t:
            num, den = t.split("/", 1)
            value = _ratio(int(num), int(den))
        else:
            value = float(t)
    except (ValueError, ZeroDivisionError):
        raise _fail(
            f"'{text}' is not a number (field '{field}' is numeric)", hint="e.g. cr=1/4, level>=3"
        ) from None
    return _finite(field, kind, value, text)


def _ratio(num: int, den: int) -> float:
    try:
        return num / den
    except OverflowError:  # a fraction too large for a float
        return math.inf


def _finite(field: str, kind: str, value: float, text: object) -> int | float:
    """nan matches nothing and inf (also what 1e400 reads as) is no field's value: both are refused
    here, where the filter is read, rather than failing (or matching nothing) at comparison time."""
    if not math.isfinite(value):
        raise _fail(f"'{text}' is not a finite number (field '{field}' is numeric)", hint="e.g. cr=1/4, level>=3")
    if kind == "int" and value == int(value):
        return int(value)
    return value


def _bool(field: str, text: str) -> bool:
    t = text.strip().lower()
    if t in _TRUE:
        return True
    if t in _FALSE:
        return False
    raise _fail(f"'{text}' is not true or false (field '{field}')", hint="use true/false, yes/no or 1/0")


def _typed(field: str, text: str) -> Any:
    kind = FIELD_TYPES[field]
    if kind in ("int", "float"):
        return _number(field, kind, text)
    if kind == "bool":
        return _bool(field, text)
    value = re.sub(r"\s+", " ", text.strip().strip("'\"")).lower()
    if not value:
        raise _fail(f"empty value for field '{field}'")
    return value


def _condition(field: str, op: str, text: str) -> Condition:
    kind = FIELD_TYPES[field]
    if op == "==":
        op = "="
    if not text.strip():
        raise _fail(f"missing value for field '{field}'")
    if op == "=" and ".." in text:
        low, _, high = text.partition("..")
        if kind not in ("int", "float"):
            raise _fail(f"a range needs a numeric field; '{field}' is {kind}")
        if not low.strip() or not high.strip():
            raise _fail(f"malformed range '{text}'", hint="write a range as field=low..high, e.g. cr=1..5")
        lo, hi = _number(field, kind, low), _number(field, kind, high)
        if lo > hi:
            lo, hi = hi, lo
        return Condition(field, "..", (lo, hi))
    if op in ("<", "<=", ">", ">=") and kind not in ("int", "float"):
        raise _fail(
            f"'{op}' needs a numeric field; '{field}' is {kind}",
            hint="use = or != for text and true/false fields",
        )
    return Condition(field, op, _typed(field, text))


def parse_where(exprs: list[str] | tuple[str, ...]) -> list[Condition]:
    """Parse `--where` expressions, one condition each; all of them must hold (AND)."""
    conds: list[Condition] = []
    for expr in exprs:
        m = _EXPR.match(expr or "")
        if m is None:
            raise _fail(f"malformed filter '{expr}'")
        conds.append(_condition(_field(m.group("field")), m.group("op"), m.group("value")))
    return conds


def parse_where_dict(spec: Mapping[str, Any] | None) -> list[Condition]:
    """The MCP form: {"level": 3, "school": "evocation", "cr": "<=5", "challenge": "1..5"}.

    A string value may start with an operator (<=, >=, !=, <, >, =); other values mean equality.
    """
    conds: list[Condition] = []
    for name, raw in (spec or {}).items():
        field = _field(str(name))
        if isinstance(raw, bool):
            conds.append(
                Condition(field, "=", _bool(field, str(raw)))
                if FIELD_TYPES[field] == "bool"
                else _condition(field, "=", str(raw))
            )
            continue
        if isinstance(raw, (int, float)):
            if FIELD_TYPES[field] not in ("int", "float"):
                conds.append(_condition(field, "=", str(raw)))
            else:
                conds.append(Condition(field, "=", _finite(field, FIELD_TYPES[field], raw, raw)))
            continue
        if not isinstance(raw, str):
            raise _fail(f"unsupported value for field '{name}': {raw!r}")
        m = re.match(r"^\s*(<=|>=|!=|==|=|<|>)?\s*(.*)$", raw, re.DOTALL)
        assert m is not None
        conds.append(_condition(field, m.group(1) or "=", m.group(2)))
    return conds


def _compare(actual: Any, cond: Condition) -> bool:
    kind = FIELD_TYPES[cond.field]
    if kind == "list":  # armor=heavy: one of the listed words is "heavy"
        words = {re.sub(r"\s+", " ", str(a)).strip().lower() for a in actual}
        return (cond.value in words) if cond.op == "=" else (cond.value not in words)
    if kind == "str":
        actual = re.sub(r"\s+", " ", str(actual)).strip().lower()
    elif kind == "bool":
        actual = bool(actual)
    if cond.op == "=":
        return actual == cond.value
    if cond.op == "!=":
        return actual != cond.value
    if cond.op == "..":
        low, high = cond.value
        return low <= actual <= high
    if cond.op == "<":
        return actual < cond.value
    if cond.op == "<=":
        return actual <= cond.value
    if cond.op == ">":
        return actual > cond.value
    return actual >= cond.value


def matches(fields: Mapping[str, Any] | None, conds: list[Condition]) -> bool:
    """True when every condition holds; a missing or None field fails its condition."""
    if not conds:
        return True
    if not fields:
        return False
    for cond in conds:
        actual = fields.get(cond.field)
        if actual is None:
            return False
        try:
            if not _compare(actual, cond):
                return False
        except TypeError:
            return False
    return True


# --- filters that explain themselves ----------------------------------------------------------------

MAX_VALUES = 40  # a text field with more distinct values than this is free text: any value may match


def fields_seen(types: list[str | None], fields: list[dict | None]) -> dict[str, dict[str, set[str]]]:
    """field -> content type -> the values its entries carry (text and list fields; other kinds
    keep an empty set): what the library's entries really have, to check a filter against."""
    seen: dict[str, dict[str, set[str]]] = {}
    for t, f in zip(types, fields, strict=True):
        if not f:
            continue
        for k, v in f.items():
            if v is None or k not in FIELD_TYPES:
                continue
            vals = seen.setdefault(k, {}).setdefault(t or "untyped", set())
            kind = FIELD_TYPES[k]
            if kind == "str":
                vals.add(re.sub(r"\s+", " ", str(v)).strip().lower())
            elif kind == "list":
                vals.update(re.sub(r"\s+", " ", str(a)).strip().lower() for a in v)
    return seen


def check_filters(conds: list[Condition], types: list[str] | None, seen: dict[str, dict[str, set[str]]]) -> list[str]:
    """INVALID_FILTER for a condition nothing in the chosen types can meet (a field they never
    carry, a value outside the field's values), naming the valid fields or values; a warning when
    some chosen types carry the field and others never do. Returns the warnings."""
    warnings: list[str] = []
    for cond in conds:
        by_type = seen.get(cond.field, {})
        owners = sorted(by_type)
        chosen = owners if types is None else [t for t in types if t in by_type]
        if not chosen:
            what = "entry" if types is None else f"{'/'.join(types)} entry"
            also = f" ({', '.join(owners)} entries do)" if owners else ""
            raise _fail(f"no {what} here has the field '{cond.field}'{also}",
                        hint=_present_fields(types, seen))
        if types is not None and len(chosen) < len(types):
            lacking = [t for t in types if t not in by_type]
            warnings.append(f"FILTER_NARROWS: {', '.join(lacking)} entries never have '{cond.field}', so "
                            f"--where {cond.field} keeps only {', '.join(chosen)} entries")
        values = set().union(*(by_type[t] for t in chosen))
        if FIELD_TYPES[cond.field] in ("str", "list") and cond.op == "=" and values \
                and len(values) <= MAX_VALUES and cond.value not in values:
            raise _fail(f"no entry has {cond.field}={cond.value}",
                        hint=f"values of {cond.field}: {', '.join(sorted(values))}")
    return warnings


def _present_fields(types: list[str] | None, seen: dict[str, dict[str, set[str]]]) -> str:
    have = sorted(f for f, by_type in seen.items() if types is None or any(t in by_type for t in types))
    if not have:
        return f"the {'/'.join(types or [])} entries here carry no typed fields; drop --where"
    return f"fields{' of ' + '/'.join(types) if types else ''}: {', '.join(have)}"
