//! A model's exact bits fed to a hash, for a bake's fingerprint ([`Model::digest`]).
//!
//! A checkpoint may only continue the bake that wrote it, so a bake is identified by everything
//! its bytes depend on: the model as built, field by field. [`Digest`] feeds a value to a
//! [`Hasher`] bit for bit — floats by their bits, arrays and lists by their elements after their
//! length — so two models digest alike only if every field matches. The big arrays (particles,
//! constraint lanes, triangles) go in as machine words; small values whose text is short (the
//! settings, a collider's keys) go in as their `Debug` text ([`digest_debug`]), which names every
//! field too. Each type's digest destructures it completely, so a field added later fails to
//! compile until its digest says what becomes of it.
//!
//! [`Hash64`] is the hasher a fingerprint uses: a word at a time, specified here, so a fingerprint
//! does not change with the Rust release the way `std`'s default hasher may.
//!
//! [`Model::digest`]: crate::model::Model::digest

use std::fmt;
use std::hash::Hasher;
use std::ops::Range;

use crate::lanes::Lanes;

/// A value whose every bit is fed to a hasher.
pub trait Digest {
    /// Feeds `self` to `h`.
    fn digest<H: Hasher>(&self, h: &mut H);

    /// Feeds each of `items` to `h`, in order (a faster form for plain numbers, as `std`'s
    /// `Hash::hash_slice`). The length is the caller's to feed.
    fn digest_slice<H: Hasher>(items: &[Self], h: &mut H)
    where
        Self: Sized,
    {
        for item in items {
            item.digest(h);
        }
    }
}

/// Feeds the `Debug` text of `value` to `h`: for small values whose text names every field.
pub fn digest_debug<H: Hasher>(value: &impl fmt::Debug, h: &mut H) {
    use fmt::Write as _;
    let mut text = HashText(h);
    // Writing to a hasher cannot fail.
    let _ = write!(text, "{value:?}");
    h.write_u8(0xff);
}

/// A hasher seen as a text sink.
struct HashText<'a, H>(&'a mut H);

impl<H: Hasher> fmt::Write for HashText<'_, H> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0.write(s.as_bytes());
        Ok(())
    }
}

/// Packs 32-bit words two to a 64-bit one.
fn digest_words<H: Hasher>(words: impl ExactSizeIterator<Item = u32>, h: &mut H) {
    let mut words = words;
    while let Some(low) = words.next() {
        let high = words.next().unwrap_or(0);
        h.write_u64(u64::from(low) | u64::from(high) << 32);
    }
}

impl Digest for f32 {
    fn digest<H: Hasher>(&self, h: &mut H) {
        h.write_u32(self.to_bits());
    }

    fn digest_slice<H: Hasher>(items: &[Self], h: &mut H) {
        digest_words(items.iter().map(|v| v.to_bits()), h);
    }
}

impl Digest for f64 {
    fn digest<H: Hasher>(&self, h: &mut H) {
        h.write_u64(self.to_bits());
    }
}

impl Digest for u32 {
    fn digest<H: Hasher>(&self, h: &mut H) {
        h.write_u32(*self);
    }

    fn digest_slice<H: Hasher>(items: &[Self], h: &mut H) {
        digest_words(items.iter().copied(), h);
    }
}

impl Digest for u8 {
    fn digest<H: Hasher>(&self, h: &mut H) {
        h.write_u8(*self);
    }

    fn digest_slice<H: Hasher>(items: &[Self], h: &mut H) {
        h.write(items);
    }
}

impl Digest for usize {
    fn digest<H: Hasher>(&self, h: &mut H) {
        h.write_u64(*self as u64);
    }
}

impl Digest for bool {
    fn digest<H: Hasher>(&self, h: &mut H) {
        h.write_u8(u8::from(*self));
    }
}

impl Digest for str {
    fn digest<H: Hasher>(&self, h: &mut H) {
        self.len().digest(h);
        h.write(self.as_bytes());
    }
}

impl Digest for String {
    fn digest<H: Hasher>(&self, h: &mut H) {
        self.as_str().digest(h);
    }
}

impl<T: Digest, const N: usize> Digest for [T; N] {
    fn digest<H: Hasher>(&self, h: &mut H) {
        T::digest_slice(self, h);
    }

    fn digest_slice<H: Hasher>(items: &[Self], h: &mut H) {
        T::digest_slice(items.as_flattened(), h);
    }
}

impl<T: Digest> Digest for Lanes<T> {
    fn digest<H: Hasher>(&self, h: &mut H) {
        T::digest_slice(&self.0, h);
    }
}

impl<T: Digest> Digest for [T] {
    fn digest<H: Hasher>(&self, h: &mut H) {
        self.len().digest(h);
        T::digest_slice(self, h);
    }
}

impl<T: Digest> Digest for Vec<T> {
    fn digest<H: Hasher>(&self, h: &mut H) {
        self.as_slice().digest(h);
    }
}

impl<T: Digest> Digest for Option<T> {
    fn digest<H: Hasher>(&self, h: &mut H) {
        match self {
            None => h.write_u8(0),
            Some(value) => {
                h.write_u8(1);
                value.digest(h);
            }
        }
    }
}

impl<T: Digest> Digest for Range<T> {
    fn digest<H: Hasher>(&self, h: &mut H) {
        self.start.digest(h);
        self.end.digest(h);
    }
}

impl<T: Digest + ?Sized> Digest for &T {
    fn digest<H: Hasher>(&self, h: &mut H) {
        (**self).digest(h);
    }
}

/// A 64-bit hash fed a word at a time: each word is mixed into the state by a rotation, an
/// exclusive or and a multiplication by an odd constant (a bijection of the state, so a single
/// changed word always changes the hash), and the state is scrambled once at the end. Fast, not
/// for adversaries: it tells bakes apart, it does not authenticate them.
///
/// ```
/// use std::hash::Hasher;
/// use weft_core::digest::Hash64;
/// let hash = |words: &[u64]| {
///     let mut h = Hash64::default();
///     words.iter().for_each(|w| h.write_u64(*w));
///     h.finish()
/// };
/// assert_eq!(hash(&[1, 2]), hash(&[1, 2]));
/// assert_ne!(hash(&[1, 2]), hash(&[2, 1]));
/// assert_ne!(hash(&[1 << 63, 0, 1 << 63]), hash(&[0, 0, 0]));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Hash64(u64);

impl Default for Hash64 {
    fn default() -> Self {
        Hash64(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Hash64 {
    #[inline]
    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(26) ^ word).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    #[inline]
    fn write_u32(&mut self, word: u32) {
        self.write_u64(u64::from(word));
    }

    #[inline]
    fn write_u8(&mut self, byte: u8) {
        self.write_u64(u64::from(byte));
    }

    /// Eight bytes to a word; the last few, if any, in a word that also holds how many they are.
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let word: [u8; 8] = chunk.try_into().expect("chunks of eight");
            self.write_u64(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            word[7] = rest.len() as u8;
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    /// The state scrambled (every bit of it reaching every bit of the hash).
    fn finish(&self) -> u64 {
        let mut x = self.0;
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(value: &impl Digest) -> u64 {
        let mut h = Hash64::default();
        value.digest(&mut h);
        h.finish()
    }

    #[test]
    fn lists_are_told_apart_by_where_they_split() {
        let a = (vec![1u32], vec![2u32, 3]);
        let b = (vec![1u32, 2], vec![3u32]);
        let digest = |(x, y): &(Vec<u32>, Vec<u32>)| {
            let mut h = Hash64::default();
            x.digest(&mut h);
            y.digest(&mut h);
            h.finish()
        };
        assert_ne!(digest(&a), digest(&b));
    }

    #[test]
    fn floats_go_in_by_their_bits() {
        assert_ne!(hash(&vec![0.0f32]), hash(&vec![-0.0f32]));
        assert_ne!(hash(&vec![1.0f32, 2.0, 3.0]), hash(&vec![1.0f32, 2.0, 3.5]));
        assert_eq!(hash(&vec![[1.0f32, 2.0]; 3]), hash(&vec![[1.0f32, 2.0]; 3]));
        // An odd count packs its last word with a zero: still told apart from an explicit zero.
        assert_ne!(hash(&vec![1.0f32]), hash(&vec![1.0f32, 0.0]));
    }

    #[test]
    fn debug_text_and_bytes_count_every_byte() {
        let text = |s: &str| {
            let mut h = Hash64::default();
            digest_debug(&s, &mut h);
            h.finish()
        };
        assert_ne!(text("abcdefghi"), text("abcdefgh"));
        assert_ne!(text("a"), text("a\0"));
        assert_ne!(hash(&Some(0u32)), hash(&None::<u32>));
    }
}
