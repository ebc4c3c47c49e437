"""What looks like a secret: names and string values an agent must never see.

Sharing is the user's act, but a pattern (``%ws share cfg_*``) can match more than the user
thought of, and a shared dict can hold a key. So names and values that look like credentials are
never listed, inspected or copied, whoever shares them:

* a name with a word such as ``password``, ``secret``, ``token``, ``credentials``, ``auth`` or a
  pair such as ``api_key``/``apiKey``, ``private_key``, ``access_key``, ``client_secret``
  (``token_counts`` too: rename it, or share it under another name with ``ws.share``);
* a string that starts like a known key format (``sk-...``, ``ghp_...``, ``AKIA...``, a JWT, a PEM
  private key, a URL with a password...) or is one long high-entropy word mixing upper case,
  lower case and digits, as generated keys do;
* ``os.environ``, and any mapping that looks like a process environment (``PATH`` plus other
  upper-case names).

>>> looks_secret_name("OPENAI_API_KEY"), looks_secret_name("sales_2024")
(True, False)
>>> looks_secret_value("sk-proj-" + "a1B2" * 10)
True
"""

from __future__ import annotations

import itertools
import math
import os
import re
from collections import Counter
from typing import Any

__all__ = ["looks_like_environment", "looks_secret_name", "looks_secret_value"]

_WORDS = frozenset(
    {
        "password", "passwd", "passphrase", "pwd", "secret", "secrets", "token", "tokens",
        "credential", "credentials", "creds", "auth", "bearer", "cookie", "cookies", "apikey",
        "apikeys", "privatekey", "secretkey", "accesskey", "passkey", "otp", "totp", "jwt",
    }
)  # fmt: skip
_PAIRS = frozenset(
    {
        ("api", "key"), ("api", "keys"), ("private", "key"), ("secret", "key"), ("access", "key"),
        ("session", "id"), ("signing", "key"), ("client", "secret"), ("encryption", "key"),
        ("ssh", "key"), ("master", "key"),
    }
)  # fmt: skip
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPLIT = re.compile(r"[^a-z0-9]+")

#: Well-known key formats (prefix + enough key material).
_KEY_FORMATS = re.compile(
    r"""(?x)
    \b(?:sk|rk|pk)[-_](?:live|test|proj|ant|or|svcacct)?[-_]?[A-Za-z0-9_-]{16,}   # OpenAI, Anthropic, Stripe
    | \bgh[pousr]_[A-Za-z0-9]{30,}                            # GitHub tokens
    | \bgithub_pat_[A-Za-z0-9_]{30,}
    | \bglpat-[A-Za-z0-9_-]{20,}                              # GitLab
    | \bxox[abprs]-[A-Za-z0-9-]{10,}                          # Slack
    | \b(?:AKIA|ASIA)[0-9A-Z]{16}\b                           # AWS access key ids
    | \bAIza[0-9A-Za-z_-]{35}                                 # Google API keys
    | \bya29\.[0-9A-Za-z_-]{20,}                              # Google OAuth tokens
    | \bhf_[A-Za-z0-9]{30,}                                   # Hugging Face
    | \bnpm_[A-Za-z0-9]{30,}
    | \bpypi-[A-Za-z0-9_-]{40,}
    | \beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.          # JWTs
    | -----BEGIN[A-Z ]*PRIVATE\ KEY-----
    | [a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@                 # URLs with a password
    | \b[Bb]earer\s+[A-Za-z0-9._~+/-]{16,}
    """
)
_WORD_CHARS = re.compile(r"^[A-Za-z0-9_+/=.-]+$")
_SCAN_CHARS = 4096  # a long text is scanned for key formats in its first few KB only


def looks_secret_name(name: str) -> bool:
    """True when ``name`` (a variable name or a dict key) names a credential."""
    if not isinstance(name, str) or not name:
        return False
    words = [w for w in _SPLIT.split(_CAMEL.sub("_", name).lower()) if w]
    if any(w in _WORDS for w in words):
        return True
    return any(pair in _PAIRS for pair in itertools.pairwise(words))


def _entropy(text: str) -> float:
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def looks_secret_value(value: str) -> bool:
    """True when the string ``value`` looks like a key, token or password-bearing URL."""
    if type(value) is not str or len(value) < 16:
        return False
    head = value[:_SCAN_CHARS]
    if _KEY_FORMATS.search(head):
        return True
    word = value.strip()
    if not (20 <= len(word) <= 512) or not _WORD_CHARS.match(word):
        return False
    classes = (any(c.islower() for c in word), any(c.isupper() for c in word), any(c.isdigit() for c in word))
    return all(classes) and _entropy(word) >= 4.0


def looks_like_environment(value: Any) -> bool:
    """``os.environ`` itself, or a plain dict copied from an environment (``PATH`` and at least
    two more upper-case names)."""
    if value is os.environ or type(value) is type(os.environ):
        return True
    if type(value) is not dict or len(value) < 3:
        return False
    upper, path = 0, False
    for i, key in enumerate(dict.__iter__(value)):  # keys compared by type first: no user __eq__
        if i >= 256:
            break
        if type(key) is str and key.isupper():
            upper += 1
            path = path or key == "PATH"
    return path and upper >= 3
