"""``table.local-time-zone``: Flink 2.3's validation, and the zones changeflow runs (those that are UTC).

The accepted and refused spellings are the ones PyFlink 2.3 gave for the same values
(``get_local_timezone()`` after ``set``): ``Z``, ``UTC+08:00``, ``+08:00``, ``EST``, ``utc`` and an
unknown region are invalid; ``UTC``, ``GMT``, ``Etc/UTC``, ``GMT+00:00``, ``GMT+8`` and TZDB regions valid.
"""

from __future__ import annotations

import re

import pytest

from changeflow.common import Configuration
from changeflow.config.time_zone import check_local_time_zone

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
def test_another_valid_zone_is_refused_naming_the_key_and_what_is_missing(zone):
    assert check_local_time_zone(zone) is False
    with pytest.raises(ValueError) as error:
        Configuration().set("table.local-time-zone", zone)
    message = str(error.value)
    assert "'table.local-time-zone'" in message and repr(zone) in message
    assert "zones that are UTC at every instant are accepted" in message
    assert "TIMESTAMP_LTZ values shown, cast and windowed in another zone are not supported" in message
