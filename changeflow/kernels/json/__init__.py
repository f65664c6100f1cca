"""Flink 2.3's JSON functions on plain Python values: SQL/JSON paths, query and construction functions."""
