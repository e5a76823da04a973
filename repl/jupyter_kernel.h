/*
** jupyter_kernel.h — `gpy --jupyter-kernel -f CONNECTION_FILE`: a Jupyter
** kernel (messaging protocol 5.3 over ZeroMQ, HMAC-SHA256 signed) running
** cells in one VM; `gpy --install-kernel [--user | --prefix P]` writes its
** kernelspec. docs/repl.md describes both. Part of the gpy command only:
** libgpy never links ZeroMQ or OpenSSL.
*/
#ifndef GPY_JUPYTER_KERNEL_H
#define GPY_JUPYTER_KERNEL_H

#include "vm.h"

/* Serves the connection file's sockets until shutdown_request; returns the exit status. */
int jupyter_kernel_run(VM *vm, const char *connection_file);

/* Writes kernels/gpy/kernel.json under the chosen data directory; returns the exit status. */
int jupyter_install_kernel(int argc, char **argv, const char *gpy_path);

#endif
