/*
** api_handles.c — handles: values the application keeps across calls and
** collections (include/gpy.h, "handles"). Each handle is a node of the
** GpyVM's doubly linked list, which api_mark marks as roots; releasing one
** unlinks it, and the value is collectable again if nothing else holds it.
** gpy_free frees the handles that remain.
*/
#include <stdlib.h>

#include "api.h"

GpyHandle *gpy_handle(GpyVM *g, int slot) {
    if (!api_slot_ok(g, slot)) return NULL;
    GpyHandle *h = malloc(sizeof *h);
    if (!h) {
        api_record(g, g->vm->memory_error);
        return NULL;
    }
    h->value = *api_slot(g, slot);
    h->prev = NULL;
    h->next = g->handles;
    if (g->handles) g->handles->prev = h;
    g->handles = h;
    return h;
}

GpyStatus gpy_handle_get(GpyVM *g, GpyHandle *handle, int slot) {
    if (!api_slot_ok(g, slot)) return GPY_RUNTIME_ERROR;
    if (!handle) return api_fail(g, EXC_ValueError, "gpy_handle_get: the handle is NULL");
    *api_slot(g, slot) = handle->value;
    return GPY_OK;
}

void gpy_release(GpyVM *g, GpyHandle *handle) {
    if (!handle) return;
    if (handle->prev) handle->prev->next = handle->next;
    else g->handles = handle->next;
    if (handle->next) handle->next->prev = handle->prev;
    free(handle);
}
