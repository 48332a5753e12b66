SELECT count(*) FROM pgbench_accounts;
