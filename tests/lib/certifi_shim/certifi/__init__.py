"""Stand-in for certifi (MPL-2.0) in the test virtualenvs: the system's CA
bundle, as Debian's python3-certifi gives it. Ours, under the project's
licence; see tests/lib/pyvenv.sh."""

_BUNDLE = "/etc/ssl/certs/ca-certificates.crt"


def where():
    return _BUNDLE


def contents():
    with open(_BUNDLE, encoding="ascii") as f:
        return f.read()
