/*
** test_foreign.c — classes defined in C (gpy_new_class): a Vec with user
** data, init, x/y attributes with setters, a read-only attribute, methods,
** construction from scripts and from C, subclasses in scripts, wrong self
** types (CPython's messages), and the finalizer running exactly once per
** instance: for collected ones, and for the rest at gpy_free.
*/
#include <math.h>
#include <stdint.h>

#include "check.h"

typedef struct Vec {
    double x, y;
    uint32_t magic; /* set by init / gpy_new_foreign: finalized data must have it */
} Vec;

static const GpyClassDef vec_def;
static const GpyClassDef tag_def;

/* created: inits that succeeded (+ gpy_new_foreign); finalized: their finalizer calls */
static int created, finalized, uninit_finalized, bad_finalized;

/* Vec(x, y), also with x= and y= keywords */
static GpyStatus vec_init(GpyVM *vm, int nargs, void *user) {
    (void)user;
    Vec *v = gpy_get_foreign(vm, 1, &vec_def);
    if (!v) return GPY_RUNTIME_ERROR;
    int given = nargs - 1;
    GpyStatus st;
    if (given > 0 && (st = gpy_get_float(vm, 2, &v->x)) != GPY_OK) return st;
    if (given > 1 && (st = gpy_get_float(vm, 3, &v->y)) != GPY_OK) return st;
    int kw = gpy_kwargs_slot(vm);
    if (kw >= 0) {
        int key = gpy_slot_count(vm), value = key + 1;
        if ((st = gpy_ensure_slots(vm, value + 1)) != GPY_OK) return st;
        int64_t pos = 0;
        while (gpy_dict_next(vm, kw, &pos, key, value)) {
            const char *name = gpy_get_str(vm, key, NULL);
            if (!name) return GPY_RUNTIME_ERROR;
            double *field = strcmp(name, "x") == 0 ? &v->x : strcmp(name, "y") == 0 ? &v->y : NULL;
            if (!field) return gpy_raise(vm, "TypeError", "Vec() got an unexpected keyword argument '%s'", name);
            if ((st = gpy_get_float(vm, value, field)) != GPY_OK) return st;
            given++;
        }
    }
    if (given != 2) return gpy_raise(vm, "TypeError", "Vec() takes 2 arguments (%d given)", given);
    if (v->magic != 0x5eC) created++; /* scripts may call __init__ again */
    v->magic = 0x5eC;
    return GPY_OK;
}

/* Instances whose init failed have zeroed data (magic 0). */
static void vec_finalize(void *data, void *user) {
    Vec *v = data;
    if (user != (void *)&created || (v->magic != 0x5eC && v->magic != 0)) bad_finalized++;
    if (v->magic == 0x5eC) finalized++;
    else uninit_finalized++;
    v->magic = 0xdead;
}

static GpyStatus get_x(GpyVM *vm, int nargs, void *user) {
    (void)nargs;
    (void)user;
    Vec *v = gpy_get_foreign(vm, 1, &vec_def);
    return v ? gpy_set_float(vm, 0, v->x) : GPY_RUNTIME_ERROR;
}
static GpyStatus set_x(GpyVM *vm, int nargs, void *user) {
    (void)nargs;
    (void)user;
    Vec *v = gpy_get_foreign(vm, 1, &vec_def);
    return v ? gpy_get_float(vm, 2, &v->x) : GPY_RUNTIME_ERROR;
}
static GpyStatus get_y(GpyVM *vm, int nargs, void *user) {
    (void)nargs;
    (void)user;
    Vec *v = gpy_get_foreign(vm, 1, &vec_def);
    return v ? gpy_set_float(vm, 0, v->y) : GPY_RUNTIME_ERROR;
}
static GpyStatus set_y(GpyVM *vm, int nargs, void *user) {
    (void)nargs;
    (void)user;
    Vec *v = gpy_get_foreign(vm, 1, &vec_def);
    return v ? gpy_get_float(vm, 2, &v->y) : GPY_RUNTIME_ERROR;
}
static GpyStatus get_length(GpyVM *vm, int nargs, void *user) {
    (void)nargs;
    (void)user;
    Vec *v = gpy_get_foreign(vm, 1, &vec_def);
    return v ? gpy_set_float(vm, 0, sqrt(v->x * v->x + v->y * v->y)) : GPY_RUNTIME_ERROR;
}

/* v.dot(w) */
static GpyStatus vec_dot(GpyVM *vm, int nargs, void *user) {
    (void)user;
    if (nargs != 2) return gpy_raise(vm, "TypeError", "dot() takes exactly one argument (%d given)", nargs - 1);
    Vec *a = gpy_get_foreign(vm, 1, &vec_def);
    Vec *b = a ? gpy_get_foreign(vm, 2, &vec_def) : NULL;
    if (!b) return GPY_RUNTIME_ERROR;
    return gpy_set_float(vm, 0, a->x * b->x + a->y * b->y);
}

/* v.scale(k): in place, returns None */
static GpyStatus vec_scale(GpyVM *vm, int nargs, void *user) {
    (void)nargs;
    (void)user;
    Vec *v = gpy_get_foreign(vm, 1, &vec_def);
    double k;
    if (!v) return GPY_RUNTIME_ERROR;
    GpyStatus st = gpy_get_float(vm, 2, &k);
    if (st != GPY_OK) return st;
    v->x *= k;
    v->y *= k;
    return GPY_OK;
}

/* special methods: repr(v), v + w, v * k, k * v, -v, v == w, len(v), v[i] */
static GpyStatus vec_repr(GpyVM *vm, int nargs, void *user) {
    (void)nargs;
    (void)user;
    Vec *v = gpy_get_foreign(vm, 1, &vec_def);
    if (!v) return GPY_RUNTIME_ERROR;
    char buf[96];
    snprintf(buf, sizeof buf, "Vec(%g, %g)", v->x, v->y);
    return gpy_set_str(vm, 0, buf, (size_t)-1);
}

/* A new Vec of self's class into slot 0; NULL on failure. */
static Vec *new_like_self(GpyVM *vm, double x, double y) {
    int cls = gpy_slot_count(vm);
    void *data;
    if (gpy_ensure_slots(vm, cls + 1) != GPY_OK || gpy_get_attr(vm, 1, "__class__", cls) != GPY_OK ||
        gpy_new_foreign(vm, cls, 0, &data) != GPY_OK)
        return NULL;
    Vec *v = data;
    v->x = x;
    v->y = y;
    v->magic = 0x5eC;
    created++;
    return v;
}

/* NotImplemented into slot 0: the operation goes on with the other operand */
static GpyStatus not_implemented(GpyVM *vm) {
    gpy_clear_error(vm);
    return gpy_get_global(vm, NULL, "NotImplemented", 0);
}

static GpyStatus vec_add(GpyVM *vm, int nargs, void *user) {
    (void)nargs;
    (void)user;
    Vec *a = gpy_get_foreign(vm, 1, &vec_def), *b = gpy_get_foreign(vm, 2, &vec_def);
    if (!a || !b) return not_implemented(vm);
    return new_like_self(vm, a->x + b->x, a->y + b->y) ? GPY_OK : GPY_RUNTIME_ERROR;
}

static GpyStatus vec_mul(GpyVM *vm, int nargs, void *user) {
    (void)nargs;
    (void)user;
    Vec *a = gpy_get_foreign(vm, 1, &vec_def);
    double k;
    if (!a || gpy_get_float(vm, 2, &k) != GPY_OK) return not_implemented(vm);
    return new_like_self(vm, a->x * k, a->y * k) ? GPY_OK : GPY_RUNTIME_ERROR;
}

static GpyStatus vec_neg(GpyVM *vm, int nargs, void *user) {
    (void)nargs;
    (void)user;
    Vec *a = gpy_get_foreign(vm, 1, &vec_def);
    return a && new_like_self(vm, -a->x, -a->y) ? GPY_OK : GPY_RUNTIME_ERROR;
}

static GpyStatus vec_eq(GpyVM *vm, int nargs, void *user) {
    (void)nargs;
    (void)user;
    Vec *a = gpy_get_foreign(vm, 1, &vec_def), *b = gpy_get_foreign(vm, 2, &vec_def);
    if (!a || !b) return not_implemented(vm);
    return gpy_set_bool(vm, 0, a->x == b->x && a->y == b->y);
}

static GpyStatus vec_len(GpyVM *vm, int nargs, void *user) {
    (void)nargs;
    (void)user;
    return gpy_set_int(vm, 0, 2);
}

static GpyStatus vec_getitem(GpyVM *vm, int nargs, void *user) {
    (void)nargs;
    (void)user;
    Vec *v = gpy_get_foreign(vm, 1, &vec_def);
    int64_t i;
    if (!v) return GPY_RUNTIME_ERROR;
    GpyStatus st = gpy_get_int(vm, 2, &i);
    if (st != GPY_OK) return st;
    if (i < -2 || i > 1) return gpy_raise(vm, "IndexError", "Vec index out of range");
    return gpy_set_float(vm, 0, i == 0 || i == -2 ? v->x : v->y);
}

static const GpyMethodDef vec_methods[] = {
    {"dot", vec_dot},     {"scale", vec_scale},     {"__repr__", vec_repr}, {"__add__", vec_add},
    {"__mul__", vec_mul}, {"__rmul__", vec_mul},    {"__neg__", vec_neg},   {"__eq__", vec_eq},
    {"__len__", vec_len}, {"__getitem__", vec_getitem}, {NULL, NULL}};
static const GpyAttrDef vec_attrs[] = {
    {"x", get_x, set_x}, {"y", get_y, set_y}, {"length", get_length, NULL}, {NULL, NULL, NULL}};
static const GpyClassDef vec_def = {
    .name = "Vec", .size = sizeof(Vec), .init = vec_init, .finalize = vec_finalize,
    .methods = vec_methods, .attrs = vec_attrs};
/* no init, no methods, no finalizer, no data */
static const GpyClassDef tag_def = {.name = "Tag"};

static double global_float(GpyVM *vm, const char *name) {
    double v = NAN;
    CHECK_OK(vm, gpy_get_global(vm, NULL, name, 0));
    CHECK_OK(vm, gpy_get_float(vm, 0, &v));
    return v;
}

static const char *global_str(GpyVM *vm, const char *name) {
    CHECK_OK(vm, gpy_get_global(vm, NULL, name, 0));
    const char *s = gpy_get_str(vm, 0, NULL);
    return s ? s : "(not a str)";
}

/* Runs src, which must raise; returns "Type: message". */
static char caught[512];
static const char *error_of(GpyVM *vm, const char *src) {
    GpyStatus st = gpy_run_string(vm, NULL, src, (size_t)-1, NULL);
    CHECK(st == GPY_RUNTIME_ERROR);
    snprintf(caught, sizeof caught, "%s: %s", gpy_error_type(vm) ? gpy_error_type(vm) : "(none)",
             gpy_error_message(vm) ? gpy_error_message(vm) : "(none)");
    return caught;
}

int main(void) {
    GpyVM *vm = gpy_new(NULL);
    CHECK(vm != NULL);
    CHECK_OK(vm, gpy_ensure_slots(vm, 4));
    CHECK_OK(vm, gpy_new_module(vm, "geo", 1));
    CHECK_OK(vm, gpy_new_class(vm, 1, &vec_def, &created, 2));
    CHECK_OK(vm, gpy_new_class(vm, 1, &tag_def, NULL, 3));

    /* construction, attributes and methods from a script */
    CHECK_OK(vm, gpy_run_string(vm, NULL,
                                "import geo\n"
                                "from geo import Vec\n"
                                "v = Vec(3.0, 4.0)\n"
                                "n = v.length\n"
                                "v.x = 6\n"
                                "d = v.dot(Vec(1, 2))\n"
                                "v.scale(0.5)\n"
                                "s = f'{v.x} {v.y} {type(v).__name__} {isinstance(v, Vec)}'\n"
                                "kw = Vec(y=2.0, x=1.0).x\n"
                                "r = f'{Vec!r} {Vec.__module__} {Vec.__name__} ' + object.__repr__(v)[:18] + ' ' + repr(v)\n",
                                (size_t)-1, NULL));
    CHECK(global_float(vm, "n") == 5.0);
    CHECK(global_float(vm, "d") == 14.0);
    CHECK_STR(global_str(vm, "s"), "3.0 2.0 Vec True");
    CHECK(global_float(vm, "kw") == 1.0);
    /* named after its module, as CPython names extension types "geo.Vec" */
    CHECK_STR(global_str(vm, "r"), "<class 'geo.Vec'> geo Vec <geo.Vec object at Vec(3, 2)");
    CHECK(created == 3);

    /* the C side reads a script's instance */
    CHECK_OK(vm, gpy_get_global(vm, NULL, "v", 0));
    CHECK(gpy_slot_type(vm, 0) == GPY_TYPE_FOREIGN);
    Vec *pv = gpy_get_foreign(vm, 0, &vec_def);
    CHECK(pv && pv->x == 3.0 && pv->y == 2.0);
    CHECK(gpy_get_foreign(vm, 0, &tag_def) == NULL);
    CHECK_STR(gpy_error_type(vm), "TypeError");
    CHECK_STR(gpy_error_message(vm), "expected a 'Tag' object, got 'Vec'");

    /* and makes one the script uses (init not called: zeroed data) */
    void *data = NULL;
    CHECK_OK(vm, gpy_new_foreign(vm, 2, 0, &data));
    CHECK(data != NULL);
    Vec *nv = data;
    CHECK(nv->x == 0.0 && nv->y == 0.0 && nv->magic == 0);
    nv->x = 7.5;
    nv->magic = 0x5eC;
    created++;
    CHECK_OK(vm, gpy_set_global(vm, NULL, "from_c", 0));
    CHECK_OK(vm, gpy_run_string(vm, NULL, "fx = from_c.x + from_c.length\n", (size_t)-1, NULL));
    CHECK(global_float(vm, "fx") == 15.0);
    CHECK(gpy_new_foreign(vm, 1, 0, &data) == GPY_RUNTIME_ERROR); /* a module is no class */
    CHECK(data == NULL);

    /* errors in CPython's wording */
    CHECK_STR(error_of(vm, "v.length = 3\n"), "AttributeError: property 'length' of 'Vec' object has no setter");
    CHECK_STR(error_of(vm, "del v.x\n"), "AttributeError: property 'x' of 'Vec' object has no deleter");
    CHECK_STR(error_of(vm, "v.z = 1\n"), "AttributeError: 'Vec' object has no attribute 'z'");
    CHECK_STR(error_of(vm, "Vec.dot(5, v)\n"),
              "TypeError: descriptor 'dot' for 'Vec' objects doesn't apply to a 'int' object");
    CHECK_STR(error_of(vm, "Vec.x.fget('s')\n"),
              "TypeError: descriptor 'x' for 'Vec' objects doesn't apply to a 'str' object");
    CHECK_STR(error_of(vm, "v.dot(5)\n"), "TypeError: expected a 'Vec' object, got 'int'");
    CHECK_STR(error_of(vm, "v.x = 'a'\n"), "TypeError: slot 2 holds a 'str', not a float");
    CHECK_STR(error_of(vm, "geo.Tag(1)\n"), "TypeError: Tag() takes no arguments");
    CHECK_STR(error_of(vm, "geo.Tag(k=1)\n"), "TypeError: Tag() takes no arguments");
    CHECK_STR(error_of(vm, "Vec(1)\n"), "TypeError: Vec() takes 2 arguments (1 given)");
    CHECK_STR(error_of(vm, "Vec.y = 3\n"), "TypeError: cannot set 'y' attribute of immutable type 'Vec'");
    CHECK_OK(vm, gpy_run_string(vm, NULL, "t = geo.Tag()\nts = type(t).__name__\n", (size_t)-1, NULL));
    CHECK_STR(global_str(vm, "ts"), "Tag");

    /* scripts' subclasses: with and without __init__, with an instance dict */
    CHECK_OK(vm, gpy_run_string(vm, NULL,
                                "class V2(Vec):\n"
                                "    def norm1(self):\n"
                                "        return abs(self.x) + abs(self.y)\n"
                                "class V3(Vec):\n"
                                "    def __init__(self, x, y, z):\n"
                                "        super().__init__(x, y)\n"
                                "        self.z = z\n"
                                "a = V2(-1, 2)\n"
                                "b = V3(1, 2, 3)\n"
                                "b.x = 10\n"
                                "sub = f'{a.norm1()} {b.x} {b.y} {b.z} {b.dot(a)} {isinstance(b, Vec)}'\n",
                                (size_t)-1, NULL));
    CHECK_STR(global_str(vm, "sub"), "3.0 10.0 2.0 3 -6.0 True");
    CHECK_OK(vm, gpy_get_global(vm, NULL, "b", 0));
    pv = gpy_get_foreign(vm, 0, &vec_def);
    CHECK(pv && pv->x == 10.0);
    CHECK_STR(error_of(vm, "b.length = 1\n"), "AttributeError: property 'length' of 'V3' object has no setter");
    CHECK(created == 6);

    /* special methods back the operators, for subclasses too */
    CHECK_OK(vm, gpy_run_string(vm, NULL,
                                "p, q = Vec(1, 2), Vec(3, 4)\n"
                                "ops = ' '.join([repr(p + q), str(p), repr(2 * p), repr(p * 3), repr(-p),\n"
                                "                repr(V2(1, 1) + p), type(V2(1, 1) + p).__name__, f'{q}'])\n"
                                "cmp = (p == Vec(1, 2), p != Vec(1, 2), p == q, p != 5, p == 5)\n"
                                "seq = (len(p), p[0], p[-1], list(p))\n"
                                "try:\n"
                                "    p + 1\n"
                                "except TypeError as e:\n"
                                "    e1 = str(e)\n"
                                "try:\n"
                                "    hash(p)\n"
                                "except TypeError as e:\n"
                                "    e2 = str(e)\n"
                                "try:\n"
                                "    p[2]\n"
                                "except IndexError as e:\n"
                                "    e3 = str(e)\n"
                                "checks = f'{cmp} {seq} {e1} | {e2} | {e3}'\n",
                                (size_t)-1, NULL));
    CHECK_STR(global_str(vm, "ops"), "Vec(4, 6) Vec(1, 2) Vec(2, 4) Vec(3, 6) Vec(-1, -2) Vec(2, 3) V2 Vec(3, 4)");
    CHECK_STR(global_str(vm, "checks"),
              "(True, False, False, True, False) (2, 1.0, 2.0, [1.0, 2.0]) "
              "unsupported operand type(s) for +: 'Vec' and 'int' | unhashable type: 'Vec' | Vec index out of range");

    /* C functions added to a foreign class later are methods too */
    CHECK_OK(vm, gpy_add_function(vm, 2, "dot2", vec_dot, NULL));
    CHECK_OK(vm, gpy_run_string(vm, NULL, "d2 = Vec(1, 1).dot2(Vec(2, 3))\n", (size_t)-1, NULL));
    CHECK(global_float(vm, "d2") == 5.0);

    /* collections finalize unreachable instances, once each; live ones stay */
    int before = created;
    CHECK_OK(vm, gpy_run_string(vm, NULL,
                                "total = 0.0\n"
                                "for i in range(20000):\n"
                                "    total += Vec(i, 1).x\n"
                                "    t = [i] * 200  # garbage, so that collections happen\n",
                                (size_t)-1, NULL));
    CHECK(created == before + 20000);
    CHECK(finalized > 0);
    CHECK(finalized < created);
    CHECK(global_float(vm, "total") == 199990000.0);
    pv = NULL;
    CHECK_OK(vm, gpy_get_global(vm, NULL, "v", 0));
    pv = gpy_get_foreign(vm, 0, &vec_def);
    CHECK(pv && pv->magic == 0x5eC && pv->x == 3.0); /* still alive, not finalized */
    CHECK(bad_finalized == 0);

    gpy_free(vm);
    CHECK(finalized == created);
    CHECK(uninit_finalized == 1); /* Vec(1), whose init failed */
    CHECK(bad_finalized == 0);
    return check_done("test_foreign");
}
