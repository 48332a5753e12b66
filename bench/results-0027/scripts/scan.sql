SELECT nextval('scan_seq') % 16 + 1 AS n \gset
SELECT count(*) FROM scan_:n;
