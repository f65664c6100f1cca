"""Hot keys with an output flush interval (FLIP-365), run on Spark by changeflow.

A keyed sum over updates that keep coming. Without an interval every update
produces its own change (``-U``/``+U`` per record); with
``execution.max-flush-interval`` the aggregation keeps each key's latest sum and
emits it once per interval: one change per updated key, whatever the number of
updates in between.

Part 1 runs PyFlink's DataStream program on a bounded collection: with an
interval, one final record per key. Part 2 reads a directory that a producer
thread fills with a file a second for 12 s, and prints each change with the
second it arrived: with a 5 s interval they arrive in bursts, on the interval
boundaries, one change per key (the directory is still read a file per second;
``explain()``'s last line says at which pace the query's micro-batches run).
"""

import os
import tempfile
import threading
import time

from changeflow.common import Configuration, Types
from changeflow.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from changeflow.table import EnvironmentSettings, TableEnvironment

UPDATES = [("hot", 1), ("cold", 5), ("hot", 2), ("hot", 3), ("cold", 1), ("hot", 4)]


def keyed_sums(interval: str | None) -> list:
    conf = Configuration()
    if interval:
        conf.set_string("execution.max-flush-interval", interval)
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    env.set_runtime_mode(RuntimeExecutionMode.STREAMING)
    updates = env.from_collection(UPDATES, type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
    return list(updates.key_by(lambda r: r[0]).sum(1).execute_and_collect())


def produce(directory: str, seconds: int) -> None:
    """A file of updates a second, written under a hidden name and renamed into place."""
    for i in range(seconds):
        lines = "".join(f'{{"k": "{k}", "v": {v}}}\n' for k, v in UPDATES)
        hidden = os.path.join(directory, f".{i}.json")
        with open(hidden, "w") as f:
            f.write(lines)
        os.replace(hidden, os.path.join(directory, f"{i}.json"))
        time.sleep(1)


def live(seconds: int = 12, interval: str = "5 s") -> list[tuple[int, str, tuple]]:
    """(second since start, row kind, row) of each change of the keyed sum while files arrive."""
    t_env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    t_env.get_config().set("execution.max-flush-interval", interval)
    inbox = tempfile.mkdtemp(prefix="changeflow-hot-keys-")
    t_env.execute_sql(f"CREATE TABLE updates (k STRING, v INT) WITH ('connector' = 'filesystem', "
                      f"'path' = '{inbox}', 'format' = 'json', 'source.monitor-interval' = '1 s')")
    query = t_env.sql_query("SELECT k, SUM(v) AS total FROM updates GROUP BY k")
    print(query.explain().rsplit("\n", 2)[-2])  # the Output Flush section's last line
    start = time.time()
    producer = threading.Thread(target=produce, args=(inbox, seconds), daemon=True)
    producer.start()
    changes = []
    with query.execute().collect() as rows:
        for row in rows:
            changes.append((int(time.time() - start), str(row.get_row_kind()), tuple(row)))
            print(f"  +{changes[-1][0]:2d} s  {changes[-1][1]} {changes[-1][2]}")
            if row[0] == "hot" and row[1] == 10 * seconds:  # every file's updates are in
                break
    return changes


def main() -> None:
    print("keyed sum, no interval:  ", keyed_sums(None))
    print("keyed sum, 1 min interval:", keyed_sums("1 min"))
    print("live keyed sum over a directory, 5 s interval:")
    live()


if __name__ == "__main__":
    main()
