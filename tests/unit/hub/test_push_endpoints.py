"""Which push endpoints the hub posts to: browsers' push services and what the operator
listed, over https; never an address of the hub's own networks."""

from __future__ import annotations

import socket

import pytest

from lineup.hub.notify.endpoints import EndpointRefused, PushPolicy, public_address

DEFAULT = PushPolicy()


@pytest.mark.parametrize(
    "endpoint",
    [
        "https://fcm.googleapis.com/fcm/send/abc:def",
        "https://updates.push.services.mozilla.com/wpush/v2/gAAAA",
        "https://web.push.apple.com/QGx3bWJ9",
        "https://wns2-by3p.notify.windows.com/w/?token=BQYAAA",
        "https://FCM.googleapis.com:443/fcm/send/abc",
    ],
)
def test_the_browsers_push_services_are_accepted(endpoint: str) -> None:
    DEFAULT.check(endpoint)


@pytest.mark.parametrize(
    "endpoint",
    [
        "https://0x7f000001/push",
        "https://2130706433/push",
        "https://127.1/push",
        "https://localhost/push",
        "https://localhost./push",
        f"https://{socket.gethostname()}/push",
        "https://100.64.0.1/push",
        "https://[::1]/push",
        "https://[::ffff:127.0.0.1]/push",
        "https://169.254.169.254/latest/meta-data",
        "https://10.0.0.8/push",
        "https://example.com/push",
        "https://fcm.googleapis.com.evil.example/push",
        "https://evilfcm.googleapis.com/push",
        "https://push.services.mozilla.com/wpush",  # the wildcard is for names under it
        "https://fcm.googleapis.com:8443/fcm/send/abc",
        "https://user:pw@fcm.googleapis.com/fcm/send/abc",
        "http://fcm.googleapis.com/fcm/send/abc",
        "ftp://fcm.googleapis.com/x",
        "fcm.googleapis.com/fcm/send/abc",
        "https://[not-an-address/x",
    ],
)
def test_anything_else_is_refused_with_a_reason(endpoint: str) -> None:
    with pytest.raises(EndpointRefused) as refused:
        DEFAULT.check(endpoint)
    assert str(refused.value).startswith("A push endpoint")


def test_the_operator_can_allow_a_self_hosted_push_service() -> None:
    policy = PushPolicy(operator_hosts=("push.internal.example", "*.push.corp.example"))
    assert policy.check("https://push.internal.example:8443/p/1") == "push.internal.example"
    assert policy.check("https://eu.push.corp.example/p/1") == "eu.push.corp.example"
    assert policy.operator_listed("EU.push.corp.example")
    assert not policy.operator_listed("fcm.googleapis.com")
    with pytest.raises(EndpointRefused):
        policy.check("http://push.internal.example/p/1")  # http needs allow_http as well
    with pytest.raises(EndpointRefused):
        policy.check("https://push.corp.example/p/1")


def test_plain_http_goes_only_to_a_listed_host_when_allowed() -> None:
    policy = PushPolicy(operator_hosts=("127.0.0.1", "::1"), allow_http=True)
    assert policy.check("http://127.0.0.1:9000/push/a") == "127.0.0.1"
    assert policy.check("http://[::1]:9000/push/a") == "::1"
    for endpoint in ("http://127.0.0.2/push/a", "http://fcm.googleapis.com/fcm/send/a"):
        with pytest.raises(EndpointRefused):
            policy.check(endpoint)


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "100.64.0.1",
        "169.254.169.254",
        "0.0.0.0",
        "224.0.0.251",
        "255.255.255.255",
        "::1",
        "::",
        "fe80::1",
        "fe80::1%eth0",
        "fc00::1",
        "ff02::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "64:ff9b::7f00:1",
        "2002:7f00:1::",
        "not an address",
    ],
)
def test_private_loopback_link_local_shared_and_multicast_addresses_are_not_public(
    address: str,
) -> None:
    assert not public_address(address)


@pytest.mark.parametrize(
    "address", ["142.250.74.106", "8.8.8.8", "2a00:1450:4001:82b::200a", "::ffff:8.8.8.8"]
)
def test_internet_addresses_are_public(address: str) -> None:
    assert public_address(address)
