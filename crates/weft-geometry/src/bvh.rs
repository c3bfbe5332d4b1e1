//! A BVH over boxes that move: [`BoxTree`], over `parry3d`'s tree.
//!
//! A mesh collider's triangles sweep new boxes every time step but keep their neighbours, so the
//! tree is built once (binned) and afterwards refit to the new boxes, which keeps its shape and
//! costs one pass. A query's answer is filtered by the exact box test and sorted, so it is the
//! list that testing every box gives, whatever the tree looks like.

use parry3d::bounding_volume::Aabb as TreeBox;
use parry3d::math::Vector;
use parry3d::partitioning::{Bvh, BvhBuildStrategy, BvhWorkspace};

use crate::aabb::Aabb;

/// A BVH over boxes `0..n`, built at the first [`BoxTree::fit`] and refit at the later ones.
#[derive(Default)]
pub struct BoxTree {
    bvh: Option<Bvh>,
    workspace: BvhWorkspace,
    /// The boxes the tree was last fit to.
    boxes: Vec<Aabb>,
}

impl std::fmt::Debug for BoxTree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoxTree")
            .field("built", &self.bvh.is_some())
            .field("boxes", &self.boxes.len())
            .finish()
    }
}

fn tree_box(b: &Aabb) -> TreeBox {
    TreeBox::new(Vector::from_array(b.min), Vector::from_array(b.max))
}

impl BoxTree {
    /// Brings the tree up to `boxes` (m): built the first time, refit afterwards (unless the
    /// boxes have not changed). The box count must stay the same from the first fit on.
    pub fn fit(&mut self, boxes: &[Aabb]) {
        if self.bvh.is_some() && self.boxes == boxes {
            return;
        }
        self.boxes.clear();
        self.boxes.extend_from_slice(boxes);
        match &mut self.bvh {
            None => {
                let leaves: Vec<TreeBox> = boxes.iter().map(tree_box).collect();
                self.bvh = Some(Bvh::from_leaves(BvhBuildStrategy::Binned, &leaves));
            }
            Some(bvh) => {
                for (i, b) in boxes.iter().enumerate() {
                    bvh.insert_or_update_partially(tree_box(b), i as u32, 0.0);
                }
                bvh.refit(&mut self.workspace);
            }
        }
    }

    /// Whether the tree has been built ([`BoxTree::fit`]).
    pub fn is_built(&self) -> bool {
        self.bvh.is_some()
    }

    /// The boxes of `boxes` that meet `query` ([`Aabb::overlaps`]), ascending, appended to
    /// `out`. Uses the tree if it has been fit to `boxes`, otherwise tests every box; the answer
    /// is the same.
    pub fn query(&self, boxes: &[Aabb], query: &Aabb, out: &mut Vec<u32>) {
        let from = out.len();
        match &self.bvh {
            Some(bvh) => {
                out.extend(
                    bvh.intersect_aabb(&tree_box(query)).filter(|&t| boxes[t as usize].overlaps(query)),
                );
                out[from..].sort_unstable();
            }
            None => out.extend((0..boxes.len() as u32).filter(|&t| boxes[t as usize].overlaps(query))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_answers_are_every_box_tested() {
        // A strip of boxes, moving, queried all along it, before and after refits.
        let strip = |t: f32| -> Vec<Aabb> {
            (0..80)
                .map(|i| {
                    let x = i as f32 * 0.05;
                    let y = (x * 3.0 + t).sin();
                    Aabb::new([x, y - 0.02, 0.0], [x + 0.1, y + 0.02, 0.1])
                })
                .collect()
        };
        let mut tree = BoxTree::default();
        let plain = BoxTree::default();
        for step in 0..10 {
            let boxes = strip(step as f32 * 0.1);
            tree.fit(&boxes);
            assert!(tree.is_built());
            for q in 0..50 {
                let x = q as f32 * 0.09;
                let query = Aabb::new([x, -0.3, 0.0], [x + 0.05, 0.2, 0.05]);
                let (mut fast, mut slow) = (vec![7], vec![7]);
                tree.query(&boxes, &query, &mut fast);
                plain.query(&boxes, &query, &mut slow);
                assert_eq!(fast, slow, "step {step}, query {q}");
            }
        }
    }
}
