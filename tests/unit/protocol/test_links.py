"""Which addresses agents and people may put in front of people (artifacts, attachments,
links in content blocks): http(s) with a host, or a file stored in the hub."""

import json

import pytest

from lineup.protocol import ErrorCode, Sender, decode_frame
from lineup.protocol.codec import Decoded, Rejected
from lineup.protocol.links import check_link, hub_file, hub_file_url

from .samples import envelope

ALLOWED = [
    "https://example.test/report.md",
    "http://example.test",
    "HTTPS://Example.test/a?b=c#d",
    "https://[::1]:8443/x",
    "/api/workspaces/ws_01J/files/file_01J",
]

REFUSED = [
    "javascript:alert(document.cookie)",
    "JavaScript:alert(1)",
    " javascript:alert(1)",
    "java\tscript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "file:///home/agent/report.md",
    "vbscript:msgbox",
    "ftp://example.test/x",
    "//evil.test/x",
    "/api/workspaces/ws_1/files/f/../../secrets",
    "/etc/passwd",
    "https:\\\\evil.test",
    "https:///nohost",
    "report.md",
]


@pytest.mark.parametrize("url", ALLOWED)
def test_http_and_https_urls_and_hub_files_are_accepted(url):
    assert check_link(url) == url


@pytest.mark.parametrize("url", REFUSED)
def test_other_schemes_relative_paths_and_disguised_urls_are_refused(url):
    with pytest.raises(ValueError):
        check_link(url)


def test_a_hub_file_address_names_its_workspace_and_file():
    url = hub_file_url("ws_1", "file_2")
    ref = hub_file(url)
    assert ref is not None
    assert (ref.workspace_id, ref.file_id, ref.url) == ("ws_1", "file_2", url)
    assert hub_file("https://example.test/api/workspaces/ws_1/files/file_2") is None


def _decode(event_type, payload, sender=Sender.AGENT):
    return decode_frame(json.dumps(envelope(event_type, payload)), sender)


def _refused(event_type, payload, sender=Sender.AGENT):
    result = _decode(event_type, payload, sender)
    assert isinstance(result, Rejected), result
    assert result.error.code is ErrorCode.INVALID_ARGUMENT
    return result.error


@pytest.mark.parametrize("url", ["javascript:alert(1)", "data:text/html,x", "file:///r.md"])
def test_an_artifact_with_a_script_data_or_file_url_is_an_invalid_argument(url):
    error = _refused("artifact.created", {"name": "Report", "url": url})
    assert "url" in error.message
    assert "http" in error.message


def test_an_artifact_pointing_at_a_hub_file_is_accepted():
    url = hub_file_url("ws_1", "file_1")
    result = _decode("artifact.created", {"name": "Report", "url": url})
    assert isinstance(result, Decoded)


def test_an_agent_message_attachment_must_be_http_or_a_hub_file():
    bad = {"content": "see", "attachments": [{"name": "x", "url": "javascript:alert(1)"}]}
    _refused("message.create", bad)
    good = {"content": "see", "attachments": [{"name": "x", "url": "https://example.test"}]}
    assert isinstance(_decode("message.create", good), Decoded)


def test_a_persons_message_attachment_follows_the_same_rule():
    bad = {"content": "see", "attachments": [{"name": "x", "url": "data:text/html,hi"}]}
    _refused("message.create", bad, Sender.USER)


def test_links_inside_a_content_blocks_data_are_checked_at_any_depth():
    bad = {
        "content": "see",
        "blocks": [{"type": "cards", "data": {"items": [{"title": "t", "href": "javascript:x"}]}}],
    }
    _refused("message.create", bad)
    good = {
        "content": "see",
        "blocks": [{"type": "image", "data": {"src": "https://example.test/i.png", "alt": "x"}}],
    }
    assert isinstance(_decode("message.create", good), Decoded)


def test_a_review_cards_attachments_are_checked_too():
    interaction = {
        "id": "int_1",
        "type": "review",
        "title": "Check this",
        "attachments": [{"name": "plan", "url": "file:///tmp/plan.md"}],
    }
    _refused("interaction.requested", {"interaction": interaction})
