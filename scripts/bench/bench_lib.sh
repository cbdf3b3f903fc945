# shellcheck shell=bash
# Sourced by the scripts/bench/ benchmarks: what they share.

# The Python that runs the peers: Debian's python3-torch, -torchvision, -pil
# and -influxdb live in /usr/bin/python3, not in a virtualenv's python3.
PEER_PYTHON=${PEER_PYTHON:-/usr/bin/python3}

# need_peer_modules MODULE...: stops the script before anything is measured
# when the peer cannot run; a missing peer must never leave a ratio against
# nothing.
need_peer_modules() {
  local m
  for m in "$@"; do
    "$PEER_PYTHON" -c "import $m" 2>/dev/null ||
      { echo "peer missing: $PEER_PYTHON cannot import $m (Debian: apt-get install python3-${m,,}); nothing measured" >&2
        exit 2; }
  done
}

# check_cases NAME...: every name in $CASES is one of NAME (a typo would
# otherwise run nothing and print an empty table).
check_cases() {
  local want k
  for want in ${CASES:-}; do
    for k in "$@"; do [ "$k" = "$want" ] && continue 2; done
    echo "CASES: no case '$want'; the cases: $*" >&2
    exit 2
  done
}

# median: of the numbers on stdin, one a line (the mean of the middle two
# for an even count); fails on none.
median() {
  sort -g | awk '{a[NR] = $1} END {if (!NR) exit 1; print NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'
}

# The OpenMP wait policies both sides of the PyTorch scripts run under
# (env WAIT_POLICIES, "default PASSIVE"); each side's best by median counts,
# as PyTorch's best memory format does.  Both sides' OpenMP is libgomp
# (Debian's oneDNN and PyTorch): its default lets an idle team spin before
# it sleeps, which wins on an idle machine and loses several times over on
# a loaded one, where a spinning thread holds a CPU another thread of the
# team needs.  "default" unsets OMP_WAIT_POLICY (libgomp's own choice).
wait_policies() {
  local p
  for p in ${WAIT_POLICIES:-default PASSIVE}; do
    case $p in
    default | PASSIVE | ACTIVE) ;;
    *) echo "WAIT_POLICIES: '$p' is none of default, PASSIVE, ACTIVE; nothing measured" >&2; exit 2 ;;
    esac
  done
  echo "${WAIT_POLICIES:-default PASSIVE}"
}

# with_wait POLICY CMD...: runs CMD under that OpenMP wait policy.
with_wait() {
  local p=$1
  shift
  if [ "$p" = default ]; then env -u OMP_WAIT_POLICY "$@"; else env OMP_WAIT_POLICY="$p" "$@"; fi
}

# loadavg: the 1, 5 and 15 minute load averages (what else ran shapes
# every figure on a shared machine).
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
