/*
** gc.c — precise, non-moving mark-sweep collector and the counted
** allocator every object and internal buffer goes through.
**
** Objects form one singly linked list (vm->objects). Marking uses an
** explicit gray stack so deeply nested structures never recurse on the C
** stack; when the gray stack cannot grow, marked-but-untraced objects are
** found again by rescanning the object list (slow, but needs no memory).
** Collection only happens at safepoints (gc_safepoint), never inside an
** allocation, so C code that does not call back into gpy code needs no roots.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vm.h"

/* Requests beyond this are treated as impossible (and as overflowed size
** computations) and raise MemoryError without asking malloc. */
#define GC_MAX_ALLOC ((size_t)1 << 48)
#define GC_MIN_THRESHOLD ((size_t)8 << 20)

/* Raises the preallocated MemoryError: allocates nothing. */
static _Noreturn void out_of_memory(VM *vm) {
    if (IS_EMPTY(vm->memory_error)) {
        fprintf(stderr, "gpy: fatal: out of memory during startup\n");
        abort();
    }
    vm_throw(vm, vm->memory_error);
}

/* ------------------------------------------------------------ the allocator
** Every counted allocation goes through VMConfig.alloc when the application
** set one (realloc-like, told the old size), else the C library; sizes are
** never 0 (a 0-byte request takes 1 byte) since size 0 means "free" to the
** hook. VMConfig.memory_limit caps vm->bytes_allocated: the bytes the GC
** counts, device memory included (gc_account_external).
**
** Not through the hook, and not counted against the limit: the VM struct,
** its value stack and frame array (64 MiB of lazily touched address space
** that must not be zeroed eagerly), the GC's gray stack and root stack, the
** interned-string table, the parser's and compiler's scratch buffers, error
** messages and tracebacks under construction, the kernel compiler (LLVM,
** jit/ arenas), the CPU device's worker stacks and shared memory, device
** memory itself (counted, but allocated by the driver), and stdio buffers. */

static size_t nonzero(size_t n) { return n ? n : 1; }

static void *raw_realloc(VM *vm, void *p, size_t old_size, size_t new_size) {
    if (vm->config.alloc) return vm->config.alloc(p, old_size, new_size, vm->config.user_data);
    if (!new_size) {
        free(p);
        return NULL;
    }
    return realloc(p, new_size);
}

static void *raw_calloc(VM *vm, size_t size) {
    if (!vm->config.alloc) return calloc(1, size);
    void *p = vm->config.alloc(NULL, 0, size, vm->config.user_data);
    if (p) memset(p, 0, size);
    return p;
}

static void raw_free(VM *vm, void *p, size_t size) {
    if (p) raw_realloc(vm, p, size, 0);
}

/* Raises MemoryError when `more` bytes would take the VM past its limit.
** Collection cannot run inside an allocation, so the memory that made the
** limit hit may be garbage only the next safepoint frees, or live data the
** script frees once it can run again (`del big`): after a hit, the VM gets
** headroom (a sixteenth of the limit, at least 1 MiB) to handle the
** MemoryError and go on, until a collection finds live memory under the
** limit again. The headroom is a hard cap too. */
static size_t limit_grace(size_t limit) {
    return limit / 16 > ((size_t)1 << 20) ? limit / 16 : (size_t)1 << 20;
}

static void check_limit(VM *vm, size_t more) {
    size_t limit = vm->config.memory_limit;
    /* the first steps of vm_new have no MemoryError to raise yet: vm_new
    ** checks the limit once the VM is built */
    if (!limit || IS_EMPTY(vm->memory_error)) return;
    if (vm->gc_limit_grace) {
        size_t grace = limit_grace(limit);
        limit = limit > SIZE_MAX - grace ? SIZE_MAX : limit + grace;
    }
    if (more > limit || vm->bytes_allocated > limit - more) {
        vm->gc_limit_grace = true;
        out_of_memory(vm);
    }
}

static void uncount(VM *vm, size_t size) {
    vm->bytes_allocated -= size <= vm->bytes_allocated ? size : vm->bytes_allocated;
}

/* Small objects are recycled through per-size-class free lists: most
** objects are small and short-lived, and malloc/free dominated allocation-
** heavy programs. A class holds blocks of class*16 bytes. */
#define FREELIST_CLASSES 16
#define BLOCK_CLASSES 33 /* gc_alloc_block's classes: up to 512 bytes */
static size_t size_class(size_t size) { return (size + 15) / 16; }

/* What the free lists cannot supply is carved from 64 KiB slabs rather than
** malloc'ed one by one: creating a VM makes about a thousand small objects,
** and a malloc and a free for each were half the cost of gpy_new+gpy_free.
** Small objects and blocks never go back to malloc individually (the free
** lists keep them, as before); the slabs are freed with the VM. */
#define SLAB_BYTES ((size_t)64 << 10)

/* Under AddressSanitizer there are no slabs: each object and block is an
** allocation of its own, so that ASan sees every one's bounds. */
#if defined(__SANITIZE_ADDRESS__)
#define SLAB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLAB_ASAN 1
#endif
#endif

#ifdef SLAB_ASAN
static void *slab_carve(VM *vm, size_t bytes) { return raw_realloc(vm, NULL, 0, bytes); }

/* Frees the small objects and blocks one by one (gc_free_all). */
static void small_free(VM *vm) {
    Obj *o = vm->objects; /* the large ones are freed already */
    while (o) {
        Obj *next = o->gc_next;
        raw_free(vm, o, size_class(o->gc_size) * 16);
        o = next;
    }
    for (int c = 0; c < BLOCK_CLASSES; c++) {
        while (vm->block_freelist[c]) {
            void *next = *(void **)vm->block_freelist[c];
            raw_free(vm, vm->block_freelist[c], (size_t)c * 16);
            vm->block_freelist[c] = next;
        }
    }
    for (int c = 0; c < FREELIST_CLASSES; c++) {
        while (vm->obj_freelist[c]) {
            Obj *next = vm->obj_freelist[c]->gc_next;
            raw_free(vm, vm->obj_freelist[c], (size_t)c * 16);
            vm->obj_freelist[c] = next;
        }
    }
}
#else
typedef struct Slab {
    struct Slab *prev;
    size_t pad; /* what follows stays 16-aligned */
} Slab;

static void *slab_carve(VM *vm, size_t bytes) {
    if (vm->slab_left < bytes) {
        /* the old slab's tail (< 512 bytes) is left unused */
        Slab *slab = raw_realloc(vm, NULL, 0, SLAB_BYTES);
        if (!slab) return NULL;
        slab->prev = vm->slabs;
        vm->slabs = slab;
        vm->slab_next = (char *)(slab + 1);
        vm->slab_left = SLAB_BYTES - sizeof(Slab);
    }
    void *p = vm->slab_next;
    vm->slab_next += bytes;
    vm->slab_left -= bytes;
    return p;
}

/* Frees the small objects and blocks: their slabs (gc_free_all). */
static void small_free(VM *vm) {
    memset(vm->block_freelist, 0, sizeof vm->block_freelist);
    memset(vm->obj_freelist, 0, sizeof vm->obj_freelist);
    while (vm->slabs) {
        Slab *slab = vm->slabs;
        vm->slabs = slab->prev;
        raw_free(vm, slab, SLAB_BYTES);
    }
    vm->slab_next = NULL;
    vm->slab_left = 0;
}
#endif

void *gc_alloc_obj(VM *vm, Type *type, size_t size) {
    if (size < sizeof(Obj) || size > UINT32_MAX) out_of_memory(vm);
    check_limit(vm, size);
    size_t cls = size_class(size);
    Obj *o;
    if (cls < FREELIST_CLASSES) {
        o = vm->obj_freelist[cls];
        if (o) vm->obj_freelist[cls] = o->gc_next;
        else if (!(o = slab_carve(vm, cls * 16))) out_of_memory(vm);
        memset(o, 0, cls * 16);
    } else {
        o = raw_calloc(vm, size);
        if (!o) out_of_memory(vm);
    }
    o->type = type;
    o->gc_size = (uint32_t)size;
    o->gc_next = vm->objects;
    vm->objects = o;
    vm->bytes_allocated += size;
    return o;
}

void *gc_malloc(VM *vm, size_t size) {
    if (size > GC_MAX_ALLOC) out_of_memory(vm);
    check_limit(vm, size);
    void *p = raw_realloc(vm, NULL, 0, nonzero(size));
    if (!p) out_of_memory(vm);
    vm->bytes_allocated += size;
    return p;
}

void *gc_try_malloc(VM *vm, size_t size) {
    size_t limit = vm->config.memory_limit;
    if (size > GC_MAX_ALLOC || (limit && (size > limit || vm->bytes_allocated > limit - size))) return NULL;
    void *p = raw_realloc(vm, NULL, 0, nonzero(size));
    if (p) vm->bytes_allocated += size;
    return p;
}

void *gc_alloc_block(VM *vm, size_t size) {
    size_t cls = size_class(size);
    if (cls == 0 || cls >= BLOCK_CLASSES) return gc_malloc(vm, size);
    check_limit(vm, size);
    void *p = vm->block_freelist[cls];
    if (p) {
        vm->block_freelist[cls] = *(void **)p;
    } else {
        p = slab_carve(vm, cls * 16);
        if (!p) out_of_memory(vm);
    }
    vm->bytes_allocated += size;
    return p;
}

void gc_free_block(VM *vm, void *p, size_t size) {
    if (!p) return;
    size_t cls = size_class(size);
    if (cls == 0 || cls >= BLOCK_CLASSES) {
        gc_free(vm, p, size);
        return;
    }
    *(void **)p = vm->block_freelist[cls];
    vm->block_freelist[cls] = p;
    uncount(vm, size);
}

void *gc_realloc_block(VM *vm, void *p, size_t old_size, size_t new_size) {
    size_t oc = size_class(old_size), nc = size_class(new_size);
    bool old_block = p && oc > 0 && oc < BLOCK_CLASSES, new_block = nc > 0 && nc < BLOCK_CLASSES;
    if (!old_block && !new_block) return gc_realloc(vm, p, old_size, new_size);
    if (old_block && new_block && oc == nc) return p;
    void *q = gc_alloc_block(vm, new_size);
    if (p) {
        memcpy(q, p, old_size < new_size ? old_size : new_size);
        gc_free_block(vm, p, old_size);
    }
    return q;
}

void *gc_calloc(VM *vm, size_t n, size_t size) {
    if (size && n > GC_MAX_ALLOC / size) out_of_memory(vm);
    size_t total = n * size;
    check_limit(vm, total);
    void *p = raw_calloc(vm, nonzero(total));
    if (!p) out_of_memory(vm);
    vm->bytes_allocated += total;
    return p;
}

/* new_size 0 frees the block and returns NULL. On failure the old block
** stays valid (and owned by the caller's object) and MemoryError is raised. */
void *gc_realloc(VM *vm, void *p, size_t old_size, size_t new_size) {
    if (new_size == 0) {
        gc_free(vm, p, old_size);
        return NULL;
    }
    if (new_size > GC_MAX_ALLOC) out_of_memory(vm);
    if (new_size > old_size) check_limit(vm, new_size - old_size);
    void *q = raw_realloc(vm, p, p ? nonzero(old_size) : 0, new_size);
    if (!q) out_of_memory(vm);
    uncount(vm, p ? old_size : 0);
    vm->bytes_allocated += new_size;
    return q;
}

void gc_free(VM *vm, void *p, size_t size) {
    if (!p) return;
    raw_free(vm, p, nonzero(size));
    uncount(vm, size);
}

/* Memory held outside the GC's buffers (device memory) still paces collection. */
void gc_account_external(VM *vm, ptrdiff_t bytes) {
    if (bytes >= 0) vm->bytes_allocated += (size_t)bytes;
    else {
        size_t n = (size_t)-bytes;
        vm->bytes_allocated -= n <= vm->bytes_allocated ? n : vm->bytes_allocated;
    }
}

/* ---------------------------------------------------------------- marking */

void gc_mark_obj(VM *vm, Obj *o) {
    if (!o || o->marked) return;
    o->marked = 1;
    if (vm->ngray == vm->gray_cap) {
        int64_t cap = vm->gray_cap ? vm->gray_cap * 2 : 1024;
        Obj **g = realloc(vm->gray, (size_t)cap * sizeof(Obj *));
        if (!g) {
            /* Leave o marked but untraced; the rescan in gc_collect finds it. */
            vm->gc_gray_overflow = true;
            return;
        }
        vm->gray = g;
        vm->gray_cap = cap;
    }
    vm->gray[vm->ngray++] = o;
}

void gc_mark_value(VM *vm, Value v) {
    if (IS_OBJ(v)) gc_mark_obj(vm, AS_OBJ(v));
}

/* Marks what one object references: its class, a type's own fields, then
** whatever the type's mark slot knows about. */
static void trace(VM *vm, Obj *o) {
    Type *t = o->type;
    if (!t) return;
    gc_mark_obj(vm, &t->obj);
    if (t == vm->t_type) {
        Type *ty = (Type *)o;
        gc_mark_obj(vm, (Obj *)ty->name);
        gc_mark_obj(vm, (Obj *)ty->base);
        gc_mark_obj(vm, (Obj *)ty->dict);
    }
    if (t->mark) t->mark(vm, o);
}

static void drain_gray(VM *vm) {
    while (vm->ngray > 0) trace(vm, vm->gray[--vm->ngray]);
}

static void mark_roots(VM *vm) {
#define MARK_TYPE(n) gc_mark_obj(vm, (Obj *)vm->t_##n);
    CORE_TYPES(MARK_TYPE)
#undef MARK_TYPE
    for (int i = 0; i < EXC__COUNT; i++) gc_mark_obj(vm, (Obj *)vm->exc[i]);
    for (int32_t i = 0; i < vm->nbuiltin_types; i++) gc_mark_obj(vm, (Obj *)vm->builtin_types[i]);

    gc_mark_value(vm, vm->not_implemented);
    gc_mark_value(vm, vm->ellipsis);
    gc_mark_value(vm, vm->memory_error);

    if (vm->stack)
        for (Value *v = vm->stack; v < vm->stack_top; v++) gc_mark_value(vm, *v);
    for (int32_t i = 0; i < vm->nframes; i++) {
        Frame *f = &vm->frames[i];
        gc_mark_obj(vm, (Obj *)f->fn);
        gc_mark_obj(vm, (Obj *)f->globals);
        gc_mark_obj(vm, (Obj *)f->locals);
        gc_mark_value(vm, f->handling);
    }
    gc_mark_value(vm, vm->exc_value);
    for (int32_t i = 0; i < vm->nroots; i++) gc_mark_value(vm, vm->roots[i]);

    gc_mark_obj(vm, (Obj *)vm->empty_str);
    for (int i = 0; i < 128; i++) gc_mark_obj(vm, (Obj *)vm->single_chars[i]);
    Str *syms[] = {vm->sym_init, vm->sym_new, vm->sym_repr, vm->sym_str, vm->sym_call,
                   vm->sym_name, vm->sym_class, vm->sym_dict, vm->sym_doc, vm->sym_module,
                   vm->sym_qualname, vm->sym_main};
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) gc_mark_obj(vm, (Obj *)syms[i]);
    for (int i = 0; i < BINOP__COUNT; i++) {
        gc_mark_obj(vm, (Obj *)vm->dunder_binop[i]);
        gc_mark_obj(vm, (Obj *)vm->dunder_rbinop[i]);
        gc_mark_obj(vm, (Obj *)vm->dunder_ibinop[i]);
    }

    gc_mark_obj(vm, (Obj *)vm->builtins);
    gc_mark_obj(vm, (Obj *)vm->modules);
    gc_mark_obj(vm, (Obj *)vm->sys_module);
    gc_mark_obj(vm, (Obj *)vm->native_modules);
    gc_mark_obj(vm, (Obj *)vm->sys_path);
    gc_mark_obj(vm, (Obj *)vm->sys_argv);
    gc_mark_obj(vm, (Obj *)vm->main_file);
    gc_mark_value(vm, vm->sys_stdout);
    gc_mark_value(vm, vm->sys_stderr);
    gc_mark_value(vm, vm->sys_stdin);
    for (int32_t i = 0; i < vm->nfinalize; i++) gc_mark_obj(vm, vm->finalize_queue[i]);
    if (vm->api_mark) vm->api_mark(vm);
}

/* Marks everything reachable. When the gray stack overflowed, every marked
** object is traced again until a pass completes without overflow: tracing
** is idempotent, so this only costs time. */
static void finish_marking(VM *vm) {
    drain_gray(vm);
    while (vm->gc_gray_overflow) {
        vm->gc_gray_overflow = false;
        for (Obj *o = vm->objects; o; o = o->gc_next) {
            if (o->marked) {
                trace(vm, o);
                drain_gray(vm);
            }
        }
    }
}

static void mark_all(VM *vm) {
    vm->gc_gray_overflow = false;
    mark_roots(vm);
    finish_marking(vm);
}

/* Unreachable generators suspended inside a try block must run their
** finally (gen_finalize.c): they and what they reach are kept alive this
** time and queued; closed, they are freed by a later collection. */
static void queue_abandoned_generators(VM *vm) {
    if (!vm->generators_made) return; /* most programs: no walk over the heap */
    bool any = false;
    for (Obj *o = vm->objects; o; o = o->gc_next) {
        if (o->marked || !o->type || !generator_needs_close(vm, o)) continue;
        if (vm->nfinalize == vm->finalize_cap) {
            int32_t cap = vm->finalize_cap ? vm->finalize_cap * 2 : 16;
            Obj **q = realloc(vm->finalize_queue, (size_t)cap * sizeof(Obj *));
            if (!q) break; /* freed without running its finally */
            vm->finalize_queue = q;
            vm->finalize_cap = cap;
        }
        vm->finalize_queue[vm->nfinalize++] = o;
        any = true;
    }
    if (!any) return;
    for (int32_t i = 0; i < vm->nfinalize; i++) gc_mark_obj(vm, vm->finalize_queue[i]);
    finish_marking(vm);
}

/* Frees every unmarked object. Finalizers all run before anything is
** freed, so a finalizer may still look at its (possibly dead) class. */
static void sweep(VM *vm) {
    for (Obj *o = vm->objects; o; o = o->gc_next)
        if (!o->marked && o->type && o->type->finalize) o->type->finalize(vm, o);
    Obj **link = &vm->objects;
    while (*link) {
        Obj *o = *link;
        if (o->marked) {
            o->marked = 0;
            link = &o->gc_next;
        } else {
            *link = o->gc_next;
            vm->bytes_allocated -= o->gc_size <= vm->bytes_allocated ? o->gc_size : vm->bytes_allocated;
            size_t cls = size_class(o->gc_size);
            if (cls < FREELIST_CLASSES) {
                o->type = NULL;
                o->gc_next = vm->obj_freelist[cls];
                vm->obj_freelist[cls] = o;
            } else {
                raw_free(vm, o, o->gc_size);
            }
        }
    }
}

void gc_collect(VM *vm) {
    if (vm->gc_running) return;
    vm->gc_running = true;
    mark_all(vm);
    queue_abandoned_generators(vm);
    str_table_sweep(vm); /* interned strings are weak */
    sweep(vm);
    size_t live = vm->bytes_allocated;
    size_t next = live * 2 > GC_MIN_THRESHOLD ? live * 2 : GC_MIN_THRESHOLD;
    /* under a memory limit, collect halfway to it: garbage waiting for a
    ** collection must not be what makes an allocation fail; past it (in the
    ** headroom), collect often, so that what the script drops is seen soon */
    size_t limit = vm->config.memory_limit;
    if (limit) {
        size_t cap = live < limit ? live + (limit - live) / 2 : live + limit_grace(limit) / 4;
        if (next > cap) next = cap;
        if (live < limit) vm->gc_limit_grace = false;
    }
    vm->next_gc = next;
    vm->gc_running = false;
}

void gc_safepoint_slow(VM *vm) {
    if ((vm->bytes_allocated > vm->next_gc || vm->gc_stress) && !vm->gc_running) gc_collect(vm);
    if (vm->nfinalize > 0 && !vm->gc_running) gen_run_finalizers(vm);
}

/* Frees every object at VM teardown: all finalizers first, then memory. */
void gc_free_all(VM *vm) {
    vm->gc_running = true;
    for (Obj *o = vm->objects; o; o = o->gc_next)
        if (o->type && o->type->finalize) o->type->finalize(vm, o);
    Obj **link = &vm->objects; /* the large objects first, leaving the small ones listed */
    while (*link) {
        Obj *o = *link;
        if (size_class(o->gc_size) >= FREELIST_CLASSES) {
            *link = o->gc_next;
            raw_free(vm, o, o->gc_size);
        } else {
            link = &o->gc_next;
        }
    }
    small_free(vm);
    vm->objects = NULL;
    free(vm->finalize_queue);
    vm->finalize_queue = NULL;
    vm->nfinalize = vm->finalize_cap = 0;
    free(vm->gray);
    vm->gray = NULL;
    vm->ngray = vm->gray_cap = 0;
}

/* ------------------------------------------------------------------ roots */

void vm_push_root(VM *vm, Value v) {
    if (vm->nroots == vm->roots_cap) {
        int32_t cap = vm->roots_cap ? vm->roots_cap * 2 : 64;
        Value *r = realloc(vm->roots, (size_t)cap * sizeof(Value));
        if (!r) out_of_memory(vm);
        vm->roots = r;
        vm->roots_cap = cap;
    }
    vm->roots[vm->nroots++] = v;
}

void vm_pop_roots(VM *vm, int n) {
    vm->nroots -= n;
    if (vm->nroots < 0) vm->nroots = 0;
}
