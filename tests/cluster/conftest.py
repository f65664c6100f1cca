"""The cluster cases (tests/cluster/cases) run only in the child pytest process test_cluster.py starts.

One Python process holds one SparkContext: the main run's shared local session
(tests/conftest.py) and the standalone cluster's session cannot live together,
so the main run does not collect the cases itself.
"""

import os

collect_ignore = [] if os.environ.get("CHANGEFLOW_CLUSTER_CASES") == "1" else ["cases"]
