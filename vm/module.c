/*
** module.c — module objects, Source objects, compiling source text, and
** the import system: sys.modules cache, .gpy files found next to the
** importer / on GPY_PATH / on sys.path (packages are directories with an
** __init__.gpy), then native modules registered from C.
*/
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vm.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* ---------------------------------------------------------------- modules */

Module *module_new(VM *vm, Str *name) {
    Module *m = gc_alloc_obj(vm, vm->t_module, sizeof(Module));
    m->name = name;
    m->dict = dict_new(vm);
    dict_set_str(vm, m->dict, vm->sym_name, STR_VAL(name));
    dict_set_str(vm, m->dict, vm->sym_doc, NONE_VAL);
    return m;
}

static const char *module_name(VM *vm, Module *m) {
    Value n = m->dict ? dict_get_str(vm, m->dict, vm->sym_name) : EMPTY_VAL;
    if (IS_STR(vm, n)) return AS_STR(n)->chars;
    return m->name ? m->name->chars : "?";
}

/* Attributes are the module's globals; then the few the module type has. */
static Value module_getattr(VM *vm, Value self, Str *name) {
    Module *m = (Module *)AS_OBJ(self);
    Value v = dict_get_str(vm, m->dict, name);
    if (!IS_EMPTY(v)) return v;
    if (str_equal(name, vm->sym_dict)) return OBJ_VAL(m->dict);
    if (str_equal(name, vm->sym_class)) return OBJ_VAL(vm->t_module);
    return type_lookup(vm, vm->t_module, name);
}

static void module_setattr(VM *vm, Value self, Str *name, Value value) {
    Module *m = (Module *)AS_OBJ(self);
    if (IS_EMPTY(value)) {
        if (!dict_del(vm, m->dict, STR_VAL(name)))
            vm_raise_kind(vm, AttributeError, "module '%s' has no attribute '%s'", module_name(vm, m), name->chars);
        return;
    }
    dict_set_str(vm, m->dict, name, value);
}

static Value module_repr(VM *vm, Value self) {
    Module *m = (Module *)AS_OBJ(self);
    Value f = dict_get_cstr(vm, m->dict, "__file__");
    if (IS_STR(vm, f)) return STR_VAL(str_printf(vm, "<module '%s' from '%s'>", module_name(vm, m), AS_STR(f)->chars));
    return STR_VAL(str_printf(vm, "<module '%s' (built-in)>", module_name(vm, m)));
}

static void module_mark(VM *vm, Obj *o) {
    Module *m = (Module *)o;
    gc_mark_obj(vm, (Obj *)m->name);
    gc_mark_obj(vm, (Obj *)m->dict);
    gc_mark_obj(vm, (Obj *)m->file);
}

static void module_finalize(VM *vm, Obj *o) {
    (void)vm;
    Module *m = (Module *)o;
    if (m->cstate && m->cstate_free) m->cstate_free(m->cstate);
    m->cstate = NULL;
}

/* ---------------------------------------------------------------- sources */

static void source_mark(VM *vm, Obj *o) { gc_mark_obj(vm, (Obj *)((Source *)o)->filename); }

static void source_finalize(VM *vm, Obj *o) {
    Source *s = (Source *)o;
    if (s->text) gc_free(vm, s->text, s->len + 1);
    s->text = NULL;
    if (s->arena) arena_free(s->arena);
    s->arena = NULL;
}

Source *source_new(VM *vm, Str *filename, const char *text, size_t len) {
    Source *s = gc_alloc_obj(vm, vm->t_source, sizeof(Source));
    s->filename = filename;
    char *copy = gc_malloc(vm, len + 1);
    memcpy(copy, text, len);
    copy[len] = '\0';
    s->text = copy;
    s->len = len;
    return s;
}

/* Source.obj.flags: the text was read from a file (tracebacks show its
** lines as they are, byte order mark included, like CPython's) */
#define SOURCE_FROM_FILE 1

size_t source_bom_length(const char *text, size_t len) {
    return len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
}

Source *source_from_file(VM *vm, Str *filename, const char *path, int *err) {
    Source *src = gc_alloc_obj(vm, vm->t_source, sizeof(Source));
    src->filename = filename;
    FILE *f = fopen(path, "rb");
    if (!f) {
        *err = errno;
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        *err = EISDIR;
        return NULL;
    }
    size_t cap = (st.st_size > 0 ? (size_t)st.st_size : 0) + 4096, len = 0;
    char *buf = malloc(cap);
    bool nomem = buf == NULL;
    while (buf) {
        if (len + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                nomem = true;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
        if (n == 0) break;
    }
    int read_err = ferror(f) ? errno : 0;
    fclose(f);
    if (nomem) {
        free(buf);
        vm_throw(vm, vm->memory_error);
    }
    if (read_err) {
        free(buf);
        *err = read_err;
        return NULL;
    }
    buf[len] = '\0';
    /* the Source owns a gc_malloc'd copy (freed like one, through the VM's
    ** allocator hook): one that cannot raise, so buf is never lost */
    char *text = gc_try_malloc(vm, len + 1);
    if (!text) {
        free(buf);
        vm_throw(vm, vm->memory_error);
    }
    memcpy(text, buf, len + 1);
    free(buf);
    src->text = text;
    src->len = len;
    src->obj.flags |= SOURCE_FROM_FILE;
    return src;
}

const char *source_code(Source *src, size_t *len) {
    size_t skip = (src->obj.flags & SOURCE_FROM_FILE) ? source_bom_length(src->text, src->len) : 0;
    *len = src->len - skip;
    return src->text + skip;
}

Proto *vm_compile_source(VM *vm, Source *src, ParseMode mode) {
    if (!src->arena) {
        src->arena = arena_new();
        if (!src->arena) vm_throw(vm, vm->memory_error);
    }
    SyntaxErr err;
    memset(&err, 0, sizeof err);
    const char *fname = src->filename ? src->filename->chars : "<string>";
    size_t len;
    const char *code = source_code(src, &len);
    AstNode *ast = parse_source(src->arena, fname, code, len, mode, &err);
    if (!ast) vm_throw(vm, exc_syntax_error(vm, src, &err));
    Proto *p = comp_module(vm, src, ast, mode, &err);
    if (!p) vm_throw(vm, exc_syntax_error(vm, src, &err));
    return p;
}

void module_exec_source(VM *vm, Module *m, const char *filename, const char *text, size_t len) {
    vm_push_root(vm, OBJ_VAL(m));
    Source *src = source_new(vm, str_cstr(vm, filename), text, len);
    vm_push_root(vm, OBJ_VAL(src));
    Proto *p = vm_compile_source(vm, src, PARSE_FILE);
    vm_push_root(vm, OBJ_VAL(p));
    vm_exec_proto(vm, p, m->dict);
    vm_pop_roots(vm, 3);
}

/* ----------------------------------------------------------------- import */

static bool is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Joins dir and rest; an empty dir or "." means the current directory and
** yields a relative path. False when the result does not fit. */
static bool join_path(char *out, size_t size, const char *dir, const char *rest) {
    int n;
    if (dir[0] == '\0' || strcmp(dir, ".") == 0) n = snprintf(out, size, "%s", rest);
    else if (dir[strlen(dir) - 1] == '/') n = snprintf(out, size, "%s%s", dir, rest);
    else n = snprintf(out, size, "%s/%s", dir, rest);
    return n >= 0 && (size_t)n < size;
}

/* Looks for leaf.gpy, then the package leaf/__init__.gpy, in dir. */
static bool find_in_dir(const char *dir, const char *leaf, char *path, char *pkgdir, bool *is_pkg) {
    char rest[PATH_MAX];
    if ((size_t)snprintf(rest, sizeof rest, "%s.gpy", leaf) < sizeof rest && join_path(path, PATH_MAX, dir, rest) &&
        is_file(path)) {
        *is_pkg = false;
        return true;
    }
    if ((size_t)snprintf(rest, sizeof rest, "%s/__init__.gpy", leaf) < sizeof rest &&
        join_path(path, PATH_MAX, dir, rest) && is_file(path)) {
        *is_pkg = true;
        join_path(pkgdir, PATH_MAX, dir, leaf);
        return true;
    }
    return false;
}

/* Directory of the running frame's module file ("" for the cwd); false
** when no gpy code is running or its module has no file. */
static bool importer_dir(VM *vm, char *out, size_t size) {
    if (vm->nframes <= 0) return false;
    Dict *g = vm->frames[vm->nframes - 1].globals;
    if (!g) return false;
    Value f = dict_get_cstr(vm, g, "__file__");
    if (!IS_STR(vm, f)) return false;
    const char *s = AS_STR(f)->chars;
    const char *slash = strrchr(s, '/');
    if (!slash) {
        out[0] = '\0';
        return true;
    }
    size_t n = slash == s ? 1 : (size_t)(slash - s);
    if (n >= size) return false;
    memcpy(out, s, n);
    out[n] = '\0';
    return true;
}

/* Searches the importer's directory, the configured module path, then sys.path. */
static bool find_top_level(VM *vm, const char *leaf, char *path, char *pkgdir, bool *is_pkg) {
    char dir[PATH_MAX];
    if (importer_dir(vm, dir, sizeof dir) && find_in_dir(dir, leaf, path, pkgdir, is_pkg)) return true;
    const char *gp = vm->config.module_path;
    while (gp && *gp) {
        const char *colon = strchr(gp, ':');
        size_t n = colon ? (size_t)(colon - gp) : strlen(gp);
        if (n > 0 && n < sizeof dir) {
            memcpy(dir, gp, n);
            dir[n] = '\0';
            if (find_in_dir(dir, leaf, path, pkgdir, is_pkg)) return true;
        }
        gp = colon ? colon + 1 : NULL;
    }
    if (vm->sys_path) {
        for (int64_t i = 0; i < vm->sys_path->len; i++) {
            Value d = vm->sys_path->items[i];
            if (IS_STR(vm, d) && find_in_dir(AS_STR(d)->chars, leaf, path, pkgdir, is_pkg)) return true;
        }
    }
    return false;
}

/* Searches the directories listed in a package's __path__. */
static bool find_in_package(VM *vm, Module *parent, const char *leaf, char *path, char *pkgdir, bool *is_pkg) {
    Value pp = dict_get_cstr(vm, parent->dict, "__path__");
    if (!IS_LIST(vm, pp)) return false;
    List *l = AS_LIST(pp);
    for (int64_t i = 0; i < l->len; i++) {
        Value d = l->items[i];
        if (IS_STR(vm, d) && find_in_dir(AS_STR(d)->chars, leaf, path, pkgdir, is_pkg)) return true;
    }
    return false;
}

typedef struct LoadCtx {
    Module *mod;
    const char *path;
} LoadCtx;

static void run_module_body(VM *vm, void *ud) {
    LoadCtx *c = ud;
    int err = 0;
    Source *src = source_from_file(vm, c->mod->file, c->path, &err);
    if (!src) vm_raise_kind(vm, ImportError, "cannot read '%s': %s", c->path, strerror(err));
    vm_push_root(vm, OBJ_VAL(src));
    Proto *p = vm_compile_source(vm, src, PARSE_FILE);
    vm_push_root(vm, OBJ_VAL(p));
    vm_exec_proto(vm, p, c->mod->dict);
    vm_pop_roots(vm, 2);
}

/* Runs a module file once. The module is in sys.modules while its body
** runs (circular imports see the partial module) and is removed again if
** the body raises. */
static Value load_file_module(VM *vm, Str *fullname, Module *parent, const char *path, bool is_pkg,
                              const char *pkgdir) {
    Module *m = module_new(vm, fullname);
    vm_push_root(vm, OBJ_VAL(m));
    m->file = str_cstr(vm, path);
    dict_set_cstr(vm, m->dict, "__file__", STR_VAL(m->file));
    if (is_pkg) {
        List *pl = list_new(vm, 1);
        dict_set_cstr(vm, m->dict, "__path__", OBJ_VAL(pl));
        list_append(vm, pl, STR_VAL(str_cstr(vm, pkgdir)));
        dict_set_cstr(vm, m->dict, "__package__", STR_VAL(fullname));
    } else {
        dict_set_cstr(vm, m->dict, "__package__", parent ? STR_VAL(parent->name) : STR_VAL(vm->empty_str));
    }
    dict_set_str(vm, vm->modules, fullname, OBJ_VAL(m));
    vm_pop_roots(vm, 1);
    LoadCtx ctx = {.mod = m, .path = path};
    if (!vm_pcall(vm, run_module_body, &ctx)) {
        Value exc = vm->exc_value;
        dict_del(vm, vm->modules, STR_VAL(fullname));
        vm_rethrow(vm, exc);
    }
    Value v = dict_get_str(vm, vm->modules, fullname);
    return IS_EMPTY(v) ? OBJ_VAL(m) : v;
}

/* Builds a native module registered by module_register_native; EMPTY if
** none has that name. */
static Value load_native(VM *vm, Str *fullname) {
    if (!vm->native_modules) return EMPTY_VAL;
    Value b = dict_get_str(vm, vm->native_modules, fullname);
    if (!IS_OBJ(b)) return EMPTY_VAL;
    NativeFunction *nf = (NativeFunction *)AS_OBJ(b);
    Module *(*build)(VM *) = (Module * (*)(VM *))(void (*)(void))nf->fn;
    Module *m = build(vm);
    if (!m) vm_raise_kind(vm, ImportError, "initialization of %s failed", fullname->chars);
    dict_set_str(vm, vm->modules, fullname, OBJ_VAL(m));
    return OBJ_VAL(m);
}

typedef struct LoaderCtx {
    Str *fullname;
    char *text; /* the application's malloc'd source */
    size_t len;
    Source *src;
    Module *mod;
} LoaderCtx;

static void loader_source(VM *vm, void *ud) {
    LoaderCtx *c = ud;
    c->src = source_new(vm, c->fullname, c->text, c->len);
}

static void loader_body(VM *vm, void *ud) {
    LoaderCtx *c = ud;
    vm_push_root(vm, OBJ_VAL(c->src));
    Proto *p = vm_compile_source(vm, c->src, PARSE_FILE);
    vm_push_root(vm, OBJ_VAL(p));
    vm_exec_proto(vm, p, c->mod->dict);
    vm_pop_roots(vm, 2);
}

/* Asks the embedding application's loader (VMConfig.load_module) for the
** module's source; EMPTY when there is no loader or it returns NULL. The
** source is named after the module in tracebacks. Like a file module, it is
** in sys.modules while its body runs and removed if the body raises. */
static Value load_from_loader(VM *vm, Str *fullname, Module *parent) {
    if (!vm->config.load_module) return EMPTY_VAL;
    LoaderCtx c = {.fullname = fullname};
    c.text = vm->config.load_module(vm->api, fullname->chars, &c.len, vm->config.user_data);
    if (!c.text) return EMPTY_VAL;
    bool ok = vm_pcall(vm, loader_source, &c);
    free(c.text); /* the VM owns the text: freed whether or not it was copied */
    if (!ok) vm_rethrow(vm, vm->exc_value);
    vm_push_root(vm, OBJ_VAL(c.src));
    c.mod = module_new(vm, fullname);
    dict_set_cstr(vm, c.mod->dict, "__package__", parent ? STR_VAL(parent->name) : STR_VAL(vm->empty_str));
    dict_set_str(vm, vm->modules, fullname, OBJ_VAL(c.mod));
    vm_pop_roots(vm, 1);
    if (!vm_pcall(vm, loader_body, &c)) {
        Value exc = vm->exc_value;
        dict_del(vm, vm->modules, STR_VAL(fullname));
        vm_rethrow(vm, exc);
    }
    Value v = dict_get_str(vm, vm->modules, fullname);
    return IS_EMPTY(v) ? OBJ_VAL(c.mod) : v;
}

/* Imports one component of a dotted name (parent: the package, or NULL). */
static Value import_one(VM *vm, Str *fullname, const char *leaf, Module *parent) {
    Value v = dict_get_str(vm, vm->modules, fullname);
    if (!IS_EMPTY(v)) {
        if (IS_NONE(v)) vm_raise_kind(vm, ModuleNotFoundError, "import of %s halted; None in sys.modules", fullname->chars);
        return v;
    }
    v = load_from_loader(vm, fullname, parent);
    if (!IS_EMPTY(v)) return v;
    char path[PATH_MAX], pkgdir[PATH_MAX];
    bool is_pkg = false;
    bool found = parent ? find_in_package(vm, parent, leaf, path, pkgdir, &is_pkg)
                        : find_top_level(vm, leaf, path, pkgdir, &is_pkg);
    if (found) return load_file_module(vm, fullname, parent, path, is_pkg, pkgdir);
    v = load_native(vm, fullname);
    if (!IS_EMPTY(v)) return v;
    vm_raise_kind(vm, ModuleNotFoundError, "No module named '%s'", fullname->chars);
}

Value vm_import(VM *vm, Str *name, bool top) {
    const char *s = name->chars;
    if (name->len == 0) vm_raise_kind(vm, ValueError, "Empty module name");
    if (!strchr(s, '.')) return import_one(vm, name, s, NULL);
    Value first = EMPTY_VAL, cur = EMPTY_VAL;
    Module *parent = NULL;
    const char *seg = s;
    for (;;) {
        const char *dot = strchr(seg, '.');
        size_t seglen = dot ? (size_t)(dot - seg) : strlen(seg);
        if (seglen == 0 || seglen >= 256) vm_raise_kind(vm, ModuleNotFoundError, "No module named '%s'", s);
        char leaf[256];
        memcpy(leaf, seg, seglen);
        leaf[seglen] = '\0';
        Str *full = str_new(vm, s, (size_t)(seg - s) + seglen);
        if (parent && IS_EMPTY(dict_get_str(vm, vm->modules, full)) &&
            !IS_LIST(vm, dict_get_cstr(vm, parent->dict, "__path__")) && !(vm->config.load_module && !parent->file) &&
            (!vm->native_modules || IS_EMPTY(dict_get_str(vm, vm->native_modules, full))))
            vm_raise_kind(vm, ModuleNotFoundError, "No module named '%s'; '%s' is not a package", full->chars,
                          parent->name->chars);
        vm_push_root(vm, STR_VAL(full));
        cur = import_one(vm, full, leaf, parent);
        vm_pop_roots(vm, 1);
        if (parent && IS_EMPTY(dict_get_cstr(vm, parent->dict, leaf))) dict_set_cstr(vm, parent->dict, leaf, cur);
        if (IS_EMPTY(first)) first = cur;
        if (!dot) break;
        if (!IS_OBJ(cur) || AS_OBJ(cur)->type != vm->t_module) {
            const char *next_dot = strchr(dot + 1, '.');
            int upto = (int)(next_dot ? next_dot - s : (ptrdiff_t)name->len);
            vm_raise_kind(vm, ModuleNotFoundError, "No module named '%.*s'; '%s' is not a package", upto, s,
                          full->chars);
        }
        parent = (Module *)AS_OBJ(cur);
        seg = dot + 1;
    }
    return top ? first : cur;
}

/* The absolute name of a relative import (CPython's importlib resolve):
** the package is the importer's __package__, else derived from __name__ (a
** package's own name when it has __path__, else its parent's); each level
** past the first goes one package up. */
Value vm_import_relative(VM *vm, Str *name, int level, Dict *globals) {
    Value pkg = dict_get_cstr(vm, globals, "__package__");
    const char *p = "";
    size_t plen = 0;
    if (IS_STR(vm, pkg)) {
        p = AS_STR(pkg)->chars;
        plen = (size_t)AS_STR(pkg)->len;
    } else if (!IS_EMPTY(pkg) && !IS_NONE(pkg)) {
        vm_raise_kind(vm, TypeError, "package must be a string");
    } else {
        Value nm = dict_get_cstr(vm, globals, "__name__");
        if (!IS_STR(vm, nm)) vm_raise_kind(vm, KeyError, "'__name__' not in globals");
        p = AS_STR(nm)->chars;
        plen = (size_t)AS_STR(nm)->len;
        if (IS_EMPTY(dict_get_cstr(vm, globals, "__path__"))) {
            const char *dot = memrchr(p, '.', plen);
            plen = dot ? (size_t)(dot - p) : 0;
        }
    }
    if (plen == 0) vm_raise_kind(vm, ImportError, "attempted relative import with no known parent package");
    for (int i = 1; i < level; i++) {
        const char *dot = memrchr(p, '.', plen);
        if (!dot) vm_raise_kind(vm, ImportError, "attempted relative import beyond top-level package");
        plen = (size_t)(dot - p);
    }
    Str *full = name->len ? str_printf(vm, "%.*s.%s", (int)plen, p, name->chars) : str_new(vm, p, plen);
    vm_push_root(vm, STR_VAL(full));
    Value v = vm_import(vm, full, false);
    vm_pop_roots(vm, 1);
    return v;
}

/* from pkg import name where pkg has no attribute name: the submodule
** pkg.name (full), imported now when the application's loader or the
** package's __path__ has it; EMPTY when there is none. */
Value module_import_submodule(VM *vm, Module *pkg, Str *full) {
    Value v = dict_get_str(vm, vm->modules, full);
    if (!IS_EMPTY(v)) return v;
    /* a package has __path__; a module the application's loader gave may be one */
    bool has_path = IS_LIST(vm, dict_get_cstr(vm, pkg->dict, "__path__"));
    if (!has_path && (pkg->file || !vm->config.load_module)) return EMPTY_VAL;
    const char *leaf = full->chars + pkg->name->len + 1;
    vm_push_root(vm, STR_VAL(full));
    v = load_from_loader(vm, full, pkg);
    char path[PATH_MAX], pkgdir[PATH_MAX];
    bool is_pkg = false;
    if (IS_EMPTY(v) && find_in_package(vm, pkg, leaf, path, pkgdir, &is_pkg))
        v = load_file_module(vm, full, pkg, path, is_pkg, pkgdir);
    if (!IS_EMPTY(v) && IS_EMPTY(dict_get_cstr(vm, pkg->dict, leaf))) dict_set_cstr(vm, pkg->dict, leaf, v);
    vm_pop_roots(vm, 1);
    return v;
}

void module_register_native(VM *vm, const char *name, Module *(*build)(VM *vm)) {
    if (!vm->native_modules) vm->native_modules = dict_new(vm);
    NativeFunction *nf = gc_alloc_obj(vm, vm->t_builtin_function, sizeof(NativeFunction));
    nf->name = name;
    nf->fn = (NativeFn)(void (*)(void))build;
    nf->data = EMPTY_VAL;
    dict_set_cstr(vm, vm->native_modules, name, OBJ_VAL(nf));
}

void module_init(VM *vm) {
    Type *t = vm->t_module;
    t->getattr = module_getattr;
    t->setattr = module_setattr;
    t->repr = module_repr;
    t->mark = module_mark;
    t->finalize = module_finalize;
    Type *s = vm->t_source;
    s->mark = source_mark;
    s->finalize = source_finalize;
}
