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
    """The pairs of ``k1:v1,k2:v2`` (a value may hold ``:``; the first one separates)."""
    out: dict[str, str] = {}
    for item in (p.strip() for p in text.split(",")):
        if not item:
            continue
        key, sep, value = item.partition(":")
        if not sep:
            raise ValueError(f"{GLOBAL_JOB_PARAMETERS}: expected key:value pairs separated by commas, got {item!r}")
        out[key.strip()] = value.strip()
    return out


def job_parameters_of(configuration: Any) -> dict[str, str]:
    """The job parameters a configuration sets (none when the key is unset)."""
    return parse_job_parameters(configuration.get_string(GLOBAL_JOB_PARAMETERS, "") if configuration else "")
