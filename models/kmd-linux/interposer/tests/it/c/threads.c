/* Eight threads touch the simulated files and device at the same moment, as the first
 * calls of the process: the backend starts once and no call deadlocks. */
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

#define THREADS 8
static pthread_barrier_t barrier;

static void *work(void *arg) {
    (void)arg;
    struct stat st;
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < 50; i++) {
        int fd = open(i % 2 ? "/dev/kfd" : "/proc/modules", O_RDONLY);
        CHECK(fd >= 0, "open");
        CHECK(stat("/sys/class/kfd/kfd/topology/generation_id", &st) == 0, "stat");
        CHECK(close(fd) == 0, "close");
    }
    return NULL;
}

int main(void) {
    pthread_t t[THREADS];
    pthread_barrier_init(&barrier, NULL, THREADS);
    for (int i = 0; i < THREADS; i++) CHECK(pthread_create(&t[i], NULL, work, NULL) == 0, "pthread_create");
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    printf("done\n");
    return 0;
}
