"""Schemathesis hooks of test/integration/schemathesis.test.ts.

POST /v1/sign and /v1/verify fetch `document.url`. Generated strings are
random, but one that happened to be an http(s) URL with a public address
would make the platform connect off this machine, and tests send traffic
only to loopback. Every such URL is replaced, before the call, by one on
loopback, which the fetcher's SSRF guard refuses (422) without connecting;
every other value (not a string, not http(s), malformed) is sent as
generated, so the URL validation is still fuzzed.
"""

import re

import schemathesis

LOOPBACK_URL = "http://127.0.0.1:9/fuzzed-document-url"


def could_reach_network(url: str) -> bool:
    # How a WHATWG URL parser (Node's) reads the scheme: tabs and newlines
    # anywhere are dropped, leading C0 controls and spaces are trimmed.
    text = re.sub(r"[\t\n\r]", "", url).lstrip("".join(chr(c) for c in range(0x21))).lower()
    return text.startswith("http:") or text.startswith("https:")


@schemathesis.hook
def before_call(context, case, kwargs):
    body = case.body
    if not isinstance(body, dict):
        return
    document = body.get("document")
    if isinstance(document, dict) and isinstance(document.get("url"), str) and could_reach_network(document["url"]):
        document["url"] = LOOPBACK_URL
