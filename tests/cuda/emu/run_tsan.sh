#!/bin/sh
# run_tsan.sh CMD...: runs a ThreadSanitizer-built test, its output and exit
# status passed through.  ThreadSanitizer needs the address-space layout it
# was built for; kernels with more mmap randomisation (vm.mmap_rnd_bits 32)
# break it, so it runs with randomisation off where setarch may do that
# (a container's seccomp may refuse), and if ThreadSanitizer still cannot
# map its shadow memory the test is skipped (77), not failed: the machine,
# not the code, is at fault.
arch=$(uname -m)
if setarch "$arch" -R true 2>/dev/null; then
  set -- setarch "$arch" -R "$@"
fi
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -ne 0 ] && printf '%s\n' "$out" |
  grep -Eq 'ThreadSanitizer: unexpected memory mapping|ThreadSanitizer failed to allocate'; then
  echo "run_tsan: ThreadSanitizer cannot run on this machine: skipped"
  exit 77
fi
exit "$rc"
