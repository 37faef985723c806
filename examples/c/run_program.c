/* run_program: the C API end to end. Runs a `dojo cc`-built GPU program on the topology
 * given, once straight through (the reference), then again stopping half way with
 * dojo_vm_step, saves a checkpoint, restores it into a second VM while the first still
 * lives, runs both to the end, and checks that all three give the same ticks, exit code
 * and statistics. Exits 0 when they agree.
 *
 *   cc -I capi/include run_program.c -L target/release -lsimdojo -o run_program
 *   ./run_program topologies/mi300x.toml prog.co [ARGS...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simdojo.h"

#define CHECK(call)                                                                 \
    do {                                                                            \
        int rc_ = (call);                                                           \
        if (rc_ != DOJO_OK) {                                                       \
            fprintf(stderr, "run_program: %s failed (%d): %s\n", #call, rc_,       \
                    dojo_last_error());                                             \
            exit(2);                                                                \
        }                                                                           \
    } while (0)

struct result {
    uint64_t ticks;
    int exit_code;
    char *stats;
};

static dojo_vm_t *load(const char *topology, const char *program, int argc, const char *const *argv) {
    dojo_vm_t *vm = NULL;
    CHECK(dojo_vm_create(topology, &vm));
    CHECK(dojo_vm_set_workers(vm, 1));
    CHECK(dojo_vm_load_program(vm, program, argc, argv));
    return vm;
}

static struct result finish(dojo_vm_t *vm) {
    struct result r;
    fflush(stdout);
    CHECK(dojo_vm_run(vm, &r.ticks));
    CHECK(dojo_vm_exit_code(vm, &r.exit_code));
    CHECK(dojo_vm_stats_json(vm, &r.stats));
    return r;
}

static int same(const char *what, struct result a, struct result b) {
    if (a.ticks != b.ticks || a.exit_code != b.exit_code || strcmp(a.stats, b.stats) != 0) {
        fprintf(stderr, "run_program: %s differs: ticks %llu/%llu, exit %d/%d, statistics %s\n", what,
                (unsigned long long)a.ticks, (unsigned long long)b.ticks, a.exit_code, b.exit_code,
                strcmp(a.stats, b.stats) == 0 ? "equal" : "differ");
        return 0;
    }
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s TOPOLOGY PROGRAM CHECKPOINT [ARGS...]\n", argv[0]);
        return 2;
    }
    const char *topology = argv[1], *program = argv[2], *checkpoint = argv[3];
    int pargc = argc - 4;
    const char *const *pargv = (const char *const *)argv + 4;

    /* The reference: straight through. */
    dojo_vm_t *reference = load(topology, program, pargc, pargv);
    struct result ref = finish(reference);
    CHECK(dojo_vm_destroy(reference));
    printf("reference: %llu ticks, exit code %d\n", (unsigned long long)ref.ticks, ref.exit_code);

    /* Step to half way, then checkpoint. */
    dojo_vm_t *first = load(topology, program, pargc, pargv);
    uint64_t now = 0, steps = 0;
    int active = 1;
    while (active && now < ref.ticks / 2) {
        CHECK(dojo_vm_step(first, &active));
        CHECK(dojo_vm_now(first, &now));
        steps++;
    }
    if (!active) {
        fprintf(stderr, "run_program: the program ended before half way\n");
        return 1;
    }
    CHECK(dojo_vm_save_checkpoint(first, checkpoint));
    printf("checkpoint at %llu ticks after %llu steps: %s\n", (unsigned long long)now, (unsigned long long)steps, checkpoint);

    /* Restore into a second VM while the first still lives; run both to the end. */
    dojo_vm_t *second = NULL;
    CHECK(dojo_vm_restore_checkpoint(checkpoint, &second));
    uint64_t restored_at = 0;
    CHECK(dojo_vm_now(second, &restored_at));
    struct result a = finish(first);
    struct result b = finish(second);
    printf("first: %llu ticks, exit code %d; restored (from %llu): %llu ticks, exit code %d\n",
           (unsigned long long)a.ticks, a.exit_code, (unsigned long long)restored_at,
           (unsigned long long)b.ticks, b.exit_code);
    int ok = restored_at == now && same("the stepped run", ref, a) && same("the restored run", ref, b);

    CHECK(dojo_string_free(ref.stats));
    CHECK(dojo_string_free(a.stats));
    CHECK(dojo_string_free(b.stats));
    CHECK(dojo_vm_destroy(first));
    CHECK(dojo_vm_release(second));
    printf("%s\n", ok ? "same ticks, exit code and statistics" : "MISMATCH");
    return ok ? 0 : 1;
}
