/* The interposer tells the driver about memory the program takes away, as the kernel's
 * MMU notifiers tell the real one: an SVM range loses the pages that an mmap with
 * MAP_FIXED replaces, that a shrinking mremap leaves behind, and that munmap removes
 * (GET_ATTR then reports no access there), while the rest keeps its attributes. Prints
 * "done". */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"

/* From linux/kfd_ioctl.h: _IOWR('K', 0x20, 24 bytes) plus 8 bytes per attribute. */
#define AMDKFD_IOC_SVM_ONE_ATTR (0xc0184b20UL + (8UL << 16))
#define SVM_OP_SET_ATTR 0
#define SVM_OP_GET_ATTR 1
#define SVM_ATTR_ACCESS 2
#define SVM_ATTR_NO_ACCESS 4

struct svm_one_attr {
    uint64_t start_addr;
    uint64_t size;
    uint32_t op;
    uint32_t nattr;
    uint32_t type;
    uint32_t value;
};

static const size_t page = 4096;
static uint32_t gpu_id;

static int svm(int fd, uint32_t op, char *start, size_t size, uint32_t *type) {
    struct svm_one_attr a = {(uint64_t)start, size, op, 1, *type, gpu_id};
    int r = ioctl(fd, AMDKFD_IOC_SVM_ONE_ATTR, &a);
    *type = a.type;
    return r;
}

/* The access GET_ATTR reports for the GPU on one page. */
static uint32_t access_of(int fd, char *at) {
    uint32_t type = SVM_ATTR_ACCESS;
    CHECK(svm(fd, SVM_OP_GET_ATTR, at, page, &type) == 0, "GET_ATTR");
    return type;
}

/* A fresh page at `at`, where nothing is mapped (MAP_FIXED_NOREPLACE: no notification). */
static void fresh_page(char *at) {
    void *p = mmap(at, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    CHECK(p == at, "mapping a fresh page where nothing is");
}

int main(void) {
    int fd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
    CHECK(fd >= 0, "open /dev/kfd");
    FILE *f = fopen("/sys/class/kfd/kfd/topology/nodes/1/gpu_id", "r");
    CHECK(f && fscanf(f, "%u", &gpu_id) == 1, "reading the GPU's id");
    fclose(f);
    char *a = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(a != MAP_FAILED, "mmap");
    uint32_t type = SVM_ATTR_ACCESS;
    CHECK(svm(fd, SVM_OP_SET_ATTR, a, 4 * page, &type) == 0, "SET_ATTR ACCESS");
    for (int i = 0; i < 4; i++) CHECK(access_of(fd, a + i * page) == SVM_ATTR_ACCESS, "registered");

    /* An mmap with MAP_FIXED over page 1 replaces its pages. */
    void *p = mmap(a + page, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    CHECK(p == a + page, "MAP_FIXED");
    CHECK(access_of(fd, a + page) == SVM_ATTR_NO_ACCESS, "MAP_FIXED dropped page 1");
    CHECK(access_of(fd, a) == SVM_ATTR_ACCESS, "page 0 kept");

    /* Shrinking pages 2-3 to page 2 leaves page 3 behind. */
    CHECK(mremap(a + 2 * page, 2 * page, page, 0) == a + 2 * page, "mremap shrinks in place");
    fresh_page(a + 3 * page);
    CHECK(access_of(fd, a + 3 * page) == SVM_ATTR_NO_ACCESS, "mremap dropped page 3");
    CHECK(access_of(fd, a + 2 * page) == SVM_ATTR_ACCESS, "page 2 kept");

    /* munmap of page 0. */
    CHECK(munmap(a, page) == 0, "munmap");
    fresh_page(a);
    CHECK(access_of(fd, a) == SVM_ATTR_NO_ACCESS, "munmap dropped page 0");
    CHECK(access_of(fd, a + 2 * page) == SVM_ATTR_ACCESS, "page 2 still kept");
    printf("done\n");
    return 0;
}
