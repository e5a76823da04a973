/*
** unicodedata.c — the `unicodedata` module's name lookups (lookup, name)
** over the name database of vm/unicode_names.c (Unicode 14.0, as CPython
** 3.11's unidata_version says). Character properties are not provided.
*/
#include <string.h>

#include "lexer.h"
#include "stdlib_priv.h"
#include "unicode_names.h"

/* The one character of v, or TypeError as CPython words it for fname. */
static uint32_t one_char(VM *vm, const char *fname, Value v) {
    if (!IS_STR(vm, v))
        vm_raise_kind(vm, TypeError, "%s() argument 1 must be a unicode character, not %s", fname,
                      vm_type_name(vm, v));
    Str *s = AS_STR(v);
    if (s->nchars != 1)
        vm_raise_kind(vm, TypeError, "%s() argument 1 must be a unicode character, not str", fname);
    int used;
    int32_t cp = lex_utf8_decode((const unsigned char *)s->chars, (size_t)s->len, &used);
    return cp < 0 ? 0xFFFD : (uint32_t)cp;
}

static Value f_lookup(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "lookup", kwargs);
    arg_count(vm, "lookup", argc, 1, 1);
    if (!IS_STR(vm, argv[0]))
        vm_raise_kind(vm, TypeError, "a bytes-like object is required, not '%s'", vm_type_name(vm, argv[0]));
    Str *s = AS_STR(argv[0]);
    int32_t cp = unicode_lookup_name(s->chars, (size_t)s->len);
    if (cp < 0) {
        Value msg = STR_VAL(str_printf(vm, "undefined character name '%s'", s->chars));
        vm_push_root(vm, msg);
        vm_throw(vm, exc_new(vm, vm->exc[EXC_KeyError], 1, &msg));
    }
    return STR_VAL(str_from_codepoint(vm, (uint32_t)cp));
}

static Value f_name(VM *vm, int argc, Value *argv, Dict *kwargs) {
    arg_no_kwargs(vm, "name", kwargs);
    arg_count(vm, "name", argc, 1, 2);
    uint32_t cp = one_char(vm, "name", argv[0]);
    char buf[UNICODE_NAME_MAX];
    if (unicode_char_name(cp, buf)) return STR_VAL(str_cstr(vm, buf));
    if (argc > 1) return argv[1];
    vm_raise_kind(vm, ValueError, "no such name");
}

static Module *stdlib_unicodedata(VM *vm) {
    Module *m = module_new(vm, str_cstr(vm, "unicodedata"));
    vm_push_root(vm, OBJ_VAL(m));
    module_add_function(vm, m, "lookup", f_lookup);
    module_add_function(vm, m, "name", f_name);
    dict_set_cstr(vm, m->dict, "unidata_version", STR_VAL(str_cstr(vm, "14.0.0")));
    vm_pop_roots(vm, 1);
    return m;
}

void unicodedata_register(VM *vm) { module_register_native(vm, "unicodedata", stdlib_unicodedata); }
