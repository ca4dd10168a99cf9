"""Tool arguments: checked strictly, and refused in the product's own words.

Every tool's arguments (an action's, a read's, the confirmation tools') go through
:func:`parse_arguments`:

0. arguments nested deeper than :data:`MAX_DEPTH` levels of objects and lists are refused by name
   (:func:`check_depth`) before anything walks them (every step below does, recursively);
1. ``null`` values inside objects are dropped (a null means "not given");
2. the raw JSON is checked for what no argument may hold: control characters other than tab and
   line breaks, and numbers that are not finite (``NaN``, or ``1e400``, which overflows);
3. the arguments are validated against the tool's model in pydantic's strict mode: ``"true"`` or
   ``1`` is not a boolean, ``"5"`` is not a whole number, and unknown argument names are refused;
4. every problem becomes one sentence naming its field the way the agent wrote it
   (``transactions[0].payee``), never pydantic's own text.

Nothing here reads or writes the store.
"""

from __future__ import annotations

import difflib
import math
import re
import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

ALLOWED_CONTROLS = frozenset("\t\n\r")
# Unicode's control characters (general category Cc), a set Unicode never changes: looked for with
# one regular expression instead of ``unicodedata.category`` on every character.
CONTROL_CHARACTERS = "".join(map(chr, [*range(0x20), *range(0x7F, 0xA0)]))
_CONTROL = re.compile(f"[{re.escape(CONTROL_CHARACTERS)}]")
_REFUSED_CONTROL = re.compile(f"[{re.escape(''.join(c for c in CONTROL_CHARACTERS if c not in ALLOWED_CONTROLS))}]")
MAX_PROBLEMS = 5
MAX_DEPTH = 64  # levels of objects and lists, the arguments' own object counted as the first


class ArgumentError(ValueError):
    """Arguments refused before anything was planned; ``field`` is the first field at fault."""

    def __init__(self, message: str, field: str):
        super().__init__(message)
        self.message = message
        self.field = field


def check_depth(value: Any) -> None:
    """:class:`ArgumentError` if ``value`` holds objects or lists nested deeper than
    :data:`MAX_DEPTH` levels. Counted without recursion, so any depth is measured and refused."""
    level = [value]
    for _ in range(MAX_DEPTH):
        level = [child for item in level if isinstance(item, (dict, list))
                 for child in (item.values() if isinstance(item, dict) else item)]
        if not level:
            return
    if any(isinstance(item, (dict, list)) for item in level):
        raise ArgumentError(f"arguments: nested deeper than {MAX_DEPTH} levels of objects and lists; no tool takes "
                            "arguments this deep.", "arguments")


def without_nulls(value: Any) -> Any:
    """``value`` with every ``null`` inside an object left out (a null argument means "not given").
    :class:`ArgumentError` for arguments nested deeper than :data:`MAX_DEPTH` (:func:`check_depth`)."""
    check_depth(value)
    return _without_nulls(value)


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def field_path(loc: tuple[Any, ...] | list[Any]) -> str:
    """``("transactions", 0, "payee")`` → ``transactions[0].payee``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "arguments"


# -- the model's shape, followed along a path ------------------------------------------------------


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The argument models an annotation may hold, looking through Optional, unions, lists and dicts."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _models_in(typing.get_args(annotation)[0])
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type[BaseModel]] = []
    if origin in (typing.Union, types.UnionType, list, tuple, set, frozenset, dict):
        for arg in typing.get_args(annotation):
            found.extend(_models_in(arg))
    return found


def model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The argument model that holds the last part of ``loc`` (the model itself for a top-level name)."""
    current: type[BaseModel] | None = model
    for part in loc[:-1]:
        if current is None:
            return None
        if isinstance(part, int):
            continue
        info = current.model_fields.get(str(part))
        inner = _models_in(info.annotation) if info is not None else []
        current = inner[0] if len(inner) == 1 else None
    return current


def field_info(model: type[BaseModel], loc: tuple[Any, ...]) -> FieldInfo | None:
    """The declaration of the field at ``loc`` (an item of a list reads as its list), if any."""
    while loc and isinstance(loc[-1], int):
        loc = loc[:-1]
    if not loc:
        return None
    holder = model_at(model, loc)
    return holder.model_fields.get(str(loc[-1])) if holder is not None else None


def _described(model: type[BaseModel] | None, loc: tuple[Any, ...]) -> str:
    """`` Expected: <the field's description>`` (with its stop), or nothing."""
    info = field_info(model, loc) if model is not None else None
    if info is None or not info.description:
        return ""
    text = info.description.strip()
    return f" Expected: {text}{'' if text.endswith('.') else '.'}"


# -- what no argument may hold ---------------------------------------------------------------------


def _number_problem(value: float) -> str:
    if math.isnan(value):
        return "NaN is not a number"
    return "this number is too large to be a number (it overflows to infinity)"


def _raw_problems(value: Any, loc: tuple[Any, ...], model: type[BaseModel], out: list[tuple[tuple, str]]) -> None:
    if isinstance(value, str):
        found = _REFUSED_CONTROL.search(value)
        if found is not None:
            bad = found.group()
            out.append((loc, f"contains the control character U+{ord(bad):04X}; text may hold tabs and line "
                             "breaks, but no other control characters."))
    elif isinstance(value, float) and not math.isfinite(value):
        out.append((loc, f"{_number_problem(value)}; give a finite number.{_described(model, loc)}"))
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and _CONTROL.search(key):
                out.append((loc, "an argument name contains a control character."))
                continue
            _raw_problems(item, (*loc, key), model, out)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _raw_problems(item, (*loc, index), model, out)


# -- pydantic's errors, said plainly ---------------------------------------------------------------


def _plural(n: Any, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _unknown(model: type[BaseModel] | None, loc: tuple[Any, ...], tool: str) -> str:
    name = str(loc[-1]) if loc else "?"
    if model is None or not tool:
        return f"‘{name}’ is not a field this request accepts."
    holder = model_at(model, loc)
    known = sorted(holder.model_fields) if holder is not None else []
    where = f"{tool} has no argument" if len(loc) == 1 else "there is no field"
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    if close:
        return f"{where} named ‘{name}’; did you mean ‘{close[0]}’?"
    if known:
        return f"{where} named ‘{name}’; the known names are {', '.join(known)}."
    return f"{where} named ‘{name}’; it takes none."


def plain_sentence(error: Any) -> str:
    """One pydantic error in the product's words, without a model to describe the field."""
    return _sentence(dict(error, loc=_plain_loc(tuple(error.get("loc", ())))), None, "")


def _sentence(error: Any, model: type[BaseModel] | None, tool: str) -> str:
    kind = error.get("type", "")
    ctx = error.get("ctx") or {}
    loc = tuple(error.get("loc", ()))
    if kind == "missing":
        return f"required.{_described(model, loc)}"
    if kind == "extra_forbidden":
        return _unknown(model, loc, tool)
    simple = {
        "string_type": "must be text",
        "bool_type": "must be true or false (a JSON boolean; \"true\" and 1 are not booleans)",
        "int_type": "must be a whole number such as 5 (not \"5\", not 5.5)",
        "float_type": "must be a number",
        "list_type": "must be a list",
        "dict_type": "must be an object",
        "model_type": "must be an object",
        "model_attributes_type": "must be an object",
    }
    if kind in simple:
        return f"{simple[kind]}.{_described(model, loc)}"
    if kind in ("literal_error", "enum"):
        return f"must be one of {ctx.get('expected', 'the listed values')}."
    if kind == "too_short":
        return f"must have at least {_plural(ctx.get('min_length'), 'item')}."
    if kind == "too_long":
        return f"must have at most {_plural(ctx.get('max_length'), 'item')}."
    if kind == "string_too_short":
        n = ctx.get("min_length")
        return "must not be empty." if n == 1 else f"must be at least {_plural(n, 'character')} long."
    if kind == "string_too_long":
        return f"must be at most {_plural(ctx.get('max_length'), 'character')} long."
    bounds = {"greater_than_equal": ("at least", "ge"), "less_than_equal": ("at most", "le"),
              "greater_than": ("more than", "gt"), "less_than": ("less than", "lt")}
    if kind in bounds:
        words, key = bounds[kind]
        return f"must be {words} {ctx.get(key)}."
    if kind == "string_pattern_mismatch":
        return f"is not in the expected form.{_described(model, loc)}"
    if kind == "value_error":
        return str(error.get("msg", "")).removeprefix("Value error, ").rstrip(".") + "."
    return f"is not a valid value.{_described(model, loc)}"


_TAGS = frozenset({"str", "int", "float", "bool", "list", "dict", "none", "any"})


def _plain_loc(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """``loc`` without the type tags pydantic adds for each member of a union (``int``, ``list[str]``)."""
    return tuple(p for p in loc if isinstance(p, int) or (str(p) not in _TAGS and "[" not in str(p)))


def _problems(exc: ValidationError, model: type[BaseModel], tool: str
              ) -> tuple[list[tuple[tuple, str]], list[tuple[tuple, str]]]:
    """(unknown names, every other problem), one sentence per field."""
    found: dict[tuple, str] = {}
    unknown: dict[tuple, str] = {}
    for error in exc.errors():
        loc = _plain_loc(tuple(error.get("loc", ())))
        sentence = _sentence(dict(error, loc=loc), model, tool)
        target = unknown if error.get("type") == "extra_forbidden" else found
        target.setdefault(loc, sentence)
    return list(unknown.items()), list(found.items())


def refusal(problems: list[tuple[tuple, str]], tool: str) -> ArgumentError:
    """One error for every problem found (at most :data:`MAX_PROBLEMS` named), the first field kept."""
    shown = [f"{field_path(loc)}: {sentence}" for loc, sentence in problems[:MAX_PROBLEMS]]
    more = len(problems) - len(shown)
    if more > 0:
        shown.append(f"({_plural(more, 'more problem')} not shown.)")
    return ArgumentError(" ".join(shown), field_path(problems[0][0]))


def parse_arguments(model: type[BaseModel], raw: Any, tool: str) -> Any:
    """``raw`` validated into ``model``, or :class:`ArgumentError` naming every field at fault."""
    if not isinstance(raw, dict):
        raise ArgumentError("arguments: must be an object of named arguments.", "arguments")
    check_depth(raw)
    found: list[tuple[tuple, str]] = []
    _raw_problems(raw, (), model, found)
    try:
        parsed = model.model_validate(raw, strict=True)
    except ValidationError as exc:
        unknown, other = _problems(exc, model, tool)
        seen = {loc for loc, _ in found}  # a field with a control character or NaN is named for that
        problems = unknown + found + [(loc, s) for loc, s in other if loc not in seen]  # an unknown name first
        raise refusal(problems or [((), "these arguments are not valid.")], tool) from None
    if found:
        raise refusal(found, tool)
    return parsed
