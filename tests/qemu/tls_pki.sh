#!/usr/bin/env bash
# The TLS firmware's test PKI (tests/qemu/run.sh --tls), made with openssl
# in the directory given (the check's work dir, never this repository):
#
#   root.pem             the test root CA (RSA 2048): the firmware trusts it
#                        (copied into the mbedtls package's certs/ folder,
#                        PKG_USING_MBEDTLS_USER_CERTS)
#   other-root.pem       a second, unrelated CA the firmware does not trust
#   good-rsa.{pem,key}   leaf for 10.0.2.100, RSA 2048, signed by the root
#   good-ecdsa.{pem,key} leaf for 10.0.2.100, ECDSA P-256, signed by the root
#   expired.{pem,key}    valid 2020-01-01 .. 2021-01-01, signed by the root
#   future.{pem,key}     valid 2090-01-01 .. 2091-01-01 (not yet valid)
#   wrong-ca.{pem,key}   leaf for 10.0.2.100 signed by the other CA
#
# Every leaf names the guest-side address twice: as a DNS name and as an IP
# address (subjectAltName=DNS:10.0.2.100,IP:10.0.2.100). mbedTLS 2.28
# compares the host name of the URL with DNS-name SANs only, so a leaf for
# an IP endpoint needs the DNS form; the IP form is what other clients
# check.
#
# Usage: tls_pki.sh DIR [HOST]   (HOST: default 10.0.2.100). Keeps an
# existing complete PKI (the root is built into the firmware).
set -euo pipefail
dir="$1"
host="${2:-10.0.2.100}"
mkdir -p "$dir"
cd "$dir"
all="root.pem other-root.pem good-rsa.pem good-ecdsa.pem expired.pem future.pem wrong-ca.pem"
done=1
for f in $all; do [ -s "$f" ] || done=; done
if [ -n "$done" ] && [ "$(cat host 2>/dev/null)" = "$host" ]; then
    echo "test PKI: kept ($dir)"
    exit 0
fi
rm -rf ./*
echo "$host" >host

# One minimal `openssl ca` setup per CA (openssl 3.0 `x509 -req` cannot set
# a start date; `ca -startdate/-enddate` can).
ca_setup() { # name
    local n="$1"
    mkdir -p "ca-$n/new"
    : >"ca-$n/index.txt"
    echo 1000 >"ca-$n/serial"
    cat >"ca-$n/ca.cnf" <<EOF
[ ca ]
default_ca = this_ca
[ this_ca ]
dir = $dir/ca-$n
database = \$dir/index.txt
new_certs_dir = \$dir/new
serial = \$dir/serial
default_md = sha256
policy = any
unique_subject = no
copy_extensions = none
email_in_dn = no
[ any ]
commonName = supplied
organizationName = optional
[ leaf ]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = DNS:$host, IP:$host
EOF
}

root() { # name CN
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.pem" -days 7300 -sha256 \
        -subj "/O=rtt-agent qemu check/CN=$2" \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
        -addext "subjectKeyIdentifier=hash" 2>/dev/null
}

leaf() { # name ca keyspec start end
    local n="$1" ca="$2" spec="$3" start="$4" end="$5"
    if [ "$spec" = ec ]; then
        openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$n.key" 2>/dev/null
    else
        openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$n.key" 2>/dev/null
    fi
    openssl req -new -key "$n.key" -subj "/O=rtt-agent qemu check/CN=$host" -out "$n.csr" 2>/dev/null
    openssl ca -batch -notext -config "ca-$ca/ca.cnf" -cert "$ca.pem" -keyfile "$ca.key" \
        -extensions leaf -startdate "$start" -enddate "$end" -in "$n.csr" -out "$n.pem" 2>"$n.ca.log" \
        || { cat "$n.ca.log" >&2; echo "tls_pki.sh: signing $n failed" >&2; exit 1; }
}

ca_setup root
ca_setup other-root
root root "rtt-agent qemu test root CA"
root other-root "rtt-agent qemu unrelated CA"
# Good leaves: valid from two days ago (clock skew) for five years.
now_start="$(date -u -d '2 days ago' +%Y%m%d%H%M%SZ)"
now_end="$(date -u -d '5 years' +%Y%m%d%H%M%SZ)"
leaf good-rsa root rsa "$now_start" "$now_end"
leaf good-ecdsa root ec "$now_start" "$now_end"
leaf expired root rsa 20200101000000Z 20210101000000Z
leaf future root rsa 20900101000000Z 20910101000000Z
leaf wrong-ca other-root rsa "$now_start" "$now_end"
for f in good-rsa good-ecdsa expired future; do
    openssl verify -CAfile root.pem -no_check_time "$f.pem" >/dev/null || { echo "tls_pki.sh: $f.pem does not verify" >&2; exit 1; }
done
openssl verify -CAfile other-root.pem wrong-ca.pem >/dev/null
echo "test PKI: made in $dir (root, other root, leaves good-rsa, good-ecdsa, expired, future, wrong-ca)"
