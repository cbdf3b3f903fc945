#!/usr/bin/env bash
# make_test_ca.sh DIR: a throwaway CA and a server certificate for
# 127.0.0.1 signed by it, for TLS tests on 127.0.0.1 (valid 2 days; P-256
# keys, made in milliseconds).  Writes DIR/ca.pem (the CA's certificate, for
# ca_cert), DIR/server.pem (the server's certificate, the CA's, then the
# server's key: what fake_influx.py serves) and DIR/key.pem (a PEM file
# holding no certificate).  Exit 77 when the openssl command is missing.
set -eu
command -v openssl >/dev/null 2>&1 || { echo "make_test_ca.sh: no openssl command" >&2; exit 77; }
d=$1
mkdir -p "$d"
cd "$d"
ec="-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
openssl req -x509 $ec -keyout ca.key -out ca.pem -days 2 -subj /CN=dlgauge-test-ca \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
openssl req $ec -keyout key.pem -out server.csr -subj /CN=127.0.0.1 2>/dev/null
printf 'basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile server.ext \
    -out server.crt 2>/dev/null
cat server.crt ca.pem key.pem >server.pem
