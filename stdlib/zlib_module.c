/*
** zlib_module.c — the zlib module on Debian's zlib (which gpy links for
** its PNG encoder and LLVM): compress/decompress, crc32/adler32, and the
** streaming compressobj/decompressobj objects, with CPython's arguments,
** constants and error messages ("Error -3 while decompressing data:
** incorrect header check"). gzip (stdlib/gzip.gpy) is built on it.
*/
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bytes.h"
#include "stdlib_priv.h"

typedef struct ZStream {
    Obj obj;
    z_stream zs;
    bool live;     /* deflateInit/inflateInit succeeded and End not called yet */
    bool compress; /* deflate (Compress) or inflate (Decompress) */
    bool eof;      /* Decompress: the end of the stream was reached */
    Value unused_data, unconsumed_tail; /* Decompress: bytes */
    Value zdict;   /* Decompress: the preset dictionary, or None */
} ZStream;

/* -------------------------------------------------------------- errors */

static _Noreturn void zlib_error(VM *vm, int err, const char *what, z_stream *zs) {
    Value mod = vm_import(vm, str_cstr(vm, "zlib"), true);
    Value cls = vm_getattr(vm, mod, str_cstr(vm, "error"));
    const char *msg = zs && zs->msg ? zs->msg : NULL;
    if (!msg) {
        switch (err) {
        case Z_BUF_ERROR: msg = "incomplete or truncated stream"; break;
        case Z_STREAM_ERROR: msg = "inconsistent stream state"; break;
        case Z_DATA_ERROR: msg = "invalid input data"; break;
        default: msg = "library error"; break;
        }
    }
    Str *s = str_printf(vm, "Error %d %s: %s", err, what, msg);
    Value arg = STR_VAL(s);
    vm_push_root(vm, arg);
    vm_throw(vm, vm_call(vm, cls, 1, &arg));
}

/* ------------------------------------------------------- output buffer */

typedef struct Out {
    uint8_t *data;
    size_t len, cap;
} Out;

static void out_room(VM *vm, Out *o, size_t more) {
    if (o->cap - o->len >= more) return;
    size_t cap = o->cap ? o->cap : 256;
    while (cap - o->len < more) {
        if (cap > SIZE_MAX / 2) vm_raise_kind(vm, MemoryError, "out of memory");
        cap *= 2;
    }
    uint8_t *p = realloc(o->data, cap);
    if (!p) {
        free(o->data);
        o->data = NULL;
        vm_raise_kind(vm, MemoryError, "out of memory");
    }
    o->data = p;
    o->cap = cap;
}

static Value out_bytes(VM *vm, Out *o) {
    Bytes *b = bytes_new(vm, o->data ? o->data : (uint8_t *)"", (int64_t)o->len);
    free(o->data);
    o->data = NULL;
    return OBJ_VAL(b);
}

/* Runs deflate (or inflate) over the pending input with flush mode,
** appending what it writes to o. max_out > 0 stops once o holds that many
** bytes (decompress's max_length). Returns the last status. */
static int pump(VM *vm, ZStream *z, Out *o, int flush, size_t max_out) {
    int rc;
    do {
        size_t room = 16384;
        if (max_out && max_out - o->len < room) room = max_out - o->len;
        if (room == 0) return Z_OK;
        out_room(vm, o, room);
        z->zs.next_out = o->data + o->len;
        z->zs.avail_out = (uInt)room;
        rc = z->compress ? deflate(&z->zs, flush) : inflate(&z->zs, flush);
        o->len += room - z->zs.avail_out;
        if (rc == Z_STREAM_END) return rc;
        if (rc != Z_OK && rc != Z_BUF_ERROR) return rc;
        if (rc == Z_BUF_ERROR && z->zs.avail_out != 0) return rc; /* no progress possible */
    } while (z->zs.avail_out == 0 || z->zs.avail_in > 0 || (z->compress && flush == Z_FINISH));
    return rc;
}

/* ------------------------------------------------------------ the types */

static void zstream_mark(VM *vm, Obj *o) {
    ZStream *z = (ZStream *)o;
    gc_mark_value(vm, z->unused_data);
    gc_mark_value(vm, z->unconsumed_tail);
    gc_mark_value(vm, z->zdict);
}

static void zstream_end(ZStream *z) {
    if (!z->live) return;
    if (z->compress) deflateEnd(&z->zs);
    else inflateEnd(&z->zs);
    z->live = false;
}

static void zstream_finalize(VM *vm, Obj *o) {
    (void)vm;
    zstream_end((ZStream *)o);
}

static Type *compress_type(VM *vm);
static Type *decompress_type(VM *vm);

static ZStream *self_stream(VM *vm, const char *fname, int argc, Value *argv, bool compress) {
    Type *t = compress ? compress_type(vm) : decompress_type(vm);
    if (argc < 1 || !IS_OBJ(argv[0]) || AS_OBJ(argv[0])->type != t)
        vm_raise_kind(vm, TypeError, "descriptor '%s' needs a zlib.%s object", fname, compress ? "Compress" : "Decompress");
    return (ZStream *)AS_OBJ(argv[0]);
}

static void set_input(ZStream *z, const BufferView *v) {
    z->zs.next_in = (Bytef *)v->buf;
    z->zs.avail_in = (uInt)v->len;
}

static void check_size(VM *vm, const BufferView *v) {
    if (v->len > (int64_t)UINT_MAX) vm_raise_kind(vm, OverflowError, "Size does not fit in an unsigned int");
}

/* ------------------------------------------------------------ functions */

static int64_t opt_int(VM *vm, const char *fname, Value v, int64_t dflt) {
    return IS_EMPTY(v) ? dflt : arg_int(vm, fname, v);
}

/* zlib.compress(data, /, level=-1, wbits=15) */
static Value f_compress(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value level = kw_take(vm, kwargs, "level"), wbits = kw_take(vm, kwargs, "wbits");
    kw_done(vm, "compress", kwargs);
    arg_between(vm, "compress", argc, 1, 3);
    if (argc > 1) level = argv[1];
    if (argc > 2) wbits = argv[2];
    BufferView v;
    buffer_need(vm, argv[0], &v);
    check_size(vm, &v);
    ZStream z = {.compress = true};
    int rc = deflateInit2(&z.zs, (int)opt_int(vm, "compress", level, Z_DEFAULT_COMPRESSION), Z_DEFLATED,
                          (int)opt_int(vm, "compress", wbits, MAX_WBITS), 8, Z_DEFAULT_STRATEGY);
    if (rc == Z_STREAM_ERROR) zlib_error(vm, rc, "while compressing data", NULL);
    if (rc != Z_OK) zlib_error(vm, rc, "while compressing data", &z.zs);
    z.live = true;
    set_input(&z, &v);
    Out o = {0};
    rc = pump(vm, &z, &o, Z_FINISH, 0);
    zstream_end(&z);
    if (rc != Z_STREAM_END) {
        free(o.data);
        zlib_error(vm, rc, "while compressing data", NULL);
    }
    return out_bytes(vm, &o);
}

/* zlib.decompress(data, /, wbits=15, bufsize=16384) */
static Value f_decompress(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value wbits = kw_take(vm, kwargs, "wbits"), bufsize = kw_take(vm, kwargs, "bufsize");
    kw_done(vm, "decompress", kwargs);
    arg_between(vm, "decompress", argc, 1, 3);
    if (argc > 1) wbits = argv[1];
    if (argc > 2) bufsize = argv[2];
    if (opt_int(vm, "decompress", bufsize, 16384) < 0) vm_raise_kind(vm, ValueError, "bufsize must be non-negative");
    BufferView v;
    buffer_need(vm, argv[0], &v);
    check_size(vm, &v);
    ZStream z = {.compress = false};
    int rc = inflateInit2(&z.zs, (int)opt_int(vm, "decompress", wbits, MAX_WBITS));
    if (rc != Z_OK) zlib_error(vm, rc, "while preparing to decompress data", &z.zs);
    z.live = true;
    set_input(&z, &v);
    Out o = {0};
    rc = pump(vm, &z, &o, Z_NO_FLUSH, 0);
    if (rc != Z_STREAM_END) {
        free(o.data);
        char msg[128];
        snprintf(msg, sizeof msg, "%s", z.zs.msg ? z.zs.msg : "");
        zstream_end(&z);
        if (rc == Z_OK || rc == Z_BUF_ERROR) zlib_error(vm, Z_BUF_ERROR, "while decompressing data", NULL);
        z_stream tmp = {.msg = msg[0] ? msg : NULL};
        zlib_error(vm, rc, "while decompressing data", &tmp);
    }
    zstream_end(&z);
    return out_bytes(vm, &o);
}

static Value checksum(VM *vm, const char *fname, int argc, Value *argv, Dict *kwargs, bool crc) {
    kw_none(vm, fname, kwargs);
    arg_between(vm, fname, argc, 1, 2);
    BufferView v;
    buffer_need(vm, argv[0], &v);
    uLong value = crc ? 0 : 1;
    if (argc > 1) {
        Value m = vm_binop(vm, BINOP_AND, argv[1], INT_VAL(0xffffffff));
        value = (uLong)arg_int(vm, fname, m);
    }
    const uint8_t *p = v.buf;
    int64_t left = v.len;
    do { /* zlib takes at most UINT_MAX bytes a call */
        uInt n = left > (int64_t)UINT_MAX ? UINT_MAX : (uInt)left;
        value = crc ? crc32(value, p, n) : adler32(value, p, n);
        p += n;
        left -= n;
    } while (left > 0);
    return INT_VAL((int64_t)(value & 0xffffffffu));
}

static Value f_crc32(VM *vm, int argc, Value *argv, Dict *kwargs) { return checksum(vm, "crc32", argc, argv, kwargs, true); }
static Value f_adler32(VM *vm, int argc, Value *argv, Dict *kwargs) { return checksum(vm, "adler32", argc, argv, kwargs, false); }

/* zlib.compressobj(level=-1, method=DEFLATED, wbits=15, memLevel=8, strategy=0, zdict=None) */
static Value f_compressobj(VM *vm, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"level", "method", "wbits", "memLevel", "strategy", "zdict"};
    Value a[6];
    if (argc > 6) vm_raise_kind(vm, TypeError, "compressobj() takes at most 6 arguments (%d given)", argc);
    for (int i = 0; i < 6; i++) {
        a[i] = i < argc ? argv[i] : EMPTY_VAL;
        Value k = kw_take(vm, kwargs, names[i]);
        if (!IS_EMPTY(k)) a[i] = k;
    }
    kw_done(vm, "compressobj", kwargs);
    ZStream *z = gc_alloc_obj(vm, compress_type(vm), sizeof(ZStream));
    z->compress = true;
    z->unused_data = z->unconsumed_tail = z->zdict = NONE_VAL;
    Value zv = OBJ_VAL(z);
    vm_push_root(vm, zv);
    int rc = deflateInit2(&z->zs, (int)opt_int(vm, "compressobj", a[0], Z_DEFAULT_COMPRESSION),
                          (int)opt_int(vm, "compressobj", a[1], Z_DEFLATED), (int)opt_int(vm, "compressobj", a[2], MAX_WBITS),
                          (int)opt_int(vm, "compressobj", a[3], 8), (int)opt_int(vm, "compressobj", a[4], Z_DEFAULT_STRATEGY));
    if (rc == Z_STREAM_ERROR) vm_raise_kind(vm, ValueError, "Invalid initialization option");
    if (rc != Z_OK) zlib_error(vm, rc, "while creating compression object", &z->zs);
    z->live = true;
    if (!IS_EMPTY(a[5]) && !IS_NONE(a[5])) {
        BufferView d;
        buffer_need(vm, a[5], &d);
        check_size(vm, &d);
        if (deflateSetDictionary(&z->zs, d.buf, (uInt)d.len) != Z_OK) vm_raise_kind(vm, ValueError, "Invalid dictionary");
    }
    vm_pop_roots(vm, 1);
    return zv;
}

/* zlib.decompressobj(wbits=15, zdict=b'') */
static Value f_decompressobj(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value wbits = kw_take(vm, kwargs, "wbits"), zdict = kw_take(vm, kwargs, "zdict");
    kw_done(vm, "decompressobj", kwargs);
    arg_between(vm, "decompressobj", argc, 0, 2);
    if (argc > 0) wbits = argv[0];
    if (argc > 1) zdict = argv[1];
    ZStream *z = gc_alloc_obj(vm, decompress_type(vm), sizeof(ZStream));
    z->zdict = NONE_VAL;
    z->unused_data = z->unconsumed_tail = OBJ_VAL(bytes_new(vm, "", 0));
    Value zv = OBJ_VAL(z);
    vm_push_root(vm, zv);
    int rc = inflateInit2(&z->zs, (int)opt_int(vm, "decompressobj", wbits, MAX_WBITS));
    if (rc == Z_STREAM_ERROR) vm_raise_kind(vm, ValueError, "Invalid initialization option");
    if (rc != Z_OK) zlib_error(vm, rc, "while creating decompression object", &z->zs);
    z->live = true;
    if (!IS_EMPTY(zdict) && !IS_NONE(zdict)) {
        BufferView d;
        buffer_need(vm, zdict, &d);
        /* a raw stream takes its dictionary now; a zlib stream when it asks */
        if (d.len > 0 && opt_int(vm, "decompressobj", wbits, MAX_WBITS) < 0) inflateSetDictionary(&z->zs, d.buf, (uInt)d.len);
        z->zdict = OBJ_VAL(bytes_new(vm, d.buf, d.len));
    }
    vm_pop_roots(vm, 1);
    return zv;
}

/* ------------------------------------------------------------- methods */

static Value m_compress(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "compress", kwargs);
    ZStream *z = self_stream(vm, "compress", argc, argv, true);
    arg_count(vm, "compress", argc - 1, 1, 1);
    if (!z->live) zlib_error(vm, Z_STREAM_ERROR, "while compressing data", NULL);
    BufferView v;
    buffer_need(vm, argv[1], &v);
    check_size(vm, &v);
    set_input(z, &v);
    Out o = {0};
    int rc = pump(vm, z, &o, Z_NO_FLUSH, 0);
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
        free(o.data);
        zlib_error(vm, rc, "while compressing data", &z->zs);
    }
    return out_bytes(vm, &o);
}

static Value m_compress_flush(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "flush", kwargs);
    ZStream *z = self_stream(vm, "flush", argc, argv, true);
    arg_count(vm, "flush", argc - 1, 0, 1);
    int mode = argc > 1 ? (int)arg_int(vm, "flush", argv[1]) : Z_FINISH;
    if (mode == Z_NO_FLUSH) return OBJ_VAL(bytes_new(vm, "", 0));
    if (!z->live) zlib_error(vm, Z_STREAM_ERROR, "while flushing", NULL);
    z->zs.next_in = NULL;
    z->zs.avail_in = 0;
    Out o = {0};
    int rc = pump(vm, z, &o, mode, 0);
    if (mode == Z_FINISH) {
        if (rc != Z_STREAM_END) {
            free(o.data);
            zlib_error(vm, rc, "while flushing", &z->zs);
        }
        zstream_end(z);
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        free(o.data);
        zlib_error(vm, rc, "while flushing", &z->zs);
    }
    return out_bytes(vm, &o);
}

/* Keeps what inflate did not take: after the end of stream as
** unused_data (appended), short of max_length as unconsumed_tail. */
static void keep_rest(VM *vm, ZStream *z, int rc) {
    Value rest = OBJ_VAL(bytes_new(vm, z->zs.next_in ? z->zs.next_in : (Bytef *)"", (int64_t)z->zs.avail_in));
    if (rc == Z_STREAM_END) {
        z->eof = true;
        Bytes *old = AS_BYTES(z->unused_data), *add = AS_BYTES(rest);
        if (old->len == 0) {
            z->unused_data = rest;
        } else {
            vm_push_root(vm, rest);
            Bytes *b = bytes_alloc(vm, old->len + add->len);
            memcpy(b->data, old->data, (size_t)old->len);
            memcpy(b->data + old->len, add->data, (size_t)add->len);
            z->unused_data = OBJ_VAL(b);
            vm_pop_roots(vm, 1);
        }
        z->unconsumed_tail = OBJ_VAL(bytes_new(vm, "", 0));
    } else {
        z->unconsumed_tail = rest;
    }
}

static Value m_decompress(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value maxv = kw_take(vm, kwargs, "max_length");
    kw_done(vm, "decompress", kwargs);
    ZStream *z = self_stream(vm, "decompress", argc, argv, false);
    arg_count(vm, "decompress", argc - 1, 1, 2);
    if (argc > 2) maxv = argv[2];
    int64_t max_length = opt_int(vm, "decompress", maxv, 0);
    if (max_length < 0) vm_raise_kind(vm, ValueError, "max_length must be non-negative");
    BufferView v;
    buffer_need(vm, argv[1], &v);
    check_size(vm, &v);
    Out o = {0};
    if (z->eof) { /* past the end: everything is unused data */
        z->zs.next_in = (Bytef *)v.buf;
        z->zs.avail_in = (uInt)v.len;
        keep_rest(vm, z, Z_STREAM_END);
        return out_bytes(vm, &o);
    }
    set_input(z, &v);
    int rc = pump(vm, z, &o, Z_SYNC_FLUSH, (size_t)max_length);
    if (rc == Z_NEED_DICT && !IS_NONE(z->zdict)) { /* a zlib stream asks for the dictionary given */
        Bytes *d = AS_BYTES(z->zdict);
        rc = inflateSetDictionary(&z->zs, d->data, (uInt)d->len);
        if (rc == Z_OK) rc = pump(vm, z, &o, Z_SYNC_FLUSH, (size_t)max_length);
    }
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
        free(o.data);
        zlib_error(vm, rc, "while decompressing data", &z->zs);
    }
    keep_rest(vm, z, rc);
    return out_bytes(vm, &o);
}

static Value m_decompress_flush(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "flush", kwargs);
    ZStream *z = self_stream(vm, "flush", argc, argv, false);
    arg_count(vm, "flush", argc - 1, 0, 1);
    if (argc > 1 && arg_int(vm, "flush", argv[1]) <= 0) vm_raise_kind(vm, ValueError, "length must be greater than zero");
    Out o = {0};
    if (z->eof || !z->live) return out_bytes(vm, &o);
    BufferView v = {.buf = AS_BYTES(z->unconsumed_tail)->data, .len = AS_BYTES(z->unconsumed_tail)->len};
    Value tail = z->unconsumed_tail;
    vm_push_root(vm, tail);
    set_input(z, &v);
    int rc = pump(vm, z, &o, Z_FINISH, 0);
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
        free(o.data);
        zlib_error(vm, rc, "while flushing", &z->zs);
    }
    keep_rest(vm, z, rc);
    vm_pop_roots(vm, 1);
    return out_bytes(vm, &o);
}

static Value attr_of(VM *vm, int argc, Value *argv, const char *name) {
    ZStream *z = self_stream(vm, name, argc, argv, false);
    if (strcmp(name, "eof") == 0) return BOOL_VAL(z->eof);
    return strcmp(name, "unused_data") == 0 ? z->unused_data : z->unconsumed_tail;
}
static Value m_eof(VM *vm, int argc, Value *argv, Dict *kw) { (void)kw; return attr_of(vm, argc, argv, "eof"); }
static Value m_unused(VM *vm, int argc, Value *argv, Dict *kw) { (void)kw; return attr_of(vm, argc, argv, "unused_data"); }
static Value m_tail(VM *vm, int argc, Value *argv, Dict *kw) { (void)kw; return attr_of(vm, argc, argv, "unconsumed_tail"); }

static void add_property(VM *vm, Type *t, const char *name, NativeFn fn) {
    Value getter = native_new(vm, name, fn, NONE_VAL);
    vm_push_root(vm, getter);
    Value prop = vm_call(vm, OBJ_VAL(vm->t_property), 1, &getter);
    dict_set_cstr(vm, t->dict, name, prop);
    vm_pop_roots(vm, 1);
}

/* The VM's Compress or Decompress type (made with the module). */
static Type *find_type(VM *vm, const char *name) {
    for (int32_t i = 0; i < vm->nbuiltin_types; i++)
        if (vm->builtin_types[i]->finalize == zstream_finalize && strcmp(vm->builtin_types[i]->name->chars, name) == 0)
            return vm->builtin_types[i];
    return NULL;
}

static Type *compress_type(VM *vm) {
    Type *t = find_type(vm, "Compress");
    if (t) return t;
    t = type_new_builtin(vm, "Compress", vm->t_object, 0);
    dict_set_cstr(vm, t->dict, "__module__", STR_VAL(str_cstr(vm, "zlib")));
    t->mark = zstream_mark;
    t->finalize = zstream_finalize;
    type_add_method(vm, t, "compress", m_compress);
    type_add_method(vm, t, "flush", m_compress_flush);
    class_allow_subclass(vm, t, false);
    return t;
}

static Type *decompress_type(VM *vm) {
    Type *t = find_type(vm, "Decompress");
    if (t) return t;
    t = type_new_builtin(vm, "Decompress", vm->t_object, 0);
    dict_set_cstr(vm, t->dict, "__module__", STR_VAL(str_cstr(vm, "zlib")));
    t->mark = zstream_mark;
    t->finalize = zstream_finalize;
    type_add_method(vm, t, "decompress", m_decompress);
    type_add_method(vm, t, "flush", m_decompress_flush);
    add_property(vm, t, "eof", m_eof);
    add_property(vm, t, "unused_data", m_unused);
    add_property(vm, t, "unconsumed_tail", m_tail);
    class_allow_subclass(vm, t, false);
    return t;
}

static Module *build_zlib(VM *vm) {
    Module *m = module_new(vm, str_cstr(vm, "zlib"));
    vm_push_root(vm, OBJ_VAL(m));
    module_add_function(vm, m, "compress", f_compress);
    module_add_function(vm, m, "decompress", f_decompress);
    module_add_function(vm, m, "crc32", f_crc32);
    module_add_function(vm, m, "adler32", f_adler32);
    module_add_function(vm, m, "compressobj", f_compressobj);
    module_add_function(vm, m, "decompressobj", f_decompressobj);
    Type *err = type_new_builtin(vm, "error", vm->exc[EXC_Exception], TYPE_EXCEPTION | TYPE_BASETYPE);
    dict_set_cstr(vm, err->dict, "__module__", STR_VAL(str_cstr(vm, "zlib")));
    dict_set_cstr(vm, m->dict, "error", OBJ_VAL(err));
    dict_set_cstr(vm, m->dict, "_Compress", OBJ_VAL(compress_type(vm)));
    dict_set_cstr(vm, m->dict, "_Decompress", OBJ_VAL(decompress_type(vm)));
    static const struct {
        const char *name;
        int64_t value;
    } consts[] = {
        {"MAX_WBITS", MAX_WBITS}, {"DEFLATED", Z_DEFLATED}, {"DEF_MEM_LEVEL", 8}, {"DEF_BUF_SIZE", 16384},
        {"Z_NO_COMPRESSION", Z_NO_COMPRESSION}, {"Z_BEST_SPEED", Z_BEST_SPEED},
        {"Z_BEST_COMPRESSION", Z_BEST_COMPRESSION}, {"Z_DEFAULT_COMPRESSION", Z_DEFAULT_COMPRESSION},
        {"Z_FILTERED", Z_FILTERED}, {"Z_HUFFMAN_ONLY", Z_HUFFMAN_ONLY}, {"Z_RLE", Z_RLE}, {"Z_FIXED", Z_FIXED},
        {"Z_DEFAULT_STRATEGY", Z_DEFAULT_STRATEGY}, {"Z_NO_FLUSH", Z_NO_FLUSH}, {"Z_PARTIAL_FLUSH", Z_PARTIAL_FLUSH},
        {"Z_SYNC_FLUSH", Z_SYNC_FLUSH}, {"Z_FULL_FLUSH", Z_FULL_FLUSH}, {"Z_FINISH", Z_FINISH}, {"Z_BLOCK", Z_BLOCK},
        {"Z_TREES", Z_TREES},
    };
    for (size_t i = 0; i < sizeof consts / sizeof consts[0]; i++) dict_set_cstr(vm, m->dict, consts[i].name, INT_VAL(consts[i].value));
    dict_set_cstr(vm, m->dict, "ZLIB_VERSION", STR_VAL(str_cstr(vm, ZLIB_VERSION)));
    dict_set_cstr(vm, m->dict, "ZLIB_RUNTIME_VERSION", STR_VAL(str_cstr(vm, zlibVersion())));
    vm_pop_roots(vm, 1);
    return m;
}

void zlib_register(VM *vm) { module_register_native(vm, "zlib", build_zlib); }
