//! The fixed camera of the previews: an orthographic view from the front, a little to the right
//! and above, framing a box (the whole bake's bounds) so that every frame is drawn the same.

/// An axis-aligned box, in m.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// The smallest corner.
    pub min: [f32; 3],
    /// The largest corner.
    pub max: [f32; 3],
}

impl Bounds {
    /// The empty box (grows with [`Bounds::add`]).
    pub const EMPTY: Bounds = Bounds { min: [f32::INFINITY; 3], max: [f32::NEG_INFINITY; 3] };

    /// Grows the box to hold `p` (non-finite points are ignored).
    pub fn add(&mut self, p: [f32; 3]) {
        if p.iter().all(|c| c.is_finite()) {
            self.min = std::array::from_fn(|i| self.min[i].min(p[i]));
            self.max = std::array::from_fn(|i| self.max[i].max(p[i]));
        }
    }

    /// Whether it holds no point.
    pub fn is_empty(&self) -> bool {
        (0..3).any(|i| self.min[i] > self.max[i])
    }

    /// The centre, in m.
    pub fn centre(&self) -> [f32; 3] {
        std::array::from_fn(|i| 0.5 * (self.min[i] + self.max[i]))
    }

    /// The length of the diagonal, in m.
    pub fn diagonal(&self) -> f32 {
        norm(sub(self.max, self.min))
    }

    /// The eight corners.
    pub fn corners(&self) -> [[f32; 3]; 8] {
        std::array::from_fn(|k| {
            std::array::from_fn(|i| if k >> i & 1 == 0 { self.min[i] } else { self.max[i] })
        })
    }
}

/// An orthographic camera and the image it fills.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Camera {
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
    /// Unit vector to the right of the image, in the world.
    pub right: [f32; 3],
    /// Unit vector up the image, in the world.
    pub up: [f32; 3],
    /// Unit vector from the scene towards the camera.
    pub to_eye: [f32; 3],
    /// The world point drawn at the image's centre, in m.
    pub centre: [f32; 3],
    /// Pixels per metre.
    pub scale: f32,
}

/// The part of the image's width and height left empty on each side.
const MARGIN: f32 = 0.06;

impl Camera {
    /// A camera looking at `bounds` from the front (+z of a y-up world), 30° to the right and
    /// about 35° above, with `up` (the direction opposite gravity; +y if zero) up the image,
    /// scaled so the whole box fits a `width × height` image.
    pub fn framing(bounds: &Bounds, up: [f32; 3], width: u32, height: u32) -> Camera {
        let world_up = if norm(up) > 0.0 { normalised(up) } else { [0.0, 1.0, 0.0] };
        // A horizontal "front" direction: +z, or +x where up is along z.
        let reference = if world_up[2].abs() < 0.9 { [0.0, 0.0, 1.0] } else { [1.0, 0.0, 0.0] };
        let front = normalised(sub(reference, scaled(world_up, dot(reference, world_up))));
        let side = cross(world_up, front);
        let to_eye = normalised(add(add(front, scaled(side, 0.58)), scaled(world_up, 0.8)));
        let forward = scaled(to_eye, -1.0);
        let right = normalised(cross(forward, world_up));
        let up = cross(right, forward);
        let bounds = if bounds.is_empty() { Bounds { min: [-1.0; 3], max: [1.0; 3] } } else { *bounds };
        let (mut lo, mut hi) = ([f32::INFINITY; 2], [f32::NEG_INFINITY; 2]);
        for c in bounds.corners() {
            let s = [dot(c, right), dot(c, up)];
            for i in 0..2 {
                lo[i] = lo[i].min(s[i]);
                hi[i] = hi[i].max(s[i]);
            }
        }
        let mid = [0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1])];
        // The world point on the box's centre plane drawn at the image's centre.
        let c = bounds.centre();
        let depth = dot(c, to_eye);
        let centre = add(add(scaled(right, mid[0]), scaled(up, mid[1])), scaled(to_eye, depth));
        let extent = [(hi[0] - lo[0]).max(1e-6), (hi[1] - lo[1]).max(1e-6)];
        let usable = 1.0 - 2.0 * MARGIN;
        let scale = (width as f32 * usable / extent[0]).min(height as f32 * usable / extent[1]);
        Camera { width, height, right, up, to_eye, centre, scale }
    }

    /// `[column, row, depth]` of world point `p`: pixels from the top left, and metres away from
    /// the camera's centre plane (larger is farther).
    pub fn project(&self, p: [f32; 3]) -> [f32; 3] {
        let d = sub(p, self.centre);
        [
            0.5 * self.width as f32 + dot(d, self.right) * self.scale,
            0.5 * self.height as f32 - dot(d, self.up) * self.scale,
            -dot(d, self.to_eye),
        ]
    }

    /// The same camera for an image `factor` times larger each way.
    pub fn enlarged(&self, factor: u32) -> Camera {
        Camera {
            width: self.width * factor,
            height: self.height * factor,
            scale: self.scale * factor as f32,
            ..*self
        }
    }
}

/// `a − b`.
pub(crate) fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    std::array::from_fn(|i| a[i] - b[i])
}

/// `a + b`.
pub(crate) fn add(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    std::array::from_fn(|i| a[i] + b[i])
}

/// `s·a`.
pub(crate) fn scaled(a: [f32; 3], s: f32) -> [f32; 3] {
    a.map(|c| c * s)
}

/// `a · b`.
pub(crate) fn dot(a: [f32; 3], b: [f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// `a × b`.
pub(crate) fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

/// `|a|`.
pub(crate) fn norm(a: [f32; 3]) -> f32 {
    dot(a, a).sqrt()
}

/// `a / |a|` (zero stays zero).
pub(crate) fn normalised(a: [f32; 3]) -> [f32; 3] {
    let n = norm(a);
    if n > 0.0 { scaled(a, 1.0 / n) } else { a }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frame_holds_the_box_and_the_axes_are_a_right_handed_basis() {
        let bounds = Bounds { min: [-1.0, 0.0, -0.5], max: [2.0, 1.5, 0.5] };
        let camera = Camera::framing(&bounds, [0.0, -9.81, 0.0].map(|c: f32| -c), 400, 300);
        assert!((dot(camera.right, camera.up)).abs() < 1e-6 && (dot(camera.up, camera.to_eye)).abs() < 1e-6);
        assert!(dot(cross(camera.right, camera.up), camera.to_eye) > 0.999);
        assert!(camera.to_eye[1] > 0.3 && camera.to_eye[2] > 0.3, "from the front and above");
        let (mut touches_x, mut touches_y) = (false, false);
        for c in bounds.corners() {
            let [x, y, _] = camera.project(c);
            assert!((0.0..=400.0).contains(&x) && (0.0..=300.0).contains(&y), "{c:?} → {x}, {y}");
            touches_x |= x < 400.0 * MARGIN + 0.5;
            touches_y |= y < 300.0 * MARGIN + 0.5;
        }
        assert!(touches_x || touches_y, "the box fills the frame along one axis");
        // A nearer point has a smaller depth.
        let c = bounds.centre();
        assert!(camera.project(add(c, camera.to_eye))[2] < camera.project(c)[2]);
    }
}
