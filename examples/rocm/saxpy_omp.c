// OpenMP offload: y = a * x + y on the GPU with map clauses; the target region also
// reports whether it ran on the host (omp_is_initial_device), which must be 0.
#include <omp.h>
#include <stdio.h>

#define N 4096

int main(void) {
    static float x[N], y[N];
    const float a = 2.5f;
    for (int i = 0; i < N; i++) {
        x[i] = (float)(i % 100);
        y[i] = (float)(i % 7) - 3.0f;
    }
    int devices = omp_get_num_devices();
    int initial = -1;
#pragma omp target teams distribute parallel for map(to : x[0 : N]) map(tofrom : y[0 : N]) \
    map(tofrom : initial)
    for (int i = 0; i < N; i++) {
        if (i == 0) initial = omp_is_initial_device();
        y[i] = a * x[i] + y[i];
    }
    int failures = 0;
    for (int i = 0; i < N; i++) {
        float want = a * (float)(i % 100) + ((float)(i % 7) - 3.0f);
        if (y[i] != want) {
            if (failures < 8) fprintf(stderr, "y[%d]: got %g, want %g\n", i, y[i], want);
            failures++;
        }
    }
    printf("saxpy_omp: %d devices, initial device in the target region: %d\n", devices, initial);
    if (devices < 1 || initial != 0) {
        printf("FAIL (the target region did not run on a GPU)\n");
        return 1;
    }
    if (failures) {
        printf("FAIL (%d mismatches)\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
