//! A small, fast, stable 64-bit hash (MurmurHash3-style mixing) for entity tags.
//!
//! Not cryptographic: it only has to change when a feed changes. Stable across Rust
//! versions and processes, unlike `std`'s `DefaultHasher`, so an ETag survives a restart.

const C1: u64 = 0x87c3_7b91_1142_53d5;
const C2: u64 = 0x4cf5_ad43_2745_937f;

#[derive(Debug, Clone)]
pub(crate) struct Digest {
    h: u64,
    len: u64,
}

impl Digest {
    pub(crate) fn new() -> Digest {
        Digest {
            h: 0x9e37_79b9_7f4a_7c15,
            len: 0,
        }
    }

    pub(crate) fn update(&mut self, bytes: &[u8]) {
        // Each call is length-delimited so ("ab","c") and ("a","bc") differ.
        self.len = self.len.wrapping_add(bytes.len() as u64);
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.mix(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        let mut tail = [0u8; 8];
        tail[..rest.len()].copy_from_slice(rest);
        self.mix(
            u64::from_le_bytes(tail)
                ^ ((rest.len() as u64) << 56)
                ^ (bytes.len() as u64).rotate_left(17),
        );
    }

    fn mix(&mut self, word: u64) {
        let k = word.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
        self.h = (self.h ^ k)
            .rotate_left(27)
            .wrapping_mul(5)
            .wrapping_add(0x52dc_e729);
    }

    pub(crate) fn finish(&self) -> u64 {
        let mut h = self.h ^ self.len;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(parts: &[&[u8]]) -> u64 {
        let mut d = Digest::new();
        parts.iter().for_each(|p| d.update(p));
        d.finish()
    }

    #[test]
    fn any_change_changes_the_hash() {
        let base = hash(&[b"<situation id=\"1\" version=\"1\">"]);
        assert_eq!(base, hash(&[b"<situation id=\"1\" version=\"1\">"]));
        assert_ne!(base, hash(&[b"<situation id=\"1\" version=\"2\">"]));
        assert_ne!(hash(&[b"ab", b"c"]), hash(&[b"a", b"bc"]));
        assert_ne!(hash(&[b""]), hash(&[b"\0"]));
    }
}
