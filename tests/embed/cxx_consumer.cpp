// gpy.h from C++ (extern "C", no C-only constructs): compiled with
// g++ -std=c++17 -Wall -Wextra -Werror against the installed prefix and run.
#include <gpy.h>

#include <cstdio>
#include <string>

int main() {
    GpyConfig config;
    gpy_config_init(&config);
    GpyVM *vm = gpy_new(&config);
    if (!vm) return 1;
    std::string source = "x = 6 * 7\nassert x == 42\n";
    GpyStatus st = gpy_run_string(vm, "cxx", source.data(), source.size(), "cxx.py");
    if (st != GPY_OK) std::fprintf(stderr, "cxx consumer: %s\n%s", gpy_status_name(st), gpy_error_traceback(vm));
    gpy_free(vm);
    if (st != GPY_OK) return 1;
    std::printf("cxx consumer: ok\n");
    return 0;
}
