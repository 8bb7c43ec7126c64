#!/usr/bin/env python3
"""Independent check of Hub's tokens with PyJWT: fetch a token with the password grant,
verify it against the realm's JWKS, and make sure a tampered token is refused.

Usage: jwt_check.py BASE_URL REALM USERNAME PASSWORD
Exit 0 and "jwt_check: ok" on success; exit 3 when PyJWT/cryptography are missing.
"""
import json
import sys
import urllib.parse
import urllib.request

try:
    import jwt  # PyJWT
    from jwt import PyJWKClient
    import cryptography  # noqa: F401  (RS256 needs it)
except ImportError as e:  # pragma: no cover
    print(f"jwt_check: missing module: {e}", file=sys.stderr)
    sys.exit(3)


def main():
    base, realm, username, password = sys.argv[1:5]
    issuer = f"{base}/auth/realms/{realm}"
    discovery = json.load(urllib.request.urlopen(f"{issuer}/.well-known/openid-configuration"))
    assert discovery["issuer"] == issuer, discovery
    form = urllib.parse.urlencode(
        {"grant_type": "password", "username": username, "password": password, "client_id": "hub-generic-client"}
    ).encode()
    req = urllib.request.Request(discovery["token_endpoint"], data=form, headers={"Content-Type": "application/x-www-form-urlencoded"})
    body = json.load(urllib.request.urlopen(req))
    token = body["access_token"]
    assert body["token_type"] == "Bearer" and body["expires_in"] > 0 and body["refresh_token"], body

    key = PyJWKClient(discovery["jwks_uri"]).get_signing_key_from_jwt(token)
    claims = jwt.decode(token, key.key, algorithms=["RS256"], issuer=issuer, options={"verify_aud": False, "require": ["exp", "iat", "iss", "sub"]})
    assert claims["preferred_username"] == username, claims
    assert claims["azp"] == "hub-generic-client", claims
    assert isinstance(claims["realm_access"]["roles"], list), claims
    assert "hub-generic-client" in claims["resource_access"], claims

    head, payload, sig = token.split(".")
    tampered_payload = jwt.utils.base64url_encode(json.dumps(dict(claims, preferred_username="mallory")).encode()).decode()
    try:
        jwt.decode(f"{head}.{tampered_payload}.{sig}", key.key, algorithms=["RS256"], options={"verify_aud": False})
    except jwt.InvalidSignatureError:
        pass
    else:
        raise AssertionError("a tampered token verified")
    print("jwt_check: ok")


if __name__ == "__main__":
    main()
