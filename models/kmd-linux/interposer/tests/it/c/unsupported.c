/* An ioctl the simulated driver does not implement (KFD command 0x7f) fails with an
 * errno, three times; GET_VERSION works; garbage pointers give EFAULT. Prints "done". */
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "check.h"

int main(void) {
    int fd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
    CHECK(fd >= 0, "open /dev/kfd");
    struct kfd_ioctl_get_version_args v = {0};
    CHECK(ioctl(fd, AMDKFD_IOC_GET_VERSION, &v) == 0, "GET_VERSION");
    CHECK(v.major_version == 1, "major version 1");
    unsigned long unknown = 0xc0084b7fUL; /* _IOWR('K', 0x7f, 8 bytes) */
    uint64_t arg = 0;
    for (int i = 0; i < 3; i++) {
        errno = 0;
        CHECK(ioctl(fd, unknown, &arg) == -1 && errno == EINVAL, "unknown ioctl fails with EINVAL");
    }
    errno = 0;
    CHECK(ioctl(fd, AMDKFD_IOC_GET_VERSION, (void *)16) == -1 && errno == EFAULT, "bad pointer is EFAULT");
    printf("done\n");
    return 0;
}
