/*
** main.c — the `gpy` command: run a file, a -c string or standard input,
** dump the syntax tree or bytecode of a file, or read-eval-print lines.
*/
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ast.h"
#include "cli_signals.h"
#include "entry_scan.h"
#include "env_config.h"
#include "prompt.h"
#include "open_libs.h"
#include "gpy.h"
#include "jupyter_kernel.h"
#include "signals.h"
#include "vm.h"

#if defined(__clang__)
#define GPY_COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define GPY_COMPILER "gcc " __VERSION__
#else
#define GPY_COMPILER "unknown compiler"
#endif

static void usage(FILE *out) {
    fputs("usage: gpy [option] ... [-c cmd | file | -] [arg] ...\n"
          "Options:\n"
          "  -c cmd      program passed in as string (terminates option list)\n"
          "  -h, --help  print this help message and exit\n"
          "  --version   print the version and build information and exit\n"
          "  --ast FILE  print the syntax tree of FILE\n"
          "  --dis FILE  print the bytecode of FILE\n"
          "  --jupyter-kernel -f CONNECTION_FILE\n"
          "              serve as a Jupyter kernel (docs/repl.md)\n"
          "  --install-kernel [--user | --prefix P]\n"
          "              write the Jupyter kernelspec of this gpy\n"
          "Arguments:\n"
          "  file        program read from script file\n"
          "  -           program read from stdin\n"
          "  arg ...     arguments passed to the program in sys.argv[1:]\n"
          "With no file, gpy starts an interactive prompt (Ctrl-D exits).\n"
          "Environment:\n"
          "  GPY_PATH             ':'-separated directories searched by import\n"
          "  GPY_DEVICE=cpu|cuda  the device that runs kernels (default: a CUDA GPU if any,\n"
          "                       else the CPU device)\n"
          "  GPY_CPU_THREADS=N    CPU-device worker threads (default: one per core)\n"
          "  GPY_CPU_FIBER_STACK=BYTES\n"
          "                       stack of each CPU-device fiber (default 65536; at least 16384)\n"
          "  GPY_CPU_REGIONS=0    run every barrier kernel on fibers on the CPU device (debugging)\n"
          "  GPY_CACHE_DIR        kernel cache for @cuda.jit(cache=True) (default $XDG_CACHE_HOME/gpy\n"
          "                       or ~/.cache/gpy)\n"
          "  GPY_CACHE_STATS=1    print the kernel cache's hits, misses and writes at exit\n"
          "  GPY_CUDA_HOME        CUDA toolkit for libdevice and libcudadevrt (else CUDA_HOME,\n"
          "                       else the one gpy was built with, else /usr/local/cuda)\n"
          "  GPY_CUDA_ARCH=sm_XY  the GPU architecture PTX is compiled for when no GPU decides it\n"
          "  GPY_LIBCUDA          the CUDA driver library to open (default libcuda.so.1)\n"
          "  GPY_DUMP_PTX=DIR     write the PTX of every compiled kernel into DIR\n"
          "  GPY_JIT_MODULE       the kernel compiler module (default: gpy_jit.so where gpy installed it)\n"
          "  GPY_GC_STRESS=1      collect garbage at every safepoint (debugging)\n",
          out);
}

/* Reads all of f into a malloc'd NUL-terminated buffer. */
static char *read_all(FILE *f, size_t *out_len) {
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    if (!buf) return NULL;
    for (;;) {
        if (len + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
        size_t n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
        if (n == 0) break;
    }
    buf[len] = '\0';
    *out_len = len;
    return buf;
}

/* ------------------------------------------------------------ debug dumps */

typedef struct DumpCtx {
    const char *path;
    bool dis;
    int open_errno;
} DumpCtx;

static void dump_body(VM *vm, void *ud) {
    DumpCtx *c = ud;
    Str *fname = str_cstr(vm, c->path);
    vm_push_root(vm, STR_VAL(fname));
    Source *src = source_from_file(vm, fname, c->path, &c->open_errno);
    if (!src) return;
    vm_push_root(vm, OBJ_VAL(src));
    if (c->dis) {
        Proto *p = vm_compile_source(vm, src, PARSE_FILE);
        comp_disassemble(vm, p, stdout);
    } else {
        src->arena = arena_new();
        if (!src->arena) vm_throw(vm, vm->memory_error);
        SyntaxErr err;
        memset(&err, 0, sizeof err);
        size_t len;
        const char *code = source_code(src, &len);
        AstNode *ast = parse_source(src->arena, c->path, code, len, PARSE_FILE, &err);
        if (!ast) vm_throw(vm, exc_syntax_error(vm, src, &err));
        ast_dump(ast, stdout);
    }
    vm_pop_roots(vm, 2);
}

static int dump_file(const char *path, bool dis) {
    char *args[] = {(char *)path};
    VMConfig config;
    char err[256];
    if (!env_config(&config, 1, args, err, sizeof err)) {
        fprintf(stderr, "gpy: %s\n", err);
        return 2;
    }
    VM *vm = vm_new(&config);
    if (!vm) return 1;
    DumpCtx c = {.path = path, .dis = dis};
    int rc = 0;
    if (!vm_pcall(vm, dump_body, &c)) {
        fflush(stdout);
        exc_print(vm, vm->exc_value, stderr);
        rc = 1;
    } else if (c.open_errno) {
        fprintf(stderr, "gpy: can't open file '%s': [Errno %d] %s\n", path, c.open_errno, strerror(c.open_errno));
        rc = 2;
    }
    fflush(stdout);
    vm_free(vm);
    return rc;
}

/* ------------------------------------------------------------------ REPL */

static int repl(VM *vm) {
    bool tty = isatty(0);
    if (tty && isatty(1)) return prompt_repl(vm);
    if (tty) {
        printf("gpy %s\nType Ctrl-D to exit.\n", GPY_VERSION);
        fflush(stdout);
    }
    char *entry = NULL, *line = NULL;
    size_t entry_len = 0, entry_cap = 0, line_cap = 0;
    int rc = 0;
    bool first_line = true;
    for (;;) {
        if (tty) {
            fputs(entry_len ? "... " : ">>> ", stdout);
            fflush(stdout);
        }
        /* Ctrl-C at the prompt drops the entry, as in CPython */
        if (tty) vm_interruptible_reads(vm, true);
        errno = 0;
        ssize_t n = -1;
        if (vm_interrupt_pending(vm)) errno = EINTR; /* one that came while the last entry ran */
        else n = getline(&line, &line_cap, stdin);
        if (tty) vm_interruptible_reads(vm, false);
        if (n < 0 && errno == EINTR) {
            clearerr(stdin);
            if (vm_interrupt_pending(vm)) {
                vm_clear_interrupt(vm);
                fputs("\nKeyboardInterrupt\n", stdout);
                entry_len = 0;
            }
            continue;
        }
        if (n < 0) {
            if (tty) fputc('\n', stdout);
            /* an unfinished entry at end of input still runs (and reports its error) */
            if (entry_len > 0 && !scan_entry(entry, entry_len).blank) {
                vm_run_interactive(vm, entry, entry_len);
                fflush(stdout);
                if (vm->exit_requested) rc = vm->exit_code;
            }
            break;
        }
        /* the first line's byte order mark is dropped, as a file's (CPython) */
        size_t bom = first_line ? source_bom_length(line, (size_t)n) : 0;
        first_line = false;
        memmove(line, line + bom, (size_t)n - bom + 1);
        n -= (ssize_t)bom;
        if (entry_len + (size_t)n + 1 > entry_cap) {
            size_t cap = (entry_len + (size_t)n + 1) * 2;
            char *ne = realloc(entry, cap);
            if (!ne) {
                fprintf(stderr, "gpy: out of memory\n");
                rc = 1;
                break;
            }
            entry = ne;
            entry_cap = cap;
        }
        memcpy(entry + entry_len, line, (size_t)n);
        entry_len += (size_t)n;
        entry[entry_len] = '\0';
        EntryState st = scan_entry(entry, entry_len);
        if (st.blank && !st.open) {
            entry_len = 0;
            continue;
        }
        bool waiting = st.open || (st.block && !is_blank_line(line));
        if (waiting && !has_final_error(entry, entry_len)) continue;
        vm_run_interactive(vm, entry, entry_len);
        entry_len = 0;
        fflush(stdout);
        if (vm->exit_requested) {
            rc = vm->exit_code;
            break;
        }
    }
    free(entry);
    free(line);
    return rc;
}

/* ------------------------------------------------------------------ main */

typedef struct ExitFlush {
    Value stream; /* the stream being flushed, for the report */
} ExitFlush;

static void flush_stdout_body(VM *vm, void *ud) {
    ExitFlush *c = ud;
    Value out = vm->sys_module ? dict_get_cstr(vm, vm->sys_module->dict, "stdout") : EMPTY_VAL;
    c->stream = IS_EMPTY(out) ? vm->sys_stdout : out;
    if (!IS_NONE(c->stream)) vm_stream_flush(vm, c->stream);
    /* the real stdout too when the program replaced sys.stdout */
    c->stream = vm->sys_stdout;
    vm_stream_flush(vm, c->stream);
}

static void repr_body(VM *vm, void *ud) {
    Value *v = ud;
    *v = STR_VAL(vm_repr(vm, *v));
}

/* Flushes stdout before exit. A failure (a full disk, a closed pipe) is
** reported as CPython does, "Exception ignored in: <stream>" and the
** exception, and the exit status becomes 120. */
static int flush_stdout_at_exit(VM *vm, int rc) {
    ExitFlush c = {.stream = NONE_VAL};
    if (vm_pcall(vm, flush_stdout_body, &c)) return rc;
    Value exc = vm->exc_value;
    vm_push_root(vm, exc);
    Value shown = c.stream;
    fputs("Exception ignored in: ", stderr);
    if (vm_pcall(vm, repr_body, &shown) && IS_STR(vm, shown)) fputs(AS_STR(shown)->chars, stderr);
    fputc('\n', stderr);
    exc_print(vm, exc, stderr);
    vm_pop_roots(vm, 1);
    vm->exc_value = NONE_VAL;
    return 120;
}

static int run_stdin(VM *vm) {
    size_t len;
    char *text = read_all(stdin, &len);
    if (!text) {
        fprintf(stderr, "gpy: out of memory reading stdin\n");
        return 1;
    }
    size_t bom = source_bom_length(text, len);
    int rc = vm_run_source(vm, "<stdin>", text + bom, len - bom);
    free(text);
    return rc;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, isatty(1) ? _IOLBF : _IOFBF, 0);

    enum { MODE_REPL, MODE_FILE, MODE_CMD, MODE_STDIN, MODE_JUPYTER } mode = MODE_REPL;
    const char *target = NULL;
    int first_arg = argc; /* index of the first argv entry passed to the program */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0) {
            printf("gpy %s\n", GPY_VERSION);
            char devbuf[512], err[256];
            VMConfig config;
            if (!env_config(&config, 0, NULL, err, sizeof err)) {
                fprintf(stderr, "gpy: %s\n", err);
                return 2;
            }
            printf("built with %s; device: %s\n", GPY_COMPILER,
                   cuda_device_description(config.device, config.libcuda, devbuf, sizeof devbuf));
            return 0;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(a, "--ast") == 0 || strcmp(a, "--dis") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "gpy: argument expected for the %s option\n", a);
                usage(stderr);
                return 2;
            }
            int rc = dump_file(argv[i + 1], a[2] == 'd');
            fflush(stdout);
            return rc;
        }
        if (strcmp(a, "--install-kernel") == 0) return jupyter_install_kernel(argc - i - 1, argv + i + 1, argv[0]);
        if (strcmp(a, "--jupyter-kernel") == 0) {
            if (i + 2 >= argc || strcmp(argv[i + 1], "-f") != 0) {
                fprintf(stderr, "gpy: usage: gpy --jupyter-kernel -f CONNECTION_FILE\n");
                return 2;
            }
            mode = MODE_JUPYTER;
            target = argv[i + 2];
            first_arg = i + 3;
            break;
        }
        if (strcmp(a, "-c") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "gpy: argument expected for the -c option\n");
                usage(stderr);
                return 2;
            }
            mode = MODE_CMD;
            target = argv[i + 1];
            first_arg = i + 2;
            break;
        }
        if (strcmp(a, "-") == 0) {
            mode = MODE_STDIN;
            first_arg = i + 1;
            break;
        }
        if (strcmp(a, "--") == 0) {
            if (i + 1 < argc) {
                mode = MODE_FILE;
                target = argv[i + 1];
                first_arg = i + 2;
            }
            break;
        }
        if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "gpy: unknown option %s\n", a);
            usage(stderr);
            return 2;
        }
        mode = MODE_FILE;
        target = a;
        first_arg = i + 1;
        break;
    }

    /* sys.argv: [script or '-c' or '-' or ''] + the remaining arguments */
    int nrest = argc - first_arg;
    char **pargv = malloc(sizeof(char *) * (size_t)(nrest + 1));
    if (!pargv) return 1;
    pargv[0] = mode == MODE_FILE ? (char *)target : mode == MODE_CMD ? "-c" : mode == MODE_STDIN ? "-" : "";
    for (int i = 0; i < nrest; i++) pargv[i + 1] = argv[first_arg + i];

    cli_signals_ignore_pipes();
    VMConfig config;
    char err[256];
    if (!env_config(&config, nrest + 1, pargv, err, sizeof err)) {
        fprintf(stderr, "gpy: %s\n", err);
        free(pargv);
        return 2;
    }
    VM *vm = vm_new(&config);
    if (!vm) {
        fprintf(stderr, "gpy: failed to initialize the VM\n");
        free(pargv);
        return 1;
    }
    cli_signals_install(vm);
    int rc;
    switch (mode) {
    case MODE_FILE: rc = vm_run_file(vm, target); break;
    case MODE_CMD: rc = vm_run_source(vm, "<string>", target, strlen(target)); break;
    case MODE_STDIN: rc = run_stdin(vm); break;
    case MODE_JUPYTER: rc = jupyter_kernel_run(vm, target); break;
    default: rc = repl(vm); break;
    }
    /* an uncaught KeyboardInterrupt (vm.c gives 128 + SIGINT, unlike sys.exit(130)) */
    bool interrupted = rc == 128 + SIGINT && !vm->exit_requested;
    rc = flush_stdout_at_exit(vm, rc);
    cli_signals_release();
    vm_free(vm);
    free(pargv);
    fflush(stdout);
    fflush(stderr);
    if (interrupted) {
        /* like CPython: die by SIGINT so that the shell sees an interrupted program */
        signal(SIGINT, SIG_DFL);
        kill(getpid(), SIGINT);
    }
    return rc;
}
