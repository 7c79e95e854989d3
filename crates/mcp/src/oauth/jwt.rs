//! The JWTs a mount signs itself, ES256 only (ECDSA P-256, SHA-256): DPoP
//! proofs (RFC 9449) with a key made for the mount, and private_key_jwt
//! client assertions (RFC 7523) with the host's key. The compact JWS form
//! (RFC 7515 section 7.1): base64url of the header and of the claims, joined
//! by a dot, and the 64-byte `r || s` signature of that text (RFC 7518
//! section 3.4).

use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use p256::pkcs8::DecodePrivateKey;
use serde_json::{json, Value};

/// An ES256 signing key.
pub struct Es256(SigningKey);

impl Es256 {
    /// A new key from the operating system's random source.
    pub fn generate() -> Es256 {
        Es256(SigningKey::random(&mut rand_core::OsRng))
    }

    /// The host's key: PEM text of a PKCS#8 EC P-256 private key
    /// ("-----BEGIN PRIVATE KEY-----", as `openssl genpkey -algorithm EC
    /// -pkeyopt ec_paramgen_curve:P-256` writes it).
    pub fn from_pem(pem: &str) -> Result<Es256, String> {
        SigningKey::from_pkcs8_pem(pem.trim())
            .map(Es256)
            .map_err(|e| {
                format!(
                    "the client key is not the PEM text of a PKCS#8 EC P-256 private key \
                 (ES256 is the one algorithm capstan signs with): {e}"
                )
            })
    }

    /// The private key as base64url of its 32-byte scalar, to be kept (a
    /// secret) and read back by `from_secret`.
    pub fn secret(&self) -> String {
        B64.encode(self.0.to_bytes())
    }

    pub fn from_secret(text: &str) -> Option<Es256> {
        let bytes = B64.decode(text).ok().filter(|b| b.len() == 32)?;
        SigningKey::from_slice(&bytes).ok().map(Es256)
    }

    /// The public key as a JWK (RFC 7518 section 6.2), for a DPoP proof's
    /// header.
    pub fn public_jwk(&self) -> Value {
        let point = self.0.verifying_key().to_encoded_point(false);
        let (Some(x), Some(y)) = (point.x(), point.y()) else {
            unreachable!("an uncompressed P-256 point has both coordinates")
        };
        json!({"kty": "EC", "crv": "P-256", "x": B64.encode(x), "y": B64.encode(y)})
    }

    /// The compact JWS of `claims` under `header` (whose `alg` must say ES256).
    pub fn sign(&self, header: &Value, claims: &Value) -> String {
        let input = format!(
            "{}.{}",
            B64.encode(header.to_string()),
            B64.encode(claims.to_string())
        );
        let signature: Signature = self.0.sign(input.as_bytes());
        format!("{input}.{}", B64.encode(signature.to_bytes()))
    }

    /// A private_key_jwt client assertion (RFC 7523 section 3, as OAuth 2.1
    /// and SEP-1046 use it): `iss` and `sub` the client id, `aud` the
    /// authorization server's issuer, valid for a minute, a fresh `jti`.
    pub fn client_assertion(&self, client_id: &str, audience: &str) -> String {
        let now = now();
        self.sign(
            &json!({"alg": "ES256", "typ": "JWT"}),
            &json!({
                "iss": client_id,
                "sub": client_id,
                "aud": audience,
                "iat": now,
                "exp": now + 60,
                "jti": uuid::Uuid::new_v4().to_string(),
            }),
        )
    }
}

/// Seconds since the epoch.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::signature::Verifier;
    use p256::ecdsa::VerifyingKey;
    use p256::pkcs8::{EncodePrivateKey, LineEnding};

    /// Splits a compact JWS and checks its signature with `key`'s public key
    /// as a JWK: what a verifier holding only that JWK does.
    fn verify(jws: &str, jwk: &Value) -> (Value, Value) {
        let parts: Vec<&str> = jws.split('.').collect();
        assert_eq!(parts.len(), 3, "{jws}");
        let coordinate = |name: &str| B64.decode(jwk[name].as_str().unwrap()).unwrap();
        let mut sec1 = vec![4u8];
        sec1.extend(coordinate("x"));
        sec1.extend(coordinate("y"));
        let key = VerifyingKey::from_sec1_bytes(&sec1).unwrap();
        let signature = Signature::from_slice(&B64.decode(parts[2]).unwrap()).unwrap();
        key.verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &signature)
            .expect("the signature verifies with the public JWK");
        let decode = |p: &str| serde_json::from_slice(&B64.decode(p).unwrap()).unwrap();
        (decode(parts[0]), decode(parts[1]))
    }

    #[test]
    fn a_signed_jwt_verifies_with_the_public_jwk_and_carries_what_was_signed() {
        let key = Es256::generate();
        let jwk = key.public_jwk();
        assert_eq!(
            (jwk["kty"].as_str(), jwk["crv"].as_str()),
            (Some("EC"), Some("P-256"))
        );
        assert!(jwk.get("d").is_none(), "no private part: {jwk}");
        let jws = key.sign(
            &json!({"alg": "ES256", "typ": "dpop+jwt"}),
            &json!({"htm": "POST"}),
        );
        let (header, claims) = verify(&jws, &jwk);
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(claims["htm"], "POST");
        // A changed claim no longer verifies.
        let other = key.sign(&json!({"alg": "ES256"}), &json!({"htm": "GET"}));
        let forged = format!(
            "{}.{}",
            jws.rsplit_once('.').unwrap().0,
            other.rsplit_once('.').unwrap().1
        );
        let result = std::panic::catch_unwind(|| verify(&forged, &jwk));
        assert!(
            result.is_err(),
            "a signature of other claims must not verify"
        );
    }

    #[test]
    fn a_client_assertion_names_the_client_and_audience_and_expires_soon() {
        let secret = SigningKey::random(&mut rand_core::OsRng);
        let pem = secret.to_pkcs8_pem(LineEnding::LF).unwrap();
        let key = Es256::from_pem(&pem).unwrap();
        let jws = key.client_assertion("client-1", "https://as.example");
        let (header, claims) = verify(&jws, &key.public_jwk());
        assert_eq!(header["alg"], "ES256");
        assert_eq!(
            (claims["iss"].as_str(), claims["sub"].as_str()),
            (Some("client-1"), Some("client-1"))
        );
        assert_eq!(claims["aud"], "https://as.example");
        let (iat, exp) = (
            claims["iat"].as_u64().unwrap(),
            claims["exp"].as_u64().unwrap(),
        );
        assert!(exp > iat && exp - iat <= 300, "{claims}");
        // Two assertions never share a jti.
        let (_, again) = verify(
            &key.client_assertion("client-1", "https://as.example"),
            &key.public_jwk(),
        );
        assert_ne!(claims["jti"], again["jti"]);
    }

    #[test]
    fn a_kept_secret_gives_the_same_key_back_and_garbage_none() {
        let key = Es256::generate();
        let again = Es256::from_secret(&key.secret()).expect("read back");
        assert_eq!(again.public_jwk(), key.public_jwk());
        assert!(Es256::from_secret("not base64!").is_none());
        assert!(
            Es256::from_secret(&B64.encode([0u8; 32])).is_none(),
            "zero is no key"
        );
        assert!(
            Es256::from_secret(&B64.encode([1u8; 31])).is_none(),
            "too short"
        );
    }

    #[test]
    fn a_key_that_is_not_pkcs8_p256_pem_is_refused_saying_what_is_wanted() {
        for bad in [
            "",
            "not a key",
            "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----",
        ] {
            let err = Es256::from_pem(bad).err().expect(bad);
            assert!(err.contains("PKCS#8 EC P-256"), "{err}");
        }
    }
}
