"""Runtimes: the only layer that knows where operators execute.

``changeflow.runtime.spark`` is the only package that imports pyspark.
"""
