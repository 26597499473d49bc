//! Upload tokens: 32 random bytes, shown once as `spt_` + base64url, kept
//! only as a SHA-256 hash. A hash of a random 256-bit secret needs no salt
//! or slow KDF: nothing about it can be guessed.

use base64::Engine;
use sha2::{Digest, Sha256};

/// Prefix that makes spider tokens recognisable (in logs, secret scanners).
const PREFIX: &str = "spt_";

/// A new random token.
pub fn generate() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(format!(
        "{PREFIX}{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    ))
}

/// The hash stored for `token` (lower-case hex SHA-256).
pub fn hash(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    let mut out = String::with_capacity(64);
    for byte in digest {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// Token names: what `spider token` accepts (shown in lists and logs).
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '@'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_hashes_fixed() {
        let a = generate().unwrap();
        let b = generate().unwrap();
        assert_ne!(a, b);
        assert!(a.starts_with(PREFIX) && a.len() == PREFIX.len() + 43, "{a}");
        assert_eq!(hash(&a), hash(&a));
        assert_ne!(hash(&a), hash(&b));
        // SHA-256 of "abc", from FIPS 180-2.
        assert_eq!(
            hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(valid_name("ci-bot") && !valid_name("a b") && !valid_name(""));
    }
}
