VACUUM pgbench_accounts;
SELECT pg_sleep(0.5);
