/* The faked files: prints what it reads through every kind of call. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

static void print_fd(const char *key, int fd) {
    char buf[256] = {0};
    CHECK(fd >= 0, key);
    ssize_t n = read(fd, buf, sizeof buf - 1);
    CHECK(n >= 0, key);
    buf[strcspn(buf, "\n")] = 0;
    printf("%s=%s\n", key, buf);
    close(fd);
}

int main(void) {
    struct stat st;
    char buf[4096];

    print_fd("generation_id", open("/sys/devices/virtual/kfd/kfd/topology/generation_id", O_RDONLY));
    print_fd("marker_messy_path", openat(AT_FDCWD, "//sys//devices/virtual/kfd/./kfd/topology/dojo-test-marker", O_RDONLY));
    int dir = open("/sys/class/kfd/kfd/topology", O_RDONLY | O_DIRECTORY);
    print_fd("marker_relative", openat(dir, "dojo-test-marker", O_RDONLY));

    FILE *f = fopen("/sys/class/kfd/kfd/topology/nodes/1/properties", "r");
    CHECK(f != NULL, "fopen properties");
    while (fgets(buf, sizeof buf, f))
        if (strncmp(buf, "gfx_target_version ", 19) == 0) printf("gfx_target_version=%s", buf + 19);
    fclose(f);

    DIR *d = opendir("/sys/class/kfd/kfd/topology/nodes");
    CHECK(d != NULL, "opendir nodes");
    int nodes = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') nodes++;
    closedir(d);
    printf("nodes=%d\n", nodes);

    CHECK(stat("/sys/class/kfd", &st) == 0 && S_ISDIR(st.st_mode), "stat /sys/class/kfd");
    CHECK(lstat("/sys/class/kfd/kfd", &st) == 0 && S_ISLNK(st.st_mode), "lstat the class link");
    CHECK(access("/sys/devices/virtual/kfd/kfd/topology/dojo-test-marker", R_OK) == 0, "access marker");
    ssize_t n = readlink("/sys/class/kfd/kfd", buf, sizeof buf - 1);
    CHECK(n > 0, "readlink");
    buf[n] = 0;
    printf("link=%s\n", buf);

    f = fopen("/proc/modules", "re");
    CHECK(f != NULL, "fopen /proc/modules");
    int amdgpu = 0;
    while (fgets(buf, sizeof buf, f))
        if (strncmp(buf, "amdgpu ", 7) == 0) amdgpu = 1;
    fclose(f);
    printf("proc_modules_amdgpu=%d\n", amdgpu);

    /* As rocminfo does: a shell child (inheriting LD_PRELOAD) runs lsmod. */
    f = popen("lsmod | grep amdgpu", "r");
    CHECK(f != NULL, "popen");
    buf[0] = 0;
    if (!fgets(buf, sizeof buf, f)) buf[0] = 0;
    pclose(f);
    buf[strcspn(buf, " \n")] = 0;
    printf("lsmod=%s\n", buf);
    return 0;
}
