"""Profiles the stateful operators' kernels inside Spark's Python workers (``nexmark_profile.py --cprofile``).

Python imports ``sitecustomize`` at start-up from the path; ``nexmark_profile.py --cprofile DIR`` puts
this directory first on the ``PYTHONPATH`` the JVM passes to its Python workers and names ``DIR`` in
``CHANGEFLOW_CPROFILE_DIR``. Each worker then runs every
``KernelProcessor.handleInputRows`` (a bucket's rows: unpacking, the kernel, the state's reads and
writes) under one ``cProfile.Profile`` on the process CPU clock and rewrites ``DIR/w<pid>.prof`` after
each call (a worker ends without running exit handlers). ``pstats.Stats(*files)`` merges them.

The processor module is imported by unpickling the processor, after start-up: an import hook waits
for it, then patches the class once.
"""

import builtins
import os
import sys

_DIR = os.environ.get("CHANGEFLOW_CPROFILE_DIR")
_MODULE = "changeflow.runtime.spark.processor"

if _DIR:
    import cProfile
    import time

    _profile = cProfile.Profile(time.process_time)
    _import = builtins.__import__
    _done = []

    def _patch() -> None:
        cls = sys.modules[_MODULE].KernelProcessor
        original = cls.handleInputRows

        def handleInputRows(self, key, rows, timerValues):
            # Drained inside the profile: the generator's work happens as it is iterated.
            _profile.enable()
            try:
                out = list(original(self, key, rows, timerValues))
            finally:
                _profile.disable()
                _profile.dump_stats(os.path.join(_DIR, f"w{os.getpid()}.prof"))
            yield from out

        cls.handleInputRows = handleInputRows
        _done.append(True)
        builtins.__import__ = _import

    def _watch(name, *args, **kwargs):
        module = _import(name, *args, **kwargs)
        loaded = sys.modules.get(_MODULE)
        if not _done and loaded is not None and hasattr(loaded, "KernelProcessor"):
            _patch()
        return module

    builtins.__import__ = _watch
