/*
** test_handles.c — a handle keeps a value alive across calls and forced
** collections with its contents intact; a released handle lets the value be
** collected.
**
** gpy has no gc module and no __del__, so the test sees collection through
** file objects: a file object closes its descriptor when it is collected
** (stdlib/file.c's finalizer), and /proc/self/fd shows whether it is open.
** Collections are forced by allocating garbage in a script (gpy collects
** at safepoints once about 8 MiB have been allocated, vm/gc.c).
*/
#define _GNU_SOURCE /* mkdtemp, readlink, dirent */
#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"

/* Is a descriptor of this process open on path? */
static bool fd_open_on(const char *path) {
    DIR *d = opendir("/proc/self/fd");
    if (!d) return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        char link[300], target[300];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0) continue;
        target[n] = '\0';
        found = strcmp(target, path) == 0;
    }
    closedir(d);
    return found;
}

/* Opens a file object on probe that nothing keeps, then allocates about
** 40 MB of garbage: true when the probe was closed, i.e. collections ran
** after it became garbage. */
static bool force_collections(GpyVM *vm, const char *probe) {
    char script[512];
    snprintf(script, sizeof script,
             "open('%s', 'w')\n"
             "for i in range(300000):\n"
             "    t = [i, str(i), (i,)]\n",
             probe);
    CHECK_OK(vm, gpy_run_string(vm, "garbage", script, (size_t)-1, NULL));
    return !fd_open_on(probe);
}

static void list_survives(GpyVM *vm, const char *probe) {
    /* [0, 'item0', 1, 'item1', ...] built in C, then held only by a handle */
    enum { N = 1000 };
    CHECK_OK(vm, gpy_new_list(vm, 0));
    for (int i = 0; i < N; i++) {
        char text[32];
        snprintf(text, sizeof text, "item%d", i);
        CHECK_OK(vm, gpy_set_int(vm, 1, (int64_t)i * i));
        CHECK_OK(vm, gpy_list_append(vm, 0, 1));
        CHECK_OK(vm, gpy_set_str(vm, 1, text, (size_t)-1));
        CHECK_OK(vm, gpy_list_append(vm, 0, 1));
    }
    GpyHandle *h = gpy_handle(vm, 0);
    CHECK(h != NULL);
    GpyHandle *twice = gpy_handle(vm, 0); /* a second handle on the same list */
    CHECK(twice != NULL);
    for (int s = 0; s < gpy_slot_count(vm); s++) CHECK_OK(vm, gpy_set_none(vm, s));

    CHECK(force_collections(vm, probe));
    gpy_release(vm, twice);
    CHECK(force_collections(vm, probe));

    CHECK_OK(vm, gpy_handle_get(vm, h, 2));
    CHECK(gpy_slot_type(vm, 2) == GPY_TYPE_LIST);
    int64_t n = 0;
    CHECK_OK(vm, gpy_len(vm, 2, &n));
    CHECK(n == 2 * N);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        char text[32];
        snprintf(text, sizeof text, "item%d", i);
        int64_t v = -1;
        CHECK_OK(vm, gpy_get_index(vm, 2, 2 * i, 3));
        CHECK_OK(vm, gpy_get_int(vm, 3, &v));
        bad += v != (int64_t)i * i;
        CHECK_OK(vm, gpy_get_index(vm, 2, 2 * i + 1, 3));
        const char *s = gpy_get_str(vm, 3, NULL);
        bad += !s || strcmp(s, text) != 0;
    }
    CHECK(bad == 0);
    /* the script sees the same list */
    CHECK_OK(vm, gpy_set_global(vm, NULL, "kept", 2));
    CHECK_OK(vm, gpy_eval(vm, NULL, "kept[-1] == 'item999' and sum(kept[0::2]) == 332833500", 3));
    bool ok = false;
    CHECK_OK(vm, gpy_get_bool(vm, 3, &ok));
    CHECK(ok); /* sum(i*i for i in range(1000)) == 332833500 (hand-checked: n(n-1)(2n-1)/6) */
    CHECK_OK(vm, gpy_run_string(vm, NULL, "del kept\n", (size_t)-1, NULL));
    gpy_release(vm, h);
}

static void release_lets_go(GpyVM *vm, const char *probe, const char *held) {
    /* three file objects, each kept only by a handle */
    char script[512];
    snprintf(script, sizeof script,
             "a = open('%s.a', 'w')\n"
             "b = open('%s', 'w')\n"
             "c = open('%s.c', 'w')\n",
             held, held, held);
    CHECK_OK(vm, gpy_run_string(vm, "files", script, (size_t)-1, NULL));
    GpyHandle *hs[3];
    const char *names[3] = {"a", "b", "c"};
    for (int k = 0; k < 3; k++) {
        CHECK_OK(vm, gpy_get_global(vm, "files", names[k], 0));
        hs[k] = gpy_handle(vm, 0);
        CHECK(hs[k] != NULL);
    }
    CHECK_OK(vm, gpy_set_none(vm, 0));
    CHECK_OK(vm, gpy_run_string(vm, "files", "del a, b, c\n", (size_t)-1, NULL));
    char path_a[300], path_c[300];
    snprintf(path_a, sizeof path_a, "%s.a", held);
    snprintf(path_c, sizeof path_c, "%s.c", held);

    CHECK(force_collections(vm, probe));
    CHECK(fd_open_on(path_a) && fd_open_on(held) && fd_open_on(path_c));

    /* release the middle one of the list first, then the newest */
    gpy_release(vm, hs[1]);
    CHECK(force_collections(vm, probe));
    CHECK(!fd_open_on(held));
    CHECK(fd_open_on(path_a) && fd_open_on(path_c));
    gpy_release(vm, hs[2]);
    CHECK(force_collections(vm, probe));
    CHECK(!fd_open_on(path_c));
    CHECK(fd_open_on(path_a));
    /* the one left still works */
    CHECK_OK(vm, gpy_handle_get(vm, hs[0], 1));
    CHECK_OK(vm, gpy_set_str(vm, 2, "written", (size_t)-1));
    CHECK_OK(vm, gpy_call_method(vm, 1, "write", 1, 3));
    CHECK_OK(vm, gpy_call_method(vm, 1, "close", 0, 3));
    CHECK(!fd_open_on(path_a));
    FILE *f = fopen(path_a, "r");
    char text[16] = "";
    CHECK(f && fgets(text, sizeof text, f));
    if (f) fclose(f);
    CHECK_STR(text, "written");
    gpy_release(vm, hs[0]);
    CHECK_OK(vm, gpy_set_none(vm, 1));
    unlink(path_a);
    unlink(held);
    unlink(path_c);
}

static void edges(GpyVM *vm) {
    gpy_release(vm, NULL); /* no-op */
    CHECK(gpy_handle_get(vm, NULL, 0) == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_type(vm), "ValueError");
    CHECK_STR(gpy_error_message(vm), "gpy_handle_get: the handle is NULL");
    CHECK(gpy_handle(vm, gpy_slot_count(vm)) == NULL);
    CHECK_STR(gpy_error_type(vm), "IndexError");
    /* handles still held at gpy_free are freed with the VM (ASan checks) */
    CHECK_OK(vm, gpy_set_str(vm, 0, "left behind", (size_t)-1));
    CHECK(gpy_handle(vm, 0) != NULL);
    CHECK(gpy_handle(vm, 0) != NULL);
}

int main(void) {
    char dir[] = "/tmp/gpy_test_handles_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char probe[256], held[256];
    snprintf(probe, sizeof probe, "%s/probe", dir);
    snprintf(held, sizeof held, "%s/held", dir);
    GpyVM *vm = gpy_new(NULL);
    CHECK(vm != NULL);
    if (vm) {
        CHECK_OK(vm, gpy_ensure_slots(vm, 8));
        list_survives(vm, probe);
        release_lets_go(vm, probe, held);
        edges(vm);
        gpy_free(vm);
    }
    unlink(probe);
    rmdir(dir);
    return check_done("test_handles");
}
