"""A local session's JVM compiles with C1 only (changeflow.spark.quick-jit), unless the user chose a JIT level."""

from changeflow.common import Configuration
from changeflow.runtime.spark import session


def test_quick_jit_is_added_to_the_driver_options():
    assert session.jit_options(None, None) == {"spark.driver.extraJavaOptions": session.QUICK_JIT}
    assert session.jit_options("-Xss4m", "") == {"spark.driver.extraJavaOptions": f"-Xss4m {session.QUICK_JIT}"}


def test_a_jit_level_the_user_chose_is_kept():
    assert session.jit_options("-XX:TieredStopAtLevel=4", None) == {}
    assert session.jit_options(None, "-Xmx2g -XX:TieredStopAtLevel=4") == {}


def test_the_option_is_registered_and_on_by_default():
    conf = Configuration()
    assert conf.get("changeflow.spark.quick-jit") is True
    conf.set_string("changeflow.spark.quick-jit", "false")
    assert conf.get("changeflow.spark.quick-jit") is False
