/*
** bytes_format.c — b"..." % args (PEP 461). Numeric conversions are
** formatted by str's %-formatting one spec at a time (their output is
** ASCII); %s/%b insert bytes-like objects, %r/%a ascii(repr(x)), %c one
** byte.
*/
#include <string.h>

#include "bytes.h"
#include "class_internal.h"
#include "vm.h"

typedef struct Args {
    Value *items;
    int64_t n, next;
    Value single; /* a non-tuple argument */
    Value mapping; /* a dict for %(name)s, else EMPTY */
} Args;

static Value next_arg(VM *vm, Args *a) {
    if (a->next >= a->n) vm_raise_kind(vm, TypeError, "not enough arguments for format string");
    return a->items[a->next++];
}

/* The bytes of %s / %b's argument (a buffer or __bytes__). */
static Value bytes_of(VM *vm, Value v) {
    BufferView bv;
    if (buffer_get(vm, v, &bv)) return OBJ_VAL(bytes_new(vm, bv.buf, bv.len));
    if (IS_OBJ(v) && (AS_OBJ(v)->type->flags & TYPE_HEAP)) {
        Value m = type_lookup(vm, AS_OBJ(v)->type, str_cstr(vm, "__bytes__"));
        if (!IS_EMPTY(m)) {
            Value r = class_call_meth(vm, m, v, 0, NULL, NULL);
            if (!IS_BYTES(vm, r))
                vm_raise_kind(vm, TypeError, "__bytes__ returned non-bytes (type %s)", vm_type_name(vm, r));
            return r;
        }
    }
    vm_raise_kind(vm, TypeError, "%%b requires a bytes-like object, or an object that implements __bytes__, not '%s'",
                  vm_type_name(vm, v));
}

/* The output accumulates in a bytearray (GC-owned: a raise leaks nothing). */
typedef ByteArray Out;

static void sb_put(VM *vm, Out *o, const void *p, int64_t n) {
    int64_t old = o->len;
    bytearray_resize(vm, o, old + n);
    memcpy(o->data + old, p, (size_t)n);
}

static void sb_ch(VM *vm, Out *o, char c) {
    sb_put(vm, o, &c, 1);
}

static void put_padded(VM *vm, Out *sb, const char *p, int64_t n, int64_t width, int64_t prec, bool left) {
    if (prec >= 0 && n > prec) n = prec;
    int64_t pad = width > n ? width - n : 0;
    if (!left)
        for (int64_t i = 0; i < pad; i++) sb_ch(vm, sb, ' ');
    sb_put(vm, sb, p, n);
    if (left)
        for (int64_t i = 0; i < pad; i++) sb_ch(vm, sb, ' ');
}

static void format_into(VM *vm, Out *sb, const uint8_t *f, int64_t n, Args *a) {
    int64_t i = 0;
    while (i < n) {
        if (f[i] != '%') {
            int64_t j = i;
            while (j < n && f[j] != '%') j++;
            sb_put(vm, sb, f + i, j - i);
            i = j;
            continue;
        }
        i++; /* the '%' */
        Value arg = EMPTY_VAL;
        if (i < n && f[i] == '(') {
            if (IS_EMPTY(a->mapping)) vm_raise_kind(vm, TypeError, "format requires a mapping");
            int64_t depth = 1, k = ++i;
            while (k < n && depth > 0) {
                if (f[k] == '(') depth++;
                else if (f[k] == ')') depth--;
                if (depth > 0) k++;
            }
            if (k >= n) vm_raise_kind(vm, ValueError, "incomplete format key");
            Value key = OBJ_VAL(bytes_new(vm, f + i, k - i));
            vm_push_root(vm, key);
            arg = vm_getitem(vm, a->mapping, key);
            vm_pop_roots(vm, 1);
            i = k + 1;
        }
        char flags[8];
        int nf = 0;
        bool left = false;
        while (i < n && strchr("-+ #0", f[i]) && f[i]) {
            if (f[i] == '-') left = true;
            if (nf < 7) flags[nf++] = (char)f[i];
            i++;
        }
        flags[nf] = 0;
        int64_t width = -1, prec = -1;
        if (i < n && f[i] == '*') {
            Value w = next_arg(vm, a);
            if (!IS_INTLIKE(w)) vm_raise_kind(vm, TypeError, "* wants int");
            width = AS_INTLIKE(w);
            if (width < 0) {
                left = true;
                width = -width;
            }
            i++;
        } else {
            while (i < n && f[i] >= '0' && f[i] <= '9') width = (width < 0 ? 0 : width) * 10 + (f[i++] - '0');
        }
        if (i < n && f[i] == '.') {
            i++;
            prec = 0;
            if (i < n && f[i] == '*') {
                Value p = next_arg(vm, a);
                if (!IS_INTLIKE(p)) vm_raise_kind(vm, TypeError, "* wants int");
                prec = AS_INTLIKE(p);
                i++;
            } else {
                while (i < n && f[i] >= '0' && f[i] <= '9') prec = prec * 10 + (f[i++] - '0');
            }
        }
        while (i < n && (f[i] == 'h' || f[i] == 'l' || f[i] == 'L')) i++;
        if (i >= n) vm_raise_kind(vm, ValueError, "incomplete format");
        uint8_t conv = f[i++];
        if (conv == '%') {
            sb_ch(vm, sb, '%');
            continue;
        }
        if (IS_EMPTY(arg)) arg = next_arg(vm, a);
        switch (conv) {
        case 's': case 'b': {
            Value b = bytes_of(vm, arg);
            put_padded(vm, sb, (const char *)AS_BYTES(b)->data, AS_BYTES(b)->len, width, prec, left);
            break;
        }
        case 'r': case 'a': {
            Str *r = str_to_ascii(vm, vm_repr(vm, arg));
            put_padded(vm, sb, r->chars, r->len, width, prec, left);
            break;
        }
        case 'c': {
            char c;
            BufferView bv;
            if (IS_INTLIKE(arg)) {
                int64_t x = AS_INTLIKE(arg);
                if (x < 0 || x > 255) vm_raise_kind(vm, OverflowError, "%%c arg not in range(256)");
                c = (char)x;
            } else if ((IS_BYTES(vm, arg) || IS_BYTEARRAY(vm, arg)) && buffer_get(vm, arg, &bv) && bv.len == 1) {
                c = (char)bv.buf[0];
            } else {
                vm_raise_kind(vm, TypeError, "%%c requires an integer in range(256) or a single byte");
            }
            put_padded(vm, sb, &c, 1, width, -1, left);
            break;
        }
        case 'd': case 'i': case 'u': case 'o': case 'x': case 'X':
        case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': {
            /* str's %-formatting does the number, with the same spec */
            char spec[96];
            int len = snprintf(spec, sizeof spec, "%%%s", flags);
            if (width >= 0) len += snprintf(spec + len, sizeof spec - (size_t)len, "%lld", (long long)width);
            if (prec >= 0) len += snprintf(spec + len, sizeof spec - (size_t)len, ".%lld", (long long)prec);
            snprintf(spec + len, sizeof spec - (size_t)len, "%c", conv);
            Tuple *one = tuple_new(vm, 1);
            one->items[0] = arg;
            vm_push_root(vm, OBJ_VAL(one));
            Str *r = str_percent_format(vm, str_cstr(vm, spec), OBJ_VAL(one));
            vm_pop_roots(vm, 1);
            sb_put(vm, sb, r->chars, r->len);
            break;
        }
        default:
            vm_raise_kind(vm, ValueError, "unsupported format character '%c' (0x%x) at index %lld",
                          conv >= 0x20 && conv < 0x7f ? conv : '?', conv, (long long)(i - 1));
        }
    }
    if (a->next < a->n && IS_EMPTY(a->mapping))
        vm_raise_kind(vm, TypeError, "not all arguments converted during bytes formatting");
}

Value bytes_percent_format(VM *vm, Value self, Value args) {
    Args a = {0};
    a.mapping = EMPTY_VAL;
    if (IS_TUPLE(vm, args)) {
        a.items = AS_TUPLE(args)->items;
        a.n = AS_TUPLE(args)->len;
    } else {
        a.single = args;
        a.items = &a.single;
        a.n = 1;
        Type *t = vm_typeof(vm, args);
        if (IS_DICT(vm, args) || ((t->flags & TYPE_HEAP) && t->getitem && !IS_STR(vm, args))) a.mapping = args;
    }
    BufferView bv;
    buffer_get(vm, self, &bv);
    /* the format may be a bytearray that a __bytes__ or __repr__ changes: copy it */
    Bytes *fmt = bytes_new(vm, bv.buf, bv.len);
    vm_push_root(vm, OBJ_VAL(fmt));
    Out *out = bytearray_new(vm, NULL, 0);
    vm_push_root(vm, OBJ_VAL(out));
    format_into(vm, out, fmt->data, fmt->len, &a);
    Value r = bytes_like_new(vm, self, out->data ? out->data : (uint8_t *)"", out->len);
    vm_pop_roots(vm, 2);
    return r;
}
