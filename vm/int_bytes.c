/*
** int_bytes.c — int.to_bytes and int.from_bytes (CPython 3.11 defaults:
** length=1, byteorder='big'). Values that fit in 64 bits are handled
** here; bigger ones go through GMP (bigint_to_bytes/bigint_from_bytes).
*/
#include <string.h>

#include "bigint.h"
#include "bytes.h"
#include "vm.h"

/* byteorder argument: true for 'little'. */
static bool little_arg(VM *vm, Value v) {
    if (IS_EMPTY(v)) return false;
    if (!IS_STR(vm, v))
        vm_raise_kind(vm, TypeError, "to_bytes() argument 'byteorder' must be str, not %s", vm_type_name(vm, v));
    if (strcmp(AS_STR(v)->chars, "little") == 0) return true;
    if (strcmp(AS_STR(v)->chars, "big") == 0) return false;
    vm_raise_kind(vm, ValueError, "byteorder must be either 'little' or 'big'");
}

/* Positional/keyword arguments by name (the last ones keyword-only). */
static void int_args(VM *vm, const char *fname, int argc, Value *argv, Dict *kwargs, const char *const *names,
                     int npos, int n, Value *out) {
    if (argc - 1 > npos)
        vm_raise_kind(vm, TypeError, "%s() takes at most %d positional arguments (%d given)", fname, npos, argc - 1);
    for (int i = 0; i < n; i++) out[i] = i < argc - 1 ? argv[i + 1] : EMPTY_VAL;
    if (!kwargs) return;
    int64_t pos = 0;
    Value k, v;
    while (dict_next(kwargs, &pos, &k, &v)) {
        const char *kn = IS_STR(vm, k) ? AS_STR(k)->chars : "?";
        int j = 0;
        while (j < n && strcmp(names[j], kn) != 0) j++;
        if (j == n) vm_raise_kind(vm, TypeError, "%s() got an unexpected keyword argument '%s'", fname, kn);
        if (!IS_EMPTY(out[j]))
            vm_raise_kind(vm, TypeError, "argument for %s() given by name ('%s') and position (%d)", fname, kn, j + 1);
        out[j] = v;
    }
}

static Value m_to_bytes(VM *vm, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"length", "byteorder", "signed"};
    Value a[3];
    int_args(vm, "to_bytes", argc, argv, kwargs, names, 2, 3, a);
    int64_t length = IS_EMPTY(a[0]) ? 1 : vm_to_index(vm, a[0]);
    bool little = little_arg(vm, a[1]);
    bool is_signed = !IS_EMPTY(a[2]) && vm_truthy(vm, a[2]);
    if (length < 0) vm_raise_kind(vm, ValueError, "length argument must be non-negative");
    if (!IS_INTLIKE(argv[0])) {
        /* a big int: GMP writes it (two's complement when signed) */
        if (bigint_sign(vm, argv[0]) < 0 && !is_signed)
            vm_raise_kind(vm, OverflowError, "can't convert negative int to unsigned");
        Bytes *b = bytes_alloc(vm, length);
        vm_push_root(vm, OBJ_VAL(b));
        if (!bigint_to_bytes(vm, argv[0], b->data, (size_t)length, little, is_signed))
            vm_raise_kind(vm, OverflowError, "int too big to convert");
        vm_pop_roots(vm, 1);
        return OBJ_VAL(b);
    }
    int64_t x = AS_INTLIKE(argv[0]);
    if (x < 0 && !is_signed) vm_raise_kind(vm, OverflowError, "can't convert negative int to unsigned");
    /* does x fit in length bytes? */
    bool fits;
    if (length >= 8) fits = true;
    else if (is_signed) {
        int64_t lim = length == 0 ? 0 : (int64_t)1 << (8 * length - 1);
        fits = length == 0 ? x == 0 : (x >= -lim && x < lim);
    } else {
        fits = length == 0 ? x == 0 : (uint64_t)x < ((uint64_t)1 << (8 * length));
    }
    if (!fits) vm_raise_kind(vm, OverflowError, "int too big to convert");
    Bytes *b = bytes_alloc(vm, length);
    uint8_t fill = x < 0 ? 0xFF : 0;
    for (int64_t i = 0; i < length; i++) {
        uint8_t byte = i < 8 ? (uint8_t)((uint64_t)x >> (8 * i)) : fill;
        b->data[little ? i : length - 1 - i] = byte;
    }
    return OBJ_VAL(b);
}

static Value m_from_bytes(VM *vm, int argc, Value *argv, Dict *kwargs) {
    /* a classmethod: argv[0] is the class */
    static const char *const names[] = {"bytes", "byteorder", "signed"};
    Value a[3];
    int_args(vm, "from_bytes", argc, argv, kwargs, names, 2, 3, a);
    if (IS_EMPTY(a[0])) vm_raise_kind(vm, TypeError, "from_bytes() missing required argument 'bytes' (pos 1)");
    bool little = little_arg(vm, a[1]);
    bool is_signed = !IS_EMPTY(a[2]) && vm_truthy(vm, a[2]);
    if (IS_STR(vm, a[0])) vm_raise_kind(vm, TypeError, "cannot convert 'str' object to bytes");
    Value src = bytes_from_object(vm, a[0], false);
    const uint8_t *p = AS_BYTES(src)->data;
    int64_t n = AS_BYTES(src)->len;
    /* most significant byte first, whatever the order */
    bool neg = is_signed && n > 0 && (p[little ? n - 1 : 0] & 0x80);
    uint8_t fill = neg ? 0xFF : 0;
    uint64_t v = 0;
    bool fits = true;
    for (int64_t k = 0; k < n; k++) {
        uint8_t byte = p[little ? n - 1 - k : k];
        if (n - k > 8) { /* a byte above the low 8: must be sign fill */
            if (byte != fill) fits = false;
            continue;
        }
        v = (v << 8) | byte;
    }
    if (n < 8 && neg) v |= ~(uint64_t)0 << (8 * n); /* sign-extend */
    if (fits && n >= 8 && (neg ? !((v >> 63) & 1) : (v >> 63) & 1)) fits = false; /* sign disagrees with bit 63 */
    /* past 64 bits: GMP reads the whole buffer */
    Value iv = fits ? INT_VAL((int64_t)v) : bigint_from_bytes(vm, p, (size_t)n, little, is_signed);
    Value cls = argv[0];
    if (IS_OBJ(cls) && AS_OBJ(cls) == (Obj *)vm->t_bool) return BOOL_VAL(vm_truthy(vm, iv));
    if (IS_OBJ(cls) && AS_OBJ(cls) != (Obj *)vm->t_int) {
        vm_push_root(vm, iv);
        Value r = vm_call(vm, cls, 1, &iv); /* int subclasses: cls(value), as CPython */
        vm_pop_roots(vm, 1);
        return r;
    }
    return iv;
}

void int_bytes_init(VM *vm) {
    type_add_method(vm, vm->t_int, "to_bytes", m_to_bytes);
    Value f = native_new(vm, "from_bytes", m_from_bytes, EMPTY_VAL);
    vm_push_root(vm, f);
    Wrapper *w = gc_alloc_obj(vm, vm->t_classmethod, sizeof(Wrapper));
    w->func = f;
    w->fset = NONE_VAL;
    w->fdel = NONE_VAL;
    dict_set_cstr(vm, vm->t_int->dict, "from_bytes", OBJ_VAL(w));
    vm_pop_roots(vm, 1);
}
