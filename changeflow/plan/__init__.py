"""The logical plan, its rules and EXPLAIN: no Spark, no API."""
