/*
** gpy.h — the public embedding API of libgpy: the whole of it.
**
** A C or C++ program creates a VM from a configuration, runs scripts in it,
** exchanges values with it through numbered *slots*, registers C functions,
** modules and object types, shares its own buffers (host or GPU) as arrays
** without copying, and launches kernels that scripts defined.
**
** Rules that hold for every function below (docs/embedding.md explains why):
**  - Status, never jumps. Every function that can fail returns a GpyStatus;
**    on failure the exception is kept in the VM (gpy_error_type/_message/
**    _traceback) and the VM stays usable. No longjmp crosses this API.
**  - Slots. Values live in an array of slots owned by the VM (Wren's model,
**    not Lua's stack: indices never shift under you). gpy_ensure_slots grows
**    it; slots are roots: what a slot holds survives collections. A C
**    function called by a script gets its own fresh set of slots.
**  - Handles. A GpyHandle keeps one value alive across calls and
**    collections until gpy_release.
**  - Threads. Each VM is used by one thread at a time; any number of VMs may
**    run at once on different threads. gpy_interrupt is the one exception:
**    it may be called from any thread or from a signal handler.
**  - Strings handed to the API are UTF-8 and copied; strings handed back
**    stay valid while the value they came from is alive (error strings:
**    until the error record changes, see gpy_error_type).
*/
#ifndef GPY_H
#define GPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GPY_VERSION_MAJOR 0
#define GPY_VERSION_MINOR 2
#define GPY_VERSION_PATCH 0
#ifndef GPY_VERSION
#define GPY_VERSION "0.2.0"
#endif
/* Bumped whenever libgpy and its compiler module (lib/gpy/gpy_jit.so) stop
** being interchangeable; each refuses a partner with another value. */
#define GPY_ABI_VERSION 2

#if defined(_WIN32)
#define GPY_API
#elif defined(__GNUC__)
#define GPY_API __attribute__((visibility("default")))
#else
#define GPY_API
#endif

/* ------------------------------------------------------------------ basics */

/* A virtual machine: interpreter, modules, kernels, device state. Opaque. */
typedef struct GpyVM GpyVM;
/* A value kept alive across calls (gpy_handle / gpy_release). Opaque. */
typedef struct GpyHandle GpyHandle;

/* What an API call (or a script it ran) ended with. */
typedef enum GpyStatus {
    GPY_OK = 0,
    GPY_SYNTAX_ERROR,   /* the source did not compile (SyntaxError, IndentationError) */
    GPY_RUNTIME_ERROR,  /* an exception reached the API (also: wrong slot type, bad argument) */
    GPY_OUT_OF_MEMORY,  /* MemoryError: the allocator or the configured memory limit refused */
    GPY_INTERRUPTED,    /* KeyboardInterrupt: gpy_interrupt, a signal, or the budget hook */
    GPY_EXIT            /* SystemExit: the script asked to exit; see gpy_exit_code */
} GpyStatus;

/* A short name for a status ("ok", "syntax error", ...). */
GPY_API const char *gpy_status_name(GpyStatus status);

/* The library's version string ("0.2.0") and ABI version, to check at run
** time against the header the application was compiled with. */
GPY_API const char *gpy_version(void);
GPY_API int gpy_abi_version(void);

/* ----------------------------------------------------------- configuration */

/* Which device runs kernels. AUTO: a CUDA GPU when the driver opens with at
** least one device, else the CPU device. */
typedef enum GpyDevice { GPY_DEVICE_AUTO = 0, GPY_DEVICE_CPU, GPY_DEVICE_CUDA } GpyDevice;

/* Allocator: like realloc (ptr NULL: allocate; new_size 0: free, return
** NULL). old_size is the size the VM allocated ptr with. Return NULL to
** refuse (the script sees MemoryError). */
typedef void *(*GpyAllocFn)(void *ptr, size_t old_size, size_t new_size, void *user);
/* Output: text written to sys.stdout (write) or sys.stderr (error). Not
** NUL-terminated. The callback must not call back into the same VM. */
typedef void (*GpyWriteFn)(GpyVM *vm, const char *text, size_t len, void *user);
/* Module loader: called for `import name` before the search path. Return a
** malloc'd UTF-8 source (and set *len) to define the module, or NULL to let
** the search go on. The VM frees the text. */
typedef char *(*GpyLoadFn)(GpyVM *vm, const char *name, size_t *len, void *user);
/* Budget hook: called every hook_every instructions (and when the time
** budget runs out). Return false to interrupt the script (KeyboardInterrupt,
** status GPY_INTERRUPTED). */
typedef bool (*GpyHookFn)(GpyVM *vm, void *user);

typedef struct GpyConfig {
    GpyAllocFn alloc;          /* NULL: malloc/realloc/free */
    size_t memory_limit;       /* bytes the VM's objects may hold; 0: no limit */
    GpyWriteFn write;          /* NULL: the process's stdout */
    GpyWriteFn error;          /* NULL: the process's stderr */
    GpyLoadFn load_module;     /* NULL: only the search path */
    const char *module_path;   /* ':'-separated directories searched by import; NULL: none */
    GpyDevice device;          /* GPY_DEVICE_AUTO */
    int cpu_threads;           /* CPU-device workers; 0: one per core */
    const char *cache_dir;     /* kernel disk cache for @cuda.jit(cache=True); NULL: no disk cache */
    const char *jit_module;    /* path of gpy_jit.so; NULL: lib/gpy/ beside libgpy (or linked in) */
    const char *cuda_home;     /* CUDA toolkit (libdevice); NULL: /usr/local/cuda */
    const char *libcuda;       /* the CUDA driver library to open; NULL: libcuda.so.1 */
    int argc;                  /* sys.argv; 0: [''] */
    char **argv;
    GpyHookFn hook;            /* budget hook; NULL: none */
    uint64_t hook_every;       /* instructions between hook calls; 0: only the time budget */
    double time_budget;        /* seconds of running before the hook is called (or, without a hook, an interrupt); 0: none */
    void *user_data;           /* passed to every callback above as `user` */
} GpyConfig;

/* Fills *config with the defaults above. Always call it first: fields added
** in later versions then get their defaults. */
GPY_API void gpy_config_init(GpyConfig *config);

/* --------------------------------------------------------------- lifetime */

/* Creates a VM (builtins ready; no module imported yet). config may be NULL
** (the defaults). The strings in config are copied. Returns NULL when memory
** runs out. */
GPY_API GpyVM *gpy_new(const GpyConfig *config);
/* Frees the VM and everything it allocated: objects, kernels, device memory,
** handles (which must not be used afterwards). NULL is a no-op. */
GPY_API void gpy_free(GpyVM *vm);
/* The config's user_data. */
GPY_API void *gpy_user_data(GpyVM *vm);

/* ----------------------------------------------------------- running code */

/* Compiles and runs source text (len bytes; len (size_t)-1: NUL-terminated)
** as the module named module ("__main__" when NULL). The module is created
** or reused, and importable by that name afterwards. filename names the
** source in tracebacks ("<string>" when NULL). */
GPY_API GpyStatus gpy_run_string(GpyVM *vm, const char *module, const char *source, size_t len,
                                 const char *filename);
/* Runs the file at path as module ("__main__" when NULL). A file that cannot
** be read is GPY_RUNTIME_ERROR with an OSError. */
GPY_API GpyStatus gpy_run_file(GpyVM *vm, const char *module, const char *path);
/* Evaluates one expression in module's namespace ("__main__" when NULL) into
** slot. */
GPY_API GpyStatus gpy_eval(GpyVM *vm, const char *module, const char *expression, int slot);

/* ----------------------------------------------------------------- errors */

/* The last failure's exception: its type name ("ValueError"), its message
** (str(exc)), and the traceback formatted as CPython prints it. NULL when
** no failure is recorded: after gpy_clear_error, and after a call that ran
** code or looked something up (run, eval, call, import, get/set of items,
** attributes and globals) succeeded; plain slot setters and getters that
** succeed leave the record as it was. */
GPY_API const char *gpy_error_type(GpyVM *vm);
GPY_API const char *gpy_error_message(GpyVM *vm);
GPY_API const char *gpy_error_traceback(GpyVM *vm);
/* Puts the last failure's exception object into slot (None when none). */
GPY_API GpyStatus gpy_error_value(GpyVM *vm, int slot);
GPY_API void gpy_clear_error(GpyVM *vm);
/* After GPY_EXIT: the exit code (SystemExit(n), 0 for None, 1 for a message). */
GPY_API int gpy_exit_code(GpyVM *vm);

/* ------------------------------------------------------------------ slots */

/* The kind of value in a slot. */
typedef enum GpyType {
    GPY_TYPE_NONE,
    GPY_TYPE_BOOL,
    GPY_TYPE_INT,
    GPY_TYPE_FLOAT,
    GPY_TYPE_STR,
    GPY_TYPE_BYTES,
    GPY_TYPE_LIST,
    GPY_TYPE_TUPLE,
    GPY_TYPE_DICT,
    GPY_TYPE_ARRAY,        /* a numpy array */
    GPY_TYPE_DEVICE_ARRAY, /* a cuda device array */
    GPY_TYPE_FOREIGN,      /* an object of a class made by gpy_new_class */
    GPY_TYPE_OTHER         /* anything else: functions, modules, instances, ... */
} GpyType;

/* Makes slots 0 .. count-1 exist (new ones hold None). */
GPY_API GpyStatus gpy_ensure_slots(GpyVM *vm, int count);
GPY_API int gpy_slot_count(GpyVM *vm);
GPY_API GpyType gpy_slot_type(GpyVM *vm, int slot);
/* Copies slot src into slot dst. */
GPY_API GpyStatus gpy_copy_slot(GpyVM *vm, int dst, int src);

GPY_API GpyStatus gpy_set_none(GpyVM *vm, int slot);
GPY_API GpyStatus gpy_set_bool(GpyVM *vm, int slot, bool value);
GPY_API GpyStatus gpy_set_int(GpyVM *vm, int slot, int64_t value);
GPY_API GpyStatus gpy_set_float(GpyVM *vm, int slot, double value);
/* len (size_t)-1: NUL-terminated. A str must be valid UTF-8 (else ValueError). */
GPY_API GpyStatus gpy_set_str(GpyVM *vm, int slot, const char *text, size_t len);
/* A bytes object holding a copy of len bytes of data (any bytes, NULs too). */
GPY_API GpyStatus gpy_set_bytes(GpyVM *vm, int slot, const void *data, size_t len);

/* Readers fail with TypeError (GPY_RUNTIME_ERROR) when the slot holds
** another type. get_int accepts bool and objects with __index__; get_float
** accepts ints; get_bool is Python truth (bool(x)). */
GPY_API GpyStatus gpy_get_bool(GpyVM *vm, int slot, bool *out);
GPY_API GpyStatus gpy_get_int(GpyVM *vm, int slot, int64_t *out);
GPY_API GpyStatus gpy_get_float(GpyVM *vm, int slot, double *out);
/* Returns the UTF-8 text (NUL-terminated too) and its length in *len (may
** be NULL); NULL with TypeError when the slot holds no str. */
GPY_API const char *gpy_get_str(GpyVM *vm, int slot, size_t *len);
/* The data of a bytes object and its length in *len (may be NULL); valid
** while the object is reachable. NULL with TypeError for any other type. */
GPY_API const void *gpy_get_bytes(GpyVM *vm, int slot, size_t *len);

/* Containers. Indices may be negative (from the end), as in Python. */
GPY_API GpyStatus gpy_new_list(GpyVM *vm, int slot);
/* A tuple of the n values in slots first .. first+n-1. */
GPY_API GpyStatus gpy_new_tuple(GpyVM *vm, int slot, int first, int n);
GPY_API GpyStatus gpy_new_dict(GpyVM *vm, int slot);
GPY_API GpyStatus gpy_list_append(GpyVM *vm, int list, int value);
/* len(x) of any sized object. */
GPY_API GpyStatus gpy_len(GpyVM *vm, int slot, int64_t *out);
/* dst = x[index] / x[index] = value for lists and tuples (and any sequence). */
GPY_API GpyStatus gpy_get_index(GpyVM *vm, int seq, int64_t index, int dst);
GPY_API GpyStatus gpy_set_index(GpyVM *vm, int seq, int64_t index, int value);
/* dst = x[key] / x[key] = value with the key in a slot (dicts, any mapping). */
GPY_API GpyStatus gpy_get_item(GpyVM *vm, int obj, int key, int dst);
GPY_API GpyStatus gpy_set_item(GpyVM *vm, int obj, int key, int value);
/* Dict iteration: *pos starts at 0; returns true and fills key_dst and
** value_dst while items remain. */
GPY_API bool gpy_dict_next(GpyVM *vm, int dict, int64_t *pos, int key_dst, int value_dst);
/* dst = getattr(obj, name) / setattr(obj, name, value). */
GPY_API GpyStatus gpy_get_attr(GpyVM *vm, int obj, const char *name, int dst);
GPY_API GpyStatus gpy_set_attr(GpyVM *vm, int obj, const char *name, int value);

/* Module globals (module "__main__" when NULL). The module must exist (be
** run or imported); gpy_import imports one into a slot. */
GPY_API GpyStatus gpy_get_global(GpyVM *vm, const char *module, const char *name, int dst);
GPY_API GpyStatus gpy_set_global(GpyVM *vm, const char *module, const char *name, int value);
GPY_API GpyStatus gpy_import(GpyVM *vm, const char *module, int dst);

/* Calls the callable in slot fn with the nargs values in slots fn+1 ..
** fn+nargs, and keyword arguments from the dict in slot kwargs (-1: none);
** the result goes to slot dst. */
GPY_API GpyStatus gpy_call(GpyVM *vm, int fn, int nargs, int kwargs, int dst);
/* obj.name(args in slots obj+1 .. obj+nargs) into dst. */
GPY_API GpyStatus gpy_call_method(GpyVM *vm, int obj, const char *name, int nargs, int dst);

/* ---------------------------------------------------------------- handles */

/* A handle on the value in slot: it stays alive until gpy_release. */
GPY_API GpyHandle *gpy_handle(GpyVM *vm, int slot);
/* Puts the handle's value into slot. */
GPY_API GpyStatus gpy_handle_get(GpyVM *vm, GpyHandle *handle, int slot);
/* Lets the value go. NULL is a no-op. */
GPY_API void gpy_release(GpyVM *vm, GpyHandle *handle);

/* ------------------------------------------- C functions, modules, classes */

/* A function written in C. When called, slot 0 holds None (set it to the
** result), slots 1 .. nargs the positional arguments (slot 1 is self for
** methods), and, when the caller passed keywords, slot nargs+1 a dict of
** them (gpy_kwargs_slot says which, -1 when none). To fail, return the
** status of gpy_raise (or of a failed API call, which propagates that
** exception). user is the pointer given at registration. */
typedef GpyStatus (*GpyCFunction)(GpyVM *vm, int nargs, void *user);
/* The slot holding keyword arguments in the running C function, or -1. */
GPY_API int gpy_kwargs_slot(GpyVM *vm);

/* Sets the pending exception to a new instance of the exception type named
** type (a builtin name such as "ValueError", or "module.Name" for one made
** by gpy_new_exception) with the formatted message; returns
** GPY_RUNTIME_ERROR (GPY_OUT_OF_MEMORY for "MemoryError", GPY_INTERRUPTED
** for "KeyboardInterrupt"). */
GPY_API GpyStatus gpy_raise(GpyVM *vm, const char *type, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Raises the exception instance or class in slot. */
GPY_API GpyStatus gpy_raise_slot(GpyVM *vm, int slot);

/* Creates a module named name (importable at once by `import name`, and
** registered in sys.modules) into slot. */
GPY_API GpyStatus gpy_new_module(GpyVM *vm, const char *name, int slot);
/* Adds a C function as attribute name of the module or class in slot. */
GPY_API GpyStatus gpy_add_function(GpyVM *vm, int module, const char *name, GpyCFunction fn, void *user);
/* Makes an exception class module.name deriving from the builtin or
** registered exception named base (NULL: "Exception"), stores it in the
** module in slot module and into slot dst. */
GPY_API GpyStatus gpy_new_exception(GpyVM *vm, int module, const char *name, const char *base, int dst);

/* Objects defined in C (Lua's full userdata, Wren's foreign classes): each
** instance carries `size` bytes of zeroed user data, freed with it after
** finalize (if not NULL) ran. */
typedef struct GpyMethodDef {
    const char *name;
    GpyCFunction fn; /* slot 1 is the instance */
} GpyMethodDef;
typedef struct GpyAttrDef {
    const char *name;
    GpyCFunction get; /* slot 1: the instance; result in slot 0 */
    GpyCFunction set; /* slot 1: the instance, slot 2: the value; NULL: read-only */
} GpyAttrDef;
typedef struct GpyClassDef {
    const char *name;
    size_t size;                        /* bytes of user data per instance */
    GpyCFunction init;                  /* Name(args): slot 1 the new instance; NULL: takes no arguments */
    void (*finalize)(void *data, void *user); /* when the instance is collected or the VM freed */
    const GpyMethodDef *methods;        /* ends with a {NULL} entry; may be NULL. Python's special
                                        ** method names back the operations: __repr__, __str__,
                                        ** __len__, __bool__, __getitem__, __setitem__, __delitem__,
                                        ** __call__, __hash__, __eq__ .. __ge__, __neg__, __pos__,
                                        ** __invert__, __add__/__radd__ and the other arithmetic ones
                                        ** (a method returning NotImplemented passes) */
    const GpyAttrDef *attrs;            /* ends with a {NULL} entry; may be NULL */
} GpyClassDef;
/* Creates the class described by def (which must outlive the VM) as
** attribute def->name of the module in slot module, and into slot dst. */
GPY_API GpyStatus gpy_new_class(GpyVM *vm, int module, const GpyClassDef *def, void *user, int dst);
/* A new instance of the class in slot cls (init is not called) into dst;
** *data receives its user data. */
GPY_API GpyStatus gpy_new_foreign(GpyVM *vm, int cls, int dst, void **data);
/* The user data of the instance in slot when it is an instance of a class
** made from def; NULL (with TypeError) otherwise. */
GPY_API void *gpy_get_foreign(GpyVM *vm, int slot, const GpyClassDef *def);

/* ---------------------------------------------------------------- arrays */

/* Element types (numpy's names). */
typedef enum GpyDtype {
    GPY_BOOL,
    GPY_INT8, GPY_INT16, GPY_INT32, GPY_INT64,
    GPY_UINT8, GPY_UINT16, GPY_UINT32, GPY_UINT64,
    GPY_FLOAT16, GPY_FLOAT32, GPY_FLOAT64,
    GPY_COMPLEX64, GPY_COMPLEX128 /* (real, imaginary) pairs of float / double */
} GpyDtype;
#define GPY_MAX_DIMS 32

/* An array's memory: element (i0, i1, ...) lives at
** data + i0*strides[0] + i1*strides[1] + ... (strides in bytes). */
typedef struct GpyArray {
    void *data;              /* host address, or device address for device arrays */
    GpyDtype dtype;
    int ndim;                /* 0 .. GPY_MAX_DIMS */
    const int64_t *shape;    /* ndim entries */
    const int64_t *strides;  /* ndim entries in bytes; NULL: C-contiguous */
    bool readonly;
    bool device;             /* gpy_get_array: true for a device array */
    /* Ownership when wrapping: NULL release = borrowed (the application keeps
    ** the memory alive while gpy may use it); otherwise gpy calls
    ** release(data, release_user) once the last array using it is collected. */
    void (*release)(void *data, void *user);
    void *release_user;
} GpyArray;

/* Wraps host memory as a numpy array in slot: scripts read and write it in
** place (a read-only one refuses writes as numpy does). Views of it keep the
** memory in use. On failure (ValueError for a bad description) release is
** not called: the memory stays the application's. */
GPY_API GpyStatus gpy_wrap_array(GpyVM *vm, int slot, const GpyArray *array);
/* Wraps a device pointer (CUdeviceptr of the VM's CUDA context) as a cuda
** device array in slot; kernels write straight into it. On the CPU device
** the pointer is host memory. gpy never frees it: release, if given, is
** called as for gpy_wrap_array (at gpy_free, after gpy let go of its CUDA
** context: make your own current there). readonly refuses host-side writes
** only. */
GPY_API GpyStatus gpy_wrap_device_array(GpyVM *vm, int slot, const GpyArray *array);
/* Describes the numpy or device array in slot (shape and strides point into
** the array object: valid while it is alive). TypeError for other values. */
GPY_API GpyStatus gpy_get_array(GpyVM *vm, int slot, GpyArray *out);

/* --------------------------------------------------------------- kernels */

typedef struct GpyLaunch {
    unsigned grid[3];     /* blocks; 0 entries count as 1 */
    unsigned block[3];    /* threads per block; 0 entries count as 1 */
    size_t shared_bytes;  /* dynamic shared memory */
    int stream;           /* slot holding a cuda stream; -1: the default stream */
} GpyLaunch;

/* Launches the kernel (a @cuda.jit dispatcher) in slot kernel with the
** nargs arguments in slots first .. first+nargs-1, as
** kernel[grid, block, stream, shared_bytes](*args) would from a script:
** the same specializations, compile cache and launch plans. */
GPY_API GpyStatus gpy_launch(GpyVM *vm, int kernel, const GpyLaunch *launch, int first, int nargs);

/* ---------------------------------------------------- interrupts, budgets */

/* Asks the VM to stop with KeyboardInterrupt at its next safe point: host
** code between instructions, a CPU-device kernel between blocks, a wait on
** a GPU. Async-signal-safe; any thread. */
GPY_API void gpy_interrupt(GpyVM *vm);

#ifdef __cplusplus
}
#endif

#endif
