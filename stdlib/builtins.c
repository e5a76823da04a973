/*
** builtins.c — the builtin functions (print, len, min, sorted, round, ...)
** and the `builtins` module. Names of builtin types (int, list, ...) are
** bound to the VM's type objects; the lazy iterator types (enumerate, zip,
** map, filter, reversed) live in iterators.c.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stdlib_priv.h"
#include "../vm/opcodes.h"
#include "../vm/bigint.h"
#include "../vm/gen_batch.h"

/* ------------------------------------------------------------------ */
/* small helpers                                                       */
/* ------------------------------------------------------------------ */

static bool is_type(VM *vm, Value v) {
    return IS_OBJ(v) && type_is_subtype(AS_OBJ(v)->type, vm->t_type);
}

/* Looks name up on v's type and calls it with v as first argument.
** Returns false (and leaves *out alone) when the type has no such method. */
static bool call_special(VM *vm, Value v, const char *name, int argc, const Value *args,
                         Value *out) {
    Value f = type_lookup(vm, vm_typeof(vm, v), cstr_name(vm, name));
    if (IS_EMPTY(f)) return false;
    Value a[4];
    a[0] = v;
    for (int i = 0; i < argc && i < 3; i++) a[i + 1] = args[i];
    *out = vm_call(vm, f, argc + 1, a);
    return true;
}

/* Pushes v as a GC root and returns its slot (vm->roots[slot] may be
** updated in place while it stays pushed). */
static int root_slot(VM *vm, Value v) {
    vm_push_root(vm, v);
    return vm->nroots - 1;
}

/* The frame of the gpy code that called the running native, or NULL. */
static Frame *caller_frame(VM *vm) {
    return vm->nframes > 0 ? &vm->frames[vm->nframes - 1] : NULL;
}

/* Globals of the calling code (the __main__ namespace at top level). */
static Dict *caller_globals(VM *vm) {
    Frame *f = caller_frame(vm);
    if (f && f->globals) return f->globals;
    Value m = dict_get_cstr(vm, vm->modules, "__main__");
    if (IS_OBJ(m) && AS_OBJ(m)->type == vm->t_module) return ((Module *)AS_OBJ(m))->dict;
    return dict_new(vm);
}

/* Decodes one UTF-8 sequence at s; *n receives its length in bytes. */
static uint32_t utf8_decode(const unsigned char *s, int *n) {
    uint32_t c = s[0];
    if (c < 0x80) {
        *n = 1;
        return c;
    }
    if ((c & 0xE0) == 0xC0) {
        *n = 2;
        return ((c & 0x1F) << 6) | (s[1] & 0x3F);
    }
    if ((c & 0xF0) == 0xE0) {
        *n = 3;
        return ((c & 0x0F) << 12) | ((uint32_t)(s[1] & 0x3F) << 6) | (s[2] & 0x3F);
    }
    *n = 4;
    return ((c & 0x07) << 18) | ((uint32_t)(s[1] & 0x3F) << 12) | ((uint32_t)(s[2] & 0x3F) << 6) |
           (s[3] & 0x3F);
}

/* A snapshot of the local variables of frame f as a dict (locals()). */
static Dict *frame_locals(VM *vm, Frame *f) {
    if (!f) return caller_globals(vm);
    if (f->locals) return f->locals;
    Proto *p = f->fn ? f->fn->proto : NULL;
    if (!p || (p->flags & PROTO_MODULE)) return f->globals;
    Dict *d = dict_new(vm);
    for (int32_t i = 0; i < p->nlocals; i++) {
        Value v = f->base[LOCAL_REGISTER(i)];
        for (int32_t c = 0; c < p->ncells; c++) {
            if (p->cell_regs[c] == i && IS_OBJ(v) && AS_OBJ(v)->type == vm->t_cell) {
                v = ((Cell *)AS_OBJ(v))->value;
                break;
            }
        }
        if (!IS_EMPTY(v) && p->varnames && p->varnames[i]) dict_set_str(vm, d, p->varnames[i], v);
    }
    for (int32_t i = 0; i < p->nfree && i < f->fn->nfree; i++) {
        Value v = f->fn->free[i]->value;
        if (!IS_EMPTY(v) && p->freenames && p->freenames[i]) dict_set_str(vm, d, p->freenames[i], v);
    }
    return d;
}

/* ------------------------------------------------------------------ */
/* I/O                                                                 */
/* ------------------------------------------------------------------ */

/* print(*objects, sep=' ', end='\n', file=None, flush=False) */
static Value b_print(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value sep = EMPTY_VAL, end = EMPTY_VAL, file = EMPTY_VAL, flush = EMPTY_VAL;
    if (kwargs) {
        sep = kw_take(vm, kwargs, "sep");
        end = kw_take(vm, kwargs, "end");
        file = kw_take(vm, kwargs, "file");
        flush = kw_take(vm, kwargs, "flush");
        kw_done(vm, "print", kwargs);
    }
    if (!IS_EMPTY(sep) && !IS_NONE(sep) && !IS_STR(vm, sep))
        vm_raise_kind(vm, TypeError, "sep must be None or a string, not %s", vm_type_name(vm, sep));
    if (!IS_EMPTY(end) && !IS_NONE(end) && !IS_STR(vm, end))
        vm_raise_kind(vm, TypeError, "end must be None or a string, not %s", vm_type_name(vm, end));
    if (IS_EMPTY(file) || IS_NONE(file)) {
        file = file_sys_stream(vm, "stdout");
        if (IS_NONE(file)) return NONE_VAL; /* sys.stdout = None: print does nothing */
    }
    /* the arguments may live in the VM stack: keep them rooted while str()
    ** and write() run user code */
    int base = vm->nroots;
    vm_push_root(vm, file);
    vm_push_root(vm, sep);
    vm_push_root(vm, end);
    for (int i = 0; i < argc; i++) vm_push_root(vm, argv[i]);
    for (int i = 0; i < argc; i++) {
        if (i > 0) {
            Value s = vm->roots[base + 1];
            if (IS_STR(vm, s)) file_write(vm, file, AS_STR(s));
            else file_write_bytes(vm, file, " ", 1);
        }
        Value v = vm->roots[base + 3 + i];
        Str *s = IS_STR(vm, v) ? AS_STR(v) : vm_str(vm, v);
        file_write(vm, file, s);
    }
    Value e = vm->roots[base + 2];
    if (IS_STR(vm, e)) file_write(vm, file, AS_STR(e));
    else file_write_bytes(vm, file, "\n", 1);
    if (!IS_EMPTY(flush) && vm_truthy(vm, flush)) file_flush(vm, vm->roots[base]);
    vm_pop_roots(vm, vm->nroots - base);
    return NONE_VAL;
}

/* input([prompt]) */
static Value b_input(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "input", kwargs);
    arg_between(vm, "input", argc, 0, 1);
    Value out = file_sys_stream(vm, "stdout");
    int base = root_slot(vm, out);
    if (argc == 1) {
        vm_push_root(vm, argv[0]);
        Str *p = vm_str(vm, argv[0]);
        if (!IS_NONE(out)) file_write(vm, out, p);
    }
    if (!IS_NONE(out)) file_flush(vm, out);
    Value in = file_sys_stream(vm, "stdin");
    if (IS_NONE(in)) vm_raise_kind(vm, RuntimeError, "input(): lost sys.stdin");
    Str *line = file_readline(vm, in);
    vm_pop_roots(vm, vm->nroots - base);
    if (!line || line->len == 0) vm_raise_kind(vm, EOFError, "EOF when reading a line");
    if (line->chars[line->len - 1] == '\n') return STR_VAL(str_new(vm, line->chars, (size_t)line->len - 1));
    return STR_VAL(line);
}

static Value b_open(VM *vm, int argc, Value *argv, Dict *kwargs) {
    static const char *const names[] = {"file", "mode", "buffering", "encoding", "errors", "newline"};
    Value a[6] = {EMPTY_VAL, EMPTY_VAL, EMPTY_VAL, EMPTY_VAL, EMPTY_VAL, EMPTY_VAL};
    if (argc > 6) vm_raise_kind(vm, TypeError, "open() takes at most 8 arguments (%d given)", argc);
    for (int i = 0; i < argc; i++) a[i] = argv[i];
    for (int i = 0; i < 6; i++) {
        Value k = kw_take(vm, kwargs, names[i]);
        if (!IS_EMPTY(k)) {
            if (!IS_EMPTY(a[i]))
                vm_raise_kind(vm, TypeError, "argument for open() given by name ('%s') and position (%d)",
                              names[i], i + 1);
            a[i] = k;
        }
    }
    kw_done(vm, "open", kwargs);
    if (IS_EMPTY(a[0])) vm_raise_kind(vm, TypeError, "open() missing required argument 'file' (pos 1)");
    if (!IS_STR(vm, a[0]))
        vm_raise_kind(vm, TypeError, "expected str, bytes or os.PathLike object, not %s",
                      vm_type_name(vm, a[0]));
    Str *mode = NULL;
    if (!IS_EMPTY(a[1])) {
        if (!IS_STR(vm, a[1]))
            vm_raise_kind(vm, TypeError, "open() argument 'mode' must be str, not %s",
                          vm_type_name(vm, a[1]));
        mode = AS_STR(a[1]);
    } else {
        mode = str_cstr(vm, "r");
    }
    Value enc = a[3];
    if (!IS_EMPTY(enc) && !IS_NONE(enc) && strchr(mode->chars, 'b'))
        vm_raise_kind(vm, ValueError, "binary mode doesn't take an encoding argument");
    if (!IS_EMPTY(enc) && !IS_NONE(enc)) {
        if (!IS_STR(vm, enc))
            vm_raise_kind(vm, TypeError, "open() argument 'encoding' must be str or None, not %s",
                          vm_type_name(vm, enc));
    }
    Value err = a[4];
    if (!IS_EMPTY(err) && !IS_NONE(err)) {
        if (strchr(mode->chars, 'b')) vm_raise_kind(vm, ValueError, "binary mode doesn't take an errors argument");
        if (!IS_STR(vm, err))
            vm_raise_kind(vm, TypeError, "open() argument 'errors' must be str or None, not %s", vm_type_name(vm, err));
    }
    /* file.c: other encodings and error handlers through vm/codecs.c */
    return file_open_encoded(vm, AS_STR(a[0]), mode, IS_EMPTY(enc) || IS_NONE(enc) ? NULL : AS_STR(enc)->chars,
                             IS_EMPTY(err) || IS_NONE(err) ? NULL : AS_STR(err)->chars);
}

/* ------------------------------------------------------------------ */
/* numbers                                                             */
/* ------------------------------------------------------------------ */

static Value b_abs(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "abs", kwargs);
    arg_one(vm, "abs", argc);
    Value v = argv[0];
    switch (v.tag) {
    case VAL_INT:
        if (AS_INT(v) == INT64_MIN) return vm_unop(vm, UNOP_NEG, v);
        return INT_VAL(AS_INT(v) < 0 ? -AS_INT(v) : AS_INT(v));
    case VAL_BOOL: return INT_VAL(AS_BOOL(v) ? 1 : 0);
    case VAL_FLOAT: return FLOAT_VAL(fabs(AS_FLOAT(v)));
    default: break;
    }
    if (bigint_is(vm, v)) return bigint_sign(vm, v) < 0 ? vm_unop(vm, UNOP_NEG, v) : v;
    Value r;
    if (call_special(vm, v, "__abs__", 0, NULL, &r)) return r;
    vm_raise_kind(vm, TypeError, "bad operand type for abs(): '%s'", vm_type_name(vm, v));
}

/* CPython's float divmod: the quotient is floored, the remainder has the
** sign of the divisor. */
static Value float_divmod(VM *vm, double vx, double wx) {
    if (wx == 0.0) vm_raise_kind(vm, ZeroDivisionError, "float divmod()");
    double mod = fmod(vx, wx);
    double div = (vx - mod) / wx;
    if (mod != 0.0) {
        if ((wx < 0) != (mod < 0)) {
            mod += wx;
            div -= 1.0;
        }
    } else {
        mod = copysign(0.0, wx);
    }
    double floordiv;
    if (div != 0.0) {
        floordiv = floor(div);
        if (div - floordiv > 0.5) floordiv += 1.0;
    } else {
        floordiv = copysign(0.0, vx / wx);
    }
    Tuple *t = tuple_new(vm, 2);
    t->items[0] = FLOAT_VAL(floordiv);
    t->items[1] = FLOAT_VAL(mod);
    return OBJ_VAL(t);
}

static Value b_divmod(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "divmod", kwargs);
    arg_between(vm, "divmod", argc, 2, 2);
    Value a = argv[0], b = argv[1];
    if ((bigint_is(vm, a) || bigint_is(vm, b)) && bigint_is_numeric(vm, a) && bigint_is_numeric(vm, b)) {
        if (IS_FLOAT(a) || IS_FLOAT(b)) return float_divmod(vm, bigint_to_double(vm, a), bigint_to_double(vm, b));
        Tuple *t = tuple_new(vm, 2);
        vm_push_root(vm, OBJ_VAL(t));
        t->items[0] = vm_binop(vm, BINOP_FLOORDIV, a, b);
        t->items[1] = vm_binop(vm, BINOP_MOD, a, b);
        vm_pop_roots(vm, 1);
        return OBJ_VAL(t);
    }
    if (IS_INTLIKE(a) && IS_INTLIKE(b)) {
        int64_t x = AS_INTLIKE(a), y = AS_INTLIKE(b);
        if (x == INT64_MIN && y == -1) {
            Tuple *t = tuple_new(vm, 2);
            vm_push_root(vm, OBJ_VAL(t));
            t->items[0] = vm_binop(vm, BINOP_FLOORDIV, a, b);
            t->items[1] = INT_VAL(0);
            vm_pop_roots(vm, 1);
            return OBJ_VAL(t);
        }
        int64_t q = num_floordiv(vm, x, y);
        int64_t r = num_mod(vm, x, y);
        Tuple *t = tuple_new(vm, 2);
        t->items[0] = INT_VAL(q);
        t->items[1] = INT_VAL(r);
        return OBJ_VAL(t);
    }
    if (IS_NUMBER(a) && IS_NUMBER(b)) return float_divmod(vm, AS_NUMBER(a), AS_NUMBER(b));
    Value r;
    if (!IS_NUMBER(a) && call_special(vm, a, "__divmod__", 1, &b, &r) && !vm_is(r, vm->not_implemented))
        return r;
    if (!IS_NUMBER(b) && call_special(vm, b, "__rdivmod__", 1, &a, &r) && !vm_is(r, vm->not_implemented))
        return r;
    vm_raise_kind(vm, TypeError, "unsupported operand type(s) for divmod(): '%s' and '%s'",
                  vm_type_name(vm, a), vm_type_name(vm, b));
}

/* (a * b) mod m for 0 <= a, b < m */
static uint64_t mulmod(uint64_t a, uint64_t b, uint64_t m) {
    return (uint64_t)(((unsigned __int128)a * b) % m);
}

/* Inverse of a modulo m (m > 0), or false when gcd(a, m) != 1. */
static bool modinv(int64_t a, uint64_t m, uint64_t *inv) {
    __int128 r0 = (__int128)m, r1 = a % (__int128)m;
    if (r1 < 0) r1 += m;
    __int128 s0 = 0, s1 = 1;
    while (r1 != 0) {
        __int128 q = r0 / r1, t;
        t = r0 - q * r1;
        r0 = r1;
        r1 = t;
        t = s0 - q * s1;
        s0 = s1;
        s1 = t;
    }
    if (r0 != 1) return false;
    s0 %= (__int128)m;
    if (s0 < 0) s0 += m;
    *inv = (uint64_t)s0;
    return true;
}

static Value b_pow(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value a[3] = {EMPTY_VAL, EMPTY_VAL, EMPTY_VAL};
    static const char *const names[] = {"base", "exp", "mod"};
    if (argc > 3) vm_raise_kind(vm, TypeError, "pow() takes at most 3 arguments (%d given)", argc);
    for (int i = 0; i < argc; i++) a[i] = argv[i];
    for (int i = 0; i < 3; i++) {
        Value k = kw_take(vm, kwargs, names[i]);
        if (!IS_EMPTY(k)) {
            if (!IS_EMPTY(a[i]))
                vm_raise_kind(vm, TypeError, "argument for pow() given by name ('%s') and position (%d)",
                              names[i], i + 1);
            a[i] = k;
        }
    }
    kw_done(vm, "pow", kwargs);
    if (IS_EMPTY(a[0])) vm_raise_kind(vm, TypeError, "pow() missing required argument 'base' (pos 1)");
    if (IS_EMPTY(a[1])) vm_raise_kind(vm, TypeError, "pow() missing required argument 'exp' (pos 2)");
    if (IS_EMPTY(a[2]) || IS_NONE(a[2])) return vm_binop(vm, BINOP_POW, a[0], a[1]);
    if (bigint_is_anyint(vm, a[0]) && bigint_is_anyint(vm, a[1]) && bigint_is_anyint(vm, a[2]) &&
        (bigint_is(vm, a[0]) || bigint_is(vm, a[1]) || bigint_is(vm, a[2])))
        return bigint_powmod(vm, a[0], a[1], a[2]);
    if (!IS_INTLIKE(a[0]) || !IS_INTLIKE(a[1]) || !IS_INTLIKE(a[2])) {
        Value r;
        if (!IS_NUMBER(a[0]) && call_special(vm, a[0], "__pow__", 2, &a[1], &r) &&
            !vm_is(r, vm->not_implemented))
            return r;
        vm_raise_kind(vm, TypeError, "pow() 3rd argument not allowed unless all arguments are integers");
    }
    int64_t b = AS_INTLIKE(a[0]), e = AS_INTLIKE(a[1]), m = AS_INTLIKE(a[2]);
    if (m == 0) vm_raise_kind(vm, ValueError, "pow() 3rd argument cannot be 0");
    uint64_t um = m < 0 ? (uint64_t)0 - (uint64_t)m : (uint64_t)m;
    uint64_t ub;
    __int128 bm = (__int128)b % (__int128)um;
    if (bm < 0) bm += um;
    ub = (uint64_t)bm;
    uint64_t ue;
    if (e < 0) {
        if (!modinv(b, um, &ub)) vm_raise_kind(vm, ValueError, "base is not invertible for the given modulus");
        ue = (uint64_t)0 - (uint64_t)e;
    } else {
        ue = (uint64_t)e;
    }
    uint64_t r = um == 1 ? 0 : 1;
    while (ue) {
        if (ue & 1) r = mulmod(r, ub, um);
        ub = mulmod(ub, ub, um);
        ue >>= 1;
    }
    if (m < 0 && r != 0) return INT_VAL((int64_t)(r - um));
    return INT_VAL((int64_t)r);
}

/* round(x, nd) for a finite float: correctly rounded via the exact decimal
** expansion (glibc's printf is exact and rounds half-even, like CPython's
** dtoa in mode 3). */
static double round_float_digits(VM *vm, double x, int64_t nd) {
    if (!isfinite(x)) return x;
    if (nd > 323) return x;
    if (nd < -308) return 0.0 * x;
    char buf[1200];
    double r;
    if (nd >= 0) {
        snprintf(buf, sizeof buf, "%.*f", (int)nd, x);
        r = strtod(buf, NULL);
    } else {
        /* round the exact integer part at 10**k, half-even, with the
        ** fractional part as a sticky bit */
        int k = (int)-nd;
        double ip = trunc(x);
        bool sticky = ip != x;
        int n = snprintf(buf, sizeof buf, "%.0f", fabs(ip));
        char digits[1200];
        if (n <= k) {
            /* everything is below the rounding position: result is 0 or 10**k */
            bool up = false;
            if (n == k) {
                /* compare the number with 0.5 * 10**k */
                if (buf[0] > '5') up = true;
                else if (buf[0] == '5') {
                    bool rest = sticky;
                    for (int i = 1; i < n; i++)
                        if (buf[i] != '0') rest = true;
                    up = rest; /* exactly half rounds to even (0) */
                }
            }
            snprintf(digits, sizeof digits, "%se%d", up ? "1" : "0", k);
        } else {
            int keep = n - k;
            memcpy(digits, buf, (size_t)keep);
            digits[keep] = 0;
            char first = buf[keep];
            bool rest = sticky;
            for (int i = keep + 1; i < n; i++)
                if (buf[i] != '0') rest = true;
            bool up = first > '5' || (first == '5' && (rest || ((digits[keep - 1] - '0') & 1)));
            if (up) {
                int i = keep - 1;
                while (i >= 0 && digits[i] == '9') digits[i--] = '0';
                if (i >= 0) digits[i]++;
                else {
                    memmove(digits + 1, digits, (size_t)keep + 1);
                    digits[0] = '1';
                    keep++;
                }
            }
            snprintf(digits + keep, sizeof digits - (size_t)keep, "e%d", k);
        }
        r = strtod(digits, NULL);
        r = copysign(r, x);
    }
    if (isinf(r)) vm_raise_kind(vm, OverflowError, "rounded value too large to represent");
    return r;
}

/* float -> int for round/ceil/floor: raises like CPython, then for our 64-bit ints */
static Value float_to_int_checked(VM *vm, double d) {
    if (isinf(d)) vm_raise_kind(vm, OverflowError, "cannot convert float infinity to integer");
    if (isnan(d)) vm_raise_kind(vm, ValueError, "cannot convert float NaN to integer");
    return bigint_from_double(vm, d);
}

/* round(x, n) for an int x and n < 0 of any size: half to even on
** multiples of 10**-n, with the generic (big-int) operators. */
static Value round_int_digits(VM *vm, Value x, int64_t n) {
    int base = vm->nroots;
    Value p = vm_binop(vm, BINOP_POW, INT_VAL(10), INT_VAL(-n));
    vm_push_root(vm, p);
    Value q = vm_binop(vm, BINOP_FLOORDIV, x, p);
    vm_push_root(vm, q);
    Value r = vm_binop(vm, BINOP_MOD, x, p);
    vm_push_root(vm, r);
    Value twice = vm_binop(vm, BINOP_MUL, r, INT_VAL(2));
    vm_push_root(vm, twice);
    Value odd = vm_binop(vm, BINOP_AND, q, INT_VAL(1));
    bool up = vm_truthy(vm, vm_compare(vm, CMP_GT, twice, p)) ||
              (vm_equal(vm, twice, p) && vm_truthy(vm, odd));
    if (up) vm->roots[base + 1] = q = vm_binop(vm, BINOP_ADD, q, INT_VAL(1));
    Value res = vm_binop(vm, BINOP_MUL, q, p);
    vm_pop_roots(vm, vm->nroots - base);
    return res;
}

static Value b_round(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value x = argc > 0 ? argv[0] : EMPTY_VAL, nd = argc > 1 ? argv[1] : EMPTY_VAL;
    if (argc > 2) vm_raise_kind(vm, TypeError, "round() takes at most 2 arguments (%d given)", argc);
    Value k = kw_take(vm, kwargs, "number");
    if (!IS_EMPTY(k)) {
        if (!IS_EMPTY(x))
            vm_raise_kind(vm, TypeError, "argument for round() given by name ('number') and position (1)");
        x = k;
    }
    k = kw_take(vm, kwargs, "ndigits");
    if (!IS_EMPTY(k)) {
        if (!IS_EMPTY(nd))
            vm_raise_kind(vm, TypeError, "argument for round() given by name ('ndigits') and position (2)");
        nd = k;
    }
    kw_done(vm, "round", kwargs);
    if (IS_EMPTY(x)) vm_raise_kind(vm, TypeError, "round() missing required argument 'number' (pos 1)");
    bool has_nd = !IS_EMPTY(nd) && !IS_NONE(nd);
    if (IS_FLOAT(x)) {
        double d = AS_FLOAT(x);
        if (!has_nd) return float_to_int_checked(vm, nearbyint(d));
        int64_t n = vm_to_index(vm, nd);
        return FLOAT_VAL(round_float_digits(vm, d, n));
    }
    if (bigint_is(vm, x)) {
        if (!has_nd) return x;
        if (bigint_is(vm, nd)) return bigint_sign(vm, nd) > 0 ? x : INT_VAL(0);
        int64_t n = vm_to_index(vm, nd);
        return n >= 0 ? x : round_int_digits(vm, x, n);
    }
    if (IS_INTLIKE(x)) {
        int64_t i = AS_INTLIKE(x);
        if (!has_nd) return INT_VAL(i);
        if (bigint_is(vm, nd)) return bigint_sign(vm, nd) > 0 ? INT_VAL(i) : INT_VAL(0);
        int64_t n = vm_to_index(vm, nd);
        if (n >= 0) return INT_VAL(i);
        if (n < -38) return INT_VAL(0);
        __int128 p = 1;
        for (int64_t j = 0; j < -n; j++) p *= 10;
        __int128 v = i, q = v / p, r = v % p;
        if (r < 0) {
            r += p;
            q -= 1;
        }
        /* half-even on the quotient */
        if (2 * r > p || (2 * r == p && (q & 1))) q += 1;
        __int128 res = q * p;
        if (res > INT64_MAX || res < INT64_MIN) return round_int_digits(vm, x, n);
        return INT_VAL((int64_t)res);
    }
    Value r;
    if (call_special(vm, x, "__round__", has_nd ? 1 : 0, &nd, &r)) return r;
    vm_raise_kind(vm, TypeError, "type %s doesn't define __round__ method", vm_type_name(vm, x));
}

/* hex/oct/bin: sign, prefix, digits of the magnitude */
static Value int_radix(VM *vm, const char *fname, int argc, Value *argv, Dict *kwargs, int shift,
                       const char *prefix) {
    kw_none(vm, fname, kwargs);
    arg_one(vm, fname, argc);
    if (bigint_is(vm, argv[0])) {
        size_t nd;
        char *d = bigint_digits(vm, argv[0], 1 << shift, false, &nd);
        bool neg = bigint_sign(vm, argv[0]) < 0;
        char *t = malloc(nd + 4);
        if (!t) {
            free(d);
            vm_throw(vm, vm->memory_error);
        }
        size_t k = 0;
        if (neg) t[k++] = '-';
        memcpy(t + k, prefix, 2);
        memcpy(t + k + 2, d, nd);
        free(d);
        Str *s = str_new(vm, t, k + 2 + nd);
        free(t);
        return STR_VAL(s);
    }
    int64_t i = vm_to_index(vm, argv[0]);
    uint64_t u = i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i;
    char buf[80];
    int pos = 79;
    buf[pos] = 0;
    uint64_t mask = (1u << shift) - 1;
    do {
        buf[--pos] = "0123456789abcdef"[u & mask];
        u >>= shift;
    } while (u);
    pos -= 2;
    memcpy(buf + pos, prefix, 2);
    if (i < 0) buf[--pos] = '-';
    return STR_VAL(str_new(vm, buf + pos, (size_t)(79 - pos)));
}

static Value b_hex(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return int_radix(vm, "hex", argc, argv, kwargs, 4, "0x");
}
static Value b_oct(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return int_radix(vm, "oct", argc, argv, kwargs, 3, "0o");
}
static Value b_bin(VM *vm, int argc, Value *argv, Dict *kwargs) {
    return int_radix(vm, "bin", argc, argv, kwargs, 1, "0b");
}

static Value b_chr(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "chr", kwargs);
    arg_one(vm, "chr", argc);
    int64_t c = vm_to_index(vm, argv[0]);
    if (c < 0 || c > 0x10FFFF) vm_raise_kind(vm, ValueError, "chr() arg not in range(0x110000)");
    return STR_VAL(str_from_codepoint(vm, (uint32_t)c));
}

static Value b_ord(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "ord", kwargs);
    arg_one(vm, "ord", argc);
    Value v = argv[0];
    if (!IS_STR(vm, v))
        vm_raise_kind(vm, TypeError, "ord() expected string of length 1, but %s found", vm_type_name(vm, v));
    Str *s = AS_STR(v);
    if (s->nchars != 1)
        vm_raise_kind(vm, TypeError, "ord() expected a character, but string of length %lld found",
                      (long long)s->nchars);
    int n;
    return INT_VAL(utf8_decode((const unsigned char *)s->chars, &n));
}

/* ------------------------------------------------------------------ */
/* iterables                                                           */
/* ------------------------------------------------------------------ */

static Value b_len(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "len", kwargs);
    arg_one(vm, "len", argc);
    return INT_VAL(vm_len(vm, argv[0]));
}

/* min()/max(): one iterable or several arguments; key=, default= */
static Value minmax(VM *vm, int argc, Value *argv, Dict *kwargs, bool is_max) {
    const char *name = is_max ? "max" : "min";
    Value key = kw_take(vm, kwargs, "key");
    Value dflt = kw_take(vm, kwargs, "default");
    kw_done(vm, name, kwargs);
    if (argc == 0) vm_raise_kind(vm, TypeError, "%s expected at least 1 argument, got 0", name);
    if (argc > 1 && !IS_EMPTY(dflt))
        vm_raise_kind(vm, TypeError, "Cannot specify a default for %s() with multiple positional arguments",
                      name);
    if (IS_NONE(key)) key = EMPTY_VAL;
    CmpOp op = is_max ? CMP_GT : CMP_LT;
    /* fast path: plain numbers, no key */
    if (argc > 1 && IS_EMPTY(key)) {
        bool nums = true;
        for (int i = 0; i < argc && nums; i++) nums = IS_NUMBER(argv[i]);
        if (nums) {
            Value best = argv[0];
            for (int i = 1; i < argc; i++) {
                Value v = argv[i];
                bool better;
                if (IS_INT(v) && IS_INT(best))
                    better = is_max ? AS_INT(v) > AS_INT(best) : AS_INT(v) < AS_INT(best);
                else if (IS_FLOAT(v) && IS_FLOAT(best))
                    better = is_max ? AS_FLOAT(v) > AS_FLOAT(best) : AS_FLOAT(v) < AS_FLOAT(best);
                else
                    better = vm_truthy(vm, num_compare(vm, op, v, best));
                if (better) best = v;
            }
            return best;
        }
    }
    int base = vm->nroots;
    Value it;
    if (argc == 1) {
        vm_push_root(vm, key);
        vm_push_root(vm, dflt);
        it = vm_iter(vm, argv[0]);
    } else {
        Tuple *t = tuple_from_array(vm, argc, argv);
        vm_push_root(vm, OBJ_VAL(t));
        vm_push_root(vm, key);
        vm_push_root(vm, dflt);
        it = vm_iter(vm, OBJ_VAL(t));
    }
    int r_it = root_slot(vm, it);
    int r_best = root_slot(vm, EMPTY_VAL);
    int r_bkey = root_slot(vm, EMPTY_VAL);
    int r_item = root_slot(vm, EMPTY_VAL);
    int r_ikey = root_slot(vm, EMPTY_VAL);
    Value item;
    while (vm_next(vm, vm->roots[r_it], &item)) {
        vm->roots[r_item] = item;
        Value k = item;
        if (!IS_EMPTY(key)) {
            Value a = item;
            k = vm_call(vm, key, 1, &a);
        }
        vm->roots[r_ikey] = k;
        if (IS_EMPTY(vm->roots[r_best])) {
            vm->roots[r_best] = vm->roots[r_item];
            vm->roots[r_bkey] = k;
            continue;
        }
        Value bk = vm->roots[r_bkey];
        bool better;
        if (IS_INT(k) && IS_INT(bk)) better = is_max ? AS_INT(k) > AS_INT(bk) : AS_INT(k) < AS_INT(bk);
        else if (IS_FLOAT(k) && IS_FLOAT(bk))
            better = is_max ? AS_FLOAT(k) > AS_FLOAT(bk) : AS_FLOAT(k) < AS_FLOAT(bk);
        else better = vm_truthy(vm, vm_compare(vm, op, k, bk));
        if (better) {
            vm->roots[r_best] = vm->roots[r_item];
            vm->roots[r_bkey] = vm->roots[r_ikey];
        }
    }
    Value best = vm->roots[r_best];
    vm_pop_roots(vm, vm->nroots - base);
    if (IS_EMPTY(best)) {
        if (!IS_EMPTY(dflt)) return dflt;
        vm_raise_kind(vm, ValueError, "%s() arg is an empty sequence", name);
    }
    return best;
}

static Value b_max(VM *vm, int argc, Value *argv, Dict *kwargs) { return minmax(vm, argc, argv, kwargs, true); }
static Value b_min(VM *vm, int argc, Value *argv, Dict *kwargs) { return minmax(vm, argc, argv, kwargs, false); }

/* sum(iterable, /, start=0): ints and floats summed in C, left to right
** (CPython 3.11 adds floats with plain double additions). */
static Value b_sum(VM *vm, int argc, Value *argv, Dict *kwargs) {
    Value start = kw_take(vm, kwargs, "start");
    kw_done(vm, "sum", kwargs);
    if (argc == 0) vm_raise_kind(vm, TypeError, "sum() takes at least 1 positional argument (0 given)");
    if (argc > 2) vm_raise_kind(vm, TypeError, "sum() takes at most 2 arguments (%d given)", argc);
    if (argc == 2) {
        if (!IS_EMPTY(start))
            vm_raise_kind(vm, TypeError, "argument for sum() given by name ('start') and position (2)");
        start = argv[1];
    }
    if (IS_EMPTY(start)) start = INT_VAL(0);
    if (IS_STR(vm, start)) vm_raise_kind(vm, TypeError, "sum() can't sum strings [use ''.join(seq) instead]");
    Value src = argv[0];
    Value acc = start;
    /* fast path: a list or tuple of plain numbers */
    if ((IS_LIST(vm, src) || IS_TUPLE(vm, src)) && IS_NUMBER(acc)) {
        Value *items = IS_LIST(vm, src) ? AS_LIST(src)->items : AS_TUPLE(src)->items;
        int64_t n = IS_LIST(vm, src) ? AS_LIST(src)->len : AS_TUPLE(src)->len;
        int64_t i = 0;
        if (IS_INT(acc)) {
            int64_t s = AS_INT(acc);
            int64_t t;
            for (; i < n && IS_INTLIKE(items[i]) && !int_add_overflow(s, AS_INTLIKE(items[i]), &t); i++)
                s = t;
            acc = INT_VAL(s);
            if (i < n && IS_INTLIKE(items[i])) i = n + 1; /* overflowed: the generic loop promotes */
        }
        if (i < n && IS_NUMBER(acc) && IS_FLOAT(items[i])) {
            double d = AS_NUMBER(acc);
            for (; i < n && IS_NUMBER(items[i]); i++) d += AS_NUMBER(items[i]);
            acc = FLOAT_VAL(d);
        }
        if (i == n) return acc;
        acc = start; /* something else than a number: redo it generically */
    }
    int base = vm->nroots;
    int r_acc = root_slot(vm, acc);
    int r_it = root_slot(vm, vm_iter(vm, src));
    Value item;
    /* a generator of numbers summed into a number runs in batches: adding
    ** an int or float to an int or float runs no code (gen_batch.h) */
    GenIter gi;
    gen_iter_init(vm, &gi, vm->roots[r_it]);
    for (;;) {
        gi.batch.accept = IS_NUMBER(vm->roots[r_acc]) ? GEN_TAKE_NUMBERS : 0;
        if (!gen_iter_next(vm, &gi, &item)) break;
        acc = vm->roots[r_acc];
        if (IS_INT(acc) && IS_INTLIKE(item)) {
            int64_t s;
            if (int_add_overflow(AS_INT(acc), AS_INTLIKE(item), &s)) {
                vm_push_root(vm, item);
                vm->roots[r_acc] = vm_binop(vm, BINOP_ADD, acc, item); /* promotes to a big int */
                vm_pop_roots(vm, 1);
            } else {
                vm->roots[r_acc] = INT_VAL(s);
            }
        } else if (IS_FLOAT(acc) && IS_NUMBER(item)) {
            vm->roots[r_acc] = FLOAT_VAL(AS_FLOAT(acc) + AS_NUMBER(item));
        } else if (IS_INT(acc) && IS_FLOAT(item)) {
            vm->roots[r_acc] = FLOAT_VAL((double)AS_INT(acc) + AS_FLOAT(item));
        } else {
            vm_push_root(vm, item);
            vm->roots[r_acc] = vm_binop(vm, BINOP_ADD, acc, item);
            vm_pop_roots(vm, 1);
        }
    }
    acc = vm->roots[r_acc];
    vm_pop_roots(vm, vm->nroots - base);
    return acc;
}

static Value b_sorted(VM *vm, int argc, Value *argv, Dict *kwargs) {
    if (argc != 1) vm_raise_kind(vm, TypeError, "sorted expected 1 argument, got %d", argc);
    Value key = kw_take(vm, kwargs, "key");
    Value rev = kw_take(vm, kwargs, "reverse");
    kw_done(vm, "sort", kwargs);
    int base = vm->nroots;
    vm_push_root(vm, key);
    vm_push_root(vm, rev);
    List *l = list_from_iterable(vm, argv[0]);
    vm_push_root(vm, OBJ_VAL(l));
    bool reverse = !IS_EMPTY(rev) && vm_truthy(vm, rev);
    list_sort(vm, l, IS_EMPTY(key) ? NONE_VAL : key, reverse);
    vm_pop_roots(vm, vm->nroots - base);
    return OBJ_VAL(l);
}

/* any/all: iterate until the answer is known */
static Value any_all(VM *vm, int argc, Value *argv, Dict *kwargs, bool want) {
    const char *name = want ? "any" : "all";
    kw_none(vm, name, kwargs);
    arg_one(vm, name, argc);
    Value src = argv[0];
    if (IS_LIST(vm, src) || IS_TUPLE(vm, src)) {
        /* plain values need no user code: test them in place */
        bool plain = true;
        int64_t n = IS_LIST(vm, src) ? AS_LIST(src)->len : AS_TUPLE(src)->len;
        Value *items = IS_LIST(vm, src) ? AS_LIST(src)->items : AS_TUPLE(src)->items;
        for (int64_t i = 0; i < n && plain; i++) plain = !IS_OBJ(items[i]) || IS_STR(vm, items[i]);
        if (plain) {
            for (int64_t i = 0; i < n; i++)
                if (vm_truthy(vm, items[i]) == want) return BOOL_VAL(want);
            return BOOL_VAL(!want);
        }
    }
    int base = root_slot(vm, vm_iter(vm, src));
    Value item;
    /* a generator runs on past plain values that do not decide the answer
    ** (any: falsy ones), as the loop would resume it at once (gen_batch.h) */
    GenIter gi;
    gen_iter_init(vm, &gi, vm->roots[base]);
    gi.batch.accept = want ? GEN_TAKE_FALSY : GEN_TAKE_TRUTHY;
    while (gen_iter_next(vm, &gi, &item)) {
        if (vm_truthy(vm, item) == want) {
            vm_pop_roots(vm, vm->nroots - base);
            return BOOL_VAL(want);
        }
    }
    vm_pop_roots(vm, vm->nroots - base);
    return BOOL_VAL(!want);
}

static Value b_any(VM *vm, int argc, Value *argv, Dict *kwargs) { return any_all(vm, argc, argv, kwargs, true); }
static Value b_all(VM *vm, int argc, Value *argv, Dict *kwargs) { return any_all(vm, argc, argv, kwargs, false); }

static Value b_iter(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "iter", kwargs);
    arg_between(vm, "iter", argc, 1, 2);
    if (argc == 1) return vm_iter(vm, argv[0]);
    return iter_callable(vm, argv[0], argv[1]);
}

static Value b_next(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "next", kwargs);
    arg_between(vm, "next", argc, 1, 2);
    Value it = argv[0];
    Type *t = vm_typeof(vm, it);
    if (!t->next && IS_EMPTY(type_lookup(vm, t, cstr_name(vm, "__next__"))))
        vm_raise_kind(vm, TypeError, "'%s' object is not an iterator", vm_type_name(vm, it));
    Value dflt = argc > 1 ? argv[1] : EMPTY_VAL;
    /* a generator's StopIteration carries its return value: let send raise it */
    if (IS_EMPTY(dflt) && (t == vm->t_generator || t == vm->t_coroutine_wrapper || t == vm->t_async_asend ||
                           t == vm->t_async_athrow)) {
        Value none = NONE_VAL;
        return vm_call_method(vm, it, cstr_name(vm, "send"), 1, &none);
    }
    vm_push_root(vm, dflt);
    Value out;
    bool ok = vm_next(vm, it, &out);
    vm_pop_roots(vm, 1);
    if (ok) return out;
    if (!IS_EMPTY(dflt)) return dflt;
    vm_throw(vm, OBJ_VAL(vm->exc[EXC_StopIteration]));
}

/* ------------------------------------------------------------------ */
/* objects and types                                                   */
/* ------------------------------------------------------------------ */

static bool isinstance_rec(VM *vm, Value obj, Value cls, int depth) {
    if (is_type(vm, cls)) return class_isinstance(vm, obj, (Type *)AS_OBJ(cls));
    if (union_is(vm, cls)) cls = OBJ_VAL(union_args(cls)); /* int | str: as (int, str) */
    if (IS_TUPLE(vm, cls) && depth < 1000) {
        Tuple *t = AS_TUPLE(cls);
        for (int64_t i = 0; i < t->len; i++)
            if (isinstance_rec(vm, obj, t->items[i], depth + 1)) return true;
        return false;
    }
    /* an object whose class defines __instancecheck__ (typing.List ...) */
    Value check = IS_OBJ(cls) ? type_lookup(vm, vm_typeof(vm, cls), str_cstr(vm, "__instancecheck__")) : EMPTY_VAL;
    if (!IS_EMPTY(check)) {
        Value args[2] = {cls, obj};
        return vm_truthy(vm, vm_call(vm, check, 2, args));
    }
    vm_raise_kind(vm, TypeError, "isinstance() arg 2 must be a type, a tuple of types, or a union");
}

static Value b_isinstance(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "isinstance", kwargs);
    arg_between(vm, "isinstance", argc, 2, 2);
    return BOOL_VAL(isinstance_rec(vm, argv[0], argv[1], 0));
}

static bool issubclass_rec(VM *vm, Type *c, Value cls, int depth) {
    if (is_type(vm, cls)) return class_issubclass(vm, c, (Type *)AS_OBJ(cls));
    if (union_is(vm, cls)) cls = OBJ_VAL(union_args(cls));
    if (IS_TUPLE(vm, cls) && depth < 1000) {
        Tuple *t = AS_TUPLE(cls);
        for (int64_t i = 0; i < t->len; i++)
            if (issubclass_rec(vm, c, t->items[i], depth + 1)) return true;
        return false;
    }
    Value check = IS_OBJ(cls) ? type_lookup(vm, vm_typeof(vm, cls), str_cstr(vm, "__subclasscheck__")) : EMPTY_VAL;
    if (!IS_EMPTY(check)) {
        Value args[2] = {cls, OBJ_VAL(c)};
        return vm_truthy(vm, vm_call(vm, check, 2, args));
    }
    vm_raise_kind(vm, TypeError, "issubclass() arg 2 must be a class, a tuple of classes, or a union");
}

static Value b_issubclass(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "issubclass", kwargs);
    arg_between(vm, "issubclass", argc, 2, 2);
    if (!is_type(vm, argv[0])) vm_raise_kind(vm, TypeError, "issubclass() arg 1 must be a class");
    return BOOL_VAL(issubclass_rec(vm, (Type *)AS_OBJ(argv[0]), argv[1], 0));
}

static Value b_repr(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "repr", kwargs);
    arg_one(vm, "repr", argc);
    return STR_VAL(vm_repr(vm, argv[0]));
}

static Value b_ascii(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "ascii", kwargs);
    arg_one(vm, "ascii", argc);
    return STR_VAL(str_to_ascii(vm, vm_repr(vm, argv[0])));
}

static Value b_hash(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "hash", kwargs);
    arg_one(vm, "hash", argc);
    return INT_VAL(vm_hash(vm, argv[0]));
}

/* id(): the address of objects; unboxed values get a stable number derived
** from their value (odd, so never equal to an object's address). */
static Value b_id(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "id", kwargs);
    arg_one(vm, "id", argc);
    Value v = argv[0];
    const uint64_t mask = 0x3FFFFFFFFFFFFFFFull;
    switch (v.tag) {
    case VAL_OBJ: return INT_VAL((int64_t)(uintptr_t)AS_OBJ(v));
    case VAL_INT: return INT_VAL((int64_t)((((uint64_t)AS_INT(v)) << 3 | 1) & mask));
    case VAL_FLOAT: {
        uint64_t bits;
        memcpy(&bits, &v.as.f, sizeof bits);
        return INT_VAL((int64_t)(((bits << 3) | 3) & mask));
    }
    case VAL_BOOL: return INT_VAL(AS_BOOL(v) ? 13 : 5);
    default: return INT_VAL(7);
    }
}

static Value b_callable(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "callable", kwargs);
    arg_one(vm, "callable", argc);
    Value v = argv[0];
    if (!IS_OBJ(v)) return BOOL_VAL(false);
    Type *t = vm_typeof(vm, v);
    if (t->call || t == vm->t_function || t == vm->t_builtin_function || t == vm->t_method || is_type(vm, v))
        return BOOL_VAL(true);
    return BOOL_VAL(!IS_EMPTY(type_lookup(vm, t, vm->sym_call)));
}

static Str *attr_name_arg(VM *vm, Value v) {
    if (!IS_STR(vm, v))
        vm_raise_kind(vm, TypeError, "attribute name must be string, not '%s'", vm_type_name(vm, v));
    return AS_STR(v);
}

typedef struct AttrCall {
    Value obj;
    Str *name;
    Value result;
} AttrCall;

static void do_getattr(VM *vm, void *ud) {
    AttrCall *c = ud;
    c->result = vm_getattr_opt(vm, c->obj, c->name);
}

/* obj.name, or EMPTY when it raises AttributeError (other errors propagate) */
static Value getattr_or_empty(VM *vm, Value obj, Str *name) {
    AttrCall c = {obj, name, EMPTY_VAL};
    if (vm_pcall(vm, do_getattr, &c)) return c.result;
    Value exc = vm->exc_value;
    if (vm_exc_matches(vm, exc, OBJ_VAL(vm->exc[EXC_AttributeError]))) return EMPTY_VAL;
    vm_throw(vm, exc);
}

static Value b_getattr(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "getattr", kwargs);
    arg_between(vm, "getattr", argc, 2, 3);
    Str *name = attr_name_arg(vm, argv[1]);
    if (argc == 2) return vm_getattr(vm, argv[0], name);
    Value dflt = argv[2];
    vm_push_root(vm, dflt);
    Value r = getattr_or_empty(vm, argv[0], name);
    vm_pop_roots(vm, 1);
    return IS_EMPTY(r) ? dflt : r;
}

static Value b_hasattr(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "hasattr", kwargs);
    arg_between(vm, "hasattr", argc, 2, 2);
    Str *name = attr_name_arg(vm, argv[1]);
    return BOOL_VAL(!IS_EMPTY(getattr_or_empty(vm, argv[0], name)));
}

static Value b_setattr(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "setattr", kwargs);
    arg_between(vm, "setattr", argc, 3, 3);
    vm_setattr(vm, argv[0], attr_name_arg(vm, argv[1]), argv[2]);
    return NONE_VAL;
}

static Value b_delattr(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "delattr", kwargs);
    arg_between(vm, "delattr", argc, 2, 2);
    vm_delattr(vm, argv[0], attr_name_arg(vm, argv[1]));
    return NONE_VAL;
}

static Value b_globals(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    kw_none(vm, "globals", kwargs);
    if (argc != 0) vm_raise_kind(vm, TypeError, "globals() takes no arguments (%d given)", argc);
    return OBJ_VAL(caller_globals(vm));
}

static Value b_locals(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)argv;
    kw_none(vm, "locals", kwargs);
    if (argc != 0) vm_raise_kind(vm, TypeError, "locals() takes no arguments (%d given)", argc);
    return OBJ_VAL(frame_locals(vm, caller_frame(vm)));
}

static Value b_vars(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "vars", kwargs);
    arg_between(vm, "vars", argc, 0, 1);
    if (argc == 0) return OBJ_VAL(frame_locals(vm, caller_frame(vm)));
    Value d = getattr_or_empty(vm, argv[0], vm->sym_dict);
    if (IS_EMPTY(d)) vm_raise_kind(vm, TypeError, "vars() argument must have __dict__ attribute");
    return d;
}

/* Adds the keys of d that are strings to the name set. */
static void add_names(VM *vm, Dict *names, Dict *d) {
    if (!d) return;
    int64_t pos = 0;
    Value k, v;
    while (dict_next(d, &pos, &k, &v))
        if (IS_STR(vm, k)) dict_set(vm, names, k, NONE_VAL);
}

static List *sorted_keys(VM *vm, Dict *names) {
    List *l = list_new(vm, names->count);
    int64_t pos = 0;
    Value k, v;
    while (dict_next(names, &pos, &k, &v)) list_append(vm, l, k);
    vm_push_root(vm, OBJ_VAL(l));
    list_sort(vm, l, NONE_VAL, false);
    vm_pop_roots(vm, 1);
    return l;
}

static Value b_dir(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "dir", kwargs);
    arg_between(vm, "dir", argc, 0, 1);
    if (argc == 0) return OBJ_VAL(sorted_keys(vm, frame_locals(vm, caller_frame(vm))));
    Value obj = argv[0];
    int base = root_slot(vm, obj);
    Type *t = vm_typeof(vm, obj);
    Value f = type_lookup(vm, t, cstr_name(vm, "__dir__"));
    if (IS_OBJ(f) && AS_OBJ(f)->type == vm->t_function) { /* a user-defined __dir__ */
        Value r = vm_call(vm, f, 1, &vm->roots[base]);
        vm_push_root(vm, r);
        List *l = list_from_iterable(vm, r);
        vm_push_root(vm, OBJ_VAL(l));
        list_sort(vm, l, NONE_VAL, false);
        vm_pop_roots(vm, vm->nroots - base);
        return OBJ_VAL(l);
    }
    Dict *names = dict_new(vm);
    vm_push_root(vm, OBJ_VAL(names));
    if (IS_OBJ(obj) && AS_OBJ(obj)->type == vm->t_module) {
        add_names(vm, names, ((Module *)AS_OBJ(obj))->dict);
    } else if (is_type(vm, obj)) {
        for (Type *c = (Type *)AS_OBJ(obj); c; c = c->base) add_names(vm, names, c->dict);
    } else {
        Value d = getattr_or_empty(vm, obj, vm->sym_dict);
        if (IS_DICT(vm, d)) add_names(vm, names, AS_DICT(d));
        for (Type *c = t; c; c = c->base) add_names(vm, names, c->dict);
    }
    List *l = sorted_keys(vm, names);
    vm_pop_roots(vm, vm->nroots - base);
    return OBJ_VAL(l);
}

static Value b_format(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "format", kwargs);
    arg_between(vm, "format", argc, 1, 2);
    Str *spec = NULL;
    if (argc == 2) {
        if (!IS_STR(vm, argv[1]))
            vm_raise_kind(vm, TypeError, "format() argument 2 must be str, not %s", vm_type_name(vm, argv[1]));
        spec = AS_STR(argv[1]);
    }
    return STR_VAL(vm_format(vm, argv[0], spec));
}

/* ------------------------------------------------------------------ */
/* exec / eval                                                         */
/* ------------------------------------------------------------------ */

static Proto *compile_string(VM *vm, Str *text, bool is_eval) {
    const char *p = text->chars;
    size_t len = (size_t)text->len;
    if (is_eval)
        while (len > 0 && (*p == ' ' || *p == '\t')) {
            p++;
            len--;
        }
    Source *s = source_new(vm, str_cstr(vm, "<string>"), p, len);
    vm_push_root(vm, OBJ_VAL(s));
    Proto *proto = vm_compile_source(vm, s, is_eval ? PARSE_EVAL : PARSE_FILE);
    vm_pop_roots(vm, 1);
    return proto;
}

static Value run_string(VM *vm, int argc, Value *argv, Dict *kwargs, bool is_eval) {
    const char *name = is_eval ? "eval" : "exec";
    Value g = kw_take(vm, kwargs, "globals");
    Value l = kw_take(vm, kwargs, "locals");
    kw_done(vm, name, kwargs);
    if (argc < 1) vm_raise_kind(vm, TypeError, "%s expected at least 1 argument, got 0", name);
    if (argc > 3) vm_raise_kind(vm, TypeError, "%s expected at most 3 arguments, got %d", name, argc);
    if (argc > 1) g = argv[1];
    if (argc > 2) l = argv[2];
    Value src = argv[0];
    bool is_code = IS_OBJ(src) && AS_OBJ(src)->type == vm->t_code; /* from compile() */
    if (!IS_STR(vm, src) && !is_code)
        vm_raise_kind(vm, TypeError, "%s() arg 1 must be a string, bytes or code object", name);
    if (is_code && ((Proto *)AS_OBJ(src))->nfree > 0)
        vm_raise_kind(vm, TypeError, "code object requires a closure of exactly length %d", (int)((Proto *)AS_OBJ(src))->nfree);
    if (!IS_EMPTY(g) && !IS_NONE(g) && !IS_DICT(vm, g))
        vm_raise_kind(vm, TypeError, is_eval ? "globals must be a real dict; try eval(expr, {}, mapping)"
                                             : "exec() globals must be a dict, not %s",
                      vm_type_name(vm, g));
    if (!IS_EMPTY(l) && !IS_NONE(l) && !IS_DICT(vm, l))
        vm_raise_kind(vm, TypeError, "locals must be a mapping");
    int base = vm->nroots;
    vm_push_root(vm, src);
    Dict *globals;
    Dict *locals = NULL;
    if (IS_EMPTY(g) || IS_NONE(g)) {
        Frame *f = caller_frame(vm);
        globals = caller_globals(vm);
        if (IS_EMPTY(l) || IS_NONE(l)) {
            Dict *fl = frame_locals(vm, f);
            if (fl != globals) locals = fl;
        } else {
            locals = AS_DICT(l);
        }
    } else {
        globals = AS_DICT(g);
        if (!IS_EMPTY(l) && !IS_NONE(l) && AS_DICT(l) != globals) locals = AS_DICT(l);
    }
    vm_push_root(vm, OBJ_VAL(globals));
    if (locals) vm_push_root(vm, OBJ_VAL(locals));
    /* Without real local scopes for compiled strings, names of a separate
    ** locals mapping are overlaid on a copy of the globals. */
    Dict *run = globals;
    if (locals) {
        run = dict_copy(vm, globals);
        vm_push_root(vm, OBJ_VAL(run));
        int64_t pos = 0;
        Value k, v;
        while (dict_next(locals, &pos, &k, &v)) dict_set(vm, run, k, v);
    }
    Proto *proto = is_code ? (Proto *)AS_OBJ(src) : compile_string(vm, AS_STR(src), is_eval);
    vm_push_root(vm, OBJ_VAL(proto));
    Value r = vm_exec_proto(vm, proto, run);
    if (locals && !is_eval) {
        /* names the code bound (or rebound) go back to the locals mapping */
        int64_t pos = 0;
        Value k, v;
        while (dict_next(run, &pos, &k, &v)) {
            Value old;
            bool in_globals = dict_get(vm, globals, k, &old);
            if (!in_globals || !vm_is(old, v)) dict_set(vm, locals, k, v);
        }
    }
    vm_pop_roots(vm, vm->nroots - base);
    return is_eval ? r : NONE_VAL;
}

static Value b_eval(VM *vm, int argc, Value *argv, Dict *kwargs) { return run_string(vm, argc, argv, kwargs, true); }
static Value b_exec(VM *vm, int argc, Value *argv, Dict *kwargs) { return run_string(vm, argc, argv, kwargs, false); }

/* exit([code]) / quit([code]): raise SystemExit */
static Value b_exit(VM *vm, int argc, Value *argv, Dict *kwargs) {
    kw_none(vm, "exit", kwargs);
    arg_between(vm, "exit", argc, 0, 1);
    vm_throw(vm, exc_new(vm, vm->exc[EXC_SystemExit], argc, argv));
}

static Value b_import(VM *vm, int argc, Value *argv, Dict *kwargs) {
    (void)kwargs;
    if (argc < 1 || !IS_STR(vm, argv[0])) vm_raise_kind(vm, TypeError, "__import__() argument 1 must be str");
    return vm_import(vm, AS_STR(argv[0]), true);
}

/* ------------------------------------------------------------------ */
/* registration                                                        */
/* ------------------------------------------------------------------ */

static Module *build_builtins_module(VM *vm) {
    Module *m = module_new(vm, str_cstr(vm, "builtins"));
    m->dict = vm->builtins;
    return m;
}

static void def(VM *vm, const char *name, NativeFn fn) {
    dict_set_cstr(vm, vm->builtins, name, native_new(vm, name, fn, EMPTY_VAL));
}

void builtins_init(VM *vm) {
    if (!vm->builtins) vm->builtins = dict_new(vm);
    Dict *b = vm->builtins;

    static const struct {
        const char *name;
        NativeFn fn;
    } fns[] = {
        {"print", b_print},       {"input", b_input},         {"open", b_open},
        {"len", b_len},           {"abs", b_abs},             {"min", b_min},
        {"max", b_max},           {"sum", b_sum},             {"sorted", b_sorted},
        {"any", b_any},           {"all", b_all},             {"iter", b_iter},
        {"next", b_next},         {"isinstance", b_isinstance}, {"issubclass", b_issubclass},
        {"repr", b_repr},         {"ascii", b_ascii},         {"hash", b_hash},
        {"id", b_id},             {"callable", b_callable},   {"chr", b_chr},
        {"ord", b_ord},           {"round", b_round},         {"divmod", b_divmod},
        {"pow", b_pow},           {"hex", b_hex},             {"oct", b_oct},
        {"bin", b_bin},           {"getattr", b_getattr},     {"setattr", b_setattr},
        {"hasattr", b_hasattr},   {"delattr", b_delattr},     {"globals", b_globals},
        {"locals", b_locals},     {"vars", b_vars},           {"dir", b_dir},
        {"format", b_format},     {"eval", b_eval},           {"exec", b_exec},
        {"compile", builtin_compile},
        {"exit", b_exit},         {"quit", b_exit},           {"__import__", b_import},
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) def(vm, fns[i].name, fns[i].fn);

    const struct {
        const char *name;
        Type *t;
    } types[] = {
        {"type", vm->t_type},         {"object", vm->t_object},     {"int", vm->t_int},
        {"float", vm->t_float},       {"bool", vm->t_bool},         {"str", vm->t_str},
        {"list", vm->t_list},         {"tuple", vm->t_tuple},       {"dict", vm->t_dict},
        {"set", vm->t_set},           {"frozenset", vm->t_frozenset}, {"range", vm->t_range},
        {"slice", vm->t_slice},       {"property", vm->t_property}, {"staticmethod", vm->t_staticmethod},
        {"classmethod", vm->t_classmethod}, {"super", vm->t_super},
        {"complex", vm->t_complex},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (types[i].t) dict_set_cstr(vm, b, types[i].name, OBJ_VAL(types[i].t));

    /* exception classes (error_init may have bound them already) */
#define BIND_EXC(name, base)                                                      \
    if (vm->exc[EXC_##name] && IS_EMPTY(dict_get_cstr(vm, b, #name)))              \
        dict_set_cstr(vm, b, #name, OBJ_VAL(vm->exc[EXC_##name]));
    EXC_LIST(BIND_EXC)
#undef BIND_EXC

    dict_set_cstr(vm, b, "NotImplemented", vm->not_implemented);
    dict_set_cstr(vm, b, "Ellipsis", vm->ellipsis);
    dict_set_cstr(vm, b, "__debug__", BOOL_VAL(true));

    iterators_init(vm);
    async_builtins_init(vm);
    module_register_native(vm, "builtins", build_builtins_module);
}
