#!/usr/bin/env python3
"""An OAuth 2.0 authorization server nobody here wrote, for Courier's OAuth conformance tests.

Authlib's AuthorizationServer (Flask integration) with in-memory models, on 127.0.0.1 and an ephemeral port; it
prints "listening on 127.0.0.1:PORT" once it accepts connections. Started by scripts/oauth-authlib.

What Authlib does here, unchanged: client authentication (client_secret_basic, client_secret_post, none), the
password, refresh-token and client-credentials grants, RFC 7009 revocation, and the bearer-token check of the
protected resource. What this file adds is storage and policy:
  - refresh tokens rotate (a new one with every refresh; the used one is revoked), and presenting a rotated-out
    refresh token again is reuse: invalid_grant, and every token of that user and client is revoked (RFC 9700
    §4.14.2);
  - a client may ask only for its own scopes: anything else is invalid_scope, not silently narrowed;
  - every token request is counted, for the tests' assertions.

Endpoints:
  POST /oauth/token            the token endpoint (RFC 6749 §3.2)
  POST /oauth/revoke           the revocation endpoint (RFC 7009)
  GET  /api/me                 a protected resource: {"user", "client", "token": "tN"}, or 401 with
                               `WWW-Authenticate: Bearer error="invalid_token"` for an expired or revoked token
Test hooks (only for tests; no authentication):
  GET  /test/clients           the registered clients (id, secret, auth method, grants, scope) and the password
                               every user signs in with (any username is a user)
  GET  /test/stats             token requests per grant type, per client and grant type, per user and grant type;
                               errors per grant type; refresh-token reuse; protected-resource answers
  POST /test/expire            form access_token=…: that access token has expired, now (401 from /api/me)
  POST /test/revoke            form access_token=…: that access token is revoked, now (401 from /api/me)
  POST /test/hold              form access_token=…&count=N: of that access token's rejections by /api/me, the N
                               after the first wait until a refresh has replaced its refresh token (at most 10 s),
                               so they reach the client after the refresh
  POST /test/lifetime          form client_id=…&expires_in=N: that client's new access tokens last N seconds
  POST /test/reset             forgets every token and counter, lifetimes back to the default
"""

import argparse
import hmac
import itertools
import sys
import threading
import time
from collections import defaultdict

from authlib.common.security import generate_token
from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.integrations.flask_oauth2 import ResourceProtector
from authlib.integrations.flask_oauth2 import current_token
from authlib.oauth2.rfc6749 import ClientMixin
from authlib.oauth2.rfc6749 import TokenMixin
from authlib.oauth2.rfc6749 import grants
from authlib.oauth2.rfc6749.util import extract_basic_authorization
from authlib.oauth2.rfc6750 import BearerTokenGenerator
from authlib.oauth2.rfc6750 import BearerTokenValidator
from authlib.oauth2.rfc7009 import RevocationEndpoint
from flask import Flask
from flask import jsonify
from flask import request
from werkzeug.serving import make_server

# Every secret needs form-encoding before Base64 (RFC 6749 §2.3.1): ':' '+' '/' '%' a space and a non-ASCII letter.
SECRET_CHARACTERS = "s3:cr+t/ %é"
ALL_METHODS = ["client_secret_basic", "client_secret_post", "none"]
USER_PASSWORD = "courier-password"
DEFAULT_LIFETIME = 300


class Client(ClientMixin):
    def __init__(self, client_id, secret, method, grant_types, scope):
        self.client_id = client_id
        self.client_secret = secret
        self.method = method
        self.grant_types = grant_types
        self.scope = scope

    def describe(self):
        return {
            "client_id": self.client_id,
            "client_secret": self.client_secret,
            "token_endpoint_auth_method": self.method,
            "grant_types": self.grant_types,
            "scope": self.scope,
        }

    def get_client_id(self):
        return self.client_id

    def get_default_redirect_uri(self):
        return None

    def get_allowed_scope(self, scope):
        # RFC 6749 §3.3 lets a server narrow a scope silently; this one refuses instead (None → invalid_scope), so
        # a client asking for more than it may have finds out.
        allowed = set(self.scope.split())
        if not scope:
            return self.scope
        requested = scope.split()
        if not set(requested) <= allowed:
            return None
        return " ".join(requested)

    def check_redirect_uri(self, redirect_uri):
        return False

    def check_client_secret(self, client_secret):
        if self.client_secret is None:
            return False
        return hmac.compare_digest(client_secret.encode(), self.client_secret.encode())

    def check_endpoint_auth_method(self, method, endpoint):
        return method == self.method

    def check_response_type(self, response_type):
        return False

    def check_grant_type(self, grant_type):
        return grant_type in self.grant_types


CLIENTS = {
    c.client_id: c
    for c in [
        Client("courier:basic", "basic-" + SECRET_CHARACTERS, "client_secret_basic", ["password", "refresh_token"],
               "profile"),
        Client("courier-post", "post-" + SECRET_CHARACTERS, "client_secret_post", ["password", "refresh_token"],
               "profile"),
        Client("courier-public", None, "none", ["password", "refresh_token"], "profile"),
        Client("courier:service", "service-" + SECRET_CHARACTERS, "client_secret_basic", ["client_credentials"],
               "read write"),
    ]
}
# Known to the server (so asking for it is not an unknown scope) but granted to no client.
SCOPES_SUPPORTED = ["profile", "read", "write", "admin"]


class Token(TokenMixin):
    def __init__(self, number, client_id, user, scope, access_token, refresh_token, expires_in):
        self.id = f"t{number}"
        self.client_id = client_id
        self.user = user
        self.scope = scope
        self.access_token = access_token
        self.refresh_token = refresh_token
        self.issued_at = time.time()
        self.expires_in = expires_in
        self.expired_now = False
        self.access_revoked = False
        self.refresh_revoked = False
        # The refresh token was revoked because a refresh replaced it; presenting it again is reuse.
        self.rotated = False
        # /test/hold: how many of this access token's rejections, after the first, wait for its rotation.
        self.hold = 0
        self.rejections = 0

    def check_client(self, client):
        return self.client_id == client.get_client_id()

    def get_scope(self):
        return self.scope

    def get_expires_in(self):
        return self.expires_in

    def is_expired(self):
        return self.expired_now or time.time() >= self.issued_at + self.expires_in

    def is_revoked(self):
        return self.access_revoked

    def get_user(self):
        return self.user

    def get_client(self):
        return CLIENTS.get(self.client_id)


class User:
    def __init__(self, name):
        self.name = name


class Store:
    """Every token and counter, behind one lock: a token request is one transaction, as in a database."""

    def __init__(self):
        self.lock = threading.RLock()
        # Notified whenever a refresh rotates a refresh token.
        self.rotation = threading.Condition(self.lock)
        self.reset()

    def reset(self):
        with self.lock:
            self.numbers = itertools.count(1)
            self.by_access = {}
            self.by_refresh = {}
            self.lifetimes = {}
            self.requests = defaultdict(int)
            self.by_client = defaultdict(lambda: defaultdict(int))
            self.by_user = defaultdict(lambda: defaultdict(int))
            self.errors = defaultdict(lambda: defaultdict(int))
            self.reuse = 0
            self.reuse_by_user = defaultdict(int)
            self.family_revocations = 0
            self.revocations = 0
            self.resource = defaultdict(int)
            self.held = 0
            self.hold_timeouts = 0

    def stats(self):
        with self.lock:
            return {
                "token_requests": dict(self.requests),
                "by_client": {k: dict(v) for k, v in self.by_client.items()},
                "by_user": {k: dict(v) for k, v in self.by_user.items()},
                "errors": {k: dict(v) for k, v in self.errors.items()},
                "refresh_token_reuse": self.reuse,
                "reuse_by_user": dict(self.reuse_by_user),
                "family_revocations": self.family_revocations,
                "revocations": self.revocations,
                "resource": dict(self.resource),
                "held": self.held,
                "hold_timeouts": self.hold_timeouts,
            }

    def revoke_family(self, user, client_id):
        for token in self.by_access.values():
            if token.user == user and token.client_id == client_id:
                token.access_revoked = True
                token.refresh_revoked = True
        self.family_revocations += 1


store = Store()


class PasswordGrant(grants.ResourceOwnerPasswordCredentialsGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ALL_METHODS

    def authenticate_user(self, username, password):
        # Any username is a user; this grant exists only so a test can start a session of its own.
        if hmac.compare_digest(password.encode(), USER_PASSWORD.encode()):
            return User(username)
        return None


class RefreshTokenGrant(grants.RefreshTokenGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ALL_METHODS
    INCLUDE_NEW_REFRESH_TOKEN = True

    def authenticate_refresh_token(self, refresh_token):
        token = store.by_refresh.get(refresh_token)
        if token is None:
            return None
        if token.refresh_revoked:
            if token.rotated:
                store.reuse += 1
                store.reuse_by_user[token.user] += 1
                store.revoke_family(token.user, token.client_id)
            return None
        return token

    def authenticate_user(self, refresh_token):
        return User(refresh_token.user)

    def revoke_old_credential(self, refresh_token):
        refresh_token.refresh_revoked = True
        refresh_token.rotated = True
        store.rotation.notify_all()


class ClientCredentialsGrant(grants.ClientCredentialsGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ALL_METHODS


class Revocation(RevocationEndpoint):
    CLIENT_AUTH_METHODS = ALL_METHODS

    def query_token(self, token_string, token_type_hint):
        if token_type_hint == "access_token":
            return store.by_access.get(token_string)
        if token_type_hint == "refresh_token":
            return store.by_refresh.get(token_string)
        return store.by_access.get(token_string) or store.by_refresh.get(token_string)

    def revoke_token(self, token, request):
        # RFC 7009 §2.1: revoking a refresh token also invalidates the access token of the same grant.
        token.access_revoked = True
        if request.form.get("token_type_hint") != "access_token" or token.refresh_token is None:
            token.refresh_revoked = True
        store.revocations += 1


def save_token(token, req):
    user = req.user.name if req.user else None
    saved = Token(
        next(store.numbers),
        req.client.get_client_id(),
        user,
        token.get("scope"),
        token["access_token"],
        token.get("refresh_token"),
        token.get("expires_in", DEFAULT_LIFETIME),
    )
    store.by_access[saved.access_token] = saved
    if saved.refresh_token:
        store.by_refresh[saved.refresh_token] = saved


def lifetime(client, grant_type):
    return store.lifetimes.get(client.get_client_id(), DEFAULT_LIFETIME)


class Validator(BearerTokenValidator):
    def authenticate_token(self, token_string):
        return store.by_access.get(token_string)


app = Flask(__name__)
app.config["OAUTH2_SCOPES_SUPPORTED"] = SCOPES_SUPPORTED
server = AuthorizationServer(app, query_client=CLIENTS.get, save_token=save_token)
server.register_token_generator(
    "default",
    BearerTokenGenerator(lambda **_: generate_token(42), lambda **_: generate_token(48), lifetime),
)
server.register_grant(PasswordGrant)
server.register_grant(RefreshTokenGrant)
server.register_grant(ClientCredentialsGrant)
server.register_endpoint(Revocation)
require_oauth = ResourceProtector()
require_oauth.register_token_validator(Validator())


def claimed_client_id():
    """The client a token request names: the Basic user name (decoded as Authlib decodes it), else client_id."""
    basic_id, _ = extract_basic_authorization(request.headers)
    return basic_id or request.form.get("client_id") or "-"


def claimed_user(grant_type):
    if grant_type == "password":
        return request.form.get("username")
    if grant_type == "refresh_token":
        token = store.by_refresh.get(request.form.get("refresh_token", ""))
        return token.user if token else None
    return None


@app.post("/oauth/token")
def issue_token():
    with store.lock:
        grant_type = request.form.get("grant_type", "-")
        store.requests[grant_type] += 1
        store.by_client[claimed_client_id()][grant_type] += 1
        user = claimed_user(grant_type)
        if user:
            store.by_user[user][grant_type] += 1
        response = server.create_token_response()
        if response.status_code != 200:
            error = (response.get_json(silent=True) or {}).get("error", str(response.status_code))
            store.errors[grant_type][error] += 1
        return response


@app.post("/oauth/revoke")
def revoke_token():
    with store.lock:
        return server.create_endpoint_response(Revocation.ENDPOINT_NAME)


@app.get("/api/me")
def me():
    with store.lock:
        hold_rejection(request.headers.get("Authorization", ""))
        try:
            return protected_me()
        except Exception as error:
            code = getattr(error, "code", 500)
            store.resource[str(code)] += 1
            raise


def hold_rejection(authorization):
    """Delays a rejection of a held access token (/test/hold) until a refresh has rotated its refresh token."""
    scheme, _, value = authorization.partition(" ")
    token = store.by_access.get(value) if scheme.lower() == "bearer" else None
    if token is None or not (token.is_expired() or token.is_revoked()):
        return
    token.rejections += 1
    if token.rejections == 1 or token.hold == 0:
        return
    token.hold -= 1
    store.held += 1
    # Waiting releases the lock, so the token endpoint can serve the refresh meanwhile.
    if not store.rotation.wait_for(lambda: token.refresh_revoked, timeout=10):
        store.hold_timeouts += 1


@require_oauth()
def protected_me():
    token = current_token
    store.resource["200"] += 1
    return jsonify(user=token.user, client=token.client_id, token=token.id, scope=token.scope)


@app.get("/test/clients")
def test_clients():
    return jsonify(
        clients=[client.describe() for client in CLIENTS.values()],
        user_password=USER_PASSWORD,
        token_path="/oauth/token",
        revocation_path="/oauth/revoke",
        default_lifetime=DEFAULT_LIFETIME,
    )


@app.get("/test/stats")
def test_stats():
    return jsonify(store.stats())


def change_access_token(change):
    """Applies `change` to the token whose access token the form names; 404 when there is none."""
    with store.lock:
        token = store.by_access.get(request.form.get("access_token", ""))
        if token is None:
            return jsonify(error="unknown access token"), 404
        change(token)
        return jsonify(token=token.id)


@app.post("/test/expire")
def test_expire():
    return change_access_token(lambda token: setattr(token, "expired_now", True))


@app.post("/test/revoke")
def test_revoke():
    return change_access_token(lambda token: setattr(token, "access_revoked", True))


@app.post("/test/hold")
def test_hold():
    count = request.form.get("count", "")
    if not count.isdigit():
        return jsonify(error="count must be a whole number"), 400
    return change_access_token(lambda token: setattr(token, "hold", int(count)))


@app.post("/test/lifetime")
def test_lifetime():
    with store.lock:
        client_id = request.form.get("client_id", "")
        if client_id not in CLIENTS:
            return jsonify(error="unknown client"), 404
        try:
            seconds = int(request.form.get("expires_in", ""))
        except ValueError:
            return jsonify(error="expires_in must be a whole number of seconds"), 400
        store.lifetimes[client_id] = seconds
        return jsonify(client_id=client_id, expires_in=seconds)


@app.post("/test/reset")
def test_reset():
    store.reset()
    return jsonify(reset=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="0 (the default) picks a free port")
    args = parser.parse_args()
    http = make_server("127.0.0.1", args.port, app, threaded=True)
    # Werkzeug's default backlog (128) is enough for the tests' 50 concurrent calls per transport.
    print(f"listening on 127.0.0.1:{http.server_port}", flush=True)
    http.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
