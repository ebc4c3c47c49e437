"""Host rules, address classes, the network config and its refusals, the egress log: pure values."""

from __future__ import annotations

import ipaddress
from datetime import datetime, timedelta, timezone

import pytest

from ws_jupyter.errors import WorkspaceConfigError
from ws_jupyter.sandbox.network.config import NetworkConfig, effective_network
from ws_jupyter.sandbox.network.egress import EgressLog, denied_summary
from ws_jupyter.sandbox.network.policy import HostRule, NetworkPolicy, is_public, parse_destination


@pytest.mark.parametrize(
    ("text", "kind", "canonical"),
    [
        ("PyPI.org", "name", "pypi.org"),
        ("pypi.org.", "name", "pypi.org"),
        ("pypi.org:8443", "name", "pypi.org:8443"),
        ("pypi.org:*", "name", "pypi.org:*"),
        ("*.Example.com", "wildcard", "*.example.com"),
        ("*", "any", "*"),
        ("*:*", "any", "*:*"),
        ("10.0.0.5", "network", "10.0.0.5/32"),
        ("10.0.0.0/8:5432", "network", "10.0.0.0/8:5432"),
        ("[::1]:8080", "network", "[::1/128]:8080"),
        ("fd00::/8", "network", "[fd00::/8]"),
        ("xn--bcher-kva.de", "name", "xn--bcher-kva.de"),
    ],
)
def test_rules_parse_to_a_canonical_form(text: str, kind: str, canonical: str) -> None:
    rule = HostRule.parse(text)
    assert (rule.kind, str(rule)) == (kind, canonical)
    assert HostRule.parse(str(rule)) == rule


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "empty"),
        ("pypi org", "not a host name"),
        ("a*.example.com", "'*' is allowed only"),
        ("*.", "not a host name"),
        ("pypi.org:0", "invalid port"),
        ("pypi.org:65536", "invalid port"),
        ("pypi.org:http", "invalid port"),
        ("127.1", "IP address in disguise"),
        ("0x7f000001", "IP address in disguise"),
        ("[::1", "unclosed"),
        ("bücher.de", "xn--"),
        ("10.0.0.0/33", "not an IP address or network"),
    ],
)
def test_bad_rules_are_refused_with_the_reason(text: str, why: str) -> None:
    with pytest.raises(ValueError, match="invalid host rule") as info:
        HostRule.parse(text)
    assert why in str(info.value)


def test_ports_default_to_http_and_https_and_wildcards_skip_the_apex() -> None:
    rule = HostRule.parse("*.example.com")
    for host, port, expected in [
        ("a.example.com", 443, True),
        ("a.b.example.com", 80, True),
        ("example.com", 443, False),
        ("badexample.com", 443, False),
        ("a.example.com", 8080, False),
    ]:
        assert rule.allows(parse_destination(f"{host}:{port}")) is expected, host
    assert not HostRule.parse("*").allows(parse_destination("10.0.0.1:443"))  # names only


@pytest.mark.parametrize(
    ("authority", "host", "port"),
    [
        ("PyPI.org.:443", "pypi.org", 443),
        ("[2001:db8::1]:8443", "2001:db8::1", 8443),
        ("10.0.0.1:80", "10.0.0.1", 80),
    ],
)
def test_destinations_normalise(authority: str, host: str, port: int) -> None:
    dest = parse_destination(authority)
    assert (dest.host, dest.port) == (host, port)


@pytest.mark.parametrize(
    "authority",
    ["pypi.org", "::1:443", "[pypi.org]:443", "[::1]x", "a..b:443", "x" * 400, "[fe80::1%eth0]:80"],
)
def test_malformed_destinations_are_refused(authority: str) -> None:
    with pytest.raises(ValueError):
        parse_destination(authority)


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("93.184.216.34", True),
        ("2606:2800:220:1:248:1893:25c8:1946", True),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("127.0.0.1", False),
        ("169.254.169.254", False),
        ("100.64.0.1", False),
        ("0.0.0.0", False),
        ("224.0.0.1", False),
        ("255.255.255.255", False),
        ("::1", False),
        ("fe80::1", False),
        ("fd00::1", False),
        ("::ffff:127.0.0.1", False),
        ("::ffff:10.0.0.1", False),
        ("2002:7f00:1::", False),  # 6to4 around 127.0.0.1
        ("64:ff9b::7f00:1", False),  # NAT64 around 127.0.0.1
        ("64:ff9b::5db8:d822", False),  # NAT64 is a translator's range, never a destination here
    ],
)
def test_which_addresses_are_public(address: str, public: bool) -> None:
    assert is_public(ipaddress.ip_address(address)) is public


def test_private_addresses_need_an_address_rule() -> None:
    policy = NetworkPolicy([HostRule.parse("pypi.internal"), HostRule.parse("10.0.0.0/8")])
    assert policy.address_allowed(ipaddress.ip_address("10.9.9.9"))
    assert not policy.address_allowed(ipaddress.ip_address("192.168.0.1"))
    assert policy.rule_for(parse_destination("10.1.1.1:443")) is not None
    assert policy.rule_for(parse_destination("10.1.1.1:8080")) is None


def test_the_config_takes_lists_dicts_and_modes() -> None:
    assert NetworkConfig.coerce(None).mode == "none"
    assert NetworkConfig.coerce("full").mode == "full"
    allow = NetworkConfig.coerce("allow")
    assert (allow.mode, allow.allow) == ("allow", ())
    listed = NetworkConfig.coerce(["pypi.org", "files.pythonhosted.org"])
    assert listed.mode == "allow" and [str(r) for r in listed.allow] == ["pypi.org", "files.pythonhosted.org"]
    config = NetworkConfig.coerce(
        {
            "allow": ["api.example.com", "*.cdn.example.com"],
            "secrets": {"API.example.com": {"header": "Authorization", "value": "Bearer s3cr3t-value"}},
        }
    )
    assert config.secret_for("api.example.com")[0].value == "Bearer s3cr3t-value"
    for shown in (repr(config), str(config.to_dict()), config.describe()):
        assert "s3cr3t" not in shown
    assert config.to_dict() == {
        "mode": "allow",
        "allow": ["api.example.com", "*.cdn.example.com"],
        "secrets": {"api.example.com": "Authorization"},
    }
    assert (
        config.describe() == "allow: api.example.com, *.cdn.example.com (header secrets for api.example.com)"
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("open", "network must be 'none', 'allow', 'full'"),
        (42, "got int"),
        ({"allowed": ["x.org"]}, "Unknown network option(s): allowed"),
        ({"mode": "full", "allow": ["x.org"]}, "need mode 'allow'"),
        (["bad host"], "invalid host rule"),
        (
            {"allow": ["x.org"], "secrets": {"y.org": {"header": "A", "value": "b"}}},
            "y.org is not in the allow-list",
        ),
        (
            {"allow": ["x.org"], "secrets": {"x.org": {"header": "Host", "value": "b"}}},
            "the proxy owns the Host header",
        ),
        (
            {"allow": ["x.org"], "secrets": {"x.org": {"header": "A", "value": "b\r\nX: y"}}},
            "without control characters",
        ),
        ({"allow": ["x.org"], "secrets": {"x.org": {"header": "A B", "value": "b"}}}, "invalid header name"),
        (
            {"allow": ["x.org"], "secrets": {"x.org": {"header": "A"}}},
            "expected {'header': NAME, 'value': VALUE}",
        ),
        (
            {"allow": ["10.0.0.1"], "secrets": {"10.0.0.1": {"header": "A", "value": "b"}}},
            "must be a host name",
        ),
        ({"allow": ["x.org"], "max_connections": 0}, "max_connections must be a positive integer"),
    ],
)
def test_bad_configs_are_refused_clearly(value: object, message: str) -> None:
    with pytest.raises(WorkspaceConfigError) as info:
        NetworkConfig.coerce(value)
    assert message in str(info.value)


def test_what_each_isolation_can_enforce() -> None:
    assert effective_network(None, isolation="none", allow_network=False).mode == "full"
    assert effective_network(None, isolation="bwrap", allow_network=False).mode == "none"
    assert effective_network(None, isolation="bwrap", allow_network=True).mode == "full"
    assert effective_network(["x.org"], isolation="bwrap", allow_network=False).mode == "allow"
    assert effective_network("none", isolation="seatbelt", allow_network=False).mode == "none"
    for requested, isolation in ((["x.org"], "none"), ("none", "none"), (["x.org"], "seatbelt")):
        with pytest.raises(WorkspaceConfigError):
            effective_network(requested, isolation=isolation, allow_network=False)


def test_the_egress_log_is_bounded_and_attributes_attempts() -> None:
    log = EgressLog(max_entries=3)
    changes: list[int] = []
    unsubscribe = log.subscribe(lambda: changes.append(1))
    start = datetime.now(timezone.utc) - timedelta(seconds=1)
    for i in range(5):
        record = log.open(f"h{i}.test", 443, "CONNECT", (100 + i, 7))
        log.decide(record, i % 2 == 0, "allowed by *" if i % 2 == 0 else "not in the allow-list")
        log.close(record)
    assert [e.host for e in log.events()] == ["h2.test", "h3.test", "h4.test"] and log.dropped == 2
    assert [e.host for e in log.events(denied_only=True)] == ["h3.test"]
    assert [e.host for e in log.denied_from(7, start)] == ["h3.test"]
    assert log.denied_from(104, start) == [] and log.denied_from(7, datetime.now(timezone.utc)) == []
    assert len(changes) == 10
    unsubscribe()
    log.clear()
    assert len(changes) == 10 and log.events() == []


def test_the_note_for_a_commands_result() -> None:
    log = EgressLog()
    for host, port, reason in [
        ("api.example.com", 443, "not in the allow-list"),
        ("api.example.com", 443, "not in the allow-list"),
        ("evil.test", 8080, "resolves to a non-public address 10.0.0.1"),
    ]:
        record = log.open(host, port, "CONNECT", ())
        log.decide(record, False, reason)
    assert denied_summary(log.events()) == (
        "network: 2 connections to api.example.com denied by the allow-list; "
        "1 connection to evil.test:8080 refused (resolves to a non-public address 10.0.0.1)"
    )
    assert denied_summary([]) == ""
