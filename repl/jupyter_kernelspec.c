/*
** jupyter_kernelspec.c — `gpy --install-kernel [--user | --prefix P]`:
** writes DIR/share/jupyter/kernels/gpy/kernel.json, the file Jupyter reads
** to start this kernel (default DIR /usr/local; --user: the per-user data
** directory, $JUPYTER_DATA_DIR or ~/.local/share/jupyter).
*/
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jupyter_json.h"
#include "jupyter_kernel.h"

/* mkdir -p */
static int make_dirs(char *path) {
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        int r = mkdir(path, 0755);
        *p = '/';
        if (r != 0 && errno != EEXIST) return -1;
    }
    return mkdir(path, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

int jupyter_install_kernel(int argc, char **argv, const char *gpy_path) {
    char dir[PATH_MAX];
    const char *prefix = "/usr/local";
    bool user = false;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--user") == 0) user = true;
        else if (strcmp(argv[i], "--prefix") == 0 && i + 1 < argc) prefix = argv[++i];
        else {
            fprintf(stderr, "gpy: --install-kernel: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    if (user) {
        const char *data = getenv("JUPYTER_DATA_DIR"), *home = getenv("HOME");
        if (data && *data) snprintf(dir, sizeof dir, "%s/kernels/gpy", data);
        else snprintf(dir, sizeof dir, "%s/.local/share/jupyter/kernels/gpy", home ? home : ".");
    } else {
        snprintf(dir, sizeof dir, "%s/share/jupyter/kernels/gpy", prefix);
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) exe[n] = '\0';
    else snprintf(exe, sizeof exe, "%s", gpy_path);
    if (make_dirs(dir) != 0) {
        fprintf(stderr, "gpy: cannot create %s: %s\n", dir, strerror(errno));
        return 1;
    }
    JBuf b = {0};
    jb_puts(&b, "{\n  \"argv\": [");
    jb_str(&b, exe, strlen(exe));
    jb_puts(&b, ", \"--jupyter-kernel\", \"-f\", \"{connection_file}\"],\n"
                "  \"display_name\": \"gpy\",\n"
                "  \"language\": \"python\",\n"
                "  \"interrupt_mode\": \"signal\",\n"
                "  \"metadata\": {\"debugger\": false}\n}\n");
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/kernel.json", dir);
    FILE *f = fopen(path, "w");
    if (!f || fwrite(b.s, 1, b.len, f) != b.len || fclose(f) != 0) {
        fprintf(stderr, "gpy: cannot write %s: %s\n", path, strerror(errno));
        jb_free(&b);
        return 1;
    }
    jb_free(&b);
    printf("Installed kernelspec gpy in %s\n", dir);
    return 0;
}
