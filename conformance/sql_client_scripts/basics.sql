-- Flink's SQL client on a script: SET, DDL, a streaming changelog, INSERT jobs, SHOW, a batch result, an error.
SET 'sql-client.execution.result-mode' = 'tableau';
SELECT name, COUNT(*) AS cnt FROM (VALUES ('Bob'), ('Alice'), ('Greg'), ('Bob')) AS NameTable(name) GROUP BY name;
CREATE TABLE s (name STRING, cnt BIGINT) WITH ('connector' = 'blackhole');
BEGIN STATEMENT SET;
INSERT INTO s VALUES ('a', 1);
END;
SET 'table.dml-sync' = 'true';
INSERT INTO s VALUES ('b', 2);
RESET 'table.dml-sync';
SHOW TABLES;
SET 'execution.runtime-mode' = 'batch';
SELECT name, COUNT(*) AS cnt FROM (VALUES ('Bob'), ('Alice'), ('Greg'), ('Bob')) AS NameTable(name) GROUP BY name ORDER BY name;
SELECT nosuchcol FROM s;
SHOW TABLES;
