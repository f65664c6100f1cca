"""``table.local-time-zone``: Flink 2.3's validation; every zone Flink takes is accepted.

The accepted and refused spellings are the ones PyFlink 2.3 gave for the same values
(``get_local_timezone()`` after ``set``): ``Z``, ``UTC+08:00``, ``+08:00``, ``EST``, ``utc`` and an
unknown region are invalid; ``UTC``, ``GMT``, ``Etc/UTC``, ``GMT+00:00``, ``GMT+8`` and TZDB regions valid.
"""

from __future__ import annotations

import re

import pytest

from changeflow.common import Configuration
from changeflow.config.time_zone import check_local_time_zone, is_utc, tzinfo_of

INVALID = "Invalid time zone. The value should be a Time Zone Database (TZDB) ID"


@pytest.mark.parametrize("zone", ["default", "UTC", "GMT", "Etc/UTC", "GMT+00:00", "Etc/GMT", "GMT-0"])
def test_a_zone_that_is_utc_is_accepted(zone):
    assert check_local_time_zone(zone) is True
    assert Configuration().set("table.local-time-zone", zone).get("table.local-time-zone") == zone


@pytest.mark.parametrize("zone", ["Z", "UTC+08:00", "+08:00", "EST", "PST", "utc", "Nowhere/Zone", "GMT+19"])
def test_a_zone_flink_refuses_gets_flinks_message(zone):
    with pytest.raises(ValueError, match=re.escape(INVALID)):
        Configuration().set("table.local-time-zone", zone)


@pytest.mark.parametrize("zone", ["Asia/Shanghai", "America/Los_Angeles", "GMT+8", "GMT-03:00", "Europe/London"])
def test_another_valid_zone_is_accepted_and_is_not_utc(zone):
    assert check_local_time_zone(zone) is True
    assert Configuration().set("table.local-time-zone", zone).get("table.local-time-zone") == zone
    assert not is_utc(zone)


def test_the_python_zone_of_a_value():
    import datetime

    instant = datetime.datetime(2024, 7, 1, tzinfo=datetime.timezone.utc)
    assert instant.astimezone(tzinfo_of("GMT-03:00")).hour == 21
    assert instant.astimezone(tzinfo_of("GMT+8")).hour == 8
    assert instant.astimezone(tzinfo_of("Europe/Berlin")).hour == 2  # summer time
    assert is_utc("GMT+00:00") and is_utc("Etc/UTC")
