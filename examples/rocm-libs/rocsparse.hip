// Debian's rocSPARSE on the simulated GPU, each routine checked against a host
// computation on a small random sparse matrix (double precision, zero-based CSR):
// csrmv without and with analysis (y = alpha*A*x + beta*y), coomv, csr2coo, coo2csr,
// csrmm (C = alpha*A*B + beta*C, dense column-major B and C) and csrsv (a
// lower-triangular solve). Every routine prints one `name ok` /
// `name FAIL` line; the program ends with PASS or FAIL.
//
// argv[1] (optional): rows of the square matrix (default 500).
#include <rocsparse/rocsparse.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "../rocm/check.h"
#include "sparse.h"

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
    const int m = argc > 1 ? atoi(argv[1]) : 500;
    const Csr a = random_csr(m, 1);
    const Csr l = lower_triangle(a);
    const auto x = random_vector(m, 2);
    const auto y0 = random_vector(m, 3);
    const double alpha = 1.5, beta = -0.5;

    rocsparse_handle handle;
    ROCSPARSE_CHECK(rocsparse_create_handle(&handle));
    rocsparse_mat_descr descr;
    ROCSPARSE_CHECK(rocsparse_create_mat_descr(&descr));
    const int nnz = (int)a.val.size();

    int *ptr = upload(a.ptr), *col = upload(a.col);
    double *val = upload(a.val), *dx = upload(x), *dy = upload(y0);
    const auto want_mv = host_csrmv(a, alpha, x, beta, y0);

    ROCSPARSE_CHECK(rocsparse_dcsrmv(handle, rocsparse_operation_none, m, m, nnz, &alpha, descr, val, ptr, col,
                                     nullptr, dx, &beta, dy));
    expect_close("csrmv", download(dy, m), want_mv);

    rocsparse_mat_info info;
    ROCSPARSE_CHECK(rocsparse_create_mat_info(&info));
    ROCSPARSE_CHECK(rocsparse_dcsrmv_analysis(handle, rocsparse_operation_none, m, m, nnz, descr, val, ptr, col, info));
    HIP_CHECK(hipMemcpy(dy, y0.data(), m * sizeof(double), hipMemcpyHostToDevice));
    ROCSPARSE_CHECK(rocsparse_dcsrmv(handle, rocsparse_operation_none, m, m, nnz, &alpha, descr, val, ptr, col, info,
                                     dx, &beta, dy));
    expect_close("csrmv.analysis", download(dy, m), want_mv);

    // csr2coo, then coomv with the rows it produced, then coo2csr back.
    int *row = dev<int>(nnz);
    ROCSPARSE_CHECK(rocsparse_csr2coo(handle, ptr, nnz, m, row, rocsparse_index_base_zero));
    expect_equal("csr2coo", download(row, nnz), coo_rows(a));
    HIP_CHECK(hipMemcpy(dy, y0.data(), m * sizeof(double), hipMemcpyHostToDevice));
    ROCSPARSE_CHECK(rocsparse_dcoomv(handle, rocsparse_operation_none, m, m, nnz, &alpha, descr, val, row, col, dx,
                                     &beta, dy));
    expect_close("coomv", download(dy, m), want_mv);
    int *ptr2 = dev<int>(m + 1);
    ROCSPARSE_CHECK(rocsparse_coo2csr(handle, row, nnz, m, ptr2, rocsparse_index_base_zero));
    expect_equal("coo2csr", download(ptr2, m + 1), a.ptr);

    {  // csrmm: C = alpha*A*B + beta*C, B and C dense column-major with n columns.
        const int n = 4;
        const auto b = random_vector(m * n, 4);
        const auto c0 = random_vector(m * n, 5);
        std::vector<double> want;
        for (int j = 0; j < n; j++) {
            const std::vector<double> bj(b.begin() + j * m, b.begin() + (j + 1) * m);
            const std::vector<double> cj(c0.begin() + j * m, c0.begin() + (j + 1) * m);
            const auto column = host_csrmv(a, alpha, bj, beta, cj);
            want.insert(want.end(), column.begin(), column.end());
        }
        double *db = upload(b), *dc = upload(c0);
        ROCSPARSE_CHECK(rocsparse_dcsrmm(handle, rocsparse_operation_none, rocsparse_operation_none, m, n, m, nnz,
                                         &alpha, descr, val, ptr, col, db, m, &beta, dc, m));
        expect_close("csrmm", download(dc, m * n), want);
        HIP_CHECK(hipFree(db)); HIP_CHECK(hipFree(dc));
    }

    {  // csrsv: solve L y = alpha x for the lower triangle (its diagonal is dominant).
        const int lnnz = (int)l.val.size();
        int *lptr = upload(l.ptr), *lcol = upload(l.col);
        double *lval = upload(l.val), *ly = dev<double>(m);
        rocsparse_mat_descr ldescr;
        ROCSPARSE_CHECK(rocsparse_create_mat_descr(&ldescr));
        ROCSPARSE_CHECK(rocsparse_set_mat_fill_mode(ldescr, rocsparse_fill_mode_lower));
        rocsparse_mat_info linfo;
        ROCSPARSE_CHECK(rocsparse_create_mat_info(&linfo));
        size_t bytes = 0;
        ROCSPARSE_CHECK(rocsparse_dcsrsv_buffer_size(handle, rocsparse_operation_none, m, lnnz, ldescr, lval, lptr,
                                                     lcol, linfo, &bytes));
        void *buffer = dev<char>(bytes);
        ROCSPARSE_CHECK(rocsparse_dcsrsv_analysis(handle, rocsparse_operation_none, m, lnnz, ldescr, lval, lptr, lcol,
                                                  linfo, rocsparse_analysis_policy_reuse,
                                                  rocsparse_solve_policy_auto, buffer));
        ROCSPARSE_CHECK(rocsparse_dcsrsv_solve(handle, rocsparse_operation_none, m, lnnz, &alpha, ldescr, lval, lptr,
                                               lcol, linfo, dx, ly, rocsparse_solve_policy_auto, buffer));
        expect_close("csrsv", download(ly, m), host_lower_solve(l, alpha, x));
        HIP_CHECK(hipFree(lptr)); HIP_CHECK(hipFree(lcol)); HIP_CHECK(hipFree(lval)); HIP_CHECK(hipFree(ly));
        HIP_CHECK(hipFree(buffer));
        ROCSPARSE_CHECK(rocsparse_destroy_mat_info(linfo));
        ROCSPARSE_CHECK(rocsparse_destroy_mat_descr(ldescr));
    }

    HIP_CHECK(hipFree(ptr)); HIP_CHECK(hipFree(col)); HIP_CHECK(hipFree(val)); HIP_CHECK(hipFree(dx));
    HIP_CHECK(hipFree(dy)); HIP_CHECK(hipFree(row)); HIP_CHECK(hipFree(ptr2));
    ROCSPARSE_CHECK(rocsparse_destroy_mat_info(info));
    ROCSPARSE_CHECK(rocsparse_destroy_mat_descr(descr));
    ROCSPARSE_CHECK(rocsparse_destroy_handle(handle));
    return verdict(failures);
}
