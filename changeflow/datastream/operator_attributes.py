"""``OperatorAttributes`` (FLIP-365, FLIP-331), PyFlink's public name for them.

The classes live in the plan layer (:mod:`changeflow.plan.operator_attributes`),
where the job graph's nodes report them; this module is their public import path.
"""

from changeflow.plan.operator_attributes import (OperatorAttributes, OperatorAttributesBuilder,
                                                function_is_output_idempotent,
                                                function_is_output_only_after_end_of_stream)

__all__ = ["OperatorAttributes", "OperatorAttributesBuilder", "function_is_output_idempotent",
           "function_is_output_only_after_end_of_stream"]
