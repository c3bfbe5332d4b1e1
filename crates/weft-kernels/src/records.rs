//! Moving particle records between memory and lanes: the eight `[x, y, z, w]` records of one
//! particle slot of a batch become four vectors, and back.
//!
//! For each particle slot of a constraint, the records of lanes `k` and `k + 4` are loaded as one
//! 256-bit row (two 128-bit loads); four rows go through a 4×4 transpose inside each 128-bit half
//! (eight shuffles, none crossing halves) and come out as `x, y, z, w` with lanes in order.
//! Writing back is the same transpose, then one 128-bit store per written particle, guided by the
//! batch's write mask.

use weft_core::lanes::Lanes;
use wide::f32x8;

use crate::lane::{Real, SIMD_WIDTH, X2};

/// A record: `[x, y, z, w]` (m, m, m, 1/kg) or `[x, y, z, 0]`.
pub type Record = [f32; 4];

/// Transposes the 4×4 blocks inside each 128-bit half: rows `[p_k | q_k]` (`k < 4`) of
/// `[x, y, z, w]` records become `[x(p_0..p_3) | x(q_0..q_3)]`, `y…`, `z…`, `w…`. It is its own
/// inverse.
#[cfg(all(any(target_arch = "x86", target_arch = "x86_64"), target_feature = "avx"))]
#[inline(always)]
pub fn transpose4x4_halves(rows: [f32x8; 4]) -> [f32x8; 4] {
    use safe_arch::{m256, shuffle_m256, unpack_hi_m256, unpack_lo_m256};
    let r: [m256; 4] = rows.map(bytemuck::cast);
    let (t0, t1) = (unpack_lo_m256(r[0], r[1]), unpack_lo_m256(r[2], r[3]));
    let (t2, t3) = (unpack_hi_m256(r[0], r[1]), unpack_hi_m256(r[2], r[3]));
    [
        shuffle_m256::<0x44>(t0, t1),
        shuffle_m256::<0xEE>(t0, t1),
        shuffle_m256::<0x44>(t2, t3),
        shuffle_m256::<0xEE>(t2, t3),
    ]
    .map(bytemuck::cast)
}

/// Portable twin of the AVX [`transpose4x4_halves`], for builds without AVX.
#[cfg(not(all(any(target_arch = "x86", target_arch = "x86_64"), target_feature = "avx")))]
#[inline(always)]
pub fn transpose4x4_halves(rows: [f32x8; 4]) -> [f32x8; 4] {
    transpose4x4_halves_portable(rows)
}

/// [`transpose4x4_halves`] one element at a time (the reference for the AVX shuffles).
#[inline(always)]
pub fn transpose4x4_halves_portable(rows: [f32x8; 4]) -> [f32x8; 4] {
    let r = rows.map(f32x8::to_array);
    std::array::from_fn(|c| f32x8::new(std::array::from_fn(|l| r[l % 4][(l / 4) * 4 + c])))
}

/// Loads the eight records `ids` with `load` and transposes them into `[x, y, z, w]` lanes.
#[inline(always)]
pub fn gather8(load: impl Fn(u32) -> Record, ids: &[u32; SIMD_WIDTH]) -> [f32x8; 4] {
    let row = |k: usize| bytemuck::cast::<[Record; 2], f32x8>([load(ids[k]), load(ids[k + 4])]);
    transpose4x4_halves([row(0), row(1), row(2), row(3)])
}

/// Transposes `[x, y, z, w]` lanes and the `[dx, dy, dz]` lanes of the corrections that moved
/// them back into eight records each and stores, with `store(i, record, correction)`, those of
/// the lanes whose bit is set in `writes` (bit `k` for `ids[k]`). A correction comes out as
/// `[dx, dy, dz, 0]` (m).
#[inline(always)]
pub fn scatter8(
    mut store: impl FnMut(u32, Record, Record),
    ids: &[u32; SIMD_WIDTH],
    writes: u8,
    lanes: [f32x8; 4],
    deltas: [f32x8; 3],
) {
    let rows = transpose4x4_halves(lanes).map(bytemuck::cast::<f32x8, [Record; 2]>);
    let moves = transpose4x4_halves([deltas[0], deltas[1], deltas[2], f32x8::ZERO])
        .map(bytemuck::cast::<f32x8, [Record; 2]>);
    if writes == u8::MAX {
        // The common case: every lane active, no pinned particle.
        for k in 0..4 {
            store(ids[k], rows[k][0], moves[k][0]);
            store(ids[k + 4], rows[k][1], moves[k][1]);
        }
        return;
    }
    for k in 0..SIMD_WIDTH {
        if writes & (1 << k) != 0 {
            store(ids[k], rows[k % 4][k / 4], moves[k % 4][k / 4]);
        }
    }
}

/// The write bits of particle slot `slot` in a batch's write mask (bit `slot·8 + lane`).
#[inline(always)]
pub fn slot_writes(writes: u32, slot: usize) -> u8 {
    (writes >> (slot * SIMD_WIDTH)) as u8
}

/// A group of SIMD batches solved together: one [`f32x8`] batch, or two interleaved as an [`X2`].
/// It knows how to move its lanes in and out of memory; the maths is the same [`Real`] body.
pub trait BatchGroup: Real {
    /// Batches in the group.
    const BATCHES: usize;
    /// Loads lane data (`BATCHES` elements).
    fn load(lanes: &[Lanes<f32>]) -> Self;
    /// Stores lane data (`BATCHES` elements).
    fn store(self, lanes: &mut [Lanes<f32>]);
    /// Gathers the `[x, y, z, w]` records of one particle slot of every lane.
    fn gather(load: impl Fn(u32) -> Record, ids: &[Lanes<u32>]) -> [Self; 4];
    /// Scatters records of particle slot `slot` back, with the corrections `deltas` (m) that
    /// moved them, where the batches' write masks allow (see [`scatter8`]).
    fn scatter(
        store: impl FnMut(u32, Record, Record),
        ids: &[Lanes<u32>],
        writes: &[u32],
        slot: usize,
        records: [Self; 4],
        deltas: [Self; 3],
    );
    /// Active lanes (per the batches' active counts) not set in `valid`.
    fn degenerate(valid: Self::Mask, active: &[u8]) -> u32;
}

impl BatchGroup for f32x8 {
    const BATCHES: usize = 1;
    #[inline(always)]
    fn load(lanes: &[Lanes<f32>]) -> Self {
        f32x8::new(lanes[0].0)
    }
    #[inline(always)]
    fn store(self, lanes: &mut [Lanes<f32>]) {
        lanes[0].0 = self.to_array();
    }
    #[inline(always)]
    fn gather(load: impl Fn(u32) -> Record, ids: &[Lanes<u32>]) -> [Self; 4] {
        gather8(load, &ids[0].0)
    }
    #[inline(always)]
    fn scatter(
        store: impl FnMut(u32, Record, Record),
        ids: &[Lanes<u32>],
        writes: &[u32],
        slot: usize,
        records: [Self; 4],
        deltas: [Self; 3],
    ) {
        scatter8(store, &ids[0].0, slot_writes(writes[0], slot), records, deltas);
    }
    #[inline(always)]
    fn degenerate(valid: f32x8, active: &[u8]) -> u32 {
        (!valid.to_bitmask() & ((1u32 << active[0]) - 1)).count_ones()
    }
}

impl BatchGroup for X2 {
    const BATCHES: usize = 2;
    #[inline(always)]
    fn load(lanes: &[Lanes<f32>]) -> Self {
        X2(f32x8::new(lanes[0].0), f32x8::new(lanes[1].0))
    }
    #[inline(always)]
    fn store(self, lanes: &mut [Lanes<f32>]) {
        lanes[0].0 = self.0.to_array();
        lanes[1].0 = self.1.to_array();
    }
    #[inline(always)]
    fn gather(load: impl Fn(u32) -> Record, ids: &[Lanes<u32>]) -> [Self; 4] {
        let (p0, p1) = (gather8(&load, &ids[0].0), gather8(&load, &ids[1].0));
        std::array::from_fn(|i| X2(p0[i], p1[i]))
    }
    #[inline(always)]
    fn scatter(
        mut store: impl FnMut(u32, Record, Record),
        ids: &[Lanes<u32>],
        writes: &[u32],
        slot: usize,
        records: [Self; 4],
        deltas: [Self; 3],
    ) {
        let (r0, d0) = (records.map(|v| v.0), deltas.map(|v| v.0));
        scatter8(&mut store, &ids[0].0, slot_writes(writes[0], slot), r0, d0);
        let (r1, d1) = (records.map(|v| v.1), deltas.map(|v| v.1));
        scatter8(&mut store, &ids[1].0, slot_writes(writes[1], slot), r1, d1);
    }
    #[inline(always)]
    fn degenerate(valid: X2, active: &[u8]) -> u32 {
        f32x8::degenerate(valid.0, &active[..1]) + f32x8::degenerate(valid.1, &active[1..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gather_then_scatter_round_trips() {
        let records: Vec<Record> =
            (0..20).map(|i| [i as f32, 10.0 + i as f32, 20.0 + i as f32, 0.5]).collect();
        let ids = [1, 3, 5, 7, 9, 11, 13, 19];
        let lanes = gather8(|i| records[i as usize], &ids);
        assert_eq!(lanes[0].to_array(), [1.0, 3.0, 5.0, 7.0, 9.0, 11.0, 13.0, 19.0]);
        assert_eq!(lanes[1].to_array()[7], 29.0);
        assert_eq!(lanes[3].to_array(), [0.5; 8]);
        let (mut out, mut moves) = (vec![[0.0; 4]; 20], vec![[0.0; 4]; 20]);
        let deltas = [lanes[1], lanes[2], lanes[0]];
        scatter8(|i, r, d| (out[i as usize], moves[i as usize]) = (r, d), &ids, !(1 << 1), lanes, deltas);
        assert_eq!(out[19], records[19]);
        assert_eq!(out[1], records[1]);
        assert_eq!(out[3], [0.0; 4], "bit 1 (lane 1) not written");
        scatter8(|i, r, d| (out[i as usize], moves[i as usize]) = (r, d), &ids, u8::MAX, lanes, deltas);
        assert_eq!(out[3], records[3]);
        assert_eq!(moves[19], [29.0, 39.0, 19.0, 0.0], "the corrections come out as [dx, dy, dz, 0]");
        assert_eq!(slot_writes(0xABCD, 1), 0xAB);
    }

    #[test]
    fn transpose_matches_its_portable_twin_and_inverts() {
        let rows: [f32x8; 4] =
            std::array::from_fn(|r| f32x8::new(std::array::from_fn(|c| (r * 8 + c) as f32)));
        let t = transpose4x4_halves(rows);
        assert_eq!(t.map(f32x8::to_array), transpose4x4_halves_portable(rows).map(f32x8::to_array));
        assert_eq!(t[1].to_array(), [1.0, 9.0, 17.0, 25.0, 5.0, 13.0, 21.0, 29.0]);
        assert_eq!(transpose4x4_halves(t).map(f32x8::to_array), rows.map(f32x8::to_array));
    }
}
