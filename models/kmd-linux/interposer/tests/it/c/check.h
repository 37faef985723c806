/* Shared by the interposer's test programs: CHECK prints the failed condition and exits 1. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, what)                                                                  \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "FAILED %s:%d: %s (errno %d %s)\n", __FILE__, __LINE__, what,  \
                    errno, strerror(errno));                                               \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

/* From linux/kfd_ioctl.h (which needs libdrm's headers): _IOR('K', 1, 8 bytes). */
#include <stdint.h>
#define AMDKFD_IOC_GET_VERSION 0x80084b01UL
struct kfd_ioctl_get_version_args {
    uint32_t major_version;
    uint32_t minor_version;
};
