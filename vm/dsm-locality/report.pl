#!/usr/bin/perl
# vm/dsm-locality/report.pl LLC ROWS RUNDIR...: the Markdown report of
# vm/dsm-locality.sh from its run directories (counts.tsv of the numamem
# plugin, held.txt, timing.txt, explain.txt, dsmmap.log, command, wall).
use strict;
use warnings;

my ($llc, $rows, @runs) = @ARGV;

sub slurp
{
	my ($f) = @_;
	open my $fh, '<', $f or return '';
	local $/;
	return <$fh>;
}

# counts{area}{kind}{cpu}{mem}
sub counts
{
	my ($dir) = @_;
	my (%c, $hostsec);
	open my $fh, '<', "$dir/counts.tsv" or die "$dir/counts.tsv: $!";
	while (<$fh>)
	{
		chomp;
		$hostsec = $1 if /^# window .*?, ([0-9.]+) s of host time/;
		next if /^#/ || /^window\t/;
		my ($w, $name, $area, $kind, $cpu, $mem, $n) = split /\t/;
		$c{$area}{$kind}{$cpu}{$mem} += $n;
	}
	return (\%c, $hostsec);
}

sub cell
{
	my ($c, $area, $kinds, $cpu, $mem) = @_;
	my $s = 0;
	$s += $c->{$area}{$_}{$cpu}{$mem} // 0 foreach @$kinds;
	return $s;
}

sub pct { my ($p, $w) = @_; return $w ? sprintf('%.1f%%', 100 * $p / $w) : '-'; }

# a matrix, rows CPU nodes, columns memory nodes, plus each row's remote
# share and each column's share of the total
sub matrix
{
	my ($c, $area, $kinds, $nodes, $what) = @_;
	my @n = (0 .. $nodes - 1);
	my (@col, $total, $remote, $nonram) = ((0) x $nodes);
	$total = $remote = $nonram = 0;
	my $out = "| $what: cpu node \\ mem node | "
	  . join(' | ', map {"N$_"} @n)
	  . " | total | remote share |\n|---|"
	  . join('', map {'---:|'} @n)
	  . "---:|---:|\n";
	foreach my $cpu (@n)
	{
		my ($row, $rrem) = (0, 0);
		my @cells;
		foreach my $mem (@n)
		{
			my $v = cell($c, $area, $kinds, $cpu, $mem);
			push @cells, $v;
			$row += $v;
			$col[$mem] += $v;
			$rrem += $v if $mem != $cpu;
		}
		$nonram += cell($c, $area, $kinds, $cpu, $_) foreach qw(rom io);
		$total += $row;
		$remote += $rrem;
		$out .= "| cpu N$cpu | " . join(' | ', @cells) . " | $row | " . pct($rrem, $row) . " |\n";
	}
	$out .= "| **share of each mem node** | "
	  . join(' | ', map { pct($_, $total) } @col)
	  . " | $total | **" . pct($remote, $total) . "** |\n";
	$out .= "\n(also $nonram accesses to ROM/IO in this area)\n" if $nonram;
	return ($out, $total, $remote, [ map { $total ? $_ / $total : 0 } @col ]);
}

my (@summary, @detail);
foreach my $dir (@runs)
{
	my ($tag) = $dir =~ m{/n(\d+-\w+)$} or die "bad run dir $dir";
	my ($nodes, $setting) = split /-/, $tag;
	my ($c, $hostsec) = counts($dir);
	my $held = slurp("$dir/held.txt");
	my $explain = slurp("$dir/explain.txt");
	my $timing = slurp("$dir/timing.txt");
	chomp $timing;
	my $wall = slurp("$dir/wall");
	chomp $wall;
	my $command = slurp("$dir/command");
	my $log = slurp("$dir/dsmmap.log");
	my ($measured) = $log =~ /--- measured run\n(.*)/s;
	$measured //= '';
	my @maps = grep {/^map /} split /\n/, $measured;
	my @pins = grep {/^pin /} split /\n/, $measured;
	my @fallback = grep {/^fallback /} split /\n/, $log;
	my %procs;
	foreach (@maps)
	{
		my (undef, $pid, $addr, $len, $file, $cpus, $title) = split / /;
		$procs{$pid}{cpus} = $cpus;
		$procs{$pid}{title} = $title;
		$procs{$pid}{n}++;
		$procs{$pid}{bytes} += $len;
	}

	my $d = "## $nodes nodes, shmem_interleave = $setting\n\n";
	$d .= "Command (host, as root; normally run by vm/dsm-locality.sh):\n\n```\n$command\n```\n\n";
	$d .= "Timing: $timing; the counting window took ${hostsec} s of host time; the whole guest run (boot, initdb, load, held run, measured run) ${wall} s.\n\n";
	my ($part) = $held =~ /(participants.*?)segment pages by node/s;
	$part //= '';
	my @plines = grep {/^pid \d+:/} split /\n/, $part;
	$d .= "Participants of the held run (same configuration, just before):\n\n```\n" . join("\n", @plines) . "\n```\n\n";
	$d .= "Measured run, from the shim's log (every DSM mapping each process made; all in the DSM range"
	  . (@fallback ? ", EXCEPT: @fallback" : ', none fell back') . "):\n\n```\n";
	$d .= join("\n", map { sprintf('pid %s: %d mappings, %.1f MiB, CPUs allowed %s, %s', $_, $procs{$_}{n}, $procs{$_}{bytes} / 1048576, $procs{$_}{cpus}, $procs{$_}{title}) } sort { $a <=> $b } keys %procs) . "\n";
	$d .= join("\n", @pins) . "\n" if @pins;
	$d .= "```\n\n";
	my ($segtotal) = $held =~ /^  (total \d+ pages:.*)$/m;
	my ($mainpages) = $held =~ /main segment pages by node[^\n]*\n\s*(.*)/;
	my ($policy) = $held =~ /^(memory policy of the heap.*)$/m;
	$d .= "Pages (held run; cross-check): DSM segments other than the control segment, whole files: $segtotal; "
	  . "main segment (pg_shmem_allocations_numa, 4 kB pages): $mainpages. $policy.\n\n";
	my ($segs) = $held =~ /segment pages by node[^\n]*\n(.*?)\n  total/s;
	$d .= "Segments of the held run (file, pages, pages per node):\n\n```\n$segs\n```\n\n";

	my %fig;
	foreach my $area ('dsm', 'main', 'dsmctl', 'kernel', 'other', 'all')
	{
		my ($acc, $t, $r, $shares) = matrix($c, $area, [qw(load store)], $nodes, 'accesses');
		my ($lin, $tl, $rl, $lshares) = matrix($c, $area, [qw(fill writeback)], $nodes, 'DRAM lines');
		my ($byt, $tb, $rb) = matrix($c, $area, [qw(load_bytes store_bytes)], $nodes, 'bytes');
		$fig{$area} = [ $t, $r, $shares, $tl, $rl, $lshares, $tb, $rb ];
		next unless $area eq 'dsm' || $area eq 'main';
		$d .= "### $area: loads + stores\n\n$acc\n### $area: DRAM lines (fills + write-backs, llc=$llc per vCPU)\n\n$lin\n";
		$d .= "### $area: bytes loaded + stored\n\n$byt\n" if $area eq 'dsm';
	}
	$d .= "Other areas (loads + stores, remote share): "
	  . join('; ', map { "$_ " . $fig{$_}[0] . ' (' . pct($fig{$_}[1], $fig{$_}[0]) . ' remote)' } qw(dsmctl kernel other all))
	  . ".\n\n";
	$d .= "EXPLAIN ANALYZE of the measured run:\n\n```\n$explain```\n\n";
	push @detail, $d;

	my $sh = sub { join ' / ', map { sprintf '%.1f', 100 * $_ } @{ $_[0] } };
	push @summary,
	  sprintf("| %d | %s | %s | %s | %s | %s | %s | %s | %s |", $nodes, $setting,
		$sh->($fig{dsm}[2]), pct($fig{dsm}[1], $fig{dsm}[0]), $sh->($fig{dsm}[5]), pct($fig{dsm}[4], $fig{dsm}[3]),
		$sh->($fig{main}[2]), pct($fig{main}[1], $fig{main}[0]), ($segtotal =~ s/^total //r));
}

print <<EOF;
# DSM locality of a parallel hash join, shmem_interleave off vs all (0021)

Generated by `vm/dsm-locality.sh` (report: `vm/dsm-locality/report.pl`);
do not edit by hand.  Counts are from the numamem QEMU plugin
(vm/README.md, "Counting memory accesses"), TCG guests, 1 vCPU per node,
1 GiB per node, llc=$llc (a private LLC model per vCPU, so DRAM lines =
fills + write-backs of that model), DSM_ROWS=$rows rows in each table
(inner: 300-byte pad, outer: 10-byte pad).  The window spans the whole
query (build and probe), run as `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF)`
by psql; the leader runs on CPU 0 (node 0, like the postmaster), worker k
on CPU k+1 (node k+1).  Timing in the guest is meaningless (TCG); counts
and placement are real.

What the areas are (virtual address ranges of the plugin's filter):
- **dsm**: every mapping of a posix DSM segment (`/dev/shm/PostgreSQL.N`)
  except the control segment, in every process: the shim
  `vm/dsm-locality/dsmmap.c` (LD_PRELOAD into the postmaster, inherited by
  every backend and worker) places all of them in
  [0x100000000000, 0x200000000000) with MAP_FIXED_NOREPLACE, and the guest
  checks (held run) that every participant has all its DSM mappings in that
  range and no other mapping there.  So it is all user-mode loads and
  stores by any process to the per-query segment (shm_toc, tuple queues,
  the DSA's in-place area, Parallel Hash shared state) and to the DSA
  segments of the hash table; nothing else.  NOT included: the kernel's
  accesses to those pages through its direct map (zeroing at
  posix_fallocate, page-cache copies: in **kernel**), page-table walks and
  instruction fetches (never counted by the plugin).
- **main**: the main shared memory segment (anonymous shared mapping,
  inherited by fork, same address everywhere): shared buffers, locks, the
  buffer mapping table, etc.  First touch by whoever touches first with
  off (mostly the postmaster and the leader, both on node 0); interleaved
  with all.
- **dsmctl**: the DSM control segment (created by the postmaster at start).
- **kernel**: addresses >= 0xffff800000000000; **other**: the rest
  (private memory of every process in the guest, psql included).

## Summary

Shares are of the accesses to node RAM in the area, per memory node
(N0 / N1 / ...); "remote" is the share where the accessing vCPU's node is
not the memory's node.  Page counts: DSM segment pages per node in the held
run (the same query, every participant held asleep in its probe; 4 kB pages).

Note on off: a DSA segment of the hash table is created (posix_fallocate) by
whichever participant needs the space, so with participants on several nodes
"off" spreads the segments over the creators' nodes, unevenly and differently
from run to run (compare the held run's pages with the measured run's
accesses), rather than putting them all on one node.  "all" gives each node
1/N of the pages and of the traffic; the remote share stays (N-1)/N either way
(every participant probes the whole table).

| nodes | shmem_interleave | dsm accesses per mem node % | dsm remote | dsm DRAM lines per mem node % | dsm DRAM remote | main accesses per mem node % | main remote | dsm pages (held run) |
|---:|---|---|---:|---|---:|---|---:|---|
EOF
print join("\n", @summary), "\n\n";
print join("\n", @detail);
