/*
** repl_helpers.c — the prompt's completion and magics (see repl_helpers.h).
** They are written in gpy: they walk live objects (dir, getattr), run
** statements in the user's namespace and format like IPython, which is
** shorter and safer in the language itself than through the C object API.
** The source is compiled once, on the first Tab or magic, into a private
** namespace kept in builtins as __gpy_repl__ (so the collector sees it).
*/
#include "repl_helpers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm.h"

static const char helper_source[] =
    "import sys, os, time, builtins\n"
    "\n"
    "KEYWORDS = ['False', 'None', 'True', 'and', 'as', 'assert', 'async', 'await', 'break', 'class',\n"
    "            'continue', 'def', 'del', 'elif', 'else', 'except', 'finally', 'for', 'from', 'global',\n"
    "            'if', 'import', 'in', 'is', 'lambda', 'nonlocal', 'not', 'or', 'pass', 'raise',\n"
    "            'return', 'try', 'while', 'with', 'yield']\n"
    "\n"
    "def main_ns():\n"
    "    return sys.modules['__main__'].__dict__\n"
    "\n"
    "def word_start(line):\n"
    "    i = len(line)\n"
    "    while i > 0 and (line[i - 1].isalnum() or line[i - 1] in '_.'):\n"
    "        i -= 1\n"
    "    return i\n"
    "\n"
    "def in_string(line):\n"
    "    quote = None\n"
    "    start = 0\n"
    "    i = 0\n"
    "    while i < len(line):\n"
    "        c = line[i]\n"
    "        if quote:\n"
    "            if c == '\\\\':\n"
    "                i += 1\n"
    "            elif c == quote:\n"
    "                quote = None\n"
    "        elif c in '\\'\"':\n"
    "            quote = c\n"
    "            start = i + 1\n"
    "        elif c == '#':\n"
    "            return -1\n"
    "        i += 1\n"
    "    return start if quote else -1\n"
    "\n"
    "def module_names(prefix):\n"
    "    names = set(sys.builtin_module_names)\n"
    "    for d in sys.path + os.environ.get('GPY_PATH', '').split(':'):\n"
    "        try:\n"
    "            for f in os.listdir(d or '.'):\n"
    "                if f.endswith('.gpy') or f.endswith('.py'):\n"
    "                    names.add(f.rsplit('.', 1)[0])\n"
    "        except Exception:\n"
    "            pass\n"
    "    return sorted(n for n in names if n.startswith(prefix))\n"
    "\n"
    "def file_names(prefix):\n"
    "    d, slash, base = prefix.rpartition('/')\n"
    "    where = (d or '/') if slash else '.'\n"
    "    try:\n"
    "        entries = os.listdir(where)\n"
    "    except Exception:\n"
    "        return []\n"
    "    out = []\n"
    "    for f in sorted(entries):\n"
    "        if f.startswith(base) and (base.startswith('.') or not f.startswith('.')):\n"
    "            full = d + slash + f\n"
    "            try:\n"
    "                os.listdir(full)\n"
    "                full += '/'\n"
    "            except Exception:\n"
    "                pass\n"
    "            out.append(full)\n"
    "    return out\n"
    "\n"
    "def attr_names(path, prefix):\n"
    "    ns = main_ns()\n"
    "    parts = path.split('.')\n"
    "    if parts[0] in ns:\n"
    "        obj = ns[parts[0]]\n"
    "    elif hasattr(builtins, parts[0]):\n"
    "        obj = getattr(builtins, parts[0])\n"
    "    else:\n"
    "        return []\n"
    "    for p in parts[1:]:\n"
    "        obj = getattr(obj, p)\n"
    "    names = [n for n in dir(obj) if n.startswith(prefix)]\n"
    "    if not prefix.startswith('_'):\n"
    "        names = [n for n in names if not n.startswith('_')]\n"
    "    return sorted(names)\n"
    "\n"
    "# The completions of the text before the cursor: (start, [candidates]),\n"
    "# start being where the completed word begins in line.\n"
    "def complete(line):\n"
    "    s = in_string(line)\n"
    "    if s >= 0:\n"
    "        return s, file_names(line[s:])\n"
    "    start = word_start(line)\n"
    "    word = line[start:]\n"
    "    head = line[:start].lstrip()\n"
    "    if head in ('import ', 'from ') or (head.startswith('import ') and head.rstrip().endswith(',')):\n"
    "        return start, module_names(word)\n"
    "    if head.startswith('from ') and head.rstrip().endswith('import') and ' ' in head.strip():\n"
    "        mod = head.split()[1]\n"
    "        try:\n"
    "            m = __import__(mod)\n"
    "            for p in mod.split('.')[1:]:\n"
    "                m = getattr(m, p)\n"
    "            return start, sorted(n for n in dir(m) if n.startswith(word) and not n.startswith('_'))\n"
    "        except Exception:\n"
    "            return start, []\n"
    "    if '.' in word:\n"
    "        path, _, prefix = word.rpartition('.')\n"
    "        if not path or not all(p.isidentifier() for p in path.split('.')):\n"
    "            return start, []\n"
    "        try:\n"
    "            names = attr_names(path, prefix)\n"
    "        except Exception:\n"
    "            return start, []\n"
    "        return start + len(path) + 1, names\n"
    "    if word and word[0].isdigit():\n"
    "        return start, []\n"
    "    names = set(n for n in main_ns() if n.startswith(word))\n"
    "    names.update(n for n in dir(builtins) if n.startswith(word) and not n.startswith('__gpy'))\n"
    "    names.update(k for k in KEYWORDS if k.startswith(word))\n"
    "    if not word.startswith('_'):\n"
    "        names = set(n for n in names if not n.startswith('_'))\n"
    "    return start, sorted(names)\n"
    "\n"
    "def format_time(t):\n"
    "    if t >= 60.0:\n"
    "        m, s = divmod(t, 60.0)\n"
    "        return '%dmin %.1fs' % (m, s) if m < 60 else '%dh %dmin' % divmod(m, 60)\n"
    "    units = ['s', 'ms', '\\u00b5s', 'ns']\n"
    "    scale = [1.0, 1e3, 1e6, 1e9]\n"
    "    order = 3\n"
    "    if t > 0.0:\n"
    "        order = 0\n"
    "        v = t\n"
    "        while v < 1.0 and order < 3:\n"
    "            v *= 1000.0\n"
    "            order += 1\n"
    "    return '%.*g %s' % (3, t * scale[order], units[order])\n"
    "\n"
    "def run_single(stmt):\n"
    "    exec(compile(stmt, '<stdin>', 'single'), main_ns())\n"
    "\n"
    "def magic_time(stmt):\n"
    "    c0 = time.process_time()\n"
    "    t0 = time.perf_counter()\n"
    "    try:\n"
    "        run_single(stmt)\n"
    "    finally:\n"
    "        wall = time.perf_counter() - t0\n"
    "        cpu = time.process_time() - c0\n"
    "        print('CPU times: total: %s' % format_time(cpu))\n"
    "        print('Wall time: %s' % format_time(wall))\n"
    "\n"
    "def magic_timeit(stmt):\n"
    "    ns = main_ns()\n"
    "    src = 'def __gpy_timeit_body(__gpy_n, __gpy_clock=__gpy_clock):\\n    __gpy_t0 = __gpy_clock()\\n    for __gpy_i in range(__gpy_n):\\n        ' + stmt.strip() + '\\n    return __gpy_clock() - __gpy_t0\\n'\n"
    "    had = '__gpy_clock' in ns\n"
    "    ns['__gpy_clock'] = time.perf_counter\n"
    "    try:\n"
    "        exec(compile(src, '<timeit>', 'exec'), ns)\n"
    "        body = ns.pop('__gpy_timeit_body')\n"
    "    finally:\n"
    "        if not had:\n"
    "            ns.pop('__gpy_clock', None)\n"
    "    number = 1\n"
    "    done = False\n"
    "    while not done:\n"
    "        for k in (1, 2, 5):\n"
    "            n = number * k\n"
    "            if body(n) >= 0.2:\n"
    "                number = n\n"
    "                done = True\n"
    "                break\n"
    "        else:\n"
    "            number *= 10\n"
    "    runs = 7\n"
    "    per_loop = [body(number) / number for r in range(runs)]\n"
    "    mean = sum(per_loop) / runs\n"
    "    std = (sum((x - mean) ** 2 for x in per_loop) / runs) ** 0.5\n"
    "    print('%s \\u00b1 %s per loop (mean \\u00b1 std. dev. of %d run%s, %s loop%s each)' % (\n"
    "        format_time(mean), format_time(std), runs, '' if runs == 1 else 's',\n"
    "        '{:,}'.format(number), '' if number == 1 else 's'))\n"
    "\n"
    "def magic_run(arg):\n"
    "    path = arg.strip()\n"
    "    with open(path) as f:\n"
    "        src = f.read()\n"
    "    ns = main_ns()\n"
    "    old = ns.get('__file__')\n"
    "    ns['__file__'] = path\n"
    "    try:\n"
    "        exec(compile(src, path, 'exec'), ns)\n"
    "    finally:\n"
    "        if old is None:\n"
    "            ns.pop('__file__', None)\n"
    "        else:\n"
    "            ns['__file__'] = old\n"
    "\n"
    "def magic_who(arg):\n"
    "    names = sorted(n for n in main_ns() if not n.startswith('_'))\n"
    "    if not names:\n"
    "        print('Interactive namespace is empty.')\n"
    "    else:\n"
    "        print('\\t'.join(names) + '\\t')\n"
    "\n"
    "def magic_reset(arg):\n"
    "    if arg.strip() != '-f':\n"
    "        ans = input('Once deleted, variables cannot be recovered. Proceed (y/[n])? ')\n"
    "        if ans.strip().lower() not in ('y', 'yes'):\n"
    "            print('Nothing done.')\n"
    "            return\n"
    "    ns = main_ns()\n"
    "    for n in list(ns):\n"
    "        if not (n.startswith('__') and n.endswith('__')):\n"
    "            del ns[n]\n"
    "    if hasattr(builtins, '_'):\n"
    "        del builtins._\n"
    "\n"
    "def kernel(arg):\n"
    "    name = arg.strip()\n"
    "    k = eval(name, main_ns())\n"
    "    if not hasattr(k, 'inspect_asm'):\n"
    "        raise TypeError('%s is not a @cuda.jit kernel' % name)\n"
    "    return k\n"
    "\n"
    "def show_per_spec(name, texts):\n"
    "    if not texts:\n"
    "        print('%s has no compiled specialization yet: launch it (or give it a signature) first' % name)\n"
    "    for sig, text in texts.items():\n"
    "        print('// ---- %s%s' % (name, sig))\n"
    "        print(text.rstrip('\\n'))\n"
    "\n"
    "def magic_ptx(arg):\n"
    "    show_per_spec(arg.strip(), kernel(arg).inspect_asm())\n"
    "\n"
    "def magic_llvm(arg):\n"
    "    show_per_spec(arg.strip(), kernel(arg).inspect_llvm())\n"
    "\n"
    "def magic_types(arg):\n"
    "    k = kernel(arg)\n"
    "    if not k.inspect_asm():\n"
    "        print('%s has no compiled specialization yet: launch it (or give it a signature) first' % arg.strip())\n"
    "    k.inspect_types()\n"
    "\n"
    "def find_ptxas():\n"
    "    for root in (os.environ.get('GPY_CUDA_HOME'), os.environ.get('CUDA_HOME'), '/usr/local/cuda'):\n"
    "        if root:\n"
    "            p = root + '/bin/ptxas'\n"
    "            try:\n"
    "                open(p).close()\n"
    "                return p\n"
    "            except Exception:\n"
    "                pass\n"
    "    for d in os.environ.get('PATH', '').split(':'):\n"
    "        try:\n"
    "            open(d + '/ptxas').close()\n"
    "            return d + '/ptxas'\n"
    "        except Exception:\n"
    "            pass\n"
    "    return None\n"
    "\n"
    "def magic_regs(arg):\n"
    "    k = kernel(arg)\n"
    "    name = arg.strip()\n"
    "    ptxas = find_ptxas()\n"
    "    if ptxas is None:\n"
    "        print('%regs needs ptxas (the CUDA toolkit): set GPY_CUDA_HOME or put ptxas on PATH')\n"
    "        return\n"
    "    texts = k.inspect_asm()\n"
    "    if not texts:\n"
    "        print('%s has no compiled specialization yet: launch it (or give it a signature) first' % name)\n"
    "    tmp = os.environ.get('TMPDIR', '/tmp')\n"
    "    for sig, text in texts.items():\n"
    "        arch = 'sm_80'\n"
    "        for line in text.split('\\n'):\n"
    "            if line.startswith('.target'):\n"
    "                arch = line.split()[1].rstrip(',')\n"
    "        base = '%s/gpy_regs_%d' % (tmp, os.getpid())\n"
    "        with open(base + '.ptx', 'w') as f:\n"
    "            f.write(text)\n"
    "        print('// ---- %s%s (%s)' % (name, sig, arch))\n"
    "        os.system(\"'%s' -v -arch=%s '%s.ptx' -o /dev/null 2>&1 | grep -v '^ptxas info    : Compiling'\" % (ptxas, arch, base))\n"
    "        os.remove(base + '.ptx')\n"
    "\n"
    "def magic_device(arg):\n"
    "    import cuda\n"
    "    print(cuda.get_current_device())\n"
    "    cuda.detect()\n"
    "\n"
    "MAGICS = {'time': magic_time, 'timeit': magic_timeit, 'run': magic_run, 'who': magic_who,\n"
    "          'reset': magic_reset, 'ptx': magic_ptx, 'llvm': magic_llvm, 'types': magic_types,\n"
    "          'regs': magic_regs, 'device': magic_device}\n"
    "\n"
    "\n"
    "# help(obj): the signature and the docstring (the prompt installs it in builtins)\n"
    "def signature(obj):\n"
    "    code = getattr(obj, '__code__', None)\n"
    "    if code is None:\n"
    "        return '(...)'\n"
    "    names = code.co_varnames\n"
    "    n = code.co_argcount\n"
    "    k = code.co_kwonlyargcount\n"
    "    defaults = getattr(obj, '__defaults__', None) or ()\n"
    "    parts = []\n"
    "    for i in range(n):\n"
    "        p = names[i]\n"
    "        j = i - (n - len(defaults))\n"
    "        if j >= 0:\n"
    "            p += '=' + repr(defaults[j])\n"
    "        parts.append(p)\n"
    "    rest = n + k\n"
    "    if code.co_flags & 1:\n"
    "        parts.append('*' + names[rest])\n"
    "        rest += 1\n"
    "    elif k:\n"
    "        parts.append('*')\n"
    "    parts.extend(names[n:n + k])\n"
    "    if code.co_flags & 2:\n"
    "        parts.append('**' + names[rest])\n"
    "    return '(' + ', '.join(parts) + ')'\n"
    "\n"
    "def help(obj=None):\n"
    "    if obj is None:\n"
    "        print('Type help(object) for help about object; docs/repl.md describes the prompt.')\n"
    "        return\n"
    "    name = getattr(obj, '__name__', None) or type(obj).__name__\n"
    "    if isinstance(obj, type):\n"
    "        print('Help on class %s:\\n\\nclass %s' % (name, name))\n"
    "        init = obj.__dict__.get('__init__') if hasattr(obj, '__dict__') else None\n"
    "        if init is not None and hasattr(init, '__code__'):\n"
    "            print('  %s%s' % (name, signature(init).replace('(self, ', '(').replace('(self)', '()')))\n"
    "    elif callable(obj):\n"
    "        print('Help on %s:\\n\\n%s%s' % (name, name, signature(obj)))\n"
    "    else:\n"
    "        print('Help on %s object:\\n' % type(obj).__name__)\n"
    "    doc = getattr(obj, '__doc__', None)\n"
    "    if doc:\n"
    "        for line in doc.strip('\\n').split('\\n'):\n"
    "            print('    ' + line.strip())\n"
    "\n"
    "def magic(name, arg):\n"
    "    f = MAGICS.get(name)\n"
    "    if f is None:\n"
    "        raise NameError('UsageError: Line magic function `%%%s` not found.' % name)\n"
    "    f(arg)\n"
    "\n";

typedef struct HelperCall {
    const char *line;
    size_t len;
    ReplCompletion *out;
} HelperCall;

/* The helpers' namespace, compiled on first use. */
static Dict *helpers(VM *vm) {
    Value d = dict_get_cstr(vm, vm->builtins, "__gpy_repl__");
    if (!IS_EMPTY(d) && IS_OBJ(d) && AS_OBJ(d)->type == vm->t_dict) return (Dict *)AS_OBJ(d);
    Dict *ns = dict_new(vm);
    vm_push_root(vm, OBJ_VAL(ns));
    dict_set_cstr(vm, ns, "__name__", STR_VAL(str_cstr(vm, "__gpy_repl__")));
    Str *fname = str_cstr(vm, "<gpy-repl>");
    vm_push_root(vm, STR_VAL(fname));
    Source *src = source_new(vm, fname, helper_source, sizeof helper_source - 1);
    vm_push_root(vm, OBJ_VAL(src));
    Proto *p = vm_compile_source(vm, src, PARSE_FILE);
    vm_push_root(vm, OBJ_VAL(p));
    vm_exec_proto(vm, p, ns);
    dict_set_cstr(vm, vm->builtins, "__gpy_repl__", OBJ_VAL(ns));
    /* help() is the prompt's, as site.py's is CPython's prompt's */
    if (IS_EMPTY(dict_get_cstr(vm, vm->builtins, "help")))
        dict_set_cstr(vm, vm->builtins, "help", dict_get_cstr(vm, ns, "help"));
    vm_pop_roots(vm, 4);
    return ns;
}

static void complete_body(VM *vm, void *ud) {
    HelperCall *c = ud;
    Value fn = dict_get_cstr(vm, helpers(vm), "complete");
    Value arg = STR_VAL(str_new(vm, c->line, c->len));
    vm_push_root(vm, arg);
    Value r = vm_call(vm, fn, 1, &arg);
    vm_push_root(vm, r);
    if (!IS_TUPLE(vm, r) || AS_TUPLE(r)->len != 2 || !IS_INT(AS_TUPLE(r)->items[0]) ||
        !IS_LIST(vm, AS_TUPLE(r)->items[1])) {
        vm_pop_roots(vm, 2);
        return;
    }
    List *names = AS_LIST(AS_TUPLE(r)->items[1]);
    c->out->start = (size_t)AS_INT(AS_TUPLE(r)->items[0]);
    c->out->names = calloc((size_t)names->len + 1, sizeof(char *));
    if (c->out->names) {
        for (int64_t i = 0; i < names->len; i++) {
            if (!IS_STR(vm, names->items[i])) continue;
            char *s = strdup(AS_STR(names->items[i])->chars);
            if (s) c->out->names[c->out->count++] = s;
        }
    }
    vm_pop_roots(vm, 2);
}

bool repl_complete(VM *vm, const char *line, size_t len, ReplCompletion *out) {
    memset(out, 0, sizeof *out);
    HelperCall c = {.line = line, .len = len, .out = out};
    /* a failing getattr while completing must not disturb the session */
    if (!vm_pcall(vm, complete_body, &c)) {
        vm->exc_value = NONE_VAL;
        repl_completion_free(out);
        return false;
    }
    return out->names != NULL;
}

void repl_completion_free(ReplCompletion *c) {
    for (size_t i = 0; i < c->count; i++) free(c->names[i]);
    free(c->names);
    memset(c, 0, sizeof *c);
}

static void load_body(VM *vm, void *ud) {
    (void)ud;
    helpers(vm);
}

/* Appends s to the buffer as a gpy string literal. */
static char *quote(const char *s) {
    size_t n = strlen(s);
    char *out = malloc(n * 4 + 3);
    if (!out) return NULL;
    char *o = out;
    *o++ = '\'';
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '\'' || ch == '\\' || ch < 0x20) o += sprintf(o, "\\x%02x", ch);
        else *o++ = (char)ch;
    }
    *o++ = '\'';
    *o = '\0';
    return out;
}

void repl_helpers_load(VM *vm) {
    if (!vm_pcall(vm, load_body, NULL)) {
        exc_print(vm, vm->exc_value, stderr);
        vm->exc_value = NONE_VAL;
    }
}

int repl_run_magic(VM *vm, const char *line) {
    /* the helpers first, so that an error in a magic names the magic */
    if (!vm_pcall(vm, load_body, NULL)) {
        exc_print(vm, vm->exc_value, stderr);
        vm->exc_value = NONE_VAL;
        return 1;
    }
    const char *p = line;
    while (*p == ' ' || *p == '\t') p++;
    if (*p == '%') p++;
    const char *name_end = p;
    while (*name_end && *name_end != ' ' && *name_end != '\t' && *name_end != '\n') name_end++;
    char name[64];
    size_t nlen = (size_t)(name_end - p) < sizeof name - 1 ? (size_t)(name_end - p) : sizeof name - 1;
    memcpy(name, p, nlen);
    name[nlen] = '\0';
    const char *arg = name_end;
    while (*arg == ' ' || *arg == '\t') arg++;
    char *arg_copy = strdup(arg);
    if (!arg_copy) return 1;
    size_t alen = strlen(arg_copy);
    while (alen > 0 && (arg_copy[alen - 1] == '\n' || arg_copy[alen - 1] == ' ')) arg_copy[--alen] = '\0';
    char *qname = quote(name), *qarg = quote(arg_copy);
    free(arg_copy);
    int rc = 1;
    if (qname && qarg) {
        size_t n = strlen(qname) + strlen(qarg) + 64;
        char *code = malloc(n);
        if (code) {
            snprintf(code, n, "__gpy_repl__['magic'](%s, %s)\n", qname, qarg);
            rc = vm_run_interactive(vm, code, strlen(code));
            free(code);
        }
    }
    free(qname);
    free(qarg);
    return rc;
}
