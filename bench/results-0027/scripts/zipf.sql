\set r random_zipfian(1, :naccounts, 1.10)
\set aid permute(:r, :naccounts, 5432)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
