#!/usr/bin/env bash
# influx_server.sh start on a port another influxd already holds: it must
# fail (our influxd cannot bind, and the other server's /ping must not pass
# for ours), and leave the other server running.
# Usage: influx_server_port.sh INFLUX_SERVER_SH
set -u
server=$1
bash "$server" available || { echo "SKIP: influxd not installed"; exit 77; }
work=$(mktemp -d)
export DLG_WATCH_PID=$$
trap 'bash "$server" stop "$work/a"; bash "$server" stop "$work/b"; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

port=$(bash "$server" start "$work/a") || fail "the first server did not start"
apid=$(cat "$work/a/pid")
if bash "$server" start "$work/b" "$port" >/dev/null 2>"$work/b.err"; then
    fail "a second start on port $port (held by pid $apid) reported success"
fi
grep -q "address already in use" "$work/b/influxd.log" ||
    fail "the second influxd did not fail to bind: $(tail -2 "$work/b/influxd.log")"
[ ! -f "$work/b/pid" ] || fail "the failed start left its pid file"
curl -sf -o /dev/null --noproxy '*' "http://127.0.0.1:$port/ping" ||
    fail "the first server stopped answering"
ss -Htlnp "sport = :$port" | grep -q "pid=$apid," || fail "port $port is no longer pid $apid's"
echo "ok: a second start on $port failed: $(cat "$work/b.err")"
