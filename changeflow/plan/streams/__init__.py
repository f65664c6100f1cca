"""The DataStream job graph: what the DataStream API builds and the Spark runtime translates.

No Spark and no API import: the front end (:mod:`changeflow.datastream`)
builds these nodes; the runtime (:mod:`changeflow.runtime.spark`) reads them.

- :mod:`.nodes`       the node classes (sources, stateless chains, keyed operators, unions,
                      side outputs, windows, co-groups) and graph walks;
- :mod:`.cache`       cache nodes (``DataStream.cache()``, FLIP-205) and the registry of created caches;
- :mod:`.attributes`  ``OperatorAttributes`` (FLIP-365 idempotence, FLIP-331 end of input);
- :mod:`.rules`       what the graph says about how a node runs (buffering under a flush
                      interval, output only after end of input, bounded inputs).
"""
