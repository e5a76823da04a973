/*
** bytes.h — bytes, bytearray, memoryview, the buffer protocol and the
** codecs (str.encode / bytes.decode). Implemented by bytes.c,
** bytes_methods.c, bytes_format.c, memoryview.c and codecs.c.
**
** The buffer protocol: a type that exposes raw memory sets the
** Type.getbuffer slot (object.h). bytes and bytearray set it here; the
** numpy array (stdlib/nd_*.c) sets it from above, so vm/ never needs to
** know that type. A view is only valid until the next call back into the
** VM (a bytearray may be resized, an array freed): users fetch it again
** instead of keeping the pointer.
*/
#ifndef GPY_BYTES_H
#define GPY_BYTES_H

#include <string.h>

#include "vm.h"

#define BUFFER_MAX_NDIM 8

struct BufferView {
    uint8_t *buf;       /* first byte */
    int64_t len;        /* total bytes (product of shape * itemsize) */
    int64_t itemsize;
    const char *format; /* struct-module format: "B", "b", "d", "f", "q", ... */
    bool readonly;
    int ndim;           /* 0 for a scalar */
    int64_t shape[BUFFER_MAX_NDIM];
};

/* Immutable bytes: data inline, NUL-terminated (not counted in len). */
typedef struct Bytes {
    Obj obj;
    int64_t hash; /* -1: not computed yet */
    int64_t len;
    uint8_t data[];
} Bytes;

/* Mutable bytearray: data in a separate growable buffer (gc_malloc'd). */
typedef struct ByteArray {
    Obj obj;
    uint8_t *data;
    int64_t len, cap;
} ByteArray;

#define IS_BYTES(vm, v) (IS_OBJ(v) && AS_OBJ(v)->type == (vm)->t_bytes)
#define IS_BYTEARRAY(vm, v) (IS_OBJ(v) && AS_OBJ(v)->type == (vm)->t_bytearray)
#define AS_BYTES(v) ((Bytes *)AS_OBJ(v))
#define AS_BYTEARRAY(v) ((ByteArray *)AS_OBJ(v))

/* ---- bytes.c ---- */
void bytes_init(VM *vm);
Bytes *bytes_new(VM *vm, const void *data, int64_t len);
Bytes *bytes_alloc(VM *vm, int64_t len); /* uninitialized data, NUL set */
ByteArray *bytearray_new(VM *vm, const void *data, int64_t len);
void bytearray_resize(VM *vm, ByteArray *ba, int64_t len);
/* Fills *view from any object with a getbuffer slot; false (view
** untouched) if v does not support the buffer protocol. */
bool buffer_get(VM *vm, Value v, BufferView *view);
/* Like buffer_get, but requires a C-contiguous buffer and raises
** TypeError "a bytes-like object is required, not 'str'" otherwise. */
void buffer_need(VM *vm, Value v, BufferView *view);
/* A new bytes, or a bytearray when like is a bytearray (methods' results). */
Value bytes_like_new(VM *vm, Value like, const void *data, int64_t len);
/* repr of raw bytes as CPython: b'...' (prefix e.g. "b" or "bytearray(b"). */
Str *bytes_repr_raw(VM *vm, const uint8_t *p, int64_t n);
/* bytes(x) for an iterable of ints / a buffer / an int count. */
Value bytes_from_object(VM *vm, Value x, bool mutable_);

/* Position of needle in hay (memmem without _GNU_SOURCE), or NULL. */
static inline const uint8_t *bytes_find_raw(const uint8_t *hay, int64_t n, const uint8_t *needle, int64_t m) {
    if (m == 0) return hay;
    for (int64_t i = 0; i + m <= n; i++)
        if (hay[i] == needle[0] && memcmp(hay + i, needle, (size_t)m) == 0) return hay + i;
    return NULL;
}

/* ---- bytes_methods.c ---- */
void bytes_methods_init(VM *vm, Type *t);

/* ---- bytes_format.c ---- */
Value bytes_percent_format(VM *vm, Value self, Value args);

/* ---- memoryview.c ---- */
void memoryview_init(VM *vm);

/* ---- int_bytes.c: int.to_bytes / int.from_bytes ---- */
void int_bytes_init(VM *vm);

/* ---- codecs.c ---- */
/* str.encode(encoding, errors) -> bytes; encoding/errors NULL = defaults. */
Bytes *codec_encode(VM *vm, Str *s, const char *encoding, const char *errors);
/* Is encoding a name of utf-8? (LookupError when unknown) */
bool codec_is_utf8(VM *vm, const char *encoding);
/* bytes.decode(encoding, errors) -> str. */
Str *codec_decode(VM *vm, const uint8_t *p, int64_t n, const char *encoding, const char *errors);
/* str.encode / bytes.decode argument parsing (encoding=, errors=). */
Value codec_str_encode_method(VM *vm, int argc, Value *argv, Dict *kwargs);
Value codec_bytes_decode_method(VM *vm, int argc, Value *argv, Dict *kwargs);

#endif
