/*
** gpy.h — the public embedding API of libgpy.
**
** The embedding API (creating a VM, evaluating code, registering C
** functions, sharing C buffers as arrays) arrives in a later issue; for now
** this header only carries the version.
*/
#ifndef GPY_H
#define GPY_H

#define GPY_VERSION_MAJOR 0
#define GPY_VERSION_MINOR 1
#define GPY_VERSION_PATCH 0
#ifndef GPY_VERSION
#define GPY_VERSION "0.1.0"
#endif

#endif
