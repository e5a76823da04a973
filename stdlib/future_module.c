/*
** future_module.c — the __future__ module: a _Feature per feature name,
** with CPython 3.11's releases and compiler flags, so that
** `from __future__ import x` (checked at compile time by vm/future.c) and
** `import __future__` both work. Written in gpy: it is plain data.
*/
#include "stdlib_priv.h"

static const char future_source[] =
    "all_feature_names = ['nested_scopes', 'generators', 'division', 'absolute_import', 'with_statement',\n"
    "                     'print_function', 'unicode_literals', 'barry_as_FLUFL', 'generator_stop', 'annotations']\n"
    "__all__ = ['all_feature_names'] + all_feature_names\n"
    "CO_NESTED = 0x0010\n"
    "CO_GENERATOR_ALLOWED = 0\n"
    "CO_FUTURE_DIVISION = 0x20000\n"
    "CO_FUTURE_ABSOLUTE_IMPORT = 0x40000\n"
    "CO_FUTURE_WITH_STATEMENT = 0x80000\n"
    "CO_FUTURE_PRINT_FUNCTION = 0x100000\n"
    "CO_FUTURE_UNICODE_LITERALS = 0x200000\n"
    "CO_FUTURE_BARRY_AS_BDFL = 0x400000\n"
    "CO_FUTURE_GENERATOR_STOP = 0x800000\n"
    "CO_FUTURE_ANNOTATIONS = 0x1000000\n"
    "class _Feature:\n"
    "    def __init__(self, optionalRelease, mandatoryRelease, compiler_flag):\n"
    "        self.optional = optionalRelease\n"
    "        self.mandatory = mandatoryRelease\n"
    "        self.compiler_flag = compiler_flag\n"
    "    def getOptionalRelease(self):\n"
    "        return self.optional\n"
    "    def getMandatoryRelease(self):\n"
    "        return self.mandatory\n"
    "    def __repr__(self):\n"
    "        return '_Feature' + repr((self.optional, self.mandatory, self.compiler_flag))\n"
    "nested_scopes = _Feature((2, 1, 0, 'beta', 1), (2, 2, 0, 'alpha', 0), CO_NESTED)\n"
    "generators = _Feature((2, 2, 0, 'alpha', 1), (2, 3, 0, 'final', 0), CO_GENERATOR_ALLOWED)\n"
    "division = _Feature((2, 2, 0, 'alpha', 2), (3, 0, 0, 'alpha', 0), CO_FUTURE_DIVISION)\n"
    "absolute_import = _Feature((2, 5, 0, 'alpha', 1), (3, 0, 0, 'alpha', 0), CO_FUTURE_ABSOLUTE_IMPORT)\n"
    "with_statement = _Feature((2, 5, 0, 'alpha', 1), (2, 6, 0, 'alpha', 0), CO_FUTURE_WITH_STATEMENT)\n"
    "print_function = _Feature((2, 6, 0, 'alpha', 2), (3, 0, 0, 'alpha', 0), CO_FUTURE_PRINT_FUNCTION)\n"
    "unicode_literals = _Feature((2, 6, 0, 'alpha', 2), (3, 0, 0, 'alpha', 0), CO_FUTURE_UNICODE_LITERALS)\n"
    "barry_as_FLUFL = _Feature((3, 1, 0, 'alpha', 2), (4, 0, 0, 'alpha', 0), CO_FUTURE_BARRY_AS_BDFL)\n"
    "generator_stop = _Feature((3, 5, 0, 'beta', 1), (3, 7, 0, 'alpha', 0), CO_FUTURE_GENERATOR_STOP)\n"
    "annotations = _Feature((3, 7, 0, 'beta', 1), None, CO_FUTURE_ANNOTATIONS)\n";

Module *stdlib_future(VM *vm) {
    Module *m = module_new(vm, str_cstr(vm, "__future__"));
    module_exec_source(vm, m, "<__future__>", future_source, sizeof future_source - 1);
    return m;
}
