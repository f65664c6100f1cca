"""The functions the DataStream rule fixtures' programs use (``tests/plan/fixtures``, ``# program: datastream``)."""

from changeflow.datastream import KeyedProcessFunction, ReduceFunction
from changeflow.datastream.window import GlobalWindows

__all__ = ["AtTheEnd", "Events", "GlobalWindows", "Latest", "Total", "add"]


def add(a, b):
    return a + b


class Total(ReduceFunction):
    """A reduce declaring that it emits only after end of input (FLIP-331)."""

    def reduce(self, a, b):
        return a + b

    def is_output_only_after_end_of_stream(self):
        return True


class AtTheEnd(KeyedProcessFunction):
    """Emits from a timer only: declares output only after end of input."""

    def process_element(self, value, ctx):
        ctx.timer_service().register_processing_time_timer(0)

    def on_timer(self, timestamp, ctx):
        yield ctx.get_current_key()

    def is_output_only_after_end_of_stream(self):
        return True


class Latest(KeyedProcessFunction):
    """Emits each key's latest value: declares its output idempotent (FLIP-365)."""

    def process_element(self, value, ctx):
        yield value

    def is_output_idempotent(self):
        return True


class Events(KeyedProcessFunction):
    """Emits every value: its output is not idempotent."""

    def process_element(self, value, ctx):
        yield value
