"""PyFlink's ``JobExecutionResult`` and ``JobID``: what ``StreamExecutionEnvironment.execute()`` returns.

>>> result = JobExecutionResult("clicks", JobID.generate(), 1250)
>>> result.get_net_runtime(), len(str(result.get_job_id())), result.get_all_accumulator_results()
(1250, 32, {})
"""

from __future__ import annotations

import uuid
from typing import Any

__all__ = ["JobExecutionResult", "JobID"]


class JobID:
    """A job's id: 16 random bytes, printed as 32 hex digits as Flink prints its ``JobID``."""

    def __init__(self, hex_string: str) -> None:
        self._hex = hex_string

    @staticmethod
    def generate() -> "JobID":
        return JobID(uuid.uuid4().hex)

    def __str__(self) -> str:
        return self._hex

    def __repr__(self) -> str:
        return f"JobID({self._hex})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JobID) and other._hex == self._hex

    def __hash__(self) -> int:
        return hash(self._hex)


class JobExecutionResult:
    """A finished job: its id, its net run time (ms), and accumulators (changeflow's jobs have none:
    Flink's accumulators are a Java API PyFlink functions cannot add to)."""

    def __init__(self, job_name: str, job_id: JobID | None = None, net_runtime_ms: int = 0) -> None:
        self._job_name = job_name
        self._job_id = job_id if job_id is not None else JobID.generate()
        self._net_runtime = net_runtime_ms

    def get_job_id(self) -> JobID:
        return self._job_id

    def get_job_name(self) -> str:
        """The job's name (beyond PyFlink's ``JobExecutionResult``)."""
        return self._job_name

    def get_net_runtime(self) -> int:
        """The time the job ran, in milliseconds (from the call to its end, as Flink's net run time)."""
        return self._net_runtime

    def get_accumulator_result(self, accumulator_name: str) -> Any:
        """None: no accumulator has the name (changeflow's jobs have none)."""
        return None

    def get_all_accumulator_results(self) -> dict[str, Any]:
        return {}

    def __repr__(self) -> str:
        return f"JobExecutionResult({self._job_name!r}, {self._job_id}, {self._net_runtime} ms)"
