COPY copyt FROM '/work/main/build/bench/data/copy.csv';
TRUNCATE copyt;
