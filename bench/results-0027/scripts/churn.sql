CREATE TABLE IF NOT EXISTS churn_:client_id (a int, b text);
INSERT INTO churn_:client_id SELECT g, repeat('x', 100) FROM generate_series(1, 20000) g;
TRUNCATE churn_:client_id;
CREATE TABLE IF NOT EXISTS churn_:client_id (a int, b text);
INSERT INTO churn_:client_id SELECT g, repeat('x', 100) FROM generate_series(1, 20000) g;
DROP TABLE churn_:client_id;
