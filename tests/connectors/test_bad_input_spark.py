"""Bad input and huge sources on Spark: nothing lost, nothing wrong (filesystem files, bounded datagen)."""

import pytest

from changeflow.connectors import BadRecordError


def _csv_table(t_env, name: str, path, ignore: bool) -> None:
    t_env.execute_sql(f"CREATE TABLE {name} (a INT, s STRING) WITH ('connector' = 'filesystem', 'path' = '{path}', "
                      f"'format' = 'csv', 'csv.ignore-parse-errors' = '{str(ignore).lower()}')")


def test_filesystem_read_names_the_file_of_an_invalid_utf8_byte_or_skips_its_record(batch_env, tmp_path):
    (tmp_path / "f1.csv").write_bytes(b'1,a\n2,"b\n3,c\n')  # an unclosed quote: only record 2 is skipped
    (tmp_path / "f2.csv").write_bytes(b"4,d\n5,\xfee\n6,f\n")
    _csv_table(batch_env, "strict_csv", tmp_path, ignore=False)
    with pytest.raises(BadRecordError, match=f"file {tmp_path}/f1.csv, line 2"):
        batch_env.from_path("strict_csv").execute()
    (tmp_path / "f1.csv").write_bytes(b"1,a\n3,c\n")
    with pytest.raises(BadRecordError, match=f"Invalid UTF-8 in file {tmp_path}/f2.csv, line 2, byte offset 6"):
        batch_env.from_path("strict_csv").execute()
    (tmp_path / "f1.csv").write_bytes(b'1,a\n2,"b\n3,c\n')
    _csv_table(batch_env, "lenient_csv", tmp_path, ignore=True)
    rows = sorted(tuple(r) for r in batch_env.from_path("lenient_csv").execute().collect())
    assert rows == [(1, "a"), (3, "c"), (4, "d"), (6, "f")]
