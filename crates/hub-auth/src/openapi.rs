//! The token service's routes as OpenAPI 3.1 path items, described as they answer:
//! OAuth errors (RFC 6749 §5.2 JSON) from the token endpoint, an unknown realm as a
//! plain `{"error"}` 404, throttled password grants as a problem with `Retry-After`.
//! The server adds them to the document it serves at `/swagger/v1/swagger.json`.
//!
//! Owns the description only; must not describe a grant or parameter `service::grants`
//! does not handle.

use serde_json::{json, Value};

const PROBLEM: &str = "#/components/schemas/ProblemDoc";

fn problem(description: &str) -> Value {
    json!({"description": description, "content": {"application/problem+json": {"schema": {"$ref": PROBLEM}}}})
}

fn oauth_error(description: &str) -> Value {
    json!({
        "description": description,
        "content": {"application/json": {"schema": {
            "type": "object",
            "required": ["error"],
            "properties": {
                "error": {"type": "string", "enum": ["invalid_request", "invalid_client", "invalid_grant", "unauthorized_client", "unsupported_grant_type", "invalid_scope"]},
                "error_description": {"type": "string"}
            }
        }}}
    })
}

fn unknown_realm() -> Value {
    json!({
        "description": "No such realm",
        "content": {"application/json": {"schema": {
            "type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}
        }}}
    })
}

/// The path items of the token service for `realm` (the only realm it answers).
pub fn paths(realm: &str) -> Value {
    let realm_parameter = json!({
        "name": "realm", "in": "path", "required": true,
        "description": "The realm; any other answers 404",
        "schema": {"type": "string", "enum": [realm]}
    });
    let edge = |responses: &mut Value| {
        responses["429"] = problem(
            "Too many failed password logins for the user or from the address, or rate limit reached; Retry-After says when to come back",
        );
        responses["503"] =
            problem("Overloaded or the store is unavailable; Retry-After says when to come back");
    };
    let mut token_responses = json!({
        "200": {"description": "Tokens", "content": {"application/json": {"schema": {
            "type": "object",
            "required": ["access_token", "token_type", "expires_in"],
            "properties": {
                "access_token": {"type": "string"},
                "token_type": {"type": "string", "enum": ["Bearer"]},
                "expires_in": {"type": "integer"},
                "refresh_token": {"type": "string"},
                "refresh_expires_in": {"type": "integer"},
                "scope": {"type": "string"}
            }
        }}}},
        "400": oauth_error("The request or the grant was not accepted (RFC 6749 §5.2)"),
        "401": oauth_error("The client could not be authenticated (invalid_client; WWW-Authenticate: Basic)"),
        "404": unknown_realm(),
    });
    edge(&mut token_responses);
    let json_responses = |description: &str| {
        let mut r = json!({
            "200": {"description": description, "content": {"application/json": {"schema": {"type": "object"}}}},
            "404": unknown_realm(),
        });
        edge(&mut r);
        r
    };
    let certs = json_responses("The realm's public signing keys (JWKS)");
    let discovery = json_responses("OpenID Connect discovery document");
    json!({
        "/auth/realms/{realm}/protocol/openid-connect/token": {"post": {
            "tags": ["Token service"],
            "operationId": "token",
            "summary": "Access and refresh tokens: password, client_credentials or refresh_token grant",
            "description": "Public clients (hub-generic-client) send client_id in the form; confidential clients authenticate with Basic or client_secret in the form. Failed password logins are throttled per user and per address.",
            "parameters": [realm_parameter],
            "requestBody": {"required": true, "content": {"application/x-www-form-urlencoded": {"schema": {
                "type": "object",
                "required": ["grant_type"],
                "properties": {
                    "grant_type": {"type": "string", "enum": ["password", "client_credentials", "refresh_token"]},
                    "client_id": {"type": "string"},
                    "client_secret": {"type": "string"},
                    "username": {"type": "string"},
                    "password": {"type": "string"},
                    "refresh_token": {"type": "string"},
                    "scope": {"type": "string"}
                }
            }}}},
            "responses": token_responses,
            "security": [{}, {"basic": []}]
        }},
        "/auth/realms/{realm}/protocol/openid-connect/certs": {"get": {
            "tags": ["Token service"],
            "operationId": "jwks",
            "summary": "Public keys that verify the access tokens",
            "parameters": [realm_parameter],
            "responses": certs
        }},
        "/auth/realms/{realm}/.well-known/openid-configuration": {"get": {
            "tags": ["Token service"],
            "operationId": "openidConfiguration",
            "summary": "OpenID Connect discovery",
            "parameters": [realm_parameter],
            "responses": discovery
        }}
    })
}

/// The client authentication scheme of the token endpoint.
pub fn basic_scheme() -> Value {
    json!({"type": "http", "scheme": "basic", "description": "Confidential clients: client id and secret (form-urlencoded) at the token endpoint"})
}
