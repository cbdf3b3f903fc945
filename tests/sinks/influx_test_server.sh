# Sourced by the tests that need a real influxd (influx_server.sh beside
# this file): influx_test_start SERVER [DB] skips the test (exit 77)
# without influxd, makes $work (removed at exit), starts a server there on
# 127.0.0.1 that stops at exit (and with this shell: DLG_WATCH_PID), sets
# $port and $url, and creates database DB when given.  A test with more
# to undo at exit defines influx_test_on_exit, run first.
influx_test_start() {
    local server=$1 db=${2:-}
    bash "$server" available || { echo "SKIP: influxd not installed"; exit 77; }
    work=$(mktemp -d)
    _influx_test_server=$server
    export DLG_WATCH_PID=$$
    trap _influx_test_cleanup EXIT
    port=$(bash "$server" start "$work/influx")
    url="http://127.0.0.1:$port"
    if [ -n "$db" ]; then
        curl -sf -XPOST "$url/query" --data-urlencode "q=CREATE DATABASE $db" >/dev/null
    fi
}

_influx_test_cleanup() {
    if declare -F influx_test_on_exit >/dev/null; then influx_test_on_exit || true; fi
    bash "$_influx_test_server" stop "$work/influx" >/dev/null 2>&1 || true
    rm -rf "$work"
}
