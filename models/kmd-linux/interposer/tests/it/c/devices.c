/* Device descriptors: open, stat, ioctl, the dup family, mmap, close. Prints the
 * descriptor numbers; the test matches them against the interposer's trace. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "check.h"

int main(void) {
    struct stat st;
    struct statx stx;
    struct kfd_ioctl_get_version_args version = {0};

    int kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
    CHECK(kfd >= 0, "open /dev/kfd");
    CHECK(fcntl(kfd, F_GETFD) & FD_CLOEXEC, "O_CLOEXEC kept on the placeholder");
    CHECK(fstat(kfd, &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 235, "fstat of the kfd fd");
    CHECK(stat("/dev/kfd", &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 235, "stat /dev/kfd");
    CHECK(access("/dev/kfd", R_OK | W_OK) == 0, "access /dev/kfd");

    int render = openat(AT_FDCWD, "/dev/dri/renderD128", O_RDWR);
    CHECK(render >= 0, "open renderD128");
    CHECK(!(fcntl(render, F_GETFD) & FD_CLOEXEC), "no O_CLOEXEC asked, none set");
    CHECK(fstat(render, &st) == 0 && major(st.st_rdev) == 226 && minor(st.st_rdev) == 128, "fstat render");
    CHECK(statx(AT_FDCWD, "/dev/dri/renderD128", 0, STATX_BASIC_STATS, &stx) == 0 && stx.stx_rdev_major == 226 &&
              stx.stx_rdev_minor == 128 && S_ISCHR(stx.stx_mode),
          "statx render by path");
    CHECK(statx(render, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &stx) == 0 && stx.stx_rdev_minor == 128, "statx render by fd");
    CHECK(open("/dev/dri/renderD250", O_RDWR) < 0 && errno == ENOENT, "a minor no GPU has is the real (absent) node");

    ioctl(kfd, AMDKFD_IOC_GET_VERSION, &version);
    int d1 = dup(kfd);
    int d2 = fcntl(kfd, F_DUPFD_CLOEXEC, 100);
    int d3 = dup2(kfd, 50);
    CHECK(d1 >= 0 && d2 >= 100 && d3 == 50, "duplicates");
    CHECK(fcntl(d2, F_GETFD) & FD_CLOEXEC, "F_DUPFD_CLOEXEC");
    printf("fds kfd=%d render=%d d1=%d d2=%d d3=%d\n", kfd, render, d1, d2, d3);
    fflush(stdout);
    ioctl(d2, AMDKFD_IOC_GET_VERSION, &version);
    CHECK(close(kfd) == 0, "close the first kfd fd");
    ioctl(d3, AMDKFD_IOC_GET_VERSION, &version);

    /* dup2 onto a device fd closes it: afterwards it is /dev/null, not the device. */
    int null = open("/dev/null", O_RDONLY);
    CHECK(dup2(null, d1) == d1, "dup2 onto a device fd");
    CHECK(ioctl(d1, AMDKFD_IOC_GET_VERSION, &version) == -1 && errno == ENOTTY, "d1 is /dev/null now");
    CHECK(fstat(d1, &st) == 0 && major(st.st_rdev) == 1, "d1 is /dev/null now (fstat)");
    /* dup2 from an invalid fd leaves the target alone. */
    CHECK(dup2(999, d3) == -1 && errno == EBADF, "dup2 from a bad fd");
    CHECK(fstat(d3, &st) == 0 && major(st.st_rdev) == 235, "d3 still the kfd");

    void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, d3, 0x7ffff000);
    printf("mmap %s\n", p == MAP_FAILED ? "failed" : "mapped");
    CHECK(close(d2) == 0 && close(d3) == 0 && close(render) == 0, "close the rest");
    CHECK(ioctl(d3, AMDKFD_IOC_GET_VERSION, &version) == -1 && errno == EBADF, "ioctl on a closed fd");
    CHECK(close(d3) == -1 && errno == EBADF, "double close");
    printf("done\n");
    return 0;
}
