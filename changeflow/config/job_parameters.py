"""``pipeline.global-job-parameters``: the job parameters user functions read.

Flink's map syntax, ``k1:v1,k2:v2``. A Python UDF's ``FunctionContext`` and a
DataStream function's ``RuntimeContext`` return them from ``get_job_parameter``.

>>> parse_job_parameters("model:/tmp/m, threshold:0.5")
{'model': '/tmp/m', 'threshold': '0.5'}
"""

from __future__ import annotations

from typing import Any

GLOBAL_JOB_PARAMETERS = "pipeline.global-job-parameters"


def parse_job_parameters(text: str) -> dict[str, str]:
    """The pairs of ``k1:v1,k2:v2`` (the first ``:`` separates; a value may hold more). A key or value in
    quotes (``'a,b'``, a quote doubled inside) may hold ``,`` and ``:``, as Flink's map syntax.

    >>> parse_job_parameters("url:'jdbc:x', list:'a,b', it:'it''s'")
    {'url': 'jdbc:x', 'list': 'a,b', 'it': "it's"}
    """
    out: dict[str, str] = {}
    for item in _split(text, ","):
        if not item.strip():
            continue
        parts = _split(item, ":", 1)
        if len(parts) < 2:
            raise ValueError(f"{GLOBAL_JOB_PARAMETERS}: expected key:value pairs separated by commas, got {item!r}")
        out[_unquote(parts[0])] = _unquote(parts[1])
    return out


def format_job_parameters(parameters: dict[str, str]) -> str:
    """``parameters`` in the syntax :func:`parse_job_parameters` reads, quoting what needs it.

    >>> format_job_parameters({"a": "1", "url": "jdbc:x", "it": "it's"})
    "a:1,url:'jdbc:x',it:'it''s'"
    >>> parse_job_parameters(format_job_parameters({"k": " a,b "}))
    {'k': ' a,b '}
    """
    return ",".join(f"{_quote(k)}:{_quote(v)}" for k, v in parameters.items())


def _quote(text: str) -> str:
    if text and not any(c in text for c in ",:'\"") and text == text.strip():
        return text
    return "'" + text.replace("'", "''") + "'"


def _unquote(token: str) -> str:
    token = token.strip()
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "'\"":
        return token[1:-1].replace(token[0] * 2, token[0])
    return token


def _split(text: str, separator: str, most: int = -1) -> list[str]:
    """``text`` split at ``separator`` outside quotes (at most ``most`` splits when given)."""
    parts, start, quote, i = [], 0, "", 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == quote and text[i + 1:i + 2] == quote:
                i += 1  # a doubled quote inside quotes
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == separator and most != 0:
            parts.append(text[start:i])
            start, most = i + 1, most - 1
        i += 1
    return parts + [text[start:]]


def job_parameters_of(configuration: Any) -> dict[str, str]:
    """The job parameters a configuration sets (none when the key is unset)."""
    return parse_job_parameters(configuration.get_string(GLOBAL_JOB_PARAMETERS, "") if configuration else "")
