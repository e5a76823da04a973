/*
** interp.c — the register VM: the dispatch loop, calls and returns between
** gpy functions without C recursion, exception unwinding through the
** per-proto handler tables, generator frames, and inline caches.
**
** One C-level invocation (interp_run) runs the frame its caller pushed plus
** every frame that CALL pushes above it; only calls from C (vm_call, class
** bodies, generators resumed by natives) nest another invocation.
*/
#include <math.h>
#include <string.h>

#include "interp.h"
#include "gen_batch.h"
#include "match.h"
#include "cstack.h"
#include "signals.h"

/* ================================================================ caches */

/* One inline cache per constant of a proto: LOAD_GLOBAL / STORE_GLOBAL /
** GET_ATTR / SET_ATTR / LOAD_METHOD index them with their name constant, so
** every site naming the same identifier in a function shares one entry.
** Entries hold no strong references: a hit is always validated against
** live data (dict entry keys, or a type's never-reused version number). */
enum {
    CK_NONE,    /* empty */
    CK_GLOBAL,  /* name lives in globals dict owner at entry index */
    CK_BUILTIN, /* name absent from globals owner (version dversion), in builtins at index */
    CK_MODATTR, /* module attribute: module dict owner, entry index */
    CK_ATTR,    /* instance attribute of type owner (version tversion): dict index hint;
                   value = a plain class attribute found on the type, or EMPTY */
    CK_METHOD,  /* method value found on type owner (version tversion); index = 1 when
                   instances have a dict that could shadow it */
};

typedef struct InlineCache {
    uint32_t kind;
    uint32_t tversion;
    int64_t index;
    uint64_t dversion;
    Obj *owner;
    Value value;
} InlineCache;

size_t interp_caches_size(Proto *p) {
    return p->caches ? (size_t)(p->nconsts > 0 ? p->nconsts : 0) * sizeof(InlineCache) : 0;
}

/* The proto's caches, made on first use (a nested loop running the same
** proto may have made them since this frame loaded its pointer). */
static COLD InlineCache *alloc_caches(VM *vm, Proto *p) {
    if (!p->caches) {
        size_t n = p->nconsts > 0 ? (size_t)p->nconsts : 1;
        p->caches = gc_calloc(vm, n, sizeof(InlineCache));
    }
    return p->caches;
}

static inline bool entry_is(const DictEntry *e, const Str *name) {
    return e->key.tag == VAL_OBJ && e->key.as.obj == (const Obj *)name;
}

/* Entry index of name in d (identity, then string equality), -1 if absent.
** Linear: only used when a cache is (re)filled. */
static int64_t find_index(VM *vm, Dict *d, Str *name) {
    for (int64_t i = 0; i < d->nentries; i++)
        if (entry_is(&d->entries[i], name)) return i;
    for (int64_t i = 0; i < d->nentries; i++) {
        Value k = d->entries[i].key;
        if (IS_STR(vm, k) && str_equal(AS_STR(k), name)) return i;
    }
    return -1;
}

/* ================================================================ errors */

_Noreturn void interp_recursion_error(VM *vm) {
    vm_raise_kind(vm, RecursionError, "maximum recursion depth exceeded");
}

static const char *local_name(Frame *f, int reg) {
    Proto *p = f->fn->proto;
    if (reg < p->nlocals && p->varnames && p->varnames[reg]) return p->varnames[reg]->chars;
    return "?";
}

static COLD _Noreturn void unbound_local(VM *vm, Frame *f, int reg) {
    vm_raise_kind(vm, UnboundLocalError, "cannot access local variable '%s' where it is not associated with a value",
                  local_name(f, reg));
}

static COLD _Noreturn void unbound_free(VM *vm, Frame *f, int idx) {
    Proto *p = f->fn->proto;
    const char *n = idx < p->nfree && p->freenames && p->freenames[idx] ? p->freenames[idx]->chars : "?";
    vm_raise_kind(vm, NameError,
                  "cannot access free variable '%s' where it is not associated with a value in enclosing scope", n);
}

static COLD _Noreturn void name_error(VM *vm, Str *name) {
    vm_raise_kind(vm, NameError, "name '%s' is not defined", name->chars);
}

/* ============================================================ frames, entry */

void interp_enter(VM *vm) {
    if (c_stack_exhausted()) interp_recursion_error(vm);
    int32_t limit = vm->recursion_limit > 0 ? vm->recursion_limit : 1000;
    if (vm->c_depth >= limit) interp_recursion_error(vm);
    vm->c_depth++;
}

void interp_check_room(VM *vm, Value *base, int64_t nregs) {
    if (vm->nframes >= vm->recursion_limit || vm->nframes >= vm->frames_cap || base + nregs > vm->stack_end)
        interp_recursion_error(vm);
}

/* ======================================================= numeric helpers */

#if defined(__GNUC__)
#define ADD_OVF(a, b, r) __builtin_add_overflow(a, b, r)
#define SUB_OVF(a, b, r) __builtin_sub_overflow(a, b, r)
#define MUL_OVF(a, b, r) __builtin_mul_overflow(a, b, r)
#else
static bool ADD_OVF(int64_t a, int64_t b, int64_t *r) {
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) return true;
    *r = a + b;
    return false;
}
static bool SUB_OVF(int64_t a, int64_t b, int64_t *r) {
    if ((b < 0 && a > INT64_MAX + b) || (b > 0 && a < INT64_MIN + b)) return true;
    *r = a - b;
    return false;
}
static bool MUL_OVF(int64_t a, int64_t b, int64_t *r) {
    if (a == 0 || b == 0) {
        *r = 0;
        return false;
    }
    if ((a == -1 && b == INT64_MIN) || (b == -1 && a == INT64_MIN)) return true;
    if (a > 0 ? (b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a) : (b > 0 ? a < INT64_MIN / b : a < INT64_MAX / b))
        return true;
    *r = a * b;
    return false;
}
#endif

#define EXACT_DBL ((int64_t)1 << 53) /* ints up to this convert to double exactly */

/* Arithmetic outside the loop's inline fast paths. */
static NOINLINE Value arith(VM *vm, BinOp op, Value a, Value b) {
    /* number.c owns the exact semantics and messages; vm_binop dispatches there */
    return vm_binop(vm, op, a, b);
}

/* An int64 + - * that overflowed: the big-int result, out of the hot path. */
static COLD NOINLINE Value int_overflowed(VM *vm, BinOp op, Value a, Value b) { return vm_binop(vm, op, a, b); }

/* Augmented assignment outside the inline fast paths. */
static NOINLINE Value inplace(VM *vm, BinOp op, Value a, Value b) { return vm_inplace(vm, op, a, b); }

/* Comparisons outside the inline int/int and float/float paths: exact
** mixed int/float where a double represents the int, str equality, then
** vm_compare. */
static NOINLINE Value compare(VM *vm, CmpOp op, Value a, Value b) {
    if ((a.tag == VAL_INT && b.tag == VAL_FLOAT && a.as.i <= EXACT_DBL && a.as.i >= -EXACT_DBL) ||
        (a.tag == VAL_FLOAT && b.tag == VAL_INT && b.as.i <= EXACT_DBL && b.as.i >= -EXACT_DBL) ||
        (a.tag == VAL_FLOAT && b.tag == VAL_FLOAT) || (a.tag == VAL_INT && b.tag == VAL_INT)) {
        if (a.tag == VAL_INT && b.tag == VAL_INT) {
            int64_t x = a.as.i, y = b.as.i;
            switch (op) {
            case CMP_EQ: return BOOL_VAL(x == y);
            case CMP_NE: return BOOL_VAL(x != y);
            case CMP_LT: return BOOL_VAL(x < y);
            case CMP_LE: return BOOL_VAL(x <= y);
            case CMP_GT: return BOOL_VAL(x > y);
            case CMP_GE: return BOOL_VAL(x >= y);
            default: break;
            }
        } else {
            double x = AS_NUMBER(a), y = AS_NUMBER(b);
            switch (op) {
            case CMP_EQ: return BOOL_VAL(x == y);
            case CMP_NE: return BOOL_VAL(x != y);
            case CMP_LT: return BOOL_VAL(x < y);
            case CMP_LE: return BOOL_VAL(x <= y);
            case CMP_GT: return BOOL_VAL(x > y);
            case CMP_GE: return BOOL_VAL(x >= y);
            default: break;
            }
        }
    }
    if ((op == CMP_EQ || op == CMP_NE) && IS_STR(vm, a) && IS_STR(vm, b)) {
        bool eq = AS_OBJ(a) == AS_OBJ(b) || str_equal(AS_STR(a), AS_STR(b));
        return BOOL_VAL(op == CMP_EQ ? eq : !eq);
    }
    return vm_compare(vm, op, a, b);
}

static NOINLINE Value unop(VM *vm, UnOp op, Value v) { return vm_unop(vm, op, v); }

static inline bool truthy(VM *vm, Value v) {
    switch (v.tag) {
    case VAL_BOOL: return v.as.b;
    case VAL_INT: return v.as.i != 0;
    case VAL_NONE: return false;
    default: return vm_truthy(vm, v);
    }
}

/* ==================================================== globals and names */

static NOINLINE Value load_global_slow(VM *vm, Dict *g, Str *name, InlineCache *c) {
    Value v = dict_get_str(vm, g, name);
    if (!IS_EMPTY(v)) {
        int64_t i = find_index(vm, g, name);
        if (i >= 0) {
            c->kind = CK_GLOBAL;
            c->owner = &g->obj;
            c->index = i;
        }
        return v;
    }
    Dict *b = vm->builtins;
    v = b ? dict_get_str(vm, b, name) : EMPTY_VAL;
    if (IS_EMPTY(v)) name_error(vm, name);
    int64_t i = find_index(vm, b, name);
    if (i >= 0) {
        c->kind = CK_BUILTIN;
        c->owner = &g->obj;
        c->dversion = g->version;
        c->index = i;
    }
    return v;
}

static NOINLINE void store_global_slow(VM *vm, Dict *g, Str *name, Value v, InlineCache *c) {
    dict_set_str(vm, g, name, v);
    int64_t i = find_index(vm, g, name);
    if (i >= 0) {
        c->kind = CK_GLOBAL;
        c->owner = &g->obj;
        c->index = i;
    }
}

static NOINLINE Value load_name(VM *vm, Frame *f, Str *name) {
    Value v;
    if (f->locals) {
        v = dict_get_str(vm, f->locals, name);
        if (!IS_EMPTY(v)) return v;
    }
    v = dict_get_str(vm, f->globals, name);
    if (!IS_EMPTY(v)) return v;
    if (vm->builtins) {
        v = dict_get_str(vm, vm->builtins, name);
        if (!IS_EMPTY(v)) return v;
    }
    name_error(vm, name);
}

static NOINLINE void del_name(VM *vm, Dict *d, Str *name) {
    if (!dict_del(vm, d, STR_VAL(name))) name_error(vm, name);
}

/* ============================================================ attributes */

/* Plain class attribute values that attribute lookup returns unchanged
** (no binding, no descriptor protocol). */
static bool plain_class_attr(VM *vm, Value v) {
    if (!IS_OBJ(v)) return true;
    Type *t = AS_OBJ(v)->type;
    return t == vm->t_str || t == vm->t_tuple || t == vm->t_type || t == vm->t_int || t == vm->t_float;
}

static bool is_dunder(Str *name) {
    return name->len >= 4 && name->chars[0] == '_' && name->chars[1] == '_' && name->chars[name->len - 1] == '_' &&
           name->chars[name->len - 2] == '_';
}

/* Can instances of t use the CK_ATTR fast paths for name: a user class of
** Instance layout with the default attribute protocol (no __getattr__,
** __setattr__, __delattr__, __getattribute__), no descriptor for name. */
static bool attr_cacheable(VM *vm, Type *t, Str *name, Value *classval) {
    if (!(t->flags & TYPE_HEAP) || t->getattr || t->setattr || is_dunder(name)) return false;
    Type *a = t;
    while (a && (a->flags & TYPE_HEAP)) a = a->base;
    if (a != vm->t_object) return false;
    Value v = type_lookup(vm, t, name);
    if (!IS_EMPTY(v) && !plain_class_attr(vm, v)) return false;
    *classval = v;
    return true;
}

static void fill_attr_cache(InlineCache *c, Type *t, Value classval) {
    c->kind = CK_ATTR;
    c->owner = &t->obj;
    c->tversion = t->version;
    c->value = classval;
    c->index = -1;
}

/* Index hint of name in an instance dict (small dicts only: a linear scan). */
static int64_t attr_index(VM *vm, Dict *d, Str *name) {
    if (!d || d->nentries > 16) return -1;
    return find_index(vm, d, name);
}

/* Is c a CK_ATTR entry valid for instances of t? */
static inline bool attr_cache_hit(const InlineCache *c, const Type *t) {
    return c->kind == CK_ATTR && c->owner == &t->obj && c->tversion == t->version;
}

/* Index of the entry just appended to d for name (dict_set of a new key). */
static int64_t last_index(Dict *d, Str *name) {
    int64_t i = d->nentries - 1;
    return i >= 0 && entry_is(&d->entries[i], name) ? i : -1;
}

static NOINLINE Value getattr_slow(VM *vm, Value o, Str *name, InlineCache *c) {
    if (IS_OBJ(o)) {
        Obj *ob = AS_OBJ(o);
        Type *t = ob->type;
        if (t == vm->t_module) {
            Dict *d = ((Module *)ob)->dict;
            Value v = d ? dict_get_str(vm, d, name) : EMPTY_VAL;
            if (!IS_EMPTY(v)) {
                int64_t i = find_index(vm, d, name);
                if (i >= 0) {
                    c->kind = CK_MODATTR;
                    c->owner = &d->obj;
                    c->index = i;
                }
                return v;
            }
        } else {
            Value cv;
            bool hit = attr_cache_hit(c, t);
            if (hit || attr_cacheable(vm, t, name, &cv)) {
                if (!hit) fill_attr_cache(c, t, cv);
                Dict *d = ((Instance *)ob)->dict;
                Value v = d ? dict_get_str(vm, d, name) : EMPTY_VAL;
                if (!IS_EMPTY(v)) {
                    c->index = attr_index(vm, d, name);
                    return v;
                }
                if (!IS_EMPTY(c->value)) return c->value;
            }
        }
    }
    return vm_getattr(vm, o, name);
}

static NOINLINE void setattr_slow(VM *vm, Value o, Str *name, Value v, InlineCache *c) {
    if (IS_OBJ(o)) {
        Obj *ob = AS_OBJ(o);
        Type *t = ob->type;
        Value cv;
        if (attr_cache_hit(c, t)) {
            /* no descriptor: a plain store into the instance dict */
            Dict *d = ((Instance *)ob)->dict;
            if (d) {
                int64_t before = d->count;
                dict_set_str(vm, d, name, v);
                c->index = d->count > before ? last_index(d, name) : attr_index(vm, d, name);
                return;
            }
            vm_setattr(vm, o, name, v);
            c->index = attr_index(vm, ((Instance *)ob)->dict, name);
            return;
        }
        if (attr_cacheable(vm, t, name, &cv)) {
            vm_setattr(vm, o, name, v);
            fill_attr_cache(c, t, cv);
            c->index = attr_index(vm, ((Instance *)ob)->dict, name);
            return;
        }
    }
    vm_setattr(vm, o, name, v);
}

static inline bool is_method(VM *vm, Value v) {
    if (!IS_OBJ(v)) return false;
    Obj *o = AS_OBJ(v);
    return o->type == vm->t_function || (o->type == vm->t_builtin_function && (o->flags & NATIVE_FLAG_METHOD));
}

/* How LOAD_METHOD may treat instances of t: -1 use the generic attribute
** protocol; 0 methods found on the type cannot be shadowed (no instance
** dict); 1 instances are Instance-like, whose dict may shadow a method. */
static int method_layout(VM *vm, Type *t) {
    if (t->flags & TYPE_HEAP) {
        if (t->getattr) return -1;
        Type *a = t;
        while (a && (a->flags & TYPE_HEAP)) a = a->base;
        return a == vm->t_object ? 1 : -1;
    }
    if (t == vm->t_type || t == vm->t_module || t == vm->t_function || t == vm->t_super ||
        (t->flags & TYPE_EXCEPTION) || type_is_subtype(t, vm->t_type))
        return -1;
    return 0;
}

/* Finds obj.name as an unbound method to call with obj first; false when
** the generic attribute protocol must be used. Fills the cache. */
static bool find_method(VM *vm, Value obj, Str *name, InlineCache *c, Value *out) {
    Type *t = vm_typeof(vm, obj);
    int layout = method_layout(vm, t);
    if (layout < 0) return false;
    Value m = type_lookup(vm, t, name);
    if (!is_method(vm, m)) return false;
    if (c) {
        c->kind = CK_METHOD;
        c->owner = &t->obj;
        c->tversion = t->version;
        c->value = m;
        c->index = layout;
    }
    if (layout == 1) {
        Dict *d = ((Instance *)AS_OBJ(obj))->dict;
        if (d && !IS_EMPTY(dict_get_str(vm, d, name))) return false;
    }
    *out = m;
    return true;
}

bool interp_find_method(VM *vm, Value obj, Str *name, Value *out) {
    return find_method(vm, obj, name, NULL, out);
}

static NOINLINE void load_method_slow(VM *vm, Value o, Str *name, InlineCache *c, Value *ra) {
    Value m;
    if (IS_OBJ(o) && AS_OBJ(o)->type == vm->t_module) {
        ra[0] = getattr_slow(vm, o, name, c);
        ra[1] = EMPTY_VAL;
        return;
    }
    if (find_method(vm, o, name, c, &m)) {
        ra[0] = m;
        ra[1] = o;
        return;
    }
    Value v = vm_getattr(vm, o, name);
    ra[0] = v;
    ra[1] = EMPTY_VAL;
}

/* =================================================== functions, classes */

static NOINLINE Value make_function(VM *vm, Frame *f, Proto *p) {
    Function *fn = function_new(vm, p, f->globals);
    for (int32_t i = 0; i < p->nfree && i < fn->nfree; i++) {
        FreeVarDesc d = p->freevars[i];
        Value cv = f->base[d.index];
        fn->free[i] = d.from_parent_free ? f->fn->free[d.index] : IS_OBJ(cv) ? (Cell *)AS_OBJ(cv) : NULL;
    }
    return OBJ_VAL(fn);
}

/* BUILD_CLASS: runs the body function with a fresh namespace as its
** locals, then makes the class; a returned Cell (__class__) gets it. */
static NOINLINE Value build_class(VM *vm, Frame *frame, Value *ra, int nbases, int nkw) {
    if (!IS_OBJ(ra[0]) || AS_OBJ(ra[0])->type != vm->t_function)
        vm_raise_kind(vm, SystemError, "BUILD_CLASS without a body function");
    Function *body = (Function *)AS_OBJ(ra[0]);
    Str *name = IS_STR(vm, ra[1]) ? AS_STR(ra[1]) : body->name;
    bool ex = nbases == BUILD_CLASS_EX; /* class C(*bases, **kw) */
    Tuple *orig_bases = ex ? AS_TUPLE(ra[2]) : tuple_from_array(vm, nbases, ra + 2);
    vm_push_root(vm, OBJ_VAL(orig_bases));
    Tuple *bases = class_mro_entries(vm, orig_bases); /* Generic[T] and friends stand for classes */
    vm_push_root(vm, OBJ_VAL(bases));
    Dict *kw = ex ? (AS_DICT(ra[3])->count ? AS_DICT(ra[3]) : NULL)
              : nkw ? interp_kwargs_dict(vm, AS_TUPLE(ra[2 + nbases]), ra + 3 + nbases, nkw) : NULL;
    vm_push_root(vm, kw ? OBJ_VAL(kw) : NONE_VAL);
    Value meta = EMPTY_VAL; /* the metaclass (class.c picks it and runs __prepare__) */
    Dict *ns = class_prepare(vm, &meta, name, bases, kw);
    vm_push_root(vm, meta);
    vm_push_root(vm, OBJ_VAL(ns));
    Value modname = dict_get_str(vm, frame->globals, vm->sym_name);
    if (!IS_EMPTY(modname)) dict_set_str(vm, ns, vm->sym_module, modname);
    Str *qn = body->qualname ? body->qualname : body->proto->qualname ? body->proto->qualname : name;
    dict_set_str(vm, ns, vm->sym_qualname, STR_VAL(qn));
    if (bases != orig_bases) dict_set_cstr(vm, ns, "__orig_bases__", OBJ_VAL(orig_bases));

    Proto *p = body->proto;
    Value *nb = vm->stack_top;
    interp_check_room(vm, nb, p->nregs);
    for (int32_t i = 0; i < p->nregs; i++) nb[i] = EMPTY_VAL;
    interp_enter(vm);
    Frame *f = interp_push_entry(vm, body, nb);
    f->locals = ns;
    Value r = interp_run(vm, EMPTY_VAL);
    vm_push_root(vm, r);
    Value cls = class_build(vm, meta, name, bases, ns, kw);
    if (IS_OBJ(r) && AS_OBJ(r)->type == vm->t_cell) ((Cell *)AS_OBJ(r))->value = cls;
    vm_pop_roots(vm, 6);
    return cls;
}

/* ================================================================ raising */

static bool is_exc_instance(Value v) {
    return IS_OBJ(v) && (AS_OBJ(v)->type->flags & TYPE_EXCEPTION);
}

static bool is_exc_class(VM *vm, Value v) {
    if (!IS_OBJ(v)) return false;
    Obj *o = AS_OBJ(v);
    return (o->type == vm->t_type || type_is_subtype(o->type, vm->t_type)) && (((Type *)o)->flags & TYPE_EXCEPTION);
}

/* Instance of an exception class called with no arguments. */
static Value instantiate_exc(VM *vm, Value cls) {
    Value e = vm_call(vm, cls, 0, NULL);
    if (!is_exc_instance(e))
        vm_raise_kind(vm, TypeError, "calling %s should have returned an instance of BaseException, not %s",
                      ((Type *)AS_OBJ(cls))->name ? ((Type *)AS_OBJ(cls))->name->chars : "?", vm_type_name(vm, e));
    return e;
}

/* RAISE: raise exc (instance or class), optionally "from cause". */
static COLD _Noreturn void do_raise(VM *vm, Value exc, bool has_cause, Value cause) {
    if (is_exc_class(vm, exc)) exc = instantiate_exc(vm, exc);
    else if (!is_exc_instance(exc)) vm_raise_kind(vm, TypeError, "exceptions must derive from BaseException");
    if (has_cause) {
        vm_push_root(vm, exc);
        if (is_exc_class(vm, cause)) cause = instantiate_exc(vm, cause);
        else if (!IS_NONE(cause) && !is_exc_instance(cause))
            vm_raise_kind(vm, TypeError, "exception causes must derive from BaseException");
        ExcObj *e = (ExcObj *)AS_OBJ(exc);
        e->cause = cause;
        e->suppress_context = true;
        vm_pop_roots(vm, 1);
    }
    vm_throw(vm, exc);
}

/* Re-raises exc without a new traceback line for the current frame. */
static COLD _Noreturn void do_reraise(VM *vm, Value exc) {
    if (!is_exc_instance(exc)) vm_throw(vm, exc);
    ((InterpJmp *)vm->err)->reraise = true;
    vm_rethrow(vm, exc);
}

/* Bare "raise": the exception being handled here, or in a caller. */
static COLD _Noreturn void raise_current(VM *vm, Frame *frame) {
    for (Frame *f = frame; f >= vm->frames; f--)
        if (is_exc_instance(f->handling)) do_reraise(vm, f->handling);
    vm_raise_kind(vm, RuntimeError, "No active exception to reraise");
}

static COLD _Noreturn void assert_fail(VM *vm, Value *msg) {
    vm_throw(vm, exc_new(vm, vm->exc[EXC_AssertionError], msg ? 1 : 0, msg));
}

/* ============================================================ iteration */

static NOINLINE Value get_iter(VM *vm, Value v) {
    if (IS_OBJ(v)) {
        Obj *o = AS_OBJ(v);
        if (o->type == vm->t_range && !((Range *)o)->big) {
            Range *r = (Range *)o;
            RangeIter *it = gc_alloc_obj(vm, vm->t_range_iter, sizeof(RangeIter));
            it->next = r->start;
            it->stop = r->stop;
            it->step = r->step;
            return OBJ_VAL(it);
        }
        if (o->type == vm->t_list || o->type == vm->t_tuple) {
            SeqIter *it = gc_alloc_obj(vm, o->type == vm->t_list ? vm->t_list_iter : vm->t_tuple_iter, sizeof(SeqIter));
            it->seq = v;
            it->index = 0;
            return OBJ_VAL(it);
        }
    }
    return vm_iter(vm, v);
}

/* FOR_ITER through the iterator's next slot. */
static NOINLINE bool for_iter_slow(VM *vm, Value it, Value *out) {
    Value v;
    if (!vm_next(vm, it, &v)) return false;
    *out = v;
    return true;
}

/* UNPACK: exactly n items of src into dst (written only when all are there). */
static NOINLINE void unpack(VM *vm, Value *dst, Value src, int n) {
    if (IS_OBJ(src) && (AS_OBJ(src)->type == vm->t_tuple || AS_OBJ(src)->type == vm->t_list)) {
        int64_t len;
        Value *items;
        if (AS_OBJ(src)->type == vm->t_tuple) {
            len = AS_TUPLE(src)->len;
            items = AS_TUPLE(src)->items;
        } else {
            len = AS_LIST(src)->len;
            items = AS_LIST(src)->items;
        }
        if (len == n) {
            if (n > 0) memmove(dst, items, (size_t)n * sizeof(Value));
            return;
        }
        if (len < n)
            vm_raise_kind(vm, ValueError, "not enough values to unpack (expected %d, got %lld)", n, (long long)len);
        vm_raise_kind(vm, ValueError, "too many values to unpack (expected %d)", n);
    }
    Value it = vm_iter(vm, src);
    Value *tmp = vm->stack_top; /* gathered on the stack, visible to the GC */
    if (tmp + n + 1 > vm->stack_end) interp_recursion_error(vm);
    tmp[0] = it;
    vm->stack_top = tmp + 1;
    for (int i = 0; i < n; i++) {
        Value x;
        if (!vm_next(vm, it, &x))
            vm_raise_kind(vm, ValueError, "not enough values to unpack (expected %d, got %d)", n, i);
        tmp[1 + i] = x;
        vm->stack_top = tmp + 2 + i;
    }
    Value extra;
    if (vm_next(vm, it, &extra)) vm_raise_kind(vm, ValueError, "too many values to unpack (expected %d)", n);
    if (n > 0) memcpy(dst, tmp + 1, (size_t)n * sizeof(Value));
    vm->stack_top = tmp;
}

/* UNPACK_EX: before items, a list of the middle, after items. */
static NOINLINE void unpack_ex(VM *vm, Value *dst, Value src, int before, int after) {
    List *l = list_from_iterable(vm, src);
    int64_t len = l->len;
    if (len < before + after)
        vm_raise_kind(vm, ValueError, "not enough values to unpack (expected at least %d, got %lld)", before + after,
                      (long long)len);
    int64_t nmid = len - before - after;
    List *mid = list_new(vm, nmid);
    for (int64_t i = 0; i < nmid; i++) list_append(vm, mid, l->items[before + i]);
    for (int i = 0; i < before; i++) dst[i] = l->items[i];
    dst[before] = OBJ_VAL(mid);
    for (int i = 0; i < after; i++) dst[before + 1 + i] = l->items[len - after + i];
}

/* ============================================================ containers */

static NOINLINE Value build_list(VM *vm, Value *r, int n) {
    List *l = list_new(vm, n);
    if (l->cap >= n && l->items) {
        memcpy(l->items, r, (size_t)n * sizeof(Value));
        l->len = n;
    } else {
        for (int i = 0; i < n; i++) list_append(vm, l, r[i]);
    }
    return OBJ_VAL(l);
}

static NOINLINE Value build_set(VM *vm, Value *r, int n) {
    Set *s = set_new(vm, vm->t_set);
    vm_push_root(vm, OBJ_VAL(s));
    for (int i = 0; i < n; i++) set_add(vm, s, r[i]);
    vm_pop_roots(vm, 1);
    return OBJ_VAL(s);
}

static NOINLINE Value build_dict(VM *vm, Value *r, int n) {
    Dict *d = dict_new(vm);
    vm_push_root(vm, OBJ_VAL(d));
    for (int i = 0; i < n; i++) dict_set(vm, d, r[2 * i], r[2 * i + 1]);
    vm_pop_roots(vm, 1);
    return OBJ_VAL(d);
}

static NOINLINE Value build_string(VM *vm, Value *r, int n) {
    if (n == 0) return STR_VAL(vm->empty_str);
    if (n == 1 && IS_STR(vm, r[0])) return r[0];
    StrBuf sb;
    sb_init(&sb);
    for (int i = 0; i < n; i++) {
        if (IS_STR(vm, r[i])) {
            sb_append_str(&sb, AS_STR(r[i]));
        } else {
            Str *s = vm_str(vm, r[i]);
            sb_append_str(&sb, s);
        }
    }
    return STR_VAL(sb_finish(vm, &sb));
}

/* FORMAT: f-string replacement field. */
static NOINLINE Value format_value(VM *vm, Value v, uint32_t ext, Value spec) {
    int conv = (int)(ext & 0xff);
    if (conv == 's') v = STR_VAL(vm_str(vm, v));
    else if (conv == 'r') v = STR_VAL(vm_repr(vm, v));
    else if (conv == 'a') v = STR_VAL(str_to_ascii(vm, vm_repr(vm, v)));
    Str *sp = (ext & 0x100) && IS_STR(vm, spec) ? AS_STR(spec) : NULL;
    if ((!sp || sp->len == 0) && IS_STR(vm, v)) return v;
    vm_push_root(vm, v);
    Str *r = vm_format(vm, v, sp);
    vm_pop_roots(vm, 1);
    return STR_VAL(r);
}

static NOINLINE void list_extend_op(VM *vm, Value l, Value src) {
    if (!IS_LIST(vm, l)) vm_raise_kind(vm, SystemError, "LIST_EXTEND on a non-list");
    list_extend_fresh(vm, AS_LIST(l), src); /* the display being built */
}

/* Copies the keys of a mapping that is not a dict (keys() and [key]). */
static Dict *mapping_to_dict(VM *vm, Value m, bool for_call) {
    Value keysf = vm_getattr_opt(vm, m, str_intern(vm, "keys", 4));
    if (IS_EMPTY(keysf)) {
        if (for_call)
            vm_raise_kind(vm, TypeError, "argument after ** must be a mapping, not %s", vm_type_name(vm, m));
        vm_raise_kind(vm, TypeError, "'%s' object is not a mapping", vm_type_name(vm, m));
    }
    Dict *d = dict_new(vm);
    vm_push_root(vm, OBJ_VAL(d));
    vm_push_root(vm, keysf);
    Value keys = vm_call(vm, keysf, 0, NULL);
    vm_push_root(vm, keys);
    Value it = vm_iter(vm, keys);
    vm_push_root(vm, it);
    Value k;
    while (vm_next(vm, it, &k)) {
        vm_push_root(vm, k);
        Value v = vm_getitem(vm, m, k);
        vm_push_root(vm, v);
        dict_set(vm, d, k, v);
        vm_pop_roots(vm, 2);
    }
    vm_pop_roots(vm, 4);
    return d;
}

static NOINLINE void dict_update_op(VM *vm, Value dv, Value src) {
    Dict *d = AS_DICT(dv);
    if (IS_DICT(vm, src)) {
        dict_update(vm, d, src);
        return;
    }
    Dict *tmp = mapping_to_dict(vm, src, false);
    vm_push_root(vm, OBJ_VAL(tmp));
    dict_update(vm, d, OBJ_VAL(tmp));
    vm_pop_roots(vm, 1);
}

/* DICT_MERGE: **mapping in a call: str keys, no duplicates. */
static NOINLINE void dict_merge_op(VM *vm, Value dv, Value src) {
    Dict *d = AS_DICT(dv);
    Dict *s;
    int nroots = 0;
    if (IS_DICT(vm, src)) {
        s = AS_DICT(src);
    } else {
        s = mapping_to_dict(vm, src, true);
        vm_push_root(vm, OBJ_VAL(s));
        nroots = 1;
    }
    int64_t pos = 0;
    Value k, v;
    while (dict_next(s, &pos, &k, &v)) {
        if (!IS_STR(vm, k)) vm_raise_kind(vm, TypeError, "keywords must be strings");
        if (!IS_EMPTY(dict_get_str(vm, d, AS_STR(k))))
            vm_raise_kind(vm, TypeError, "got multiple values for keyword argument '%s'", AS_STR(k)->chars);
        dict_set_str(vm, d, AS_STR(k), v);
    }
    vm_pop_roots(vm, nroots);
}

/* ================================================ with, import, printing */

static Str *intern_c(VM *vm, const char *s) {
    return str_intern(vm, s, strlen(s));
}

/* WITH_ENTER: ra[0] = bound __exit__, ra[1] = mgr.__enter__(). */
static NOINLINE void with_enter(VM *vm, Value *ra, Value mgr) {
    Type *t = vm_typeof(vm, mgr);
    Str *enter_name = intern_c(vm, "__enter__"), *exit_name = intern_c(vm, "__exit__");
    Value enter = type_lookup(vm, t, enter_name);
    if (IS_EMPTY(enter))
        vm_raise_kind(vm, TypeError, "'%s' object does not support the context manager protocol",
                      vm_type_name(vm, mgr));
    Value exitm = type_lookup(vm, t, exit_name);
    if (IS_EMPTY(exitm))
        vm_raise_kind(vm, TypeError, "'%s' object does not support the context manager protocol (missed __exit__ method)",
                      vm_type_name(vm, mgr));
    vm_push_root(vm, mgr);
    Value bound_exit = vm_getattr(vm, mgr, exit_name);
    vm_push_root(vm, bound_exit);
    Value r;
    if (is_method(vm, enter)) {
        r = interp_call_with_self(vm, enter, mgr, 0, NULL, NULL);
    } else {
        Value be = vm_getattr(vm, mgr, enter_name);
        vm_push_root(vm, be);
        r = vm_call(vm, be, 0, NULL);
        vm_pop_roots(vm, 1);
    }
    ra[0] = bound_exit;
    ra[1] = r;
    vm_pop_roots(vm, 2);
}

static NOINLINE void with_exit(VM *vm, Value exitf) {
    Value args[3] = {NONE_VAL, NONE_VAL, NONE_VAL};
    vm_call(vm, exitf, 3, args);
}

static NOINLINE bool with_exit_exc(VM *vm, Value exitf, Value exc) {
    Value args[3] = {OBJ_VAL(vm_typeof(vm, exc)), exc, NONE_VAL};
    Value r = vm_call(vm, exitf, 3, args);
    return vm_truthy(vm, r);
}

static NOINLINE Value import_from(VM *vm, Value mod, Str *name) {
    Value v = vm_getattr_opt(vm, mod, name);
    if (!IS_EMPTY(v)) return v;
    const char *mname = "?", *where = "unknown location";
    if (IS_OBJ(mod) && AS_OBJ(mod)->type == vm->t_module) {
        Module *m = (Module *)AS_OBJ(mod);
        if (m->name) {
            /* a submodule imported since (from pkg import sub) */
            Str *full = str_printf(vm, "%s.%s", m->name->chars, name->chars);
            Value sub = dict_get_str(vm, vm->modules, full);
            if (!IS_EMPTY(sub)) return sub;
            /* a native submodule not imported yet (from numba.cuda import random) */
            if (vm->native_modules && !IS_EMPTY(dict_get_str(vm, vm->native_modules, full))) {
                vm_push_root(vm, STR_VAL(full));
                sub = vm_import(vm, full, false);
                vm_pop_roots(vm, 1);
                return sub;
            }
            mname = m->name->chars;
            sub = module_import_submodule(vm, m, full); /* from pkg import sub: pkg/sub.gpy */
            if (!IS_EMPTY(sub)) return sub;
        }
        if (m->file) where = m->file->chars;
    }
    vm_raise_kind(vm, ImportError, "cannot import name '%s' from '%s' (%s)", name->chars, mname, where);
}

/* from m import *: __all__, else every name not starting with '_'. */
static NOINLINE void import_star(VM *vm, Frame *f, Value mod) {
    Dict *target = f->locals ? f->locals : f->globals;
    if (!IS_OBJ(mod) || AS_OBJ(mod)->type != vm->t_module || !((Module *)AS_OBJ(mod))->dict)
        vm_raise_kind(vm, ImportError, "import * needs a module");
    Dict *md = ((Module *)AS_OBJ(mod))->dict;
    Value all = dict_get_str(vm, md, intern_c(vm, "__all__"));
    if (!IS_EMPTY(all)) {
        List *names = list_from_iterable(vm, all);
        vm_push_root(vm, OBJ_VAL(names));
        for (int64_t i = 0; i < names->len; i++) {
            Value n = names->items[i];
            if (!IS_STR(vm, n))
                vm_raise_kind(vm, TypeError, "Item in %s.__all__ must be str, not %s",
                              ((Module *)AS_OBJ(mod))->name ? ((Module *)AS_OBJ(mod))->name->chars : "?",
                              vm_type_name(vm, n));
            Value v = vm_getattr(vm, mod, AS_STR(n));
            dict_set_str(vm, target, AS_STR(n), v);
        }
        vm_pop_roots(vm, 1);
        return;
    }
    int64_t pos = 0;
    Value k, v;
    while (dict_next(md, &pos, &k, &v))
        if (IS_STR(vm, k) && AS_STR(k)->len > 0 && AS_STR(k)->chars[0] != '_') dict_set(vm, target, k, v);
}

static NOINLINE void print_expr(VM *vm, Value v) {
    if (IS_NONE(v)) return;
    Str *s = vm_repr(vm, v);
    vm_push_root(vm, STR_VAL(s));
    if (vm->print_expr_hook) {
        vm->print_expr_hook(vm, s);
    } else {
        vm_stream_write(vm, vm->sys_stdout, s);
        vm_stream_write(vm, vm->sys_stdout, vm->single_chars['\n']);
    }
    vm_pop_roots(vm, 1);
    dict_set_str(vm, vm->builtins, vm->single_chars['_'], v);
}

/* =============================================================== calls */

/* Calls a native with CALL's arguments: kwargs as a fresh Dict. */
static inline Value call_native(VM *vm, NativeFunction *nf, Value *argv, int64_t argc, int64_t nkw, Tuple *kwn,
                                bool check_self) {
    Dict *kw = NULL;
    if (UNLIKELY(nkw)) {
        kw = interp_kwargs_dict(vm, kwn, argv + argc, nkw);
        vm_push_root(vm, OBJ_VAL(kw));
    }
    if (check_self && (nf->obj.flags & NATIVE_FLAG_METHOD)) native_check_self(vm, nf, (int)argc, argv);
    Value *saved_top = vm->stack_top;
    if (argv + argc + nkw > saved_top) vm->stack_top = argv + argc + nkw;
    NativeFunction *prev = vm->current_native;
    vm->current_native = nf;
    Value r = nf->fn(vm, (int)argc, argv, kw);
    vm->current_native = prev;
    vm->stack_top = saved_top;
    if (kw) vm_pop_roots(vm, 1);
    return r;
}

/* Calls anything else (types, callable instances...) with CALL's arguments. */
static NOINLINE Value call_other(VM *vm, Value callee, Value *argv, int64_t argc, int64_t nkw, Tuple *kwn) {
    Dict *kw = NULL;
    if (nkw) {
        kw = interp_kwargs_dict(vm, kwn, argv + argc, nkw);
        vm_push_root(vm, OBJ_VAL(kw));
    }
    Value *saved_top = vm->stack_top;
    if (argv + argc + nkw > saved_top) vm->stack_top = argv + argc + nkw;
    Value r = vm_call_kw(vm, callee, (int)argc, argv, kw);
    vm->stack_top = saved_top;
    if (kw) vm_pop_roots(vm, 1);
    return r;
}

/* CALL_EX on anything but a gpy function: kwargs copied (natives may
** consume them). */
static NOINLINE Value call_ex_other(VM *vm, Value callee, Tuple *args, Dict *kw) {
    int nroots = 0;
    if (kw) {
        kw = dict_copy(vm, kw);
        vm_push_root(vm, OBJ_VAL(kw));
        nroots = 1;
    }
    Value r = vm_call_kw(vm, callee, (int)args->len, args->items, kw);
    vm_pop_roots(vm, nroots);
    return r;
}

/* ========================================================= constructors */

/* The __init__ that CALL may run as a plain frame of the loop when class T
** (whose metatype is type) is called: instances of the object layout, no
** user __new__, __init__ a gpy function. NULL when the generic path
** (type's call slot) is needed. Cached per class version. */
static NOINLINE Function *ctor_fill(VM *vm, Type *T, struct InterpCtorEntry *e) {
    Function *init = NULL;
    Type *a = T;
    while (a && (a->flags & TYPE_HEAP)) a = a->base;
    if (a == vm->t_object && vm->sym_new && vm->sym_init) {
        Value nm = type_lookup(vm, T, vm->sym_new);
        Value im = type_lookup(vm, T, vm->sym_init);
        /* object's __new__ is a native (wrapped as a staticmethod); a class
        ** defining its own has a gpy function there */
        if (IS_OBJ(nm) && (AS_OBJ(nm)->type == vm->t_staticmethod || AS_OBJ(nm)->type == vm->t_classmethod))
            nm = ((Wrapper *)AS_OBJ(nm))->func;
        bool plain_new = IS_EMPTY(nm) || (IS_OBJ(nm) && AS_OBJ(nm)->type == vm->t_builtin_function);
        if (plain_new && IS_OBJ(im) && AS_OBJ(im)->type == vm->t_function &&
            !(((Function *)AS_OBJ(im))->proto->flags & PROTO_GENERATOR))
            init = (Function *)AS_OBJ(im);
    }
    e->type = T;
    e->version = T->version;
    e->init = init;
    return init;
}

static inline Function *ctor_init(VM *vm, Type *T) {
    struct InterpCtorEntry *e = &vm->interp_ctor[((uintptr_t)T >> 6) & 31];
    if (e->type == T && e->version == T->version) return e->init;
    return ctor_fill(vm, T, e);
}

static COLD _Noreturn void init_not_none(VM *vm, Value r) {
    vm_raise_kind(vm, TypeError, "__init__() should return None, not '%s'", vm_type_name(vm, r));
}

/* =========================================================== the loop */

/* Extra words following each instruction (1 for the ABCX modes). */
static const uint8_t ext_words[OP__COUNT] = {
#define EXTW_ABC 0
#define EXTW_ABx 0
#define EXTW_AsBx 0
#define EXTW_sJ 0
#define EXTW_ABCX 1
#define OP_EXTW(name, mode) EXTW_##mode,
    OPCODES(OP_EXTW)
#undef OP_EXTW
};

#if defined(__GNUC__) && !defined(GPY_SWITCH_DISPATCH)
#define COMPUTED_GOTO 1
#else
#define COMPUTED_GOTO 0
#endif

#ifdef GPY_TRACE_EXEC
/* Debug builds (-DGPY_TRACE_EXEC): one stderr line per executed
** instruction: function, instruction index, opcode and operands. */
static void trace_ins(Frame *f, const uint32_t *at) {
    Proto *p = f->fn->proto;
    uint32_t i = *at;
    Opcode op = INS_OP(i);
    fprintf(stderr, "[%s@%ld] %-14s A=%u B=%u C=%u", p->qualname ? p->qualname->chars : "?", (long)(at - p->code),
            op < OP__COUNT ? opcode_names[op] : "?", INS_A(i), INS_B(i), INS_C(i));
    if (op < OP__COUNT && ext_words[op]) fprintf(stderr, " ext=%u", at[1]);
    fputc('\n', stderr);
}
#endif

/* Runs frames from the top of vm->frames until an entry frame returns or
** yields. Exceptions longjmp out to interp_run, which finds the handler
** and calls execute again. */
/* The int operators of BINOP/INPLACE that need no call: false when the
** result does not fit in 64 bits (or the operator is another one), and
** the general path (big ints, errors) takes over. */
static inline bool small_int_op(uint32_t op, int64_t a, int64_t b, int64_t *r) {
    switch (op) {
    case BINOP_ADD: return !ADD_OVF(a, b, r);
    case BINOP_SUB: return !SUB_OVF(a, b, r);
    case BINOP_MUL: return !MUL_OVF(a, b, r);
    case BINOP_AND: *r = a & b; return true;
    case BINOP_OR: *r = a | b; return true;
    case BINOP_XOR: *r = a ^ b; return true;
    default: return false;
    }
}

static Value execute(VM *vm) {
    Frame *frame = &vm->frames[vm->nframes - 1];
    const uint32_t *pc;
    Value *base;
    const Value *k;
    InlineCache *cache;
    uint32_t ins;
    /* call sequence state (shared by CALL, CALL_METHOD, CALL_EX) */
    Value *ra, *cargv, *cnb;
    int64_t cargc, cnkw;
    Tuple *ckwn;
    Function *cfn;
    int32_t centry;
    bool cself;
    Value rv;

#define LOAD_FRAME()                      \
    do {                                  \
        Proto *p_ = frame->fn->proto;     \
        pc = frame->pc;                   \
        base = frame->base;               \
        k = p_->consts;                   \
        cache = (InlineCache *)p_->caches; \
    } while (0)
#define A_ INS_A(ins)
#define B_ INS_B(ins)
#define C_ INS_C(ins)
#define RA_ (base + INS_A(ins))
#define RB_ (base + INS_B(ins))
#define RC_ (base + INS_C(ins))
#define SAVEPC() (frame->pc = pc)
#define GETCACHE()                                          \
    do {                                                    \
        if (UNLIKELY(!cache)) {                             \
            SAVEPC();                                       \
            cache = alloc_caches(vm, frame->fn->proto);     \
        }                                                   \
    } while (0)
/* also where an interrupt request becomes a KeyboardInterrupt and the
** budget hook runs (signals.c). A safepoint counts n instructions down:
** 1 at calls, the loop's length at backward jumps; the slow path tests the
** interrupt flag and calls the hook when the countdown runs out. */
#define SAFEPOINT_N(n)                                                                                \
    do {                                                                                              \
        if (UNLIKELY((vm->safepoint_countdown -= (n)) <= 0 || vm->bytes_allocated > vm->next_gc)) { \
            SAVEPC();                                                                                 \
            vm_safepoint(vm);                                                                         \
        }                                                                                             \
    } while (0)
#define SAFEPOINT() SAFEPOINT_N(1)
#define FRAME_NREGS() (frame->fn->proto->nregs)

#ifdef GPY_TRACE_EXEC
#define TRACE_INS() trace_ins(frame, pc - 1)
#else
#define TRACE_INS() ((void)0)
#endif

#if COMPUTED_GOTO
    static const void *const dispatch[OP__COUNT] = {
#define OP_LABEL(name, mode) &&L_##name,
        OPCODES(OP_LABEL)
#undef OP_LABEL
    };
#define vmcase(name) L_##name:
#define vmnext()                         \
    do {                                 \
        ins = *pc++;                     \
        TRACE_INS();                     \
        goto *dispatch[INS_OP(ins)];     \
    } while (0)
#else
#define vmcase(name) case OP_##name:
#define vmnext() goto next_ins
#endif

    LOAD_FRAME();
#if COMPUTED_GOTO
    vmnext();
#else
next_ins:
    ins = *pc++;
    TRACE_INS();
    switch (INS_OP(ins)) {
#endif

    vmcase(NOP) vmnext();

    vmcase(MOVE) {
        *RA_ = *RB_;
        vmnext();
    }
    vmcase(LOADK) {
        *RA_ = k[INS_BX(ins)];
        vmnext();
    }
    vmcase(LOADI) {
        *RA_ = INT_VAL(INS_SBX(ins));
        vmnext();
    }
    vmcase(LOADNONE) {
        *RA_ = NONE_VAL;
        vmnext();
    }
    vmcase(LOADTRUE) {
        *RA_ = BOOL_VAL(true);
        vmnext();
    }
    vmcase(LOADFALSE) {
        *RA_ = BOOL_VAL(false);
        vmnext();
    }
    vmcase(CHECK_LOCAL) {
        if (UNLIKELY(IS_EMPTY(*RA_))) {
            SAVEPC();
            unbound_local(vm, frame, A_);
        }
        vmnext();
    }
    vmcase(DEL_LOCAL) {
        if (UNLIKELY(IS_EMPTY(*RA_))) {
            SAVEPC();
            unbound_local(vm, frame, A_);
        }
        *RA_ = EMPTY_VAL;
        vmnext();
    }

    vmcase(LOAD_GLOBAL) {
        uint32_t kx = *pc;
        Str *name = AS_STR(k[kx]);
        Dict *g = frame->globals;
        GETCACHE();
        InlineCache *c = &cache[kx];
        if (c->owner == &g->obj) {
            if (c->kind == CK_GLOBAL) {
                if ((uint64_t)c->index < (uint64_t)g->nentries && entry_is(&g->entries[c->index], name)) {
                    *RA_ = g->entries[c->index].value;
                    pc++;
                    vmnext();
                }
            } else if (c->kind == CK_BUILTIN && c->dversion == g->version) {
                Dict *b = vm->builtins;
                if ((uint64_t)c->index < (uint64_t)b->nentries && entry_is(&b->entries[c->index], name)) {
                    *RA_ = b->entries[c->index].value;
                    pc++;
                    vmnext();
                }
            }
        }
        SAVEPC();
        *RA_ = load_global_slow(vm, g, name, c);
        pc++;
        vmnext();
    }
    vmcase(STORE_GLOBAL) {
        uint32_t kx = *pc;
        Str *name = AS_STR(k[kx]);
        Dict *g = frame->globals;
        GETCACHE();
        InlineCache *c = &cache[kx];
        if (c->owner == &g->obj && c->kind == CK_GLOBAL && (uint64_t)c->index < (uint64_t)g->nentries &&
            entry_is(&g->entries[c->index], name)) {
            g->entries[c->index].value = *RA_;
        } else {
            SAVEPC();
            store_global_slow(vm, g, name, *RA_, c);
        }
        pc++;
        vmnext();
    }
    vmcase(DEL_GLOBAL) {
        SAVEPC();
        del_name(vm, frame->globals, AS_STR(k[*pc]));
        pc++;
        vmnext();
    }
    vmcase(LOAD_NAME) {
        SAVEPC();
        *RA_ = load_name(vm, frame, AS_STR(k[*pc]));
        pc++;
        vmnext();
    }
    vmcase(STORE_NAME) {
        SAVEPC();
        dict_set_str(vm, frame->locals ? frame->locals : frame->globals, AS_STR(k[*pc]), *RA_);
        pc++;
        vmnext();
    }
    vmcase(DEL_NAME) {
        SAVEPC();
        del_name(vm, frame->locals ? frame->locals : frame->globals, AS_STR(k[*pc]));
        pc++;
        vmnext();
    }

    vmcase(MAKE_CELL) {
        SAVEPC();
        Cell *c = cell_new(vm, *RA_);
        *RA_ = OBJ_VAL(c);
        vmnext();
    }
    vmcase(LOAD_DEREF) {
        Cell *c = (Cell *)AS_OBJ(*RB_);
        if (UNLIKELY(IS_EMPTY(c->value))) {
            SAVEPC();
            unbound_local(vm, frame, B_);
        }
        *RA_ = c->value;
        vmnext();
    }
    vmcase(STORE_DEREF) {
        ((Cell *)AS_OBJ(*RA_))->value = *RB_;
        vmnext();
    }
    vmcase(DEL_DEREF) {
        Cell *c = (Cell *)AS_OBJ(*RA_);
        if (UNLIKELY(IS_EMPTY(c->value))) {
            SAVEPC();
            unbound_local(vm, frame, A_);
        }
        c->value = EMPTY_VAL;
        vmnext();
    }
    vmcase(LOAD_FREE) {
        Cell *c = frame->fn->free[B_];
        if (UNLIKELY(!c || IS_EMPTY(c->value))) {
            SAVEPC();
            unbound_free(vm, frame, B_);
        }
        *RA_ = c->value;
        vmnext();
    }
    vmcase(STORE_FREE) {
        frame->fn->free[A_]->value = *RB_;
        vmnext();
    }
    vmcase(LOAD_FREECELL) {
        *RA_ = OBJ_VAL(frame->fn->free[B_]);
        vmnext();
    }
    vmcase(MAKE_FUNCTION) {
        SAVEPC();
        Value f = make_function(vm, frame, (Proto *)AS_OBJ(k[INS_BX(ins)]));
        *RA_ = f;
        vmnext();
    }
    vmcase(SET_DEFAULTS) {
        Function *f = (Function *)AS_OBJ(*RA_);
        f->defaults = IS_TUPLE(vm, *RB_) ? AS_TUPLE(*RB_) : NULL;
        vmnext();
    }
    vmcase(SET_KWDEFAULTS) {
        Function *f = (Function *)AS_OBJ(*RA_);
        f->kwdefaults = IS_DICT(vm, *RB_) ? AS_DICT(*RB_) : NULL;
        vmnext();
    }

    vmcase(GET_ATTR) {
        uint32_t kx = *pc;
        Str *name = AS_STR(k[kx]);
        Value o = *RB_;
        GETCACHE();
        InlineCache *c = &cache[kx];
        if (LIKELY(IS_OBJ(o))) {
            Obj *ob = AS_OBJ(o);
            if (c->kind == CK_ATTR && c->owner == &ob->type->obj && c->tversion == ob->type->version) {
                Dict *d = ((Instance *)ob)->dict;
                if (d && (uint64_t)c->index < (uint64_t)d->nentries && entry_is(&d->entries[c->index], name)) {
                    *RA_ = d->entries[c->index].value;
                    pc++;
                    vmnext();
                }
            } else if (c->kind == CK_MODATTR && ob->type == vm->t_module) {
                Dict *d = ((Module *)ob)->dict;
                if (&d->obj == c->owner && (uint64_t)c->index < (uint64_t)d->nentries &&
                    entry_is(&d->entries[c->index], name)) {
                    *RA_ = d->entries[c->index].value;
                    pc++;
                    vmnext();
                }
            }
        }
        SAVEPC();
        Value v = getattr_slow(vm, o, name, c);
        *RA_ = v;
        pc++;
        vmnext();
    }
    vmcase(SET_ATTR) {
        uint32_t kx = *pc;
        Str *name = AS_STR(k[kx]);
        Value o = *RA_;
        GETCACHE();
        InlineCache *c = &cache[kx];
        if (LIKELY(IS_OBJ(o))) {
            Obj *ob = AS_OBJ(o);
            if (c->kind == CK_ATTR && c->owner == &ob->type->obj && c->tversion == ob->type->version) {
                Dict *d = ((Instance *)ob)->dict;
                if (d && (uint64_t)c->index < (uint64_t)d->nentries && entry_is(&d->entries[c->index], name)) {
                    d->entries[c->index].value = *RB_;
                    pc++;
                    vmnext();
                }
            }
        }
        SAVEPC();
        setattr_slow(vm, o, name, *RB_, c);
        pc++;
        vmnext();
    }
    vmcase(DEL_ATTR) {
        SAVEPC();
        vm_delattr(vm, *RA_, AS_STR(k[*pc]));
        pc++;
        vmnext();
    }
    vmcase(LOAD_METHOD) {
        uint32_t kx = *pc;
        Str *name = AS_STR(k[kx]);
        Value o = *RB_;
        ra = RA_;
        GETCACHE();
        InlineCache *c = &cache[kx];
        if (c->kind == CK_METHOD) {
            Type *t = LIKELY(IS_OBJ(o)) ? AS_OBJ(o)->type : vm_typeof(vm, o);
            if (c->owner == &t->obj && c->tversion == t->version) {
                Dict *d;
                if (c->index == 0 || (d = ((Instance *)AS_OBJ(o))->dict) == NULL ||
                    IS_EMPTY(dict_get_str(vm, d, name))) {
                    ra[0] = c->value;
                    ra[1] = o;
                    pc++;
                    vmnext();
                }
            }
        } else if (c->kind == CK_MODATTR && IS_OBJ(o) && AS_OBJ(o)->type == vm->t_module) {
            Dict *d = ((Module *)AS_OBJ(o))->dict;
            if (&d->obj == c->owner && (uint64_t)c->index < (uint64_t)d->nentries &&
                entry_is(&d->entries[c->index], name)) {
                ra[0] = d->entries[c->index].value;
                ra[1] = EMPTY_VAL;
                pc++;
                vmnext();
            }
        }
        SAVEPC();
        load_method_slow(vm, o, name, c, ra);
        pc++;
        vmnext();
    }

    vmcase(CALL) {
        ra = RA_;
        cargv = ra + 1;
        cargc = B_;
        cnkw = C_;
        ckwn = cnkw ? AS_TUPLE(k[*pc]) : NULL;
        cself = false;
        SAVEPC();
        goto do_call;
    }
    vmcase(CALL_METHOD) {
        ra = RA_;
        cargc = B_;
        cnkw = C_;
        ckwn = cnkw ? AS_TUPLE(k[*pc]) : NULL;
        if (IS_EMPTY(ra[1])) {
            cargv = ra + 2;
            cself = false;
        } else {
            cargv = ra + 1;
            cargc++;
            cself = true;
        }
        SAVEPC();
        goto do_call;
    }
    /* CALL / CALL_METHOD: callee ra[0], args cargv[0..cargc), keyword values
    ** after them; frame->pc points at the EXT word. */
do_call:
    SAFEPOINT();
redo_call:
    if (LIKELY(IS_OBJ(ra[0]))) {
        Obj *co = AS_OBJ(ra[0]);
        Type *ct = co->type;
        if (LIKELY(ct == vm->t_function)) {
            cfn = (Function *)co;
            centry = FRAME_NORMAL;
        call_function:;
            Proto *p = cfn->proto;
            if (UNLIKELY(vm->nframes >= vm->recursion_limit || vm->nframes >= vm->frames_cap))
                interp_recursion_error(vm);
#ifdef GPY_CALL_IN_PLACE
            /* Lua style: the frame starts at the arguments; only valid when
            ** the compiler keeps no live register above a call block */
            cnb = cargv;
#else
            /* the callee's registers start above the caller's, so no caller
            ** register is clobbered; the arguments are copied there */
            cnb = vm->stack_top;
#endif
            if (LIKELY(cargc == p->nparams && cnkw == 0 && p->nkwonly == 0 &&
                       (p->flags & (PROTO_VARARGS | PROTO_VARKW | PROTO_GENERATOR)) == 0)) {
                if (UNLIKELY(cnb + p->nregs > vm->stack_end)) interp_recursion_error(vm);
                if (cargv != cnb)
                    for (int64_t i = 0; i < cargc; i++) cnb[i] = cargv[i];
                for (Value *r = cnb + cargc, *e = cnb + p->nregs; r < e; r++) *r = EMPTY_VAL;
                goto push_frame;
            }
            /* positional arguments short of the parameters, the rest from
            ** the defaults (C(x) of `def __init__(self, x, y=0)`) */
            if (cargc < p->nparams && cnkw == 0 && p->nkwonly == 0 && cfn->defaults &&
                cargc >= p->nparams - cfn->defaults->len && cfn->defaults->len <= p->nparams &&
                (p->flags & (PROTO_VARARGS | PROTO_VARKW | PROTO_GENERATOR)) == 0) {
                if (UNLIKELY(cnb + p->nregs > vm->stack_end)) interp_recursion_error(vm);
                if (cargv != cnb)
                    for (int64_t i = 0; i < cargc; i++) cnb[i] = cargv[i];
                const Value *defs = cfn->defaults->items;
                int64_t firstdef = p->nparams - cfn->defaults->len;
                for (int64_t i = cargc; i < p->nparams; i++) cnb[i] = defs[i - firstdef];
                for (Value *r = cnb + p->nparams, *e = cnb + p->nregs; r < e; r++) *r = EMPTY_VAL;
                goto push_frame;
            }
            interp_bind(vm, cfn, cnb, cargc, cargv, cnkw, ckwn, cargv + cargc, NULL);
            if (p->flags & PROTO_GENERATOR) {
                rv = generator_new(vm, cfn, cnb);
                *ra = rv;
                pc++;
                vmnext();
            }
            goto push_frame;
        }
        if (ct == vm->t_builtin_function) {
            rv = call_native(vm, (NativeFunction *)co, cargv, cargc, cnkw, ckwn, !cself);
            *ra = rv;
            pc++;
            vmnext();
        }
        if (ct == vm->t_method) {
            BoundMethod *bm = (BoundMethod *)co;
            if (cargv == ra + 2) {
                /* CALL_METHOD without self: its slot is free */
                ra[1] = bm->self;
                ra[0] = bm->func;
                cargv = ra + 1;
            } else {
                /* self + the arguments go above the caller's registers */
                Value *s = vm->stack_top;
                if (s + cargc + cnkw + 1 > vm->stack_end) interp_recursion_error(vm);
                s[0] = bm->self;
                for (int64_t i = 0; i < cargc + cnkw; i++) s[1 + i] = cargv[i];
                cargv = s;
                ra[0] = bm->func;
            }
            cargc++;
            cself = false;
            goto redo_call;
        }
        if (ct == vm->t_type && (((Type *)co)->flags & TYPE_HEAP)) {
            /* C(args) of a plain class: allocate, then run __init__ here */
            Function *init = ctor_init(vm, (Type *)co);
            if (init) {
                if (UNLIKELY(vm->nframes >= vm->recursion_limit || vm->nframes >= vm->frames_cap))
                    interp_recursion_error(vm);
                Value *s = vm->stack_top;
                if (s + cargc + cnkw + 1 > vm->stack_end) interp_recursion_error(vm);
                Value obj = OBJ_VAL(gc_alloc_obj(vm, (Type *)co, sizeof(Instance)));
                if (cargv == ra + 2) {
                    cargv = ra + 1; /* CALL_METHOD without self: its slot is free */
                } else {
                    /* the instance + the arguments go above the caller's registers */
                    for (int64_t i = 0; i < cargc + cnkw; i++) s[1 + i] = cargv[i];
                    cargv = s;
                }
                cargv[0] = obj;
                ra[0] = obj; /* the call's result; the class lives on as obj's type */
                cargc++;
                cfn = init;
                centry = FRAME_INIT;
                goto call_function;
            }
        }
    }
    rv = call_other(vm, ra[0], cargv, cargc, cnkw, ckwn);
    *ra = rv;
    pc++;
    vmnext();

    vmcase(CALL_EX) {
        ra = RA_;
        SAVEPC();
        SAFEPOINT();
    redo_call_ex:
        if (UNLIKELY(!IS_TUPLE(vm, ra[1]))) {
            Tuple *t = tuple_from_iterable(vm, ra[1]);
            ra[1] = OBJ_VAL(t);
        }
        Tuple *args = AS_TUPLE(ra[1]);
        Dict *kw = IS_DICT(vm, ra[2]) && AS_DICT(ra[2])->count > 0 ? AS_DICT(ra[2]) : NULL;
        if (IS_OBJ(ra[0])) {
            Obj *co = AS_OBJ(ra[0]);
            if (co->type == vm->t_function) {
                cfn = (Function *)co;
                centry = FRAME_NORMAL;
                if (UNLIKELY(vm->nframes >= vm->recursion_limit || vm->nframes >= vm->frames_cap))
                    interp_recursion_error(vm);
                cnb = vm->stack_top;
                interp_bind(vm, cfn, cnb, args->len, args->items, 0, NULL, NULL, kw);
                if (cfn->proto->flags & PROTO_GENERATOR) {
                    rv = generator_new(vm, cfn, cnb);
                    *ra = rv;
                    vmnext();
                }
                goto push_frame;
            }
            if (co->type == vm->t_method) {
                BoundMethod *bm = (BoundMethod *)co;
                Tuple *na = tuple_new(vm, args->len + 1);
                na->items[0] = bm->self;
                memcpy(na->items + 1, args->items, (size_t)args->len * sizeof(Value));
                ra[1] = OBJ_VAL(na);
                ra[0] = bm->func;
                goto redo_call_ex;
            }
        }
        rv = call_ex_other(vm, ra[0], args, kw);
        *ra = rv;
        vmnext();
    }

    /* Pushes the frame of cfn with registers at cnb (bound); result to ra. */
push_frame : {
    Proto *p = cfn->proto;
    Frame *nf = frame + 1;
    nf->fn = cfn;
    nf->pc = p->code;
    nf->base = cnb;
    nf->globals = cfn->globals;
    nf->locals = NULL;
    nf->handling = NONE_VAL;
    nf->ret = ra;
    nf->gen = NULL;
    nf->entry = centry;
    SET_NFRAMES(vm, vm->nframes + 1);
    frame = nf;
    pc = p->code;
    base = cnb;
    k = p->consts;
    cache = (InlineCache *)p->caches;
    vm->stack_top = cnb + p->nregs;
    vmnext();
}

    vmcase(RETURN) {
        rv = *RA_;
        goto do_return;
    }
    vmcase(RETURN_NONE) {
        rv = NONE_VAL;
        goto do_return;
    }
do_return:
    if (UNLIKELY(frame->entry != FRAME_NORMAL)) goto return_special;
    *frame->ret = rv;
    frame--;
    SET_NFRAMES(vm, vm->nframes - 1);
    LOAD_FRAME();
    pc += ext_words[INS_OP(pc[-1])];
    vm->stack_top = base + FRAME_NREGS();
    vmnext();
return_special:
    if (frame->entry == FRAME_INIT) {
        /* __init__ returned: the caller's R[A] already holds the instance */
        frame--;
        SET_NFRAMES(vm, vm->nframes - 1);
        LOAD_FRAME();
        vm->stack_top = base + FRAME_NREGS();
        if (UNLIKELY(!IS_NONE(rv))) init_not_none(vm, rv);
        pc += ext_words[INS_OP(pc[-1])];
        vmnext();
    }
    if (frame->gen) gen_finish(vm, frame->gen);
    if (frame->entry == FRAME_ENTRY) {
        vm->stack_top = base;
        SET_NFRAMES(vm, vm->nframes - 1);
        return rv;
    }
    /* an inline generator finished: its FOR_ITER is exhausted */
    frame--;
    SET_NFRAMES(vm, vm->nframes - 1);
    LOAD_FRAME();
    pc += INS_SBX(pc[-1]);
    vm->stack_top = base + FRAME_NREGS();
    vmnext();

    vmcase(BINOP) {
        uint32_t op = *pc;
        Value b = *RB_, c = *RC_;
        SAVEPC();
        int64_t r;
        if (b.tag == VAL_INT && c.tag == VAL_INT && small_int_op(op, b.as.i, c.as.i, &r)) {
            *RA_ = INT_VAL(r);
            pc++;
            vmnext();
        }
        rv = arith(vm, (BinOp)op, b, c);
        *RA_ = rv;
        pc++;
        vmnext();
    }
    vmcase(ADD) {
        Value b = *RB_, c = *RC_;
        int64_t r;
        if (LIKELY(b.tag == VAL_INT && c.tag == VAL_INT)) {
            if (UNLIKELY(ADD_OVF(b.as.i, c.as.i, &r))) {
                SAVEPC();
                rv = int_overflowed(vm, BINOP_ADD, b, c);
                *RA_ = rv;
                vmnext();
            }
            *RA_ = INT_VAL(r);
        } else if (b.tag == VAL_FLOAT && c.tag == VAL_FLOAT) {
            *RA_ = FLOAT_VAL(b.as.f + c.as.f);
        } else {
            SAVEPC();
            rv = arith(vm, BINOP_ADD, b, c);
            *RA_ = rv;
        }
        vmnext();
    }
    vmcase(SUB) {
        Value b = *RB_, c = *RC_;
        int64_t r;
        if (LIKELY(b.tag == VAL_INT && c.tag == VAL_INT)) {
            if (UNLIKELY(SUB_OVF(b.as.i, c.as.i, &r))) {
                SAVEPC();
                rv = int_overflowed(vm, BINOP_SUB, b, c);
                *RA_ = rv;
                vmnext();
            }
            *RA_ = INT_VAL(r);
        } else if (b.tag == VAL_FLOAT && c.tag == VAL_FLOAT) {
            *RA_ = FLOAT_VAL(b.as.f - c.as.f);
        } else {
            SAVEPC();
            rv = arith(vm, BINOP_SUB, b, c);
            *RA_ = rv;
        }
        vmnext();
    }
    vmcase(MUL) {
        Value b = *RB_, c = *RC_;
        int64_t r;
        if (LIKELY(b.tag == VAL_INT && c.tag == VAL_INT)) {
            if (UNLIKELY(MUL_OVF(b.as.i, c.as.i, &r))) {
                SAVEPC();
                rv = int_overflowed(vm, BINOP_MUL, b, c);
                *RA_ = rv;
                vmnext();
            }
            *RA_ = INT_VAL(r);
        } else if (b.tag == VAL_FLOAT && c.tag == VAL_FLOAT) {
            *RA_ = FLOAT_VAL(b.as.f * c.as.f);
        } else {
            SAVEPC();
            rv = arith(vm, BINOP_MUL, b, c);
            *RA_ = rv;
        }
        vmnext();
    }
    vmcase(TRUEDIV) {
        Value b = *RB_, c = *RC_;
        if (b.tag == VAL_FLOAT && c.tag == VAL_FLOAT && c.as.f != 0.0) {
            *RA_ = FLOAT_VAL(b.as.f / c.as.f);
        } else {
            SAVEPC();
            rv = arith(vm, BINOP_TRUEDIV, b, c);
            *RA_ = rv;
        }
        vmnext();
    }
    vmcase(FLOORDIV) {
        Value b = *RB_, c = *RC_;
        if (b.tag == VAL_INT && c.tag == VAL_INT && c.as.i > 0) {
            int64_t x = b.as.i, y = c.as.i, q = x / y;
            if ((x % y != 0) && x < 0) q--;
            *RA_ = INT_VAL(q);
        } else {
            SAVEPC();
            rv = arith(vm, BINOP_FLOORDIV, b, c);
            *RA_ = rv;
        }
        vmnext();
    }
    vmcase(MOD) {
        Value b = *RB_, c = *RC_;
        if (b.tag == VAL_INT && c.tag == VAL_INT && c.as.i > 0) {
            int64_t r = b.as.i % c.as.i;
            if (r < 0) r += c.as.i;
            *RA_ = INT_VAL(r);
        } else {
            SAVEPC();
            rv = arith(vm, BINOP_MOD, b, c);
            *RA_ = rv;
        }
        vmnext();
    }
    vmcase(INPLACE) {
        uint32_t op = *pc;
        Value b = *RB_, c = *RC_;
        int64_t r;
        if (b.tag == VAL_INT && c.tag == VAL_INT) {
            if (small_int_op(op, b.as.i, c.as.i, &r)) {
                *RA_ = INT_VAL(r);
                pc++;
                vmnext();
            }
        } else if (b.tag == VAL_FLOAT && c.tag == VAL_FLOAT) {
            if (op == BINOP_ADD) {
                *RA_ = FLOAT_VAL(b.as.f + c.as.f);
                pc++;
                vmnext();
            }
            if (op == BINOP_MUL) {
                *RA_ = FLOAT_VAL(b.as.f * c.as.f);
                pc++;
                vmnext();
            }
        }
        SAVEPC();
        rv = inplace(vm, (BinOp)op, b, c);
        *RA_ = rv;
        pc++;
        vmnext();
    }
    vmcase(NEG) {
        Value b = *RB_;
        if (b.tag == VAL_INT && b.as.i != INT64_MIN) {
            *RA_ = INT_VAL(-b.as.i);
        } else if (b.tag == VAL_FLOAT) {
            *RA_ = FLOAT_VAL(-b.as.f);
        } else {
            SAVEPC();
            rv = unop(vm, UNOP_NEG, b);
            *RA_ = rv;
        }
        vmnext();
    }
    vmcase(POS) {
        Value b = *RB_;
        if (b.tag == VAL_INT || b.tag == VAL_FLOAT) {
            *RA_ = b;
        } else {
            SAVEPC();
            rv = unop(vm, UNOP_POS, b);
            *RA_ = rv;
        }
        vmnext();
    }
    vmcase(INVERT) {
        Value b = *RB_;
        if (b.tag == VAL_INT) {
            *RA_ = INT_VAL(~b.as.i);
        } else {
            SAVEPC();
            rv = unop(vm, UNOP_INVERT, b);
            *RA_ = rv;
        }
        vmnext();
    }
    vmcase(NOT) {
        Value b = *RB_;
        bool t;
        if (b.tag == VAL_BOOL) t = b.as.b;
        else if (b.tag == VAL_INT) t = b.as.i != 0;
        else if (b.tag == VAL_NONE) t = false;
        else {
            SAVEPC();
            t = vm_truthy(vm, b);
        }
        *RA_ = BOOL_VAL(!t);
        vmnext();
    }

#define CMP_CASE(OPN, KIND, COP)                                         \
    vmcase(OPN) {                                                        \
        Value b = *RB_, c = *RC_;                                        \
        if (b.tag == VAL_INT && c.tag == VAL_INT) {                      \
            *RA_ = BOOL_VAL(b.as.i COP c.as.i);                          \
        } else if (b.tag == VAL_FLOAT && c.tag == VAL_FLOAT) {           \
            *RA_ = BOOL_VAL(b.as.f COP c.as.f);                          \
        } else {                                                         \
            SAVEPC();                                                    \
            rv = compare(vm, KIND, b, c);                                \
            *RA_ = rv;                                                   \
        }                                                                \
        vmnext();                                                        \
    }
    CMP_CASE(EQ, CMP_EQ, ==)
    CMP_CASE(NE, CMP_NE, !=)
    CMP_CASE(LT, CMP_LT, <)
    CMP_CASE(LE, CMP_LE, <=)
    CMP_CASE(GT, CMP_GT, >)
    CMP_CASE(GE, CMP_GE, >=)
#undef CMP_CASE
    vmcase(IS) {
        *RA_ = BOOL_VAL(vm_is(*RB_, *RC_));
        vmnext();
    }
    vmcase(ISNOT) {
        *RA_ = BOOL_VAL(!vm_is(*RB_, *RC_));
        vmnext();
    }
    vmcase(IN) {
        SAVEPC();
        bool r = vm_contains(vm, *RC_, *RB_);
        *RA_ = BOOL_VAL(r);
        vmnext();
    }
    vmcase(NOTIN) {
        SAVEPC();
        bool r = vm_contains(vm, *RC_, *RB_);
        *RA_ = BOOL_VAL(!r);
        vmnext();
    }

    vmcase(JMP) {
        int32_t off = INS_SJ(ins);
        if (off < 0) SAFEPOINT_N(-off); /* before jumping: a KeyboardInterrupt names this line */
        pc += off;
        vmnext();
    }
    vmcase(JMP_IF_FALSE) {
        Value v = *RA_;
        bool t;
        if (v.tag == VAL_BOOL) t = v.as.b;
        else {
            SAVEPC();
            t = truthy(vm, v);
        }
        if (!t) {
            int32_t off = INS_SBX(ins);
            if (off < 0) SAFEPOINT_N(-off);
            pc += off;
        }
        vmnext();
    }
    vmcase(JMP_IF_TRUE) {
        Value v = *RA_;
        bool t;
        if (v.tag == VAL_BOOL) t = v.as.b;
        else {
            SAVEPC();
            t = truthy(vm, v);
        }
        if (t) {
            int32_t off = INS_SBX(ins);
            if (off < 0) SAFEPOINT_N(-off);
            pc += off;
        }
        vmnext();
    }
    vmcase(JMP_IF_NOT_LT) {
        Value a = *RA_, b = *RB_;
        bool lt;
        if (LIKELY(a.tag == VAL_INT && b.tag == VAL_INT)) lt = a.as.i < b.as.i;
        else if (a.tag == VAL_FLOAT && b.tag == VAL_FLOAT) lt = a.as.f < b.as.f;
        else {
            SAVEPC();
            rv = compare(vm, CMP_LT, a, b);
            lt = truthy(vm, rv);
        }
        int32_t off = (int32_t)*pc++;
        if (!lt) {
            if (off < 0) SAFEPOINT_N(-off);
            pc += off;
        }
        vmnext();
    }

    vmcase(GET_ITER) {
        SAVEPC();
        rv = get_iter(vm, *RB_);
        *RA_ = rv;
        vmnext();
    }
    vmcase(FOR_ITER) {
        ra = RA_;
        Value itv = ra[0];
        if (LIKELY(IS_OBJ(itv))) {
            Obj *io = AS_OBJ(itv);
            Type *it = io->type;
            if (it == vm->t_range_iter) {
                RangeIter *r = (RangeIter *)io;
                int64_t n = r->next;
                if (r->step > 0 ? n < r->stop : n > r->stop) {
                    ra[1] = INT_VAL(n);
                    if (ADD_OVF(n, r->step, &r->next)) r->next = r->stop;
                    vmnext();
                }
                pc += INS_SBX(ins);
                vmnext();
            }
            if (it == vm->t_list_iter) {
                SeqIter *s = (SeqIter *)io;
                if (IS_OBJ(s->seq)) {
                    List *l = AS_LIST(s->seq);
                    if (s->index < l->len) {
                        ra[1] = l->items[s->index++];
                        vmnext();
                    }
                    s->seq = NONE_VAL;
                }
                pc += INS_SBX(ins);
                vmnext();
            }
            if (it == vm->t_tuple_iter) {
                SeqIter *s = (SeqIter *)io;
                if (IS_OBJ(s->seq)) {
                    Tuple *t = AS_TUPLE(s->seq);
                    if (s->index < t->len) {
                        ra[1] = t->items[s->index++];
                        vmnext();
                    }
                    s->seq = NONE_VAL;
                }
                pc += INS_SBX(ins);
                vmnext();
            }
            if (it == vm->t_generator) {
                Generator *g = (Generator *)io;
                if (g->state == GEN_DONE) {
                    pc += INS_SBX(ins);
                    vmnext();
                }
                if (g->state == GEN_CREATED || g->state == GEN_SUSPENDED) {
                    /* resume the generator as a frame of this loop */
                    SAVEPC();
                    Proto *gp = g->fn->proto;
                    Value *nb = vm->stack_top;
                    interp_check_room(vm, nb, gp->nregs);
                    interp_copy_regs(nb, g->regs, gp->nregs);
                    if (g->state == GEN_SUSPENDED) nb[INS_A(gp->code[g->pc - 1])] = NONE_VAL;
                    Frame *nf = frame + 1;
                    nf->fn = g->fn;
                    nf->pc = gp->code + g->pc;
                    nf->base = nb;
                    nf->globals = g->fn->globals;
                    nf->locals = NULL;
                    nf->handling = g->handling;
                    nf->ret = ra + 1;
                    nf->gen = g;
                    nf->entry = FRAME_GEN_INLINE;
                    g->state = GEN_RUNNING;
                    SET_NFRAMES(vm, vm->nframes + 1);
                    frame = nf;
                    LOAD_FRAME();
                    vm->stack_top = nb + gp->nregs;
                    vmnext();
                }
            }
        }
        SAVEPC();
        if (for_iter_slow(vm, itv, ra + 1)) vmnext();
        pc += INS_SBX(ins);
        vmnext();
    }

    vmcase(BUILD_LIST) {
        SAVEPC();
        rv = build_list(vm, RB_, C_);
        *RA_ = rv;
        vmnext();
    }
    vmcase(BUILD_TUPLE) {
        SAVEPC();
        rv = OBJ_VAL(tuple_from_array(vm, C_, RB_));
        *RA_ = rv;
        vmnext();
    }
    vmcase(BUILD_SET) {
        SAVEPC();
        rv = build_set(vm, RB_, C_);
        *RA_ = rv;
        vmnext();
    }
    vmcase(BUILD_DICT) {
        SAVEPC();
        rv = build_dict(vm, RB_, C_);
        *RA_ = rv;
        vmnext();
    }
    vmcase(BUILD_SLICE) {
        SAVEPC();
        Value *rb = RB_;
        rv = slice_new(vm, rb[0], rb[1], C_ >= 3 ? rb[2] : NONE_VAL);
        *RA_ = rv;
        vmnext();
    }
    vmcase(BUILD_STRING) {
        SAVEPC();
        rv = build_string(vm, RB_, C_);
        *RA_ = rv;
        vmnext();
    }
    vmcase(FORMAT) {
        uint32_t ext = *pc;
        SAVEPC();
        rv = format_value(vm, *RB_, ext, *RC_);
        *RA_ = rv;
        pc++;
        vmnext();
    }
    vmcase(LIST_APPEND) {
        SAVEPC();
        list_append(vm, AS_LIST(*RA_), *RB_);
        vmnext();
    }
    vmcase(LIST_EXTEND) {
        SAVEPC();
        list_extend_op(vm, *RA_, *RB_);
        vmnext();
    }
    vmcase(LIST_TO_TUPLE) {
        SAVEPC();
        List *l = AS_LIST(*RB_);
        rv = OBJ_VAL(tuple_from_array(vm, l->len, l->items));
        *RA_ = rv;
        vmnext();
    }
    vmcase(SET_ADD) {
        SAVEPC();
        set_add(vm, (Set *)AS_OBJ(*RA_), *RB_);
        vmnext();
    }
    vmcase(SET_UPDATE) {
        SAVEPC();
        set_update(vm, (Set *)AS_OBJ(*RA_), *RB_);
        vmnext();
    }
    vmcase(DICT_SET) {
        SAVEPC();
        dict_set(vm, AS_DICT(*RA_), *RB_, *RC_);
        vmnext();
    }
    vmcase(DICT_UPDATE) {
        SAVEPC();
        dict_update_op(vm, *RA_, *RB_);
        vmnext();
    }
    vmcase(DICT_MERGE) {
        SAVEPC();
        dict_merge_op(vm, *RA_, *RB_);
        vmnext();
    }

    vmcase(GETITEM) {
        Value o = *RB_, key = *RC_;
        if (IS_OBJ(o) && key.tag == VAL_INT) {
            Obj *ob = AS_OBJ(o);
            if (ob->type == vm->t_list) {
                List *l = (List *)ob;
                int64_t i = key.as.i;
                if (i < 0) i += l->len;
                if ((uint64_t)i < (uint64_t)l->len) {
                    *RA_ = l->items[i];
                    vmnext();
                }
            } else if (ob->type == vm->t_tuple) {
                Tuple *t = (Tuple *)ob;
                int64_t i = key.as.i;
                if (i < 0) i += t->len;
                if ((uint64_t)i < (uint64_t)t->len) {
                    *RA_ = t->items[i];
                    vmnext();
                }
            }
        }
        SAVEPC();
        if (IS_DICT(vm, o) && dict_get(vm, AS_DICT(o), key, &rv)) {
            *RA_ = rv;
            vmnext();
        }
        rv = vm_getitem(vm, o, key);
        *RA_ = rv;
        vmnext();
    }
    vmcase(SETITEM) {
        Value o = *RA_, key = *RB_;
        if (IS_OBJ(o) && key.tag == VAL_INT && AS_OBJ(o)->type == vm->t_list) {
            List *l = (List *)AS_OBJ(o);
            int64_t i = key.as.i;
            if (i < 0) i += l->len;
            if ((uint64_t)i < (uint64_t)l->len) {
                l->items[i] = *RC_;
                vmnext();
            }
        }
        SAVEPC();
        if (IS_DICT(vm, o)) dict_set(vm, AS_DICT(o), key, *RC_);
        else vm_setitem(vm, o, key, *RC_);
        vmnext();
    }
    vmcase(DELITEM) {
        SAVEPC();
        vm_delitem(vm, *RA_, *RB_);
        vmnext();
    }
    vmcase(UNPACK) {
        SAVEPC();
        unpack(vm, RA_, *RB_, C_);
        vmnext();
    }
    vmcase(UNPACK_EX) {
        uint32_t ext = *pc;
        SAVEPC();
        unpack_ex(vm, RA_, *RB_, (int)(ext & 0xffff), (int)(ext >> 16));
        pc++;
        vmnext();
    }

    vmcase(RAISE) {
        SAVEPC();
        do_raise(vm, *RA_, B_ == 1, B_ == 1 ? *RC_ : NONE_VAL);
    }
    vmcase(RERAISE) {
        SAVEPC();
        do_reraise(vm, *RA_);
    }
    vmcase(RAISE_CURRENT) {
        SAVEPC();
        raise_current(vm, frame);
    }
    vmcase(EXC_MATCH) {
        SAVEPC();
        bool m = vm_exc_matches(vm, *RB_, *RC_);
        *RA_ = BOOL_VAL(m);
        vmnext();
    }
    vmcase(ENTER_EXCEPT) {
        Value h = frame->handling;
        frame->handling = *RA_;
        *RB_ = h;
        vmnext();
    }
    vmcase(LEAVE_EXCEPT) {
        frame->handling = *RA_;
        vmnext();
    }
    vmcase(ASSERT_FAIL) {
        SAVEPC();
        assert_fail(vm, B_ == 1 ? RA_ : NULL);
    }

    vmcase(WITH_ENTER) {
        SAVEPC();
        with_enter(vm, RA_, *RB_);
        vmnext();
    }
    vmcase(WITH_EXIT) {
        SAVEPC();
        with_exit(vm, *RA_);
        vmnext();
    }
    vmcase(WITH_EXIT_EXC) {
        SAVEPC();
        bool r = with_exit_exc(vm, *RA_, *RB_);
        *RA_ = BOOL_VAL(r);
        vmnext();
    }

    vmcase(YIELD) {
        Generator *g = frame->gen;
        if (UNLIKELY(!g)) {
            SAVEPC();
            vm_raise_kind(vm, SystemError, "'yield' outside a generator frame");
        }
        rv = *RB_;
        /* a consumer taking values in bulk (gen_batch.h): go on at once */
        if (g->batch && !C_ && gen_batch_take(vm, g->batch, rv)) {
            *RA_ = NONE_VAL;
            vmnext();
        }
        Proto *p = frame->fn->proto;
        interp_copy_regs(g->regs, base, p->nregs);
        g->pc = (int32_t)(pc - p->code);
        g->handling = frame->handling;
        g->state = GEN_SUSPENDED;
        if (frame->entry == FRAME_ENTRY) {
            vm->stack_top = base;
            SET_NFRAMES(vm, vm->nframes - 1);
            return rv;
        }
        /* inline generator: the value goes to the FOR_ITER that resumed it */
        *frame->ret = rv;
        frame--;
        SET_NFRAMES(vm, vm->nframes - 1);
        LOAD_FRAME();
        vm->stack_top = base + FRAME_NREGS();
        vmnext();
    }

    vmcase(IMPORT) {
        SAVEPC();
        rv = C_ ? vm_import_relative(vm, AS_STR(k[*pc]), C_, frame->globals) : vm_import(vm, AS_STR(k[*pc]), B_ == 1);
        *RA_ = rv;
        pc++;
        vmnext();
    }
    vmcase(IMPORT_FROM) {
        SAVEPC();
        rv = import_from(vm, *RB_, AS_STR(k[*pc]));
        *RA_ = rv;
        pc++;
        vmnext();
    }
    vmcase(IMPORT_STAR) {
        SAVEPC();
        import_star(vm, frame, *RA_);
        vmnext();
    }
    vmcase(BUILD_CLASS) {
        SAVEPC();
        SAFEPOINT();
        rv = build_class(vm, frame, RA_, C_, B_);
        *RA_ = rv;
        vmnext();
    }
    vmcase(PRINT_EXPR) {
        SAVEPC();
        print_expr(vm, *RA_);
        vmnext();
    }
    vmcase(SAFEPOINT) {
        SAFEPOINT();
        vmnext();
    }
    vmcase(LOAD_WIDE) {
        Value v = base[INS_BX(ins)];
        if (UNLIKELY(IS_EMPTY(v))) {
            SAVEPC();
            unbound_local(vm, frame, (int)INS_BX(ins) - WIDE_SHIFT);
        }
        *RA_ = v;
        vmnext();
    }
    vmcase(STORE_WIDE) {
        base[INS_BX(ins)] = *RA_;
        vmnext();
    }
    vmcase(DEL_WIDE) {
        if (UNLIKELY(IS_EMPTY(base[INS_BX(ins)]))) {
            SAVEPC();
            unbound_local(vm, frame, (int)INS_BX(ins) - WIDE_SHIFT);
        }
        base[INS_BX(ins)] = EMPTY_VAL;
        vmnext();
    }

    /* async/await: the work is in coroutine.c */
    vmcase(GET_AWAITABLE) {
        SAVEPC();
        rv = coro_get_awaitable(vm, *RB_, C_);
        *RA_ = rv;
        vmnext();
    }
    vmcase(SEND) {
        SAVEPC();
        if (!coro_send(vm, RA_)) pc += INS_SBX(ins);
        vmnext();
    }
    vmcase(GET_AITER) {
        SAVEPC();
        rv = coro_get_aiter(vm, *RB_);
        *RA_ = rv;
        vmnext();
    }
    vmcase(GET_ANEXT) {
        SAVEPC();
        rv = coro_get_anext(vm, *RB_);
        *RA_ = rv;
        vmnext();
    }
    vmcase(END_ASYNC_FOR) {
        SAVEPC();
        if (!coro_is_stop_async(vm, *RA_)) do_reraise(vm, *RA_);
        vmnext();
    }
    vmcase(ASYNC_GEN_WRAP) {
        SAVEPC();
        rv = coro_wrap_value(vm, *RB_);
        *RA_ = rv;
        vmnext();
    }
    vmcase(ASYNC_WITH_ENTER) {
        SAVEPC();
        coro_async_with_enter(vm, RA_, *RB_);
        vmnext();
    }
    vmcase(ASYNC_WITH_EXIT) {
        SAVEPC();
        rv = coro_async_with_exit(vm, *RB_, *RC_, B_ != C_);
        *RA_ = rv;
        vmnext();
    }
    /* match statements (match.c) */
    vmcase(MATCH_SEQ) {
        uint32_t ext = *pc;
        SAVEPC();
        bool m = match_sequence(vm, *RB_, ext);
        *RA_ = BOOL_VAL(m);
        pc++;
        vmnext();
    }
    vmcase(MATCH_STAR) {
        uint32_t ext = *pc;
        SAVEPC();
        rv = match_star(vm, *RB_, (int64_t)(ext & 0xffff), (int64_t)(ext >> 16));
        *RA_ = rv;
        pc++;
        vmnext();
    }
    vmcase(MATCH_MAP) {
        uint32_t ext = *pc;
        SAVEPC();
        bool m = match_mapping(vm, *RB_, (int64_t)ext);
        *RA_ = BOOL_VAL(m);
        pc++;
        vmnext();
    }
    vmcase(MATCH_KEYS) {
        SAVEPC();
        bool m = match_keys(vm, *RB_, *RC_, RA_ + 1);
        *RA_ = BOOL_VAL(m);
        vmnext();
    }
    vmcase(MATCH_REST) {
        SAVEPC();
        rv = match_rest(vm, *RB_, *RC_);
        *RA_ = rv;
        vmnext();
    }
    vmcase(MATCH_CLASS) {
        SAVEPC();
        bool m = match_class(vm, *RB_, *RA_, RA_[1], C_, RA_ + 1);
        *RA_ = BOOL_VAL(m);
        vmnext();
    }

#if !COMPUTED_GOTO
    default:
        SAVEPC();
        vm_raise_kind(vm, SystemError, "bad opcode %d", (int)INS_OP(ins));
    }
#endif
    return NONE_VAL; /* not reached */

#undef LOAD_FRAME
#undef A_
#undef B_
#undef C_
#undef RA_
#undef RB_
#undef RC_
#undef SAVEPC
#undef GETCACHE
#undef SAFEPOINT
#undef SAFEPOINT_N
#undef FRAME_NREGS
#undef vmcase
#undef vmnext
#undef TRACE_INS
}

/* ============================================================ unwinding */

/* Looks for a handler of exc in this loop's frames, from the top one down
** to the entry frame, adding one traceback line per frame (the first only
** when add_first). Returns true with the handler's frame on top, its pc at
** the handler and exc in the handler's register; false once the entry
** frame is popped too. *excp may be replaced (StopIteration leaving a
** generator becomes RuntimeError). */
static bool unwind(VM *vm, InterpJmp *ij, Value *excp, bool add_first) {
    Value exc = *excp;
    bool add = add_first;
    for (int32_t i = vm->interp_nframes - 1; i >= ij->entry; i--) {
        Frame *f = &vm->frames[i];
        Proto *p = f->fn->proto;
        int32_t at = (int32_t)(f->pc - p->code) - 1;
        if (add) exc_add_trace(vm, exc, p, at);
        add = true;
        for (int32_t h = 0; h < p->nhandlers; h++) {
            const Handler *hd = &p->handlers[h];
            if (at >= 0 && (uint32_t)at >= hd->start && (uint32_t)at < hd->end) {
                f->base[hd->reg] = exc;
                f->pc = p->code + hd->target;
                SET_NFRAMES(vm, i + 1);
                vm->stack_top = f->base + p->nregs;
                *excp = exc;
                return true;
            }
        }
        if (f->gen) exc = gen_unwind(vm, f->gen, exc);
    }
    Frame *ef = &vm->frames[ij->entry];
    SET_NFRAMES(vm, ij->entry);
    vm->stack_top = ef->base;
    *excp = exc;
    return false;
}

/* Handles an exception that reached this loop: resumes at a handler, or
** leaves the loop and rethrows to the enclosing protected call (under
** interp_run_protected: restores the VM as vm_pcall would and returns
** false). */
static NOINLINE bool catch_exception(VM *vm, InterpJmp *ij, Value exc, bool add) {
    vm->nroots = ij->ej.nroots;
    vm->c_depth = ij->ej.c_depth;
    vm->current_native = ij->native;
    if (unwind(vm, ij, &exc, add)) {
        vm->exc_value = NONE_VAL;
        return true;
    }
    vm->err = ij->ej.prev;
    vm->c_depth--;
    if (!ij->protect) vm_rethrow(vm, exc);
    vm->exc_value = exc;
    SET_NFRAMES(vm, ij->ej.nframes);
    vm->stack_top = ij->ej.stack_top;
    return false;
}

/* The loop's entry: sets up the handler that catches what the frames it
** runs raise. */
static inline bool run(VM *vm, Value exc, bool protect, Value *result) {
    InterpJmp ij;
    ij.entry = vm->nframes - 1;
    ij.reraise = false;
    ij.protect = protect;
    ij.ej.prev = vm->err;
    ij.ej.nframes = ij.entry;
    ij.ej.stack_top = vm->frames[ij.entry].base;
    ij.ej.nroots = vm->nroots;
    ij.ej.c_depth = vm->c_depth;
    ij.native = vm->current_native;
    vm->interp_nframes = vm->nframes;
    vm->err = &ij.ej;
    if (VM_SETJMP(ij.ej.buf) != 0) {
        bool add = !ij.reraise;
        ij.reraise = false;
        if (!catch_exception(vm, &ij, vm->exc_value, add)) return false;
    } else if (!IS_EMPTY(exc)) {
        if (!catch_exception(vm, &ij, exc, true)) return false;
    }
    *result = execute(vm);
    vm->err = ij.ej.prev;
    vm->c_depth--;
    return true;
}

Value interp_run(VM *vm, Value exc) {
    Value r;
    run(vm, exc, false, &r);
    return r;
}

bool interp_run_protected(VM *vm, Value *result) { return run(vm, EMPTY_VAL, true, result); }
