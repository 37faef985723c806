// Debian's hipSPARSE (the cuSPARSE-style wrapper over rocSPARSE) on the simulated GPU:
// hipsparseDcsrmv, hipsparseXcsr2coo and hipsparseXcoo2csr on a small random matrix,
// checked against host computations (sparse.h). The program ends with PASS or FAIL.
//
// argv[1] (optional): rows of the square matrix (default 500).
#include <hipsparse/hipsparse.h>

#include "../rocm/check.h"
#include "sparse.h"

#define HIPSPARSE_CHECK(expr)                                                        \
    do {                                                                             \
        hipsparseStatus_t check_status_ = (expr);                                    \
        if (check_status_ != HIPSPARSE_STATUS_SUCCESS) {                             \
            fprintf(stderr, "%s:%d: %s: status %d\n", __FILE__, __LINE__, #expr,     \
                    (int)check_status_);                                             \
            printf("FAIL\n");                                                        \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

int main(int argc, char **argv) {
    const int m = argc > 1 ? atoi(argv[1]) : 500;
    const Csr a = random_csr(m, 7);
    const auto x = random_vector(m, 8);
    const auto y0 = random_vector(m, 9);
    const double alpha = -2.0, beta = 0.75;
    const int nnz = (int)a.val.size();

    hipsparseHandle_t handle;
    HIPSPARSE_CHECK(hipsparseCreate(&handle));
    hipsparseMatDescr_t descr;
    HIPSPARSE_CHECK(hipsparseCreateMatDescr(&descr));

    int *ptr = upload(a.ptr), *col = upload(a.col), *row = dev<int>(nnz), *ptr2 = dev<int>(m + 1);
    double *val = upload(a.val), *dx = upload(x), *dy = upload(y0);
    HIPSPARSE_CHECK(hipsparseDcsrmv(handle, HIPSPARSE_OPERATION_NON_TRANSPOSE, m, m, nnz, &alpha, descr, val, ptr,
                                    col, dx, &beta, dy));
    expect_close("csrmv", download(dy, m), host_csrmv(a, alpha, x, beta, y0));
    HIPSPARSE_CHECK(hipsparseXcsr2coo(handle, ptr, nnz, m, row, HIPSPARSE_INDEX_BASE_ZERO));
    expect_equal("csr2coo", download(row, nnz), coo_rows(a));
    HIPSPARSE_CHECK(hipsparseXcoo2csr(handle, row, nnz, m, ptr2, HIPSPARSE_INDEX_BASE_ZERO));
    expect_equal("coo2csr", download(ptr2, m + 1), a.ptr);

    HIP_CHECK(hipFree(ptr)); HIP_CHECK(hipFree(col)); HIP_CHECK(hipFree(row)); HIP_CHECK(hipFree(ptr2));
    HIP_CHECK(hipFree(val)); HIP_CHECK(hipFree(dx)); HIP_CHECK(hipFree(dy));
    HIPSPARSE_CHECK(hipsparseDestroyMatDescr(descr));
    HIPSPARSE_CHECK(hipsparseDestroy(handle));
    return verdict(failures);
}
