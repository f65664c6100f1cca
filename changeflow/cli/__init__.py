"""changeflow's command line: ``changeflow sql`` runs SQL scripts and an interactive shell as Flink's SQL client.

A front end over the Table API (:mod:`changeflow.table`): it imports no pyspark.
:mod:`.script` cuts a script into statements, :mod:`.client` runs one and prints it as
Flink's client does, :mod:`.shell` is the interactive loop, :mod:`.main` the command.
"""
