#!/usr/bin/env bash
# Arrays as PNG images (issue 17, "pictures"): IPython.display.Image(array)
# and _gpy_image.png. A gpy program writes PNGs of several dtypes, shapes and
# layouts; CPython decodes each (zlib, struct: chunk CRCs, IHDR, the rows)
# and compares the pixels with the mapping computed by numpy (the oracle):
# uint8 as is, bool 0/255, float RGB in [0, 1] times 255, anything else
# min..max onto 0..255, NaN black. Bad shapes raise ValueError/TypeError.
set -u
GPY=${GPY:-gpy}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/make.gpy" <<'GPY'
import sys
import numpy as np
from IPython.display import Image, display
import _gpy_image
import json
d = sys.argv[1]
rgb = (np.arange(5 * 7 * 3) * 37 % 256).astype(np.uint8).reshape(5, 7, 3)
arrays = {
    'u8_rgb': rgb,
    'u8_view': rgb[::2, 1::3],
    'u8_fortran': rgb[:, :, 0].T.copy().T,
    'bool': (np.arange(12).reshape(3, 4) % 3) == 0,
    'f_rgba01': (np.arange(2 * 3 * 4) / 23.0).reshape(2, 3, 4),
    'i16_grey': (np.arange(20, dtype=np.int16) * 13 - 100).reshape(4, 5),
    'f_nan': np.array([[1.0, float('nan')], [3.0, 5.0]]),
    'constant': np.full((2, 2), 7.0),
}
for name, a in arrays.items():
    with open(d + '/' + name + '.json', 'w') as f:
        json.dump([str(a.dtype), a.tolist()], f)
    with open(d + '/' + name + '.png', 'wb') as f:
        f.write(Image(a).data)
for bad in [np.zeros(5), np.zeros((2, 2, 2)), np.zeros((2, 2), dtype=np.complex128), np.zeros((0, 3))]:
    try:
        _gpy_image.png(bad)
    except (ValueError, TypeError) as e:
        print(type(e).__name__, e)
display(np.zeros((2, 2)))
GPY
cat >"$tmp/check.py" <<'PY'
import json, struct, sys, zlib, glob, os
import numpy as np
d = sys.argv[1]
fails = 0
for path in sorted(glob.glob(d + '/*.png')):
    name = os.path.basename(path)[:-4]
    dt, items = json.load(open(d + '/' + name + '.json'))
    a = np.array(items, dtype=dt)
    data = open(path, 'rb').read()
    assert data[:8] == b'\x89PNG\r\n\x1a\n', name
    i, idat, ihdr = 8, b'', None
    while i < len(data):
        n, = struct.unpack('>I', data[i:i + 4])
        kind, body = data[i + 4:i + 8], data[i + 8:i + 8 + n]
        assert zlib.crc32(kind + body) == struct.unpack('>I', data[i + 8 + n:i + 12 + n])[0], name + ' crc'
        if kind == b'IHDR': ihdr = struct.unpack('>IIBBBBB', body)
        if kind == b'IDAT': idat += body
        i += 12 + n
    w, h, depth, ctype = ihdr[:4]
    ch = {0: 1, 2: 3, 6: 4}[ctype]
    rows = zlib.decompress(idat)
    px = np.frombuffer(rows, np.uint8).reshape(h, 1 + w * ch)
    assert (px[:, 0] == 0).all()
    got = px[:, 1:].reshape(h, w, ch) if ch > 1 else px[:, 1:]
    if a.dtype == np.uint8: want = a
    elif a.dtype == np.bool_: want = a.astype(np.uint8) * 255
    else:
        f = a.astype(np.float64)
        lo, hi = np.nanmin(f), np.nanmax(f)
        if f.ndim == 3 and a.dtype.kind == 'f' and lo >= 0 and hi <= 1: g = f * 255
        else: g = (f - lo) * (255.0 / (hi - lo)) if hi > lo else f * 0
        want = np.clip(np.rint(np.nan_to_num(g, nan=0.0)), 0, 255).astype(np.uint8)
    if got.shape != want.shape or not (got == want).all():
        print('FAIL %s: pixels %s, want %s' % (name, got.tolist(), want.tolist())); fails += 1
    else:
        print('ok', name, w, h, ch)
sys.exit(1 if fails else 0)
PY
"$GPY" "$tmp/make.gpy" "$tmp" >"$tmp/out" 2>"$tmp/err" || { echo "FAIL: gpy exited $?"; cat "$tmp/err"; exit 1; }
want='ValueError an image is a 2-D array or a 3-D array of 3 (RGB) or 4 (RGBA) channels, not an array of shape with 1 dimension
ValueError an image is a 2-D array or a 3-D array of 3 (RGB) or 4 (RGBA) channels, not an array of shape with 3 dimensions
TypeError a complex array is not an image
ValueError an image needs at least one pixel
array([[0., 0.],
       [0., 0.]])'
[ "$(cat "$tmp/out")" = "$want" ] || { echo "FAIL: output"; diff <(echo "$want") "$tmp/out"; exit 1; }
python3 "$tmp/check.py" "$tmp"
