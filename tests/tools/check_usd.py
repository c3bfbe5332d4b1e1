"""Opens a weft USD cache with the USD library (usd-core, `pxr`) and checks it as a DCC would
read it. Run by tests/suite/import_tools.rs; prints one line per failed check and exits 1, or prints
`weft-usd-ok` and exits 0.

    python3 check_usd.py FILE.usda --samples N --points N --fps F [--face-size K]
        [--facing X,Y,Z] [--uv-max U,V]
"""
import argparse
import math
import sys

from pxr import Usd, UsdGeom, UsdUtils


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--samples", type=int, required=True)
    ap.add_argument("--points", type=int, required=True)
    ap.add_argument("--fps", type=float, required=True)
    ap.add_argument("--face-size", type=int, help="every face has this many corners")
    ap.add_argument("--facing", help="X,Y,Z: every normal of sample 0 points this way")
    ap.add_argument("--uv-max", help="U,V: the largest u and v of the UVs")
    args = ap.parse_args()
    failures = []

    def check(ok, what):
        if not ok:
            failures.append(what)

    stage = Usd.Stage.Open(args.path)
    check(stage is not None, "the stage does not open")
    if stage is None:
        report(failures)
    check(stage.GetTimeCodesPerSecond() == args.fps, f"timeCodesPerSecond {stage.GetTimeCodesPerSecond()}")
    check(stage.GetFramesPerSecond() == args.fps, f"framesPerSecond {stage.GetFramesPerSecond()}")
    check(stage.GetStartTimeCode() == 0, f"startTimeCode {stage.GetStartTimeCode()}")
    check(stage.GetEndTimeCode() == args.samples - 1, f"endTimeCode {stage.GetEndTimeCode()}")
    check(UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.y, "upAxis is not Y")
    check(UsdGeom.GetStageMetersPerUnit(stage) == 1.0, "metersPerUnit is not 1")

    meshes = [UsdGeom.Mesh(p) for p in stage.Traverse() if p.IsA(UsdGeom.Mesh)]
    check(len(meshes) == 1, f"{len(meshes)} meshes, expected 1")
    if len(meshes) != 1:
        report(failures)
    mesh = meshes[0]
    times = list(range(args.samples))

    points = mesh.GetPointsAttr()
    check(points.GetTimeSamples() == times, f"points time samples {points.GetTimeSamples()}")
    for t in times:
        check(len(points.Get(t)) == args.points, f"sample {t}: {len(points.Get(t))} points")

    counts = list(mesh.GetFaceVertexCountsAttr().Get())
    indices = list(mesh.GetFaceVertexIndicesAttr().Get())
    check(sum(counts) == len(indices), "faceVertexCounts do not add up to faceVertexIndices")
    check(all(0 <= i < args.points for i in indices), "a face index outside the points")
    if args.face_size is not None:
        check(all(c == args.face_size for c in counts), f"face sizes {sorted(set(counts))}, expected all {args.face_size}")

    normals = mesh.GetNormalsAttr()
    check(mesh.GetNormalsInterpolation() == UsdGeom.Tokens.vertex, f"normals interpolation {mesh.GetNormalsInterpolation()}")
    check(normals.GetTimeSamples() == times, f"normals time samples {normals.GetTimeSamples()}")
    for t in times:
        ns = normals.Get(t)
        check(len(ns) == args.points, f"sample {t}: {len(ns)} normals")
        bad = [i for i, n in enumerate(ns) if not abs(math.sqrt(n[0] ** 2 + n[1] ** 2 + n[2] ** 2) - 1.0) < 1e-5]
        check(not bad, f"sample {t}: normals {bad[:5]} are not unit length")
        # Each face's own normal (Newell) and the normals at its corners point the same way
        # where the face is flat enough to have one.
        ps = points.Get(t)
        start = 0
        against = 0
        for c in counts:
            face = indices[start : start + c]
            start += c
            fn = [0.0, 0.0, 0.0]
            for k in range(c):
                p, q = ps[face[k]], ps[face[(k + 1) % c]]
                fn[0] += (p[1] - q[1]) * (p[2] + q[2])
                fn[1] += (p[2] - q[2]) * (p[0] + q[0])
                fn[2] += (p[0] - q[0]) * (p[1] + q[1])
            if sum(x * x for x in fn) > 0:
                against += sum(1 for i in face if sum(ns[i][k] * fn[k] for k in range(3)) < 0)
        check(against * 20 <= len(indices), f"sample {t}: {against} of {len(indices)} corner normals point against their face")
    if args.facing:
        want = [float(x) for x in args.facing.split(",")]
        off = [i for i, n in enumerate(normals.Get(0)) if sum(n[k] * want[k] for k in range(3)) < 0.999]
        check(not off, f"sample 0: normals {off[:5]} do not face {want}")

    st = UsdGeom.PrimvarsAPI(mesh).GetPrimvar("st")
    if args.uv_max:
        check(st.IsDefined(), "no primvars:st")
        if st.IsDefined():
            check(st.GetInterpolation() == UsdGeom.Tokens.faceVarying, f"st interpolation {st.GetInterpolation()}")
            check(st.IsIndexed(), "st is not indexed")
            flat = st.ComputeFlattened()
            check(len(flat) == len(indices), f"{len(flat)} UVs for {len(indices)} face corners")
            want = [float(x) for x in args.uv_max.split(",")]
            got = [max(uv[0] for uv in flat), max(uv[1] for uv in flat)]
            check(all(abs(got[k] - want[k]) < 1e-6 for k in range(2)), f"largest UV {got}, expected {want}")
            check(min(min(uv) for uv in flat) >= 0.0, "a UV below 0")
    else:
        check(not st.IsDefined(), "UVs where none were given")

    # The stage validates: every validator of USD's validation framework (what `usdchecker`
    # runs) finds nothing; older releases without it have the compliance checker.
    try:
        from pxr import UsdValidation
    except ImportError:
        UsdValidation = None
    if UsdValidation is not None:
        registry = UsdValidation.ValidationRegistry()
        context = UsdValidation.ValidationContext(registry.GetOrLoadAllValidators())
        for e in context.Validate(stage):
            failures.append(f"validation: {e.GetName()}: {e.GetMessage()}")
    else:
        checker = UsdUtils.ComplianceChecker()
        checker.CheckCompliance(args.path)
        for e in checker.GetErrors() + checker.GetFailedChecks():
            failures.append(f"usdchecker: {e}")
    report(failures)


def report(failures):
    for f in failures:
        print(f"weft-usd-failed: {f}")
    if failures:
        sys.exit(1)
    print("weft-usd-ok")
    sys.exit(0)


if __name__ == "__main__":
    main()
