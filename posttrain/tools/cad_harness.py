"""The CAD harness: run one build123d script and export what it built, one STL per solid.

What it is: :func:`build` executes a model script (Python using build123d), takes the shape
it left in ``result`` (or ``part``; a BuildPart context, a Shape, or a list of shapes for an
assembly), and writes ``body_<i>.stl`` for each solid and ``model.step`` for the whole into
``out_dir``, returning a summary (solids, volume, bounding box, B-rep face count, kernel
validity). This file is stdlib-only at import time: the CAD tool sends its *source* into the
sandbox and runs it there with the sandbox's ``/usr/bin/python3`` (``python3 - < harness``
with the read-only package dir on ``sys.path``); the domains import it on the host to build
their hidden targets from their own reference scripts with the same export settings, so a
reference model and its target tessellate identically.

Guarantees: ``out_dir`` holds only the harness's own exports when it returns (it is emptied
before the script runs and again before exporting, so a file the script wrote there never
survives); a script that raises, exits or leaves no shape gives ``{"ok": False, "error":
...}`` with the traceback's tail, never an exception. Tessellation is deterministic for a
given shape (fixed tolerances relative to the part's size).

Does not: confine the script (the sandbox does), or judge the shape (``verifiers.cad`` does).
"""

import json
import os
import sys
import traceback

MARK = "@@CAD_SUMMARY@@ "
MAX_SOLIDS = 16


def _clear(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for name in os.listdir(out_dir):
        path = os.path.join(out_dir, name)
        if os.path.isfile(path) or os.path.islink(path):
            os.remove(path)


def _shape_of(found, bd):
    if isinstance(found, (list, tuple)):
        parts = [_shape_of(x, bd) for x in found]
        return bd.Compound(children=[p for p in parts if p is not None])
    if hasattr(found, "part") and not isinstance(found, bd.Shape):  # BuildPart context
        found = found.part
    return found if isinstance(found, bd.Shape) else None


def _export(shape, out_dir, bd):
    solids = list(shape.solids())
    if not solids:
        return {"ok": False, "error": "the shape has no solid (a sketch, face or wire is not a part)"}
    if len(solids) > MAX_SOLIDS:
        return {"ok": False, "error": f"{len(solids)} solids; at most {MAX_SOLIDS}"}
    bb = shape.bounding_box()
    diag = max(bb.diagonal, 1e-6)
    tol = max(1e-3, diag * 4e-4)  # relative: a 100 mm part meshes like a 10 mm one
    for i, solid in enumerate(solids):
        bd.export_stl(solid, os.path.join(out_dir, f"body_{i}.stl"), tolerance=tol,
                      angular_tolerance=0.2)
    bd.export_step(shape, os.path.join(out_dir, "model.step"))
    return {"ok": True, "solids": len(solids),
            "volume": round(sum(s.volume for s in solids), 4),
            "bbox_min": [round(v, 4) for v in (bb.min.X, bb.min.Y, bb.min.Z)],
            "bbox_max": [round(v, 4) for v in (bb.max.X, bb.max.Y, bb.max.Z)],
            "faces": len(shape.faces()), "valid": bool(_valid(shape))}


def _valid(shape):
    v = shape.is_valid  # a property in build123d 0.13, a method before
    return v() if callable(v) else v


def build(source, out_dir):
    """Run ``source`` and export its shape into ``out_dir``; the summary dict (see module doc)."""
    _clear(out_dir)
    scope = {"__name__": "__main__"}
    try:
        exec(compile(source, "model.py", "exec"), scope)
    except BaseException:  # SystemExit and KeyboardInterrupt too: the script's own failure
        _clear(out_dir)
        return {"ok": False, "error": traceback.format_exc(limit=-4)[-2000:]}
    _clear(out_dir)
    found = scope.get("result", scope.get("part"))
    if found is None:
        return {"ok": False, "error": "no model: assign the finished part to a variable named `result`"}
    try:
        import build123d as bd

        shape = _shape_of(found, bd)
        if shape is None:
            return {"ok": False, "error": f"`result` is a {type(found).__name__}, not a build123d shape"}
        return _export(shape, out_dir, bd)
    except Exception:
        _clear(out_dir)
        return {"ok": False, "error": traceback.format_exc(limit=-3)[-2000:]}


def main():
    """Sandbox entry: ``python3 - SITE OUT MODEL`` with this file on stdin."""
    site, out_dir, model = sys.argv[1:4]
    sys.path.insert(0, site)
    with open(model) as fh:
        source = fh.read()
    summary = build(source, out_dir)
    sys.stdout.flush()
    print("\n" + MARK + json.dumps(summary))
    return 0 if summary.get("ok") else 1


if __name__ == "__main__":
    sys.exit(main())
