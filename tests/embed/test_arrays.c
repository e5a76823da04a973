/*
** test_arrays.c — arrays without copies: an application's host buffer
** wrapped as a numpy array (gpy_wrap_array) is read and written in place by
** scripts and by C, with strides (every other column; a transposed,
** Fortran-order view), read-only (numpy's error), with a release callback
** called exactly once (when the array and its views are collected, or at
** gpy_free), refused with numpy's messages when malformed; and a script's
** array described back to C (gpy_get_array).
*/
#include "check.h"

static int released;
static void *released_data;
static void on_release(void *data, void *user) {
    released++;
    released_data = data;
    CHECK(user == &released);
}

/* Allocates enough garbage in the VM for several collections. */
static void churn(GpyVM *vm) {
    CHECK_OK(vm, gpy_run_string(vm, NULL, "for _ in range(100):\n    junk = [0] * 100000\njunk = None\n",
                                (size_t)-1, "<churn>"));
}

static double eval_float(GpyVM *vm, const char *expr) {
    double v = -1;
    char text[256];
    snprintf(text, sizeof text, "float(%s)", expr); /* numpy scalars become floats */
    CHECK_OK(vm, gpy_eval(vm, NULL, text, 0));
    CHECK_OK(vm, gpy_get_float(vm, 0, &v));
    return v;
}

static bool eval_true(GpyVM *vm, const char *expr) {
    bool v = false;
    CHECK_OK(vm, gpy_eval(vm, NULL, expr, 0));
    CHECK_OK(vm, gpy_get_bool(vm, 0, &v));
    return v;
}

int main(void) {
    GpyVM *vm = gpy_new(NULL);
    CHECK(vm != NULL);
    CHECK_OK(vm, gpy_ensure_slots(vm, 4));
    CHECK_OK(vm, gpy_run_string(vm, NULL, "import numpy as np\n", (size_t)-1, NULL));

    /* ---- a C double[3][4], C-contiguous: both sides see each other's writes */
    double m[3][4];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) m[i][j] = 10 * i + j;
    int64_t shape[2] = {3, 4};
    GpyArray a = {.data = m, .dtype = GPY_FLOAT64, .ndim = 2, .shape = shape};
    CHECK_OK(vm, gpy_wrap_array(vm, 1, &a));
    CHECK(gpy_slot_type(vm, 1) == GPY_TYPE_ARRAY);
    CHECK_OK(vm, gpy_set_global(vm, NULL, "m", 1));
    CHECK(eval_true(vm, "m.shape == (3, 4) and m.strides == (32, 8) and m.dtype == np.float64"));
    CHECK(eval_float(vm, "m.sum()") == 10 * 4 * 3 + 6 * 3); /* rows: 0+1+2+3, 10+.., 20+.. */
    CHECK_OK(vm, gpy_run_string(vm, NULL, "m[1] *= 2\nm[2, 3] = -1.5\n", (size_t)-1, NULL));
    CHECK(m[1][0] == 20 && m[1][3] == 26 && m[2][3] == -1.5 && m[0][3] == 3 && m[2][2] == 22);
    m[0][0] = 1000;
    CHECK(eval_float(vm, "m[0, 0]") == 1000);
    CHECK(eval_float(vm, "m.max()") == 1000);

    /* gpy_get_array of the wrap: the same memory */
    GpyArray got;
    CHECK_OK(vm, gpy_get_array(vm, 1, &got));
    CHECK(got.data == (void *)m && got.dtype == GPY_FLOAT64 && got.ndim == 2 && !got.readonly && !got.device);
    CHECK(got.shape[0] == 3 && got.shape[1] == 4 && got.strides[0] == 32 && got.strides[1] == 8);

    /* ---- strided: every other column (shape (3, 2), strides (32, 16)) */
    int64_t cshape[2] = {3, 2}, cstrides[2] = {4 * sizeof(double), 2 * sizeof(double)};
    GpyArray cols = {.data = m, .dtype = GPY_FLOAT64, .ndim = 2, .shape = cshape, .strides = cstrides};
    CHECK_OK(vm, gpy_wrap_array(vm, 1, &cols));
    CHECK_OK(vm, gpy_set_global(vm, NULL, "cols", 1));
    CHECK(eval_true(vm, "cols.tolist() == [[1000.0, 2.0], [20.0, 24.0], [20.0, 22.0]]"));
    CHECK(eval_true(vm, "not cols.flags.c_contiguous and not cols.flags.f_contiguous"));
    CHECK_OK(vm, gpy_run_string(vm, NULL, "cols[:] = np.arange(6.).reshape(3, 2)\n", (size_t)-1, NULL));
    CHECK(m[0][0] == 0 && m[0][2] == 1 && m[1][0] == 2 && m[1][2] == 3 && m[2][0] == 4 && m[2][2] == 5);
    CHECK(m[0][1] == 1 && m[0][3] == 3 && m[1][1] == 22 && m[2][3] == -1.5); /* odd columns untouched */

    /* ---- transposed: the (4, 3) Fortran-order view of the same buffer */
    int64_t tshape[2] = {4, 3}, tstrides[2] = {sizeof(double), 4 * sizeof(double)};
    GpyArray tr = {.data = m, .dtype = GPY_FLOAT64, .ndim = 2, .shape = tshape, .strides = tstrides};
    CHECK_OK(vm, gpy_wrap_array(vm, 1, &tr));
    CHECK_OK(vm, gpy_set_global(vm, NULL, "t", 1));
    CHECK(eval_true(vm, "t.flags.f_contiguous and not t.flags.c_contiguous"));
    CHECK(eval_true(vm, "(t == m.T).all() and t.shape == (4, 3)"));
    CHECK_OK(vm, gpy_run_string(vm, NULL, "t[3, 0] = 99.0\nt[:, 2] += 0.5\n", (size_t)-1, NULL));
    CHECK(m[0][3] == 99 && m[2][0] == 4.5 && m[2][3] == -1.0);

    /* ---- read-only: numpy's refusal, also through views and the flag */
    static const float ro_data[4] = {1, 2, 3, 4};
    int64_t n4 = 4;
    GpyArray ro = {.data = (void *)ro_data, .dtype = GPY_FLOAT32, .ndim = 1, .shape = &n4, .readonly = true};
    CHECK_OK(vm, gpy_wrap_array(vm, 1, &ro));
    CHECK_OK(vm, gpy_set_global(vm, NULL, "ro", 1));
    CHECK(eval_float(vm, "ro.sum()") == 10);
    CHECK(eval_true(vm, "not ro.flags.writeable and not ro[1:].flags.writeable"));
    CHECK(gpy_run_string(vm, NULL, "ro[0] = 5\n", (size_t)-1, NULL) == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_type(vm), "ValueError");
    CHECK_STR(gpy_error_message(vm), "assignment destination is read-only");
    CHECK(gpy_run_string(vm, NULL, "ro[1:] += 1\n", (size_t)-1, NULL) == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_message(vm), "output array is read-only"); /* numpy's, for a ufunc's out */
    CHECK(gpy_run_string(vm, NULL, "ro.flags.writeable = True\n", (size_t)-1, NULL) == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_message(vm), "cannot set WRITEABLE flag to True of this array");
    CHECK(ro_data[0] == 1 && ro_data[1] == 2);
    CHECK_OK(vm, gpy_get_array(vm, 1, &got));
    CHECK(got.readonly && got.data == (void *)ro_data && got.dtype == GPY_FLOAT32);

    /* ---- a release callback: once, after the array and a view are collected */
    int64_t n = 1000;
    double *heap = malloc((size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++) heap[i] = (double)i;
    GpyArray owned = {.data = heap, .dtype = GPY_FLOAT64, .ndim = 1, .shape = &n, .release = on_release,
                      .release_user = &released};
    CHECK_OK(vm, gpy_wrap_array(vm, 1, &owned));
    CHECK_OK(vm, gpy_set_global(vm, NULL, "owned", 1));
    CHECK_OK(vm, gpy_set_none(vm, 1));
    CHECK_OK(vm, gpy_run_string(vm, NULL, "view = owned[10:20]\nowned = None\n", (size_t)-1, NULL));
    churn(vm);
    CHECK(released == 0); /* the view still uses the memory */
    CHECK(eval_float(vm, "view.sum()") == 145);
    CHECK_OK(vm, gpy_set_none(vm, 0));
    CHECK_OK(vm, gpy_run_string(vm, NULL, "view = None\n", (size_t)-1, NULL));
    for (int i = 0; i < 20 && released == 0; i++) churn(vm);
    CHECK(released == 1 && released_data == heap);
    churn(vm);
    CHECK(released == 1);
    free(heap);

    /* ---- malformed descriptions: numpy's messages, and release is not called */
    int64_t bad[2] = {3, -1};
    GpyArray neg = {.data = m, .dtype = GPY_FLOAT64, .ndim = 2, .shape = bad, .release = on_release,
                    .release_user = &released};
    CHECK(gpy_wrap_array(vm, 1, &neg) == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_type(vm), "ValueError");
    CHECK_STR(gpy_error_message(vm), "negative dimensions are not allowed");
    int64_t huge[2] = {(int64_t)1 << 40, (int64_t)1 << 40};
    GpyArray big = {.data = m, .dtype = GPY_FLOAT64, .ndim = 2, .shape = huge};
    CHECK(gpy_wrap_array(vm, 1, &big) == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_message(vm),
              "array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum possible size.");
    GpyArray baddt = {.data = m, .dtype = (GpyDtype)99, .ndim = 2, .shape = shape};
    CHECK(gpy_wrap_array(vm, 1, &baddt) == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_message(vm), "gpy_wrap_array: unknown dtype 99");
    GpyArray nodata = {.data = NULL, .dtype = GPY_FLOAT64, .ndim = 2, .shape = shape};
    CHECK(gpy_wrap_array(vm, 1, &nodata) == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_message(vm), "gpy_wrap_array: data is NULL for an array of 12 elements");
    GpyArray deep = {.data = m, .dtype = GPY_FLOAT64, .ndim = 33, .shape = shape};
    CHECK(gpy_wrap_array(vm, 1, &deep) == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_message(vm), "gpy_wrap_array: ndim must be 0 to 32, not 33");
    int64_t far[1] = {INT64_MAX / 2};
    int64_t three = 3;
    GpyArray wild = {.data = m, .dtype = GPY_FLOAT64, .ndim = 1, .shape = &three, .strides = far};
    CHECK(gpy_wrap_array(vm, 1, &wild) == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_message(vm), "gpy_wrap_array: the strides reach outside the address space");
    CHECK(gpy_wrap_array(vm, 9, &a) == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_type(vm), "IndexError");
    churn(vm);
    CHECK(released == 1);

    /* ---- a 0-d wrap and an empty one */
    double scalar = 2.5;
    GpyArray zero_d = {.data = &scalar, .dtype = GPY_FLOAT64, .ndim = 0};
    CHECK_OK(vm, gpy_wrap_array(vm, 1, &zero_d));
    CHECK_OK(vm, gpy_set_global(vm, NULL, "s", 1));
    CHECK(eval_true(vm, "s.shape == () and s[()] == 2.5"));
    int64_t none = 0;
    GpyArray empty = {.data = NULL, .dtype = GPY_INT32, .ndim = 1, .shape = &none};
    CHECK_OK(vm, gpy_wrap_array(vm, 1, &empty));
    CHECK_OK(vm, gpy_set_global(vm, NULL, "e", 1));
    CHECK(eval_true(vm, "e.shape == (0,) and e.dtype == np.int32 and e.sum() == 0"));

    /* ---- gpy_get_array of a script's array; TypeError for anything else */
    CHECK_OK(vm, gpy_eval(vm, NULL, "np.arange(12.).reshape(3, 4)", 2));
    CHECK_OK(vm, gpy_get_array(vm, 2, &got));
    CHECK(got.dtype == GPY_FLOAT64 && got.ndim == 2 && !got.readonly && !got.device && got.data != NULL);
    CHECK(got.shape[0] == 3 && got.shape[1] == 4 && got.strides[0] == 32 && got.strides[1] == 8);
    for (int i = 0; i < 12; i++) CHECK(((const double *)got.data)[i] == i);
    CHECK_OK(vm, gpy_eval(vm, NULL, "np.arange(12, dtype=np.int16).reshape(3, 4)[::2, ::-1]", 2));
    CHECK_OK(vm, gpy_get_array(vm, 2, &got));
    CHECK(got.dtype == GPY_INT16 && got.shape[0] == 2 && got.shape[1] == 4 && got.strides[0] == 16 &&
          got.strides[1] == -2 && *(const int16_t *)got.data == 3);
    CHECK_OK(vm, gpy_eval(vm, NULL, "[1, 2]", 2));
    CHECK(gpy_get_array(vm, 2, &got) == GPY_RUNTIME_ERROR);
    CHECK_STR(gpy_error_type(vm), "TypeError");
    CHECK_STR(gpy_error_message(vm), "gpy_get_array: slot 2 holds a 'list', not an array");

    /* ---- a release callback still pending at gpy_free runs there, once */
    double *kept = calloc(8, sizeof(double));
    int64_t n8 = 8;
    GpyArray alive = {.data = kept, .dtype = GPY_FLOAT64, .ndim = 1, .shape = &n8, .release = on_release,
                      .release_user = &released};
    CHECK_OK(vm, gpy_wrap_array(vm, 1, &alive));
    CHECK_OK(vm, gpy_set_global(vm, NULL, "alive", 1));
    churn(vm);
    CHECK(released == 1);
    gpy_free(vm);
    CHECK(released == 2 && released_data == kept);
    free(kept);
    return check_done("test_arrays");
}
