#!/usr/bin/env bash
# Start and stop a throwaway InfluxDB 1.x (Debian package `influxdb`) bound
# to 127.0.0.1, for tests.  Everything lives in DIR: influxd.conf, meta/,
# data/, wal/, influxd.log, pid, port.
#
#   influx_server.sh available            exit 0 when influxd is installed, else 77
#   influx_server.sh start DIR [PORT]     start (on PORT, else a free one), wait
#                                         for /ping, print the port
#   influx_server.sh stop DIR             stop it (by PID) and wait until gone
#   influx_server.sh run DIR -- CMD...    start, run CMD with INFLUX_PORT,
#                                         INFLUX_URL and INFLUX_DIR set, stop
#
# Sourcing this file defines influx_server_start / influx_server_stop.
# With DLG_WATCH_PID set, start also leaves a watchdog that stops influxd
# when that process exits, so a crashing test never leaves a server behind.
# INFLUX_MAX_BODY_SIZE sets [http] max-body-size (bytes; InfluxDB answers
# 413 above it).
set -u

influx_server_available() { command -v influxd >/dev/null 2>&1; }

_influx_port_free() { [ -z "$(ss -Htan "sport = :$1" 2>/dev/null)" ]; }

_influx_pick_port() {
    local p
    for _ in $(seq 50); do
        p=$((20000 + RANDOM % 40000))
        _influx_port_free "$p" && _influx_port_free $((p + 1)) && { echo "$p"; return 0; }
    done
    return 1
}

# _influx_listener_ours PORT PID: fails when another process listens on
# PORT. Two tests can pick one free port at once; the loser's influxd
# cannot bind, and until it exits its /ping reaches the winner's server.
# Where ss shows no owner (no permission), the ping has to do.
_influx_listener_ours() {
    local owners
    owners=$(ss -Htlnp "sport = :$1" 2>/dev/null | grep -o 'pid=[0-9]*' | sort -u)
    [ -z "$owners" ] || [ "$owners" = "pid=$2" ]
}

_influx_alive() { # a zombie counts as gone
    local pid=$1 state
    [ -r "/proc/$pid/stat" ] || return 1
    state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)
    [ -n "$state" ] && [ "$state" != Z ]
}

_influx_config() { # DIR PORT
    cat >"$1/influxd.conf" <<CONF
reporting-disabled = true
bind-address = "127.0.0.1:$(($2 + 1))"
[meta]
  dir = "$1/meta"
[data]
  dir = "$1/data"
  wal-dir = "$1/wal"
  query-log-enabled = false
[http]
  enabled = true
  bind-address = "127.0.0.1:$2"
  log-enabled = false
  max-body-size = ${INFLUX_MAX_BODY_SIZE:-25000000}
[monitor]
  store-enabled = false
[continuous_queries]
  enabled = false
[logging]
  level = "warn"
CONF
}

# influx_server_start DIR [PORT]: prints the port; returns non-zero on failure.
influx_server_start() {
    local dir=$1 want=${2:-} port pid
    mkdir -p "$dir"
    for _ in 1 2 3 4 5; do
        port=${want:-$(_influx_pick_port)} || return 1
        _influx_config "$dir" "$port"
        influxd -config "$dir/influxd.conf" </dev/null >>"$dir/influxd.log" 2>&1 &
        pid=$!
        echo "$pid" >"$dir/pid"
        echo "$port" >"$dir/port"
        if [ -n "${DLG_WATCH_PID:-}" ]; then
            ( while kill -0 "$DLG_WATCH_PID" 2>/dev/null && _influx_alive "$pid"; do sleep 0.5; done
              kill "$pid" 2>/dev/null ) </dev/null >/dev/null 2>&1 &
        fi
        for _ in $(seq 200); do
            if curl -sf -o /dev/null --noproxy '*' "http://127.0.0.1:$port/ping"; then
                _influx_listener_ours "$port" "$pid" || break
                echo "$port"
                return 0
            fi
            _influx_alive "$pid" || break
            sleep 0.1
        done
        influx_server_stop "$dir"
        [ -n "$want" ] && sleep 1 # the port may still be closing: retry it
    done
    echo "influx_server.sh: influxd did not start; see $dir/influxd.log" >&2
    return 1
}

influx_server_stop() {
    local dir=$1 pid
    [ -f "$dir/pid" ] || return 0
    pid=$(cat "$dir/pid")
    kill "$pid" 2>/dev/null
    for _ in $(seq 100); do
        _influx_alive "$pid" || { rm -f "$dir/pid"; return 0; }
        sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null
    rm -f "$dir/pid"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    case "${1:-}" in
    available) influx_server_available || exit 77 ;;
    start) influx_server_start "$2" "${3:-}" ;;
    stop) influx_server_stop "$2" ;;
    run)
        dir=$2
        shift 2
        [ "${1:-}" = "--" ] && shift
        influx_server_available || exit 77
        trap 'influx_server_stop "$dir"' EXIT
        INFLUX_PORT=$(influx_server_start "$dir") || exit 1
        export INFLUX_PORT INFLUX_DIR=$dir INFLUX_URL="http://127.0.0.1:$INFLUX_PORT"
        "$@"
        ;;
    *) sed -n '2,16p' "$0" >&2; exit 2 ;;
    esac
fi
