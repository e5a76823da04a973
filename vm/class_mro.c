/*
** class_mro.c — multiple inheritance: the C3 method resolution order, the
** choice of a class's layout base, and the walks along an MRO.
**
** A class with one base whose own MRO is its base chain keeps mro == NULL:
** its MRO is the chain, walked through Type.base. Only a class with several
** bases (or one below such a class) stores its C3 linearization as a tuple.
** So single inheritance costs nothing, and a chain of thousands of classes
** does not hold thousands of ever-longer tuples.
*/
#include <string.h>

#include "class_internal.h"

int64_t class_mro_len(Type *t) {
    if (t->mro) return t->mro->len;
    int64_t n = 0;
    for (; t; t = t->base) n++;
    return n;
}

Type *class_mro_at(Type *t, int64_t i) {
    if (t->mro) return i < t->mro->len ? (Type *)AS_OBJ(t->mro->items[i]) : NULL;
    for (; t && i > 0; i--) t = t->base;
    return t;
}

Tuple *class_mro_tuple(VM *vm, Type *t) {
    if (t->mro) return t->mro;
    Tuple *tu = tuple_new(vm, class_mro_len(t));
    int64_t i = 0;
    for (Type *x = t; x; x = x->base) tu->items[i++] = OBJ_VAL(x);
    return tu;
}

Tuple *class_bases_tuple(VM *vm, Type *t) {
    if (t->bases) return t->bases;
    if (!t->base) return tuple_new(vm, 0);
    Value b = OBJ_VAL(t->base);
    return tuple_from_array(vm, 1, &b);
}

bool class_has_base(Type *t, Type *base) {
    if (!t->bases) return t->base == base;
    for (int64_t i = 0; i < t->bases->len; i++)
        if (AS_OBJ(t->bases->items[i]) == &base->obj) return true;
    return false;
}

/* ------------------------------------------------------------------ C3 */

/* One input sequence of the merge: an MRO (or the bases), consumed from
** the front. */
typedef struct Seq {
    Type *owner; /* the MRO of owner, or NULL: the bases tuple */
    Tuple *tuple;
    int64_t len, pos;
} Seq;

static Type *seq_at(const Seq *s, int64_t i) {
    return s->owner ? class_mro_at(s->owner, i) : (Type *)AS_OBJ(s->tuple->items[i]);
}

/* Is t somewhere after the head of s? */
static bool in_tail(const Seq *s, Type *t) {
    if (s->owner && !s->owner->mro) {
        /* a base chain: walk it once from the head */
        Type *x = class_mro_at(s->owner, s->pos);
        for (x = x ? x->base : NULL; x; x = x->base)
            if (x == t) return true;
        return false;
    }
    for (int64_t i = s->pos + 1; i < s->len; i++)
        if (seq_at(s, i) == t) return true;
    return false;
}

static _Noreturn void mro_error(VM *vm, Seq *seqs, int n) {
    StrBuf b;
    sb_init(&b);
    int listed = 0;
    for (int i = 0; i < n; i++) {
        if (seqs[i].pos >= seqs[i].len) continue;
        Type *h = seq_at(&seqs[i], seqs[i].pos);
        bool seen = false;
        for (int j = 0; j < i; j++)
            if (seqs[j].pos < seqs[j].len && seq_at(&seqs[j], seqs[j].pos) == h) seen = true;
        if (seen) continue;
        if (listed++) sb_appends(&b, ", ");
        sb_appends(&b, class_type_name(h));
    }
    Str *s = sb_finish(vm, &b);
    vm_raise_kind(vm, TypeError, "Cannot create a consistent method resolution\norder (MRO) for bases %s", s->chars);
}

/* C3: T, then the merge of the bases' MROs and the bases list. */
static Tuple *c3_merge(VM *vm, Type *T, Tuple *bases) {
    int n = (int)bases->len + 1;
    Seq *seqs = gc_malloc(vm, sizeof(Seq) * (size_t)n);
    int64_t total = 1;
    for (int i = 0; i < n - 1; i++) {
        Type *b = (Type *)AS_OBJ(bases->items[i]);
        seqs[i] = (Seq){b, NULL, class_mro_len(b), 0};
        total += seqs[i].len;
    }
    seqs[n - 1] = (Seq){NULL, bases, bases->len, 0};
    List *out = list_new(vm, total);
    vm_push_root(vm, OBJ_VAL(out));
    list_append(vm, out, OBJ_VAL(T));
    for (;;) {
        Type *pick = NULL;
        bool any = false;
        for (int i = 0; i < n && !pick; i++) {
            if (seqs[i].pos >= seqs[i].len) continue;
            any = true;
            Type *h = seq_at(&seqs[i], seqs[i].pos);
            bool ok = true;
            for (int j = 0; j < n && ok; j++)
                if (seqs[j].pos < seqs[j].len && in_tail(&seqs[j], h)) ok = false;
            if (ok) pick = h;
        }
        if (!any) break;
        if (!pick) {
            /* the error message is built before the buffer goes */
            Seq copy[64];
            int m = n < 64 ? n : 64;
            memcpy(copy, seqs, sizeof(Seq) * (size_t)m);
            gc_free(vm, seqs, sizeof(Seq) * (size_t)n);
            mro_error(vm, copy, m);
        }
        list_append(vm, out, OBJ_VAL(pick));
        for (int i = 0; i < n; i++)
            if (seqs[i].pos < seqs[i].len && seq_at(&seqs[i], seqs[i].pos) == pick) seqs[i].pos++;
    }
    gc_free(vm, seqs, sizeof(Seq) * (size_t)n);
    Tuple *mro = tuple_from_array(vm, out->len, out->items);
    vm_pop_roots(vm, 1);
    return mro;
}

/* The layout ("solid") base of a class: the nearest builtin in its chain. */
static Type *solid_base(Type *t) {
    return class_ancestor(t);
}

Type *class_setup_bases(VM *vm, Type *T, Tuple *bases) {
    int64_t nb = bases ? bases->len : 0;
    if (nb == 0) {
        T->base = vm->t_object;
        return T->base;
    }
    Type *best = NULL;
    for (int64_t i = 0; i < nb; i++) {
        Type *b = (Type *)AS_OBJ(bases->items[i]);
        for (int64_t j = 0; j < i; j++)
            if (AS_OBJ(bases->items[j]) == &b->obj)
                vm_raise_kind(vm, TypeError, "duplicate base class %s", class_type_name(b));
        if (!best) {
            best = b;
            continue;
        }
        Type *sb = solid_base(b), *sw = solid_base(best);
        if (type_is_subtype(sw, sb)) continue;
        if (type_is_subtype(sb, sw))
            best = b;
        else
            vm_raise_kind(vm, TypeError, "multiple bases have instance lay-out conflict");
    }
    T->base = best;
    if (nb == 1 && !best->mro) return best; /* single inheritance: the chain is the MRO */
    T->bases = bases;
    T->mro = c3_merge(vm, T, bases);
    return best;
}
