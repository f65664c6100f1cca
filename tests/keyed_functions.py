"""Keyed functions more than one test module drives (the DataStream kernel tests and the harness tests)."""

from changeflow.datastream import KeyedProcessFunction, ValueStateDescriptor


class Reminder(KeyedProcessFunction):
    """Sums per key; each record sets a timer ``value[2]`` ms after now; a timer reports the sum."""

    def open(self, runtime_context):
        self.total = runtime_context.get_state(ValueStateDescriptor("total"))

    def process_element(self, value, ctx):
        self.total.update((self.total.value() or 0) + value[1])
        ctx.timer_service().register_processing_time_timer(ctx.timer_service().current_processing_time() + value[2])
        yield "elem", value[0], value[1]

    def on_timer(self, timestamp, ctx):
        yield "timer", ctx.get_current_key(), self.total.value(), timestamp
