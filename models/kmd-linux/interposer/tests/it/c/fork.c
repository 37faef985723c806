/* After fork the child's device descriptors fail (EBADF) while the parent's keep
 * working, and the child still sees the faked files. */
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

int main(void) {
    struct kfd_ioctl_get_version_args version = {0};
    int kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
    CHECK(kfd >= 0, "open /dev/kfd");
    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) {
        CHECK(ioctl(kfd, AMDKFD_IOC_GET_VERSION, &version) == -1 && errno == EBADF, "child ioctl fails EBADF");
        FILE *f = fopen("/proc/modules", "r");
        CHECK(f != NULL, "child fopen /proc/modules");
        char line[512];
        int amdgpu = 0;
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "amdgpu ", 7) == 0) amdgpu = 1;
        CHECK(amdgpu, "child sees amdgpu");
        CHECK(close(kfd) == 0, "child close");
        _exit(0);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0, "child passed");
    errno = 0;
    int rc = ioctl(kfd, AMDKFD_IOC_GET_VERSION, &version);
    CHECK(rc == 0 || errno != EBADF, "parent ioctl still reaches the driver");
    printf("done\n");
    return 0;
}
