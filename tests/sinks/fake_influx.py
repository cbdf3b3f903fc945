#!/usr/bin/env python3
"""A scripted stand-in for InfluxDB's write endpoint, for what a real
influxd 1.x cannot be made to answer (429/503 with Retry-After) and to see
the requests a 2.x client sends.

  fake_influx.py DIR STATUS[:RETRY_AFTER[:MESSAGE]][@DELAY]...

RETRY_AFTER is seconds, or date+N: the HTTP-date N seconds from now.

Answers the n-th request with the n-th status (then 204), but a 1.x
write without db= with 400 "database is required" as influxd does, DELAY seconds
after logging it when given (a request in flight), with MESSAGE as
2.x words it ({"code": ..., "message": MESSAGE}) when given, writes the port
to DIR/port and one JSON line per request to DIR/requests.jsonl (arrival
time, path, headers, body).  Bound to 127.0.0.1; stopped by PID.  With
FAKE_INFLUX_CERT (a PEM file: the certificate chain, then its key) set in
the environment it speaks HTTPS; a failed handshake is no request."""
import email.utils, http.server, json, os, ssl, sys, time

out, script = sys.argv[1], sys.argv[2:]


class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with open(os.path.join(out, "requests.jsonl"), "a") as f:
            f.write(json.dumps({"t": time.monotonic(), "path": self.path, "headers": dict(self.headers),
                                "body": body.decode("utf-8", "replace")}) + "\n")
        if self.path.split("?")[0] == "/write" and "db=" not in self.path:
            return self.answer(400, b'{"error":"database is required"}')  # as influxd 1.x does
        step = script.pop(0) if script else "204"
        step, _, delay = step.partition("@")
        time.sleep(float(delay or 0))
        status, _, rest = step.partition(":")
        retry_after, _, message = rest.partition(":")
        self.send_response(int(status))
        if retry_after.startswith("date+"):
            retry_after = email.utils.formatdate(time.time() + float(retry_after[5:]), usegmt=True)
        if retry_after:
            self.send_header("Retry-After", retry_after)
        code = {"401": "unauthorized", "404": "not found"}.get(status, "invalid")
        msg = (b"" if status == "204" else json.dumps({"code": code, "message": message}).encode() if message
               else b'{"error":"scripted"}')
        self.answer(None, msg)

    def answer(self, status, msg):
        if status is not None:
            self.send_response(status)
        self.send_header("Content-Length", str(len(msg)))
        self.end_headers()
        self.wfile.write(msg)

    def log_message(self, *args):
        pass


srv = http.server.HTTPServer(("127.0.0.1", 0), H)
if os.environ.get("FAKE_INFLUX_CERT"):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.environ["FAKE_INFLUX_CERT"])
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
with open(os.path.join(out, "port.tmp"), "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(os.path.join(out, "port.tmp"), os.path.join(out, "port"))
srv.serve_forever()
