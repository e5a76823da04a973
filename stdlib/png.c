/*
** png.c — the _gpy_image module: numpy arrays as PNG images, for
** IPython.display (stdlib/ipython_display.gpy) and the Jupyter kernel, which
** show a kernel's 2-D or RGB output as a picture. PNG because every
** notebook front end shows it; zlib (Debian's) does the deflate and CRC.
**
**   png(array) -> bytes     a 2-D array is grey, (h, w, 3) RGB, (h, w, 4) RGBA
**   b64encode(bytes) -> str the base64 text Jupyter's image/png carries
**
** Pixel values: uint8 as they are; bool as 0/255; float RGB(A) in [0, 1]
** times 255 (matplotlib's imshow convention); anything else scaled
** linearly from its min..max onto 0..255 (a constant image is black).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bytes.h"
#include "ndarray.h"
#include "stdlib_priv.h"

typedef struct Image {
    int64_t height, width;
    int channels; /* 1, 3 or 4 */
} Image;

static Image image_shape(VM *vm, NDArray *a) {
    Image im = {0, 0, 1};
    if (a->ndim == 3 && (a->shape[2] == 3 || a->shape[2] == 4)) im.channels = (int)a->shape[2];
    else if (a->ndim != 2)
        vm_raise_kind(vm, ValueError, "an image is a 2-D array or a 3-D array of 3 (RGB) or 4 (RGBA) channels, "
                                      "not an array of shape with %d dimension%s",
                      (int)a->ndim, a->ndim == 1 ? "" : "s");
    im.height = a->shape[0];
    im.width = a->shape[1];
    if (im.height < 1 || im.width < 1) vm_raise_kind(vm, ValueError, "an image needs at least one pixel");
    if (im.height > INT32_MAX || im.width > INT32_MAX) vm_raise_kind(vm, ValueError, "image too large for PNG");
    if (nd_is_complex(a->dtype)) vm_raise_kind(vm, TypeError, "a complex array is not an image");
    return im;
}

/* The 0..255 mapping of one array: out = (v - lo) * scale, clamped. */
typedef struct PixelMap {
    double lo, scale;
    bool as_is; /* uint8: the bytes themselves */
} PixelMap;

static PixelMap pixel_map(NDArray *a, Image im) {
    PixelMap m = {0, 1, a->dtype == ND_UINT8};
    if (m.as_is) return m;
    if (a->dtype == ND_BOOL) {
        m.scale = 255;
        return m;
    }
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0; i < a->size; i++) {
        double v = nd_get_double(a, i);
        if (isnan(v)) continue;
        if (v < lo) lo = v;
        if (v > hi) hi = v;
    }
    if (!(lo <= hi)) return (PixelMap){0, 0, false}; /* all NaN: black */
    if (nd_is_float(a->dtype) && im.channels > 1 && lo >= 0 && hi <= 1) {
        m.scale = 255;
        return m;
    }
    m.lo = lo;
    m.scale = hi > lo ? 255.0 / (hi - lo) : 0;
    return m;
}

static uint8_t pixel(NDArray *a, PixelMap m, int64_t flat) {
    if (m.as_is) {
        /* flat index in C order → byte through the strides (views, F order) */
        const char *p = a->data;
        for (int d = a->ndim - 1; d >= 0; d--) {
            p += (flat % a->shape[d]) * a->strides[d];
            flat /= a->shape[d];
        }
        return *(const uint8_t *)p;
    }
    double v = (nd_get_double(a, flat) - m.lo) * m.scale;
    if (!(v > 0)) return 0; /* NaN too */
    if (v >= 255) return 255;
    return (uint8_t)lrint(v);
}

static void put_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* Appends one chunk (length, type, data, CRC of type + data) at out. */
static size_t put_chunk(uint8_t *out, const char type[4], const uint8_t *data, uint32_t len) {
    put_be32(out, len);
    memcpy(out + 4, type, 4);
    if (len) memcpy(out + 8, data, len);
    uLong crc = crc32(0L, out + 4, 4 + len);
    put_be32(out + 8 + len, (uint32_t)crc);
    return 12 + (size_t)len;
}

static Value f_png(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_done(vm, "png", kwargs);
    if (argc != 1 || !nd_check(vm, argv[0])) vm_raise_kind(vm, TypeError, "png() takes one numpy array");
    NDArray *a = (NDArray *)AS_OBJ(argv[0]);
    Image im = image_shape(vm, a);
    PixelMap m = pixel_map(a, im);
    /* rows of filter byte 0 (None) then the pixels */
    size_t row = 1 + (size_t)im.width * (size_t)im.channels;
    size_t raw_len = row * (size_t)im.height;
    uLong zcap = compressBound((uLong)raw_len);
    uint8_t *raw = malloc(raw_len);
    uint8_t *z = malloc(zcap);
    uint8_t *png = malloc(8 + 25 + 12 + zcap + 12);
    if (!raw || !z || !png) {
        free(raw);
        free(z);
        free(png);
        vm_raise_kind(vm, MemoryError, "out of memory");
    }
    int64_t flat = 0;
    for (int64_t y = 0; y < im.height; y++) {
        uint8_t *r = raw + (size_t)y * row;
        r[0] = 0;
        for (size_t x = 1; x < row; x++) r[x] = pixel(a, m, flat++);
    }
    uLongf zlen = zcap;
    int rc = compress2(z, &zlen, raw, (uLong)raw_len, 6);
    free(raw);
    if (rc != Z_OK) {
        free(z);
        free(png);
        vm_raise_kind(vm, MemoryError, "out of memory");
    }
    static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    static const uint8_t colour_type[5] = {0, 0, 0, 2, 6}; /* by channels: grey, -, -, RGB, RGBA */
    uint8_t ihdr[13];
    put_be32(ihdr, (uint32_t)im.width);
    put_be32(ihdr + 4, (uint32_t)im.height);
    ihdr[8] = 8; /* bits per channel */
    ihdr[9] = colour_type[im.channels];
    ihdr[10] = ihdr[11] = ihdr[12] = 0; /* deflate, filter method 0, no interlace */
    size_t n = 0;
    memcpy(png, signature, 8);
    n += 8;
    n += put_chunk(png + n, "IHDR", ihdr, 13);
    n += put_chunk(png + n, "IDAT", z, (uint32_t)zlen);
    n += put_chunk(png + n, "IEND", NULL, 0);
    free(z);
    Bytes *b = bytes_new(vm, png, (int64_t)n);
    free(png);
    return OBJ_VAL(b);
}

static Value f_b64encode(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_done(vm, "b64encode", kwargs);
    if (argc != 1 || !IS_BYTES(vm, argv[0])) vm_raise_kind(vm, TypeError, "b64encode() takes one bytes object");
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    Bytes *b = AS_BYTES(argv[0]);
    const uint8_t *s = (const uint8_t *)b->data;
    int64_t len = b->len, out_len = (len + 2) / 3 * 4;
    char *out = malloc((size_t)out_len + 1);
    if (!out) vm_raise_kind(vm, MemoryError, "out of memory");
    int64_t o = 0;
    for (int64_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16;
        if (i + 1 < len) v |= (uint32_t)s[i + 1] << 8;
        if (i + 2 < len) v |= s[i + 2];
        out[o++] = alphabet[v >> 18 & 63];
        out[o++] = alphabet[v >> 12 & 63];
        out[o++] = i + 1 < len ? alphabet[v >> 6 & 63] : '=';
        out[o++] = i + 2 < len ? alphabet[v & 63] : '=';
    }
    Str *r = str_new(vm, out, (size_t)o);
    free(out);
    return STR_VAL(r);
}

static Module *build_image(VM *vm) {
    Module *m = module_new(vm, str_cstr(vm, "_gpy_image"));
    vm_push_root(vm, OBJ_VAL(m));
    module_add_function(vm, m, "png", f_png);
    module_add_function(vm, m, "b64encode", f_b64encode);
    vm_pop_roots(vm, 1);
    return m;
}

void image_register(VM *vm) { module_register_native(vm, "_gpy_image", build_image); }
