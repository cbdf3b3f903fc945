#!/bin/bash
# The ASan build's leak check under mpirun still works: mpi_leak_canary
# leaks 77 bytes in canary_leak on each of 2 ranks, launched as every
# mpirun test launches its ranks (mpi_env.sh), and LeakSanitizer must
# report them there and fail the run.
# usage: mpi_leak_canary.sh CANARY MPIEXEC
set -u
source "$(dirname "$0")/mpi_env.sh" "$2"
out=$(timeout -k 5 60 "${MPIRUN[@]}" -np 2 "$1" 2>&1)
rc=$?
n=$(echo "$out" | grep -c 'Direct leak of 77 byte(s)')
if [ "$rc" = 0 ] || [ "$n" != 2 ] || ! echo "$out" | grep -q 'in canary_leak .*mpi_leak_canary.c'; then
    echo "FAIL: exit $rc, $n of 2 ranks' leaks reported:"
    echo "$out" | tail -40
    exit 1
fi
echo "ok: both ranks' leaks reported, exit $rc"
