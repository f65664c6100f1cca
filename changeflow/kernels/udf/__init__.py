"""Python user-defined functions evaluated over pandas batches (no Spark, no API imports).

:mod:`.scalar` runs a scalar function over a batch; :mod:`.values` converts a
batch's columns to the Python values a row-at-a-time function takes, and the
function's results to the column of its declared type.
"""
