"""Issue 57 row 5: `--allow-origin http://glasses.example:9000`, the documented form, is read as
scheme, host and port: Host `glasses.example` (with or without the port) may name the server, Host
`http` may not; malformed origins are refused."""

from __future__ import annotations

import pytest

from streaming.origin import OriginCheck, normal_origin, origin_host


def refusal(check: OriginCheck, host: str, origin: str | None = None, method: str = "GET"):
    headers = [(b"host", host.encode())] + ([(b"origin", origin.encode())] if origin else [])
    return check.refusal({"type": "http", "method": method, "headers": headers, "client": ("203.0.113.5", 4000)})


def test_the_documented_origin_lets_its_host_in_and_nothing_else():
    check = OriginCheck(None, allowed_origins=("http://glasses.example:9000",))
    assert origin_host("http://glasses.example:9000") == "glasses.example"
    assert refusal(check, "glasses.example") is None
    assert refusal(check, "glasses.example:9000") is None
    assert refusal(check, "GLASSES.example:9000") is None
    assert refusal(check, "http:9102")[0] == 400
    assert refusal(check, "http")[0] == 400
    assert refusal(check, "glasses.example:9000", "http://glasses.example:9000", "POST") is None
    assert refusal(check, "glasses.example:9000", "http://glasses.example:9001", "POST")[0] == 403


@pytest.mark.parametrize(
    "bad",
    [
        "http://glasses.example:99999",
        "http://glasses.example:port",
        "http://user@glasses.example",
        "http://glasses.example/path",
        "http://glasses.example#frag",
        "http://glasses.example:",
        "ftp://glasses.example",
        "glasses.example:9000",
    ],
)
def test_malformed_origins_are_refused(bad):
    with pytest.raises(ValueError, match="must look like"):
        normal_origin(bad)
    with pytest.raises(ValueError):
        OriginCheck(None, allowed_origins=(bad,))


def test_ipv6_and_https_origins_are_read_too():
    check = OriginCheck(None, allowed_origins=("https://[fd00::7]:8443", "https://Studio.Example"))
    assert {"fd00::7", "studio.example", "localhost"} <= check.allowed_hosts
    assert "https" not in check.allowed_hosts and "http" not in check.allowed_hosts
