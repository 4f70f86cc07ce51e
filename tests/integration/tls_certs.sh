# Certificates for the TLS tests, made at test time with the openssl command (EC P-256: fast).
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
