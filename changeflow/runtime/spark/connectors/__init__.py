"""The connectors' Spark halves: how each connector of :mod:`changeflow.connectors` becomes a Spark frame.

A connector's options, formats and sinks are plain Python in :mod:`changeflow.connectors`; the modules
here read its source on Spark (:mod:`.connector_sources` picks one per table: ``kafka``, ``postgres-cdc``,
``delta``, ``jdbc``, ``datagen``/``nexmark``, a monitored filesystem table) and give the driver's file
operations Spark's Hadoop filesystems (:mod:`.hadoop_store`). The runtime proper (translators, processor,
control rows, bounded input as files) is the parent package.
"""
