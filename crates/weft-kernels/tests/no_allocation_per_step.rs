//! Promise: in steady state a [`Stepper`] allocates nothing per time step on a pool of one
//! thread, with every stage of the step at work (wind, bending, tethers, volume, self-collision,
//! an analytic collider, a still mesh collider, pins that follow a path). The buffers it needs
//! live in the stepper and keep their capacity from step to step.
//!
//! This test binary counts the allocations of its own global allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use weft_core::aero::AeroDesc;
use weft_core::collider::{ColliderDesc, ColliderShape, RigidKey};
use weft_core::follow::FollowDesc;
use weft_core::grid::{GridDesc, GridPlane};
use weft_core::kinds::bending::BendingDesc;
use weft_core::kinds::tether::TetherDesc;
use weft_core::limits::Limits;
use weft_core::mesh_collider::MeshColliderDesc;
use weft_core::self_collision::SelfCollisionDesc;
use weft_core::settings::WindKey;
use weft_core::units::{Compliance, Elasticity};
use weft_core::volume::VolumeDesc;
use weft_core::{ClothDesc, MassSpec, Model, ModelBuilder, SimSettings};
use weft_kernels::{StepOptions, Stepper};

/// The system allocator, counting the allocations made while `COUNTING` is set.
struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator; the counter is a side effect.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn compliance(c: f32) -> Elasticity {
    Elasticity::Compliance(Compliance::new(c).unwrap())
}

/// A 16 × 16 sheet falling onto a ball (analytic) beside an icosphere (a still mesh), in a wind,
/// with bending, tethers and self-collision; a closed icosphere cloth with a volume constraint;
/// and a strip whose two pins follow a keyed path.
fn model() -> Model {
    let settings = SimSettings {
        fps: 60.0,
        substeps: 4,
        iterations: 4,
        wind: vec![WindKey { time: 0.0, velocity: [3.0, 0.0, 1.0] }],
        ..SimSettings::default()
    };
    let mut b = ModelBuilder::new(settings, Limits::default()).unwrap();
    let grid =
        GridDesc { resolution: [16, 16], size: [1.0, 1.0], origin: [-0.5, 0.6, -0.5], plane: GridPlane::XZ };
    let mut sheet = grid.generate(&Limits::default()).unwrap().into_cloth(
        "sheet",
        MassSpec::Density(0.2),
        compliance(1e-6),
        compliance(1e-5),
    );
    sheet.pins = vec![grid.corners()[0]];
    sheet.kinds.bending = Some(BendingDesc { elasticity: compliance(1.0), damping: 0.01 });
    sheet.kinds.tethers = Some(TetherDesc { scale: 1.1, elasticity: Elasticity::RIGID });
    sheet.aero = Some(AeroDesc { drag: 1.0, lift: 0.5 });
    sheet.self_collision = Some(SelfCollisionDesc { thickness: 0.03, friction: 0.2 });
    b.add_cloth(&sheet).unwrap();

    let (vertices, triangles) = weft_core::shapes::icosphere(1, 0.1, [1.5, 0.5, 0.0]);
    let balloon = ClothDesc {
        name: "balloon".into(),
        positions: vertices,
        triangles,
        volume: Some(VolumeDesc { pressure: 1.2, elasticity: compliance(1e-3) }),
        ..ClothDesc::default()
    };
    b.add_cloth(&balloon).unwrap();

    let strip = ClothDesc {
        name: "strip".into(),
        positions: vec![[-1.0, 1.0, 0.0], [-0.9, 1.0, 0.0], [-1.0, 0.9, 0.0], [-0.9, 0.9, 0.0]],
        triangles: vec![[0, 2, 1], [1, 2, 3]],
        pins: vec![0, 1],
        follow: Some(FollowDesc::Keys(vec![
            RigidKey::at([0.0; 3]),
            RigidKey { time: 10.0, ..RigidKey::at([1.0, 0.0, 0.0]) },
        ])),
        ..ClothDesc::default()
    };
    b.add_cloth(&strip).unwrap();

    b.add_collider(&ColliderDesc {
        name: "ball".into(),
        shape: ColliderShape::Sphere { radius: 0.3 },
        ..ColliderDesc::default()
    })
    .unwrap();
    let (vertices, triangles) = weft_core::shapes::icosphere(2, 0.3, [0.6, 0.0, 0.0]);
    b.add_mesh_collider(&MeshColliderDesc {
        name: "rock".into(),
        triangles,
        frames: vec![vertices],
        thickness: 0.005,
        ..MeshColliderDesc::default()
    })
    .unwrap();
    b.build().unwrap()
}

#[test]
fn a_step_allocates_nothing_in_steady_state_on_one_thread() {
    let mut model = model();
    let r = model.report();
    assert!(
        r.sets.bending.constraints > 0
            && r.sets.tethers.constraints > 0
            && r.volumes == 1
            && r.aero_triangles > 0
    );
    assert!(r.colliders == 1 && r.mesh_colliders == 1 && r.following_pins == 2);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let allocations = pool.install(|| {
        let mut stepper = Stepper::new(StepOptions::default());
        for _ in 0..30 {
            stepper.step(&mut model);
        }
        COUNTING.store(true, Ordering::Relaxed);
        let mut contacts = 0;
        for _ in 0..60 {
            contacts += stepper.step(&mut model).degenerate();
        }
        COUNTING.store(false, Ordering::Relaxed);
        std::hint::black_box(contacts);
        ALLOCATIONS.load(Ordering::Relaxed)
    });
    assert!(model.particles().positions().iter().all(|r| r.iter().all(|c| c.is_finite())));
    assert_eq!(allocations, 0, "allocations in 60 steps after a warm-up");
}
