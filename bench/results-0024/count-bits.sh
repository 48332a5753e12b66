#!/bin/bash
# usage: count-bits.sh WORKTREE MAXCOUNT -- in a worktree of the series, widen the
# use count to 3 bits (reference count 16 bits: an experiment only), capped at MAXCOUNT
set -e
wt=$1 max=$2
h=$wt/src/include/storage/buf_internals.h
sed -i -e 's/^#define BUF_REFCOUNT_BITS 18/#define BUF_REFCOUNT_BITS 16/' \
  -e 's/^#define BUF_USAGECOUNT_BITS 4/#define BUF_USAGECOUNT_BITS 6/' \
  -e 's/^#define BM_USE_COUNT_MASK\t\t(3U << BUF_USAGECOUNT_SHIFT)/#define BM_USE_COUNT_MASK\t\t(7U << BUF_USAGECOUNT_SHIFT)/' \
  -e "s/^#define BM_MAX_USE_COUNT\t\t3/#define BM_MAX_USE_COUNT\t\t$max/" \
  -e 's/^#define BM_ON_TRIAL\t\t\t\t(1U << (BUF_USAGECOUNT_SHIFT + 2))/#define BM_ON_TRIAL\t\t\t\t(1U << (BUF_USAGECOUNT_SHIFT + 3))/' \
  -e 's/^#define BM_RING_ONLY\t\t\t(1U << (BUF_USAGECOUNT_SHIFT + 3))/#define BM_RING_ONLY\t\t\t(1U << (BUF_USAGECOUNT_SHIFT + 4))/' \
  -e 's/StaticAssertDecl(BM_USE_COUNT_MASK == (BM_MAX_USE_COUNT \* BM_USE_COUNT_ONE),/StaticAssertDecl(BM_USE_COUNT_MASK >= (BM_MAX_USE_COUNT * BM_USE_COUNT_ONE),/' \
  -e 's/if ((buf_state \& BM_USE_COUNT_MASK) != BM_USE_COUNT_MASK)/if ((buf_state \& BM_USE_COUNT_MASK) < BM_MAX_USE_COUNT * BM_USE_COUNT_ONE)/' \
  "$h"
sed -i 's/^#define MAX_BACKENDS_BITS\t\t18/#define MAX_BACKENDS_BITS\t\t16/' $wt/src/include/storage/procnumber.h
git -C $wt diff --stat
