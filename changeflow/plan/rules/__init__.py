"""The planner's rules: one module each, each a pure function ``apply(plan, settings) -> plan``.

:mod:`changeflow.plan.optimizer` runs them in order (its ``RULES``). A rule
either rewrites the plan (:mod:`.sink_materialize` inserts nodes) or annotates
its nodes' :class:`~changeflow.plan.physical.Traits`, reading what the rules
before it annotated. Adding a rule is adding a module here and its place in
``RULES`` (with its fixture file under ``tests/plan/fixtures``).
"""
