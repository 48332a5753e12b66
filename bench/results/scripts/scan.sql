\set n random(1, 8)
SELECT count(*) FROM scan_:n;
