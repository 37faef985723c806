// Sparse matrix-vector products through Debian's rocSPARSE: ten steps of
// x <- A x / 32 with csrmv after csrmv_analysis (rocSPARSE's adaptive kernels), on a
// random M x M CSR matrix of about nine entries a row in double precision, checked
// against the same steps on the host (within 1e-12 of the largest magnitude: the two
// sum each row in different orders).
//
// argv[1]: M (default 200000); argv[2]: steps (default 10).
#include <rocsparse/rocsparse.h>

#include "apps.h"
#include "../../rocm-libs/sparse.h"

#define ROCSPARSE_CHECK(expr)                                                        \
    do {                                                                             \
        rocsparse_status check_status_ = (expr);                                     \
        if (check_status_ != rocsparse_status_success) {                             \
            fprintf(stderr, "%s:%d: %s: status %d\n", __FILE__, __LINE__, #expr,     \
                    (int)check_status_);                                             \
            printf("FAIL\n");                                                        \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

int main(int argc, char **argv) {
    const int m = argc > 1 ? atoi(argv[1]) : 200000;
    const int steps = argc > 2 ? atoi(argv[2]) : 10;
    if (m <= 0 || steps <= 0) {
        fprintf(stderr, "usage: %s [M [STEPS]]\n", argv[0]);
        return 2;
    }
    const Csr a = random_csr(m, 11);
    const int nnz = (int)a.val.size();
    const double alpha = 1.0 / 32, beta = 0;
    std::vector<double> want = random_vector(m, 12);

    rocsparse_handle handle;
    ROCSPARSE_CHECK(rocsparse_create_handle(&handle));
    rocsparse_mat_descr descr;
    ROCSPARSE_CHECK(rocsparse_create_mat_descr(&descr));
    rocsparse_mat_info info;
    ROCSPARSE_CHECK(rocsparse_create_mat_info(&info));
    int *ptr = upload(a.ptr), *col = upload(a.col);
    double *val = upload(a.val), *x = upload(want), *y = dev<double>(m);
    ROCSPARSE_CHECK(rocsparse_dcsrmv_analysis(handle, rocsparse_operation_none, m, m, nnz, descr, val, ptr, col, info));
    for (int s = 0; s < steps; s++) {
        ROCSPARSE_CHECK(rocsparse_dcsrmv(handle, rocsparse_operation_none, m, m, nnz, &alpha, descr, val, ptr, col,
                                         info, x, &beta, y));
        std::swap(x, y);
        want = host_csrmv(a, alpha, want, beta, want);
    }
    const std::vector<double> got = download(x, m);
    expect_close("csrmv", got, want);
    printf("spmv: %d x %d, %d entries, %d steps\n", m, m, nnz, steps);
    print_digest(digest_bytes(DIGEST_START, got.data(), got.size() * sizeof(double)));
    ROCSPARSE_CHECK(rocsparse_destroy_mat_info(info));
    ROCSPARSE_CHECK(rocsparse_destroy_mat_descr(descr));
    ROCSPARSE_CHECK(rocsparse_destroy_handle(handle));
    for (void *p : {(void *)ptr, (void *)col, (void *)val, (void *)x, (void *)y}) HIP_CHECK(hipFree(p));
    return verdict(failures);
}
