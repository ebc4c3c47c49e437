"""TLS for header secrets: a per-sandbox CA that only the sandbox trusts, for the listed hosts only.

To add a header to an HTTPS request the proxy must read the request, so for a host that has a
secret (and only for it) the proxy ends the sandbox's TLS connection itself, with a certificate
for that host signed by a CA made for this sandbox, and opens its own TLS connection to the real
host, verified against the system's trust store. Why this does not weaken TLS elsewhere:

* the CA exists only in this process's memory (its key is never written anywhere) and is made
  again at every sandbox start;
* it carries an X.509 *name constraint*: it can only vouch for the secret hosts, so even a
  stolen key could not impersonate any other site;
* only the sandbox trusts it (``SSL_CERT_FILE`` and friends point at a bundle inside the
  sandbox: the system's CAs plus this one); nothing on the host changes;
* every other host is tunnelled untouched: the sandbox talks TLS to the real server.

A program inside that ignores those variables (a pinned trust store) fails on the secret hosts
with a certificate error — closed, never open. Needs the ``cryptography`` package
(``pip install 'ws-jupyter[network]'``), imported only when a sandbox has HTTPS secrets.
"""

from __future__ import annotations

import datetime
import os
import shutil
import ssl
import tempfile
import threading
from collections.abc import Iterable
from typing import Any

from ...errors import WorkspaceConfigError

__all__ = ["WorkspaceCA", "require_cryptography", "system_ca_bundle", "upstream_context"]

#: Installed by ``network.testing`` only: an extra CA file that upstream TLS connections trust.
_extra_upstream_cafile: str | None = None


def upstream_context() -> ssl.SSLContext:
    """How the proxy verifies the real host behind a secret: the system's trust store."""
    ctx = ssl.create_default_context()
    if _extra_upstream_cafile:
        ctx.load_verify_locations(cafile=_extra_upstream_cafile)
    ctx.set_alpn_protocols(["http/1.1"])
    return ctx


def system_ca_bundle() -> bytes:
    """The system's CA certificates as PEM (empty when this machine has no bundle file)."""
    paths = ssl.get_default_verify_paths()
    for path in (paths.cafile, paths.openssl_cafile, "/etc/ssl/certs/ca-certificates.crt"):
        if path and os.path.isfile(path):
            try:
                with open(path, "rb") as f:
                    return f.read()
            except OSError:
                continue
    return b""


def require_cryptography() -> None:
    """Raises ``WorkspaceConfigError`` (saying how to install it) when ``cryptography`` is missing."""
    _cryptography()


def _cryptography() -> Any:
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    except ImportError:
        raise WorkspaceConfigError(
            "header secrets for HTTPS hosts need the 'cryptography' package: "
            "pip install 'ws-jupyter[network]'"
        ) from None
    return x509, hashes, serialization, ec, ExtendedKeyUsageOID, NameOID


class WorkspaceCA:
    """A CA for one sandbox, name-constrained to ``hosts``, and TLS server contexts it signs.

    >>> ca = WorkspaceCA(["api.example.com"])            # doctest: +SKIP
    >>> ctx = ca.server_context("api.example.com")        # doctest: +SKIP
    """

    def __init__(self, hosts: Iterable[str], *, label: str = "sandbox") -> None:
        x509, hashes, serialization, ec, _eku, NameOID = _cryptography()
        self.hosts = tuple(sorted(set(hosts)))
        if not self.hosts:
            raise ValueError("a WorkspaceCA needs at least one host")
        self._key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        name = x509.Name(
            [
                x509.NameAttribute(NameOID.ORGANIZATION_NAME, "ws-jupyter"),
                x509.NameAttribute(NameOID.COMMON_NAME, f"ws-jupyter {label} CA"[:64]),
            ]
        )
        public = self._key.public_key()
        self._name = name
        self._cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=False,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(
                x509.NameConstraints(
                    permitted_subtrees=[x509.DNSName(h) for h in self.hosts], excluded_subtrees=None
                ),
                critical=True,
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
            .sign(self._key, hashes.SHA256())
        )
        self.cert_pem: bytes = self._cert.public_bytes(serialization.Encoding.PEM)
        self._contexts: dict[str, ssl.SSLContext] = {}
        self._lock = threading.Lock()

    def server_context(self, host: str) -> ssl.SSLContext:
        """A TLS server context presenting a certificate for ``host`` (made once, then cached)."""
        if host not in self.hosts:
            raise ValueError(f"{host} is not one of this CA's hosts")
        with self._lock:
            ctx = self._contexts.get(host)
            if ctx is None:
                ctx = self._contexts[host] = self._make_context(host)
            return ctx

    def _make_context(self, host: str) -> ssl.SSLContext:
        x509, hashes, serialization, ec, ExtendedKeyUsageOID, NameOID = _cryptography()
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        cert = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host[:64])]))
            .issuer_name(self._name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self._key.public_key()), critical=False
            )
            .sign(self._key, hashes.SHA256())
        )
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.set_alpn_protocols(["http/1.1"])
        # ssl loads a certificate chain from files only: a private directory (never bound into a
        # sandbox), emptied as soon as the context holds the key.
        folder = tempfile.mkdtemp(prefix="ws-net-leaf-")
        try:
            path = os.path.join(folder, "leaf.pem")
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(
                    key.private_bytes(
                        serialization.Encoding.PEM,
                        serialization.PrivateFormat.PKCS8,
                        serialization.NoEncryption(),
                    )
                )
                f.write(cert.public_bytes(serialization.Encoding.PEM))
            ctx.load_cert_chain(path)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return ctx
