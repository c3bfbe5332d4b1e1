//! The XPBD time step, as DESIGN §2 states it, with every constraint kind in a fixed order:
//!
//! 1. forces: drag and lift of the triangles in the wind (from the state at the start of the step);
//! 2. predict: `v += h·(g + w·F)`, `x_prev = x`, `x += h·v` for free particles; pins that follow
//!    a path or a collider are moved to where it is at the end of the step (see
//!    `weft_core::follow`);
//! 3. the swept check of the free particles against the colliders (see [`crate::collide`]:
//!    one that crossed a body or passed its middle during the step goes back to where it
//!    entered);
//! 4. `λ := 0` for every constraint; self-collision contacts are searched at the predicted
//!    positions (see [`crate::self_collide`]), and so are the candidate triangles and sides of
//!    the mesh colliders (see [`crate::mesh_contact`]);
//! 5. `iterations` times: distance constraints (stretch and shear), bending, tethers, volume,
//!    then self-collision (a Jacobi projection of every contact); each batched kind colour by
//!    colour (see [`crate::schedule`]); then contacts with the colliders (see
//!    [`crate::collide`]), particle by particle, collider by collider in scene order, each
//!    placed at its pose at the end of the step, then contacts with the mesh colliders;
//! 6. collider friction from the pushes of the iterations (analytic, then mesh), then one more
//!    contact projection;
//! 7. `v = (x − x_prev)/h`, then global velocity damping.

use weft_core::Model;
use weft_core::lanes::Lanes;

use crate::KernelPath;
use crate::integrate::{ParticleArrays, predict_phase, velocity_phase};
use crate::mesh_contact::{ChunkContacts, MeshArrays};
use crate::records::Record;
use crate::shared::SharedSlice;
use crate::stats::{KindStats, StepStats};
use crate::team::{self, Team};
use crate::{aero, bending, collide, distance, mesh_contact, self_collide, tether, volume};

/// How to run a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StepOptions {
    /// SIMD lanes or the scalar instantiation of the same kernels.
    pub path: KernelPath,
    /// Evaluate `|C|` of every constraint after the last iteration (one read-only pass per kind).
    pub residual: bool,
}

/// Batches per work item of the `λ` reset.
const LAMBDA_CHUNK: usize = 1024;

/// `λ := 0` for a batched set, as a team phase.
fn reset_phase(team: &Team<'_>, lambdas: SharedSlice<'_, Lanes<f32>>, len: usize) {
    team.for_each(len.div_ceil(LAMBDA_CHUNK), |c| {
        let range = c * LAMBDA_CHUNK..((c + 1) * LAMBDA_CHUNK).min(len);
        // SAFETY: each chunk index is claimed by one thread in this phase and chunks are
        // disjoint; no other code touches the multipliers meanwhile.
        unsafe { lambdas.range_mut(range) }.fill(Lanes::splat(0.0));
    });
}

/// Advances `model` by one XPBD time step `h = 1/(fps·substeps)`, on the current rayon pool.
///
/// The whole step is one team of the pool's threads (see [`crate::team`]): forces, prediction,
/// the `λ` reset, every phase of every iteration and the velocity update, separated by
/// barriers. The result is the same, bit for bit, for any number of threads.
pub fn step(model: &mut Model, options: &StepOptions) -> StepStats {
    let dropped_at_build = model.report().dropped_pinned;
    let parts = model.parts_mut();
    let settings = parts.settings;
    let time_step = settings.time_step();
    let p = parts.particles;
    let len = p.positions.len();
    let (distance_lanes, distance_lambda) = parts.distance.lanes_and_lambda_mut();
    let (bending_lanes, bending_lambda) = parts.bending.lanes_and_lambda_mut();
    let (tether_lanes, tether_lambda) = parts.tethers.lanes_and_lambda_mut();
    for count in
        [distance_lanes.particle_count(), bending_lanes.particle_count(), tether_lanes.particle_count()]
    {
        assert!(count == len || count == 0, "the constraint sets belong to the model's particles");
    }
    let arrays = ParticleArrays {
        positions: SharedSlice::new(p.positions),
        prev: SharedSlice::new(p.prev_positions),
        velocities: SharedSlice::new(p.velocities),
        len,
    };
    let mut forces: Vec<Record> = if parts.aero.is_empty() { Vec::new() } else { vec![[0.0; 4]; len] };
    let forces_len = forces.len();
    let forces = SharedSlice::new(&mut forces);
    let lambdas = [
        SharedSlice::new(distance_lambda),
        SharedSlice::new(bending_lambda),
        SharedSlice::new(tether_lambda),
    ];
    let lambda_lens = [distance_lanes.batch_count(), bending_lanes.batch_count(), tether_lanes.batch_count()];
    let volumes = SharedSlice::new(&mut *parts.volumes);
    let (aero_model, time, path) = (parts.aero, *parts.time, options.path);
    let self_collision = parts.self_collision;
    let mut contact_scratch = self_collide::Scratch::new(self_collision);
    let contacts = contact_scratch.share();
    let placed: Vec<_> = parts.colliders.iter().map(|c| c.placed(time, time + time_step.h64)).collect();
    let mut depth = vec![0.0f32; len * placed.len()];
    let colliders = collide::ContactArrays {
        colliders: &placed,
        records: arrays.positions,
        depth: SharedSlice::new(&mut depth),
        len,
        path,
    };
    let (t1, nm) = (time + time_step.h64, parts.meshes.len());
    let mesh_poses: Vec<_> = parts.meshes.iter_mut().map(|m| m.prepare(time, t1)).collect();
    let meshes = &*parts.meshes;
    let pin_targets = parts.followers.targets(meshes, t1);
    let mut mesh_depth = vec![0.0f32; len * nm];
    let mut mesh_contacts =
        vec![ChunkContacts::default(); if nm == 0 { 0 } else { mesh_contact::chunks(len) }];
    let mesh_arrays = MeshArrays {
        meshes,
        poses: &mesh_poses,
        records: arrays.positions,
        depth: SharedSlice::new(&mut mesh_depth),
        contacts: SharedSlice::new(&mut mesh_contacts),
        len,
    };
    let any_collider = !placed.is_empty() || nm > 0;
    let mut deep = vec![0u64; if any_collider { collide::chunks(len) } else { 0 }];
    let deep_counts = SharedSlice::new(&mut deep);
    let per_thread: Vec<([u64; 5], u64, u64)> = team::run(|team| {
        if forces_len > 0 {
            // SAFETY: nothing writes positions or velocities during the force phases.
            let (x, v) = unsafe { (arrays.positions.as_slice(), arrays.velocities.as_slice()) };
            aero::force_phases(team, aero_model, x, v, forces, time);
        }
        // SAFETY: the force phases have ended for every thread (barrier); nothing writes the
        // forces again before the team ends.
        let f = unsafe { forces.as_slice() };
        predict_phase(team, &arrays, settings.gravity, f, &time_step);
        team.for_each(usize::from(!pin_targets.is_empty()), |_| {
            for &(i, x) in &pin_targets {
                let i = i as usize;
                // SAFETY: one work item in this phase, so one thread; the prediction phase has
                // ended (barrier) and nothing else touches the positions until the next one.
                let r = &mut unsafe { arrays.positions.range_mut(i..i + 1) }[0];
                *r = [x[0], x[1], x[2], r[3]];
            }
        });
        // SAFETY: the previous positions are written only by the prediction phase, which every
        // thread has finished (barrier); nothing writes them again before the team ends.
        let prev = unsafe { arrays.prev.as_slice() };
        let swept = if placed.is_empty() { 0 } else { colliders.sweep_phase(team, prev) };
        for (lambdas, &len) in lambdas.iter().zip(&lambda_lens) {
            reset_phase(team, *lambdas, len);
        }
        let records = arrays.positions;
        // SAFETY: nothing writes the positions during the search (it only reads them).
        self_collide::search_phases(team, self_collision, contacts, unsafe { records.as_slice() });
        if nm > 0 {
            mesh_arrays.search_phase(team, prev);
        }
        let mut degenerate = [0u64; 5];
        for iteration in 0..settings.iterations {
            degenerate[0] +=
                distance::solve_phases(team, &distance_lanes, lambdas[0], records, prev, &time_step, path);
            degenerate[1] +=
                bending::solve_phases(team, &bending_lanes, lambdas[1], records, prev, &time_step, path);
            degenerate[2] +=
                tether::solve_phases(team, &tether_lanes, lambdas[2], records, prev, &time_step, path);
            degenerate[3] += volume::solve_phases(team, volumes, records, &time_step, iteration == 0);
            degenerate[4] += self_collide::solve_phases(team, self_collision, contacts, records, prev);
            if !placed.is_empty() {
                colliders.contact_phase(team, true);
            }
            if nm > 0 {
                mesh_arrays.contact_phase(team, true);
            }
        }
        if !placed.is_empty() {
            colliders.friction_phase(team, prev);
        }
        if nm > 0 {
            mesh_arrays.friction_phase(team, prev);
        }
        if !placed.is_empty() {
            colliders.contact_phase(team, false);
        }
        if nm > 0 {
            mesh_arrays.contact_phase(team, false);
        }
        let mut mesh_deep = 0;
        if options.residual && any_collider {
            colliders.deep_phase(team, deep_counts);
            if nm > 0 {
                // Particles deep in a mesh and in no analytic collider, so none counts twice.
                let deep_elsewhere = |p| placed.iter().any(|c| collide::is_deep::<f32>(c, p, 1.0));
                mesh_deep = mesh_arrays.deep_phase(team, &deep_elsewhere);
            }
        }
        velocity_phase(team, &arrays, &time_step);
        (degenerate, swept, mesh_deep)
    });
    let degenerate = per_thread.iter().fold([0u64; 5], |a, (b, ..)| std::array::from_fn(|k| a[k] + b[k]));
    let swept = per_thread.iter().map(|(_, s, _)| s).sum();
    let mesh_deep: u64 = per_thread.iter().map(|(.., d)| d).sum();
    *parts.time += time_step.h64;
    let x = &*p.positions;
    let kind = |k: usize, residual: &dyn Fn() -> crate::Residual| KindStats {
        degenerate: degenerate[k],
        residual: options.residual.then(residual),
    };
    StepStats {
        distance: kind(0, &|| distance::residual(&distance_lanes, x)),
        bending: kind(1, &|| bending::residual(&bending_lanes, x)),
        tethers: kind(2, &|| tether::residual(&tether_lanes, x)),
        volume: kind(3, &|| volume::residual(parts.volumes, x)),
        self_collision: KindStats { degenerate: degenerate[4], residual: None },
        colliders: crate::ColliderStats {
            deep: options.residual.then(|| deep.iter().sum::<u64>() + mesh_deep),
            swept,
        },
        dropped_at_build,
    }
}
