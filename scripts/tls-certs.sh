#!/bin/sh
# Certificates for TLS (docs/security.md) made with the openssl command, EC P-256:
#   scripts/tls-certs.sh DIR [NAME...]   makes, unless DIR/ca.crt is already there, a CA
#                                        (DIR/ca.crt, ca.key), a server certificate for the DNS
#                                        names NAME (default: localhost) and 127.0.0.1
#                                        (DIR/server.crt, server.key) and an agent's client
#                                        certificate (DIR/agent.crt, agent.key), all signed by it.
# For a trial or a closed network; in production, certificates come from your own CA.
# Sourced (tests/integration/220-tls.sh), it defines:
#   make_ca DIR NAME             DIR/NAME.crt, DIR/NAME.key: a self-signed CA
#   make_cert DIR CA NAME [SAN]  DIR/NAME.crt, DIR/NAME.key signed by CA, for localhost and
#                                127.0.0.1 unless SAN ("DNS:x,IP:y") says otherwise
#   fingerprint FILE             SHA-256 of a PEM certificate, 64 lowercase hex digits
#   peer_fingerprint PORT        the same, of the certificate a TLS server on 127.0.0.1:PORT shows
make_ca() {
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
        -subj "/CN=$2" -keyout "$1/$2.key" -out "$1/$2.crt" 2>/dev/null
}

make_cert() {
    local dir=$1 ca=$2 name=$3 san=${4:-DNS:localhost,IP:127.0.0.1}
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$name" \
        -keyout "$dir/$name.key" -out "$dir/$name.csr" 2>/dev/null &&
    printf 'subjectAltName=%s\n' "$san" >"$dir/$name.ext" &&
    openssl x509 -req -in "$dir/$name.csr" -CA "$dir/$ca.crt" -CAkey "$dir/$ca.key" \
        -CAcreateserial -days 2 -extfile "$dir/$name.ext" -out "$dir/$name.crt" 2>/dev/null
}

fingerprint() {
    openssl x509 -in "$1" -noout -fingerprint -sha256 | sed 's/.*=//; s/://g' | tr A-F a-f
}

peer_fingerprint() {
    openssl s_client -connect "127.0.0.1:$1" -servername localhost </dev/null 2>/dev/null |
        openssl x509 -noout -fingerprint -sha256 2>/dev/null | sed 's/.*=//; s/://g' | tr A-F a-f
}

# Run as a command: make the set in DIR.
case ${0##*/} in
tls-certs.sh)
    set -eu
    [ $# -ge 1 ] || { echo "usage: $0 DIR [DNS-NAME...]" >&2; exit 2; }
    dir=$1; shift
    [ $# -ge 1 ] || set -- localhost
    mkdir -p "$dir"
    if [ -s "$dir/ca.crt" ]; then echo "$dir/ca.crt exists: nothing made"; exit 0; fi
    umask 077
    san=""
    for n in "$@"; do san="${san}DNS:$n,"; done
    make_ca "$dir" ca
    make_cert "$dir" ca server "${san}IP:127.0.0.1"
    make_cert "$dir" ca agent "DNS:rankscope-agent"
    rm -f "$dir"/*.csr "$dir"/*.ext "$dir"/*.srl
    chmod 0644 "$dir"/*.crt
    echo "made in $dir: ca.crt (give it to agents and the CLI), server.crt/key, agent.crt/key"
    ;;
esac
