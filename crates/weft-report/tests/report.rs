//! Promise: `weft_report::report` draws a real bake. A 12 × 12 grid falls on a sphere (PC2 and
//! OBJ caches); the report's plots have lines, its previews show the cloth where the camera puts
//! it, in the colour of the side the camera sees, the sphere in grey, and frames that differ;
//! several folders make one plot with a line each and a sheet of the variants; bad input is one
//! line naming the file.

use std::path::{Path, PathBuf};

use weft_bake::{BakeOptions, bake};
use weft_core::limits::Limits;
use weft_io::CacheFormat;
use weft_report::camera::{Bounds, Camera};
use weft_report::image::Image;
use weft_report::preview::PREVIEW_SIZE;
use weft_report::{ReportOptions, report};

/// The test scene: a 1 m grid 0.6 m above a 0.3 m sphere, `frames` frames at 30 fps.
fn scene(stretch_compliance: f64, frames: u32) -> String {
    format!(
        r#"
[simulation]
fps = 30.0
frames = {frames}
substeps = 6

[[cloth]]
name = "sheet"
grid = {{ resolution = [12, 12], size = [1.0, 1.0], origin = [-0.5, 1.0, -0.5], plane = "xz" }}
density = 0.2
stretch_compliance = {stretch_compliance:e}
bending_compliance = 1.0

[[collider]]
name = "ball"
shape = "sphere"
radius = 0.3
position = [0.0, 0.4, 0.0]
thickness = 0.01
"#
    )
}

/// Bakes `scene` into `dir/name` (PC2 and OBJ caches) and writes its `summary.toml` (the keys the
/// report reads, as `weft bake` writes them); returns the bake folder.
fn bake_into(dir: &Path, name: &str, text: &str, variant: Option<&str>) -> PathBuf {
    let out = dir.join(name);
    let scene_path = dir.join(format!("{name}.toml"));
    std::fs::write(&scene_path, text).unwrap();
    let scene = weft_io::load_scene(&scene_path, &Limits::default()).unwrap();
    let options =
        BakeOptions { formats: vec![CacheFormat::Pc2, CacheFormat::ObjSequence], ..BakeOptions::new(&out) };
    bake(&scene, &options).unwrap();
    let frames = std::fs::read_to_string(out.join("stats.csv")).unwrap().lines().count() - 1;
    let mut summary = format!(
        "scene = {:?}\nframes = {}\nfps = 30.0\nms_per_frame = {}\n",
        scene_path.canonicalize().unwrap(),
        frames,
        1.0 + text.len() as f64 / 1000.0
    );
    if let Some(v) = variant {
        summary.push_str(&format!("variant = \"{v}\"\n"));
    }
    std::fs::write(out.join("summary.toml"), summary).unwrap();
    out
}

/// Reads a PNG.
fn read_png(path: &Path) -> Image {
    let file = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let mut reader = png::Decoder::new(file).read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb, "{}", path.display());
    pixels.truncate(info.buffer_size());
    Image { width: info.width, height: info.height, pixels }
}

/// Every pixel `(x, y, rgb)` of an image.
fn pixels(image: &Image) -> impl Iterator<Item = (u32, u32, [u8; 3])> + '_ {
    (0..image.height).flat_map(move |y| (0..image.width).map(move |x| (x, y, image.pixel(x, y))))
}

/// The cloth's front colour (orange, shaded).
fn is_front(p: [u8; 3]) -> bool {
    i32::from(p[0]) > i32::from(p[1]) + 40 && p[1] > p[2]
}

/// The cloth's back colour (blue, shaded).
fn is_back(p: [u8; 3]) -> bool {
    i32::from(p[2]) > i32::from(p[0]) + 60
}

/// A collider's neutral grey (the background is bluish, the label band white).
fn is_grey(p: [u8; 3]) -> bool {
    p[0].abs_diff(p[1]) <= 2 && p[1].abs_diff(p[2]) <= 2 && p[0] < 200
}

fn file(report: &weft_report::Report, name: &str) -> PathBuf {
    report
        .files
        .iter()
        .find(|f| f.file_name().unwrap() == name)
        .unwrap_or_else(|| panic!("no {name}"))
        .clone()
}

#[test]
fn a_bake_on_a_sphere_is_drawn() {
    assert_eq!(weft_report::stats_csv::STATS_FILE, weft_bake::stats::STATS_FILE);
    let tmp = tempfile::tempdir().unwrap();
    let dir = bake_into(tmp.path(), "drop", &scene(1e-6, 20), None);
    let done = report(&ReportOptions { dirs: vec![dir.clone()], ..Default::default() }).unwrap();
    assert_eq!(done.out_dir, dir.join("report"));
    let names: Vec<String> =
        done.files.iter().map(|f| f.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(
        names,
        [
            "strain.png",
            "constraint_error.png",
            "intersections.png",
            "substeps.png",
            "frame_0000.png",
            "frame_0005.png",
            "frame_0010.png",
            "frame_0015.png",
            "frame_0020.png",
            "sheet.png"
        ]
    );
    assert!(done.notes.is_empty(), "{:?}", done.notes);
    assert!(done.files.iter().all(|f| f.parent() == Some(done.out_dir.as_path())));
    let leftovers: Vec<_> = std::fs::read_dir(&done.out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| !n.to_string_lossy().ends_with(".png"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");

    // Plots: white pages with the first line colour on them.
    for name in ["strain.png", "constraint_error.png", "intersections.png", "substeps.png"] {
        let image = read_png(&file(&done, name));
        assert_eq!(image.width, weft_report::plots::PLOT_WIDTH, "{name}");
        assert_eq!(image.height % weft_report::plots::PANEL_HEIGHT, 0, "{name}");
        let ink = pixels(&image).filter(|p| p.2 != [255, 255, 255]).count();
        let line = pixels(&image).filter(|p| p.2 == [31, 119, 180]).count();
        assert!(ink > 5_000 && line > 40, "{name}: {ink} non-white pixels, {line} of the line");
    }

    // Previews: the camera the report uses frames every sample of the cloth.
    let cache = weft_io::read_pc2(&dir.join("sheet.pc2")).unwrap();
    let mut bounds = Bounds::EMPTY;
    cache.positions.iter().for_each(|&p| bounds.add(p));
    let camera = Camera::framing(&bounds, [0.0, 9.81, 0.0], PREVIEW_SIZE.0, PREVIEW_SIZE.1);
    let first = read_png(&file(&done, "frame_0000.png"));
    let last = read_png(&file(&done, "frame_0020.png"));
    assert_eq!((first.width, first.height), PREVIEW_SIZE);
    assert_eq!((last.width, last.height), PREVIEW_SIZE);
    let changed = pixels(&first).zip(pixels(&last)).filter(|(a, b)| a.2 != b.2).count();
    assert!(changed > 10_000, "frames 0 and 20 differ in only {changed} pixels");

    // Frame 0: the flat grid, all of one side, inside its projected box.
    let projected: Vec<[f32; 3]> = cache.sample(0).iter().map(|&p| camera.project(p)).collect();
    let lo = |i: usize| projected.iter().map(|p| p[i]).fold(f32::MAX, f32::min) - 2.0;
    let hi = |i: usize| projected.iter().map(|p| p[i]).fold(f32::MIN, f32::max) + 2.0;
    let inside =
        |x: u32, y: u32| (lo(0)..=hi(0)).contains(&(x as f32)) && (lo(1)..=hi(1)).contains(&(y as f32));
    // Which side of the grid faces the camera: its first triangle's normal, from the cache.
    let model = weft_io::load_scene(&tmp.path().join("drop.toml"), &Limits::default())
        .unwrap()
        .build_model()
        .unwrap();
    let t = model.cloths()[0].triangles[0].map(|i| cache.sample(0)[i as usize]);
    let (u, v) = ([0, 1, 2].map(|i| t[1][i] - t[0][i]), [0, 1, 2].map(|i| t[2][i] - t[0][i]));
    let normal = [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]];
    let faces_camera = (0..3).map(|i| normal[i] * camera.to_eye[i]).sum::<f32>() > 0.0;
    type Colour = fn([u8; 3]) -> bool;
    let (seen, hidden): (Colour, Colour) =
        if faces_camera { (is_front, is_back) } else { (is_back, is_front) };
    let cloth: Vec<(u32, u32)> = pixels(&first).filter(|p| seen(p.2)).map(|p| (p.0, p.1)).collect();
    let box_area = (hi(0) - lo(0)) * (hi(1) - lo(1));
    assert!(cloth.len() as f32 > 0.3 * box_area, "{} cloth pixels in a box of {box_area}", cloth.len());
    let outside = cloth.iter().filter(|&&(x, y)| !inside(x, y)).count();
    assert!(outside < 50, "{outside} cloth pixels outside the cloth's projected box");
    let wrong_side = pixels(&first).filter(|p| hidden(p.2)).count();
    assert!(
        wrong_side < cloth.len() / 50,
        "{wrong_side} pixels of the hidden side, {} of the seen",
        cloth.len()
    );
    // The sphere: grey, below the cloth at frame 0, partly covered by it.
    let grey = pixels(&first).filter(|p| is_grey(p.2)).count();
    assert!(grey > 2_000, "{grey} grey pixels");
    // Frame 20: the cloth has fallen onto the sphere; both sides may show, the sphere still does.
    let cloth_last = pixels(&last).filter(|p| is_front(p.2) || is_back(p.2)).count();
    assert!(cloth_last > 5_000 && pixels(&last).filter(|p| is_grey(p.2)).count() > 500, "{cloth_last}");

    // Without the PC2 the OBJ sequence gives the same picture.
    let sheet = read_png(&file(&done, "sheet.png"));
    assert!(sheet.width > PREVIEW_SIZE.0 && sheet.height > PREVIEW_SIZE.1 / 2);
    std::fs::remove_file(dir.join("sheet.pc2")).unwrap();
    let obj = report(&ReportOptions {
        dirs: vec![dir.clone()],
        frames: vec![20],
        out: Some(tmp.path().join("from_obj")),
        scene: None,
    })
    .unwrap();
    let from_obj = read_png(&file(&obj, "frame_0020.png"));
    let same = pixels(&from_obj).zip(pixels(&last)).filter(|(a, b)| a.2 == b.2).count();
    assert!(same as f64 > 0.97 * (last.width * last.height) as f64, "{same} pixels agree");
}

#[test]
fn several_folders_share_the_plots_and_a_sheet() {
    let tmp = tempfile::tempdir().unwrap();
    let stiff = bake_into(tmp.path(), "w000", &scene(1e-8, 10), Some("stiff"));
    let soft = bake_into(tmp.path(), "w001", &scene(1e-3, 10), None);
    let done = report(&ReportOptions { dirs: vec![stiff, soft], ..Default::default() }).unwrap();
    assert_eq!(done.out_dir, tmp.path().canonicalize().unwrap().join("report"));
    let strain = read_png(&file(&done, "strain.png"));
    for colour in [[31, 119, 180], [214, 39, 40]] {
        let n = pixels(&strain).filter(|p| p.2 == colour).count();
        assert!(n > 40, "{n} pixels of {colour:?}");
    }
    let bars = read_png(&file(&done, "ms_per_frame.png"));
    assert!(pixels(&bars).filter(|p| p.2 == [214, 39, 40]).count() > 1_000);
    let sheet = read_png(&file(&done, "variants.png"));
    assert!(sheet.width >= PREVIEW_SIZE.0 && sheet.height < PREVIEW_SIZE.1, "two tiles side by side");
    let orange_or_blue = pixels(&sheet).filter(|p| is_front(p.2) || is_back(p.2)).count();
    assert!(orange_or_blue > 5_000);
}

#[test]
fn bad_input_is_one_line_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let error = |dirs: Vec<PathBuf>, frames: Vec<u32>| {
        let e = report(&ReportOptions { dirs, frames, ..Default::default() }).unwrap_err().to_string();
        assert!(!e.contains('\n'), "{e}");
        e
    };
    let missing = tmp.path().join("missing");
    assert_eq!(error(vec![missing.clone()], vec![]), format!("{}: no such folder", missing.display()));
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let e = error(vec![empty.clone()], vec![]);
    assert!(e.starts_with(&format!("{}: no such file", empty.join("stats.csv").display())), "{e}");
    let dir = bake_into(tmp.path(), "small", &scene(1e-6, 3), None);
    let e = error(vec![dir.clone()], vec![0, 4]);
    assert_eq!(e, format!("frame 4 is out of range: {} has frames 0 to 3", dir.display()));
    let stats = dir.join("stats.csv");
    let mut text = std::fs::read_to_string(&stats).unwrap();
    // A row as wide as the header, with a word where `substeps` is.
    let columns = text.lines().next().unwrap().split(',').count();
    let mut row = vec![""; columns];
    (row[0], row[1], row[2]) = ("4", "0.1333", "six");
    text.push_str(&(row.join(",") + "\n"));
    std::fs::write(&stats, text).unwrap();
    let e = error(vec![dir.clone()], vec![]);
    assert_eq!(e, format!("{}:5: `substeps` is `six`, not a number", stats.display()));
    assert!(!dir.join("report").exists(), "nothing written for bad input");
}
