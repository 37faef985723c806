// Holds device memory while another program looks at the GPU: allocates MIB mebibytes
// (first argument, default 1024) with hipMalloc, touches the first mebibyte, runs the command given as
// the remaining arguments through system() (e.g. `rocm-smi --showmeminfo vram`, which
// must see the allocation), then frees the memory and ends with PASS if the command
// exited 0.
#include "check.h"
#include <string.h>
#include <string>

int main(int argc, char **argv) {
    size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024;
    size_t bytes = mib << 20;
    void *buffer;
    HIP_CHECK(hipMalloc(&buffer, bytes));
    // Allocated is what counts; touching all of it would take the simulated GPU long.
    HIP_CHECK(hipMemset(buffer, 0x5a, bytes < (1 << 20) ? bytes : (1 << 20)));
    HIP_CHECK(hipDeviceSynchronize());
    std::string command;
    for (int i = 2; i < argc; i++) {
        command += i > 2 ? " " : "";
        command += argv[i];
    }
    int failures = 0;
    if (!command.empty()) {
        fflush(stdout);
        int status = system(command.c_str());
        if (status != 0) report_mismatch(&failures, "command status", 0, status, 0);
    }
    HIP_CHECK(hipFree(buffer));
    return verdict(failures);
}
