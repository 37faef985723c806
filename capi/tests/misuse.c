/* Misuse of the C API: every case must return its error code with a message, never
 * crash. Arguments: a topology file, a garbage checkpoint file, a path to write a
 * checkpoint to (which is then corrupted). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simdojo.h"

static int failures = 0;

static void expect(const char *what, int got, int want, const char *needle) {
    const char *msg = dojo_last_error();
    if (got != want || (needle && !strstr(msg, needle))) {
        printf("FAIL %s: got %d, want %d; message: %s\n", what, got, want, msg);
        failures++;
    } else {
        printf("ok   %s: %d: %s\n", what, got, got == DOJO_OK ? "" : msg);
    }
}

int main(int argc, char **argv) {
    if (argc != 4) return 2;
    const char *topology = argv[1], *garbage = argv[2], *flipped = argv[3];
    dojo_vm_t *vm = NULL;
    int active = 0, code = 0;
    uint64_t ticks = 0;

    printf("version %s\n", dojo_version());
    expect("step on a NULL handle", dojo_vm_step(NULL, &active), DOJO_ERR_NULL, "NULL");
    expect("run on a NULL handle", dojo_vm_run(NULL, &ticks), DOJO_ERR_NULL, "NULL");
    expect("create with a NULL path", dojo_vm_create(NULL, &vm), DOJO_ERR_NULL, "topology_path");
    expect("create with a NULL out", dojo_vm_create(topology, NULL), DOJO_ERR_NULL, "out");
    expect("a bad topology string", dojo_vm_create_from_string("[[component]\npath = ", &vm), DOJO_ERR_TOPOLOGY, "<string>");
    expect("a missing topology file", dojo_vm_create("/nonexistent/dir/topology.toml", &vm), DOJO_ERR_TOPOLOGY, "/nonexistent/dir/topology.toml");
    if (vm != NULL) { printf("FAIL a failed create wrote a handle\n"); failures++; }
    expect("a fake handle", dojo_vm_step((dojo_vm_t *)0x12345, &active), DOJO_ERR_HANDLE, "not a live VM");

    expect("create", dojo_vm_create(topology, &vm), DOJO_OK, NULL);
    expect("zero workers", dojo_vm_set_workers(vm, 0), DOJO_ERR_ARGUMENT, "workers");
    expect("an unknown override", dojo_vm_set(vm, "l2.no_such_parameter=1"), DOJO_ERR_TOPOLOGY, "no_such_parameter");
    expect("a missing program file", dojo_vm_load_program(vm, "/nonexistent/prog.co", 0, NULL), DOJO_ERR_IO, "reading /nonexistent/prog.co");
    expect("a program that is not a code object", dojo_vm_load_program(vm, topology, 0, NULL), DOJO_ERR_PROGRAM, "not an AMDGPU code object");
    expect("negative argc", dojo_vm_load_program(vm, topology, -1, NULL), DOJO_ERR_ARGUMENT, "argc");
    const uint32_t too_wide[3] = {64, 32, 1}, one[3] = {1, 1, 1}, full[3] = {1024, 1, 1}, huge[3] = {1u << 22, 1, 1}, zero[3] = {0, 1, 1};
    expect("a work-group of 2048 work-items", dojo_vm_load_program_grid(vm, topology, 0, NULL, too_wide, NULL), DOJO_ERR_ARGUMENT, "limit is 1024");
    expect("a grid past 2^32 work-items", dojo_vm_load_program_grid(vm, topology, 0, NULL, full, huge), DOJO_ERR_ARGUMENT, "4294967295");
    expect("a zero grid dimension", dojo_vm_load_program_grid(vm, topology, 0, NULL, one, zero), DOJO_ERR_ARGUMENT, "positive");
    expect("the exit code before the end", dojo_vm_exit_code(vm, &code), DOJO_ERR_STATE, "not ended");
    expect("a NULL exit code pointer", dojo_vm_exit_code(vm, NULL), DOJO_ERR_NULL, "code");

    /* A real checkpoint, then one byte flipped in it. */
    expect("save a checkpoint", dojo_vm_save_checkpoint(vm, flipped), DOJO_OK, NULL);
    expect("workers after the start", dojo_vm_set_workers(vm, 2), DOJO_ERR_STATE, "before the simulation starts");
    FILE *f = fopen(flipped, "r+b");
    if (!f) { printf("FAIL cannot open %s\n", flipped); return 1; }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, size / 2, SEEK_SET);
    int c = fgetc(f);
    fseek(f, size / 2, SEEK_SET);
    fputc(c ^ 0x10, f);
    fclose(f);
    dojo_vm_t *restored = NULL;
    expect("a corrupted checkpoint", dojo_vm_restore_checkpoint(flipped, &restored), DOJO_ERR_CHECKPOINT, "corrupted");
    expect("a garbage checkpoint", dojo_vm_restore_checkpoint(garbage, &restored), DOJO_ERR_CHECKPOINT, garbage);
    expect("a missing checkpoint", dojo_vm_restore_checkpoint("/nonexistent/x.ckpt", &restored), DOJO_ERR_IO, "/nonexistent/x.ckpt");
    expect("a topology as checkpoint", dojo_vm_restore_checkpoint(topology, &restored), DOJO_ERR_CHECKPOINT, "not a simdojo VM checkpoint");
    if (restored != NULL) { printf("FAIL a failed restore wrote a handle\n"); failures++; }

    char *json = NULL;
    expect("statistics", dojo_vm_stats_json(vm, &json), DOJO_OK, NULL);
    expect("free a string", dojo_string_free(json), DOJO_OK, NULL);
    expect("free it again", dojo_string_free(json), DOJO_ERR_ARGUMENT, "freed already");
    char local[4] = "abc";
    expect("free a foreign string", dojo_string_free(local), DOJO_ERR_ARGUMENT, "not a string from this library");

    expect("retain", dojo_vm_retain(vm), DOJO_OK, NULL);
    expect("destroy while retained", dojo_vm_destroy(vm), DOJO_ERR_STATE, "other references");
    expect("release", dojo_vm_release(vm), DOJO_OK, NULL);
    expect("destroy", dojo_vm_destroy(vm), DOJO_OK, NULL);
    expect("step after destroy", dojo_vm_step(vm, &active), DOJO_ERR_HANDLE, "not a live VM");
    expect("release after destroy", dojo_vm_release(vm), DOJO_ERR_HANDLE, "not a live VM");
    expect("destroy twice", dojo_vm_destroy(vm), DOJO_ERR_HANDLE, "not a live VM");

    if (failures) {
        printf("%d misuse checks failed\n", failures);
        return 1;
    }
    printf("all misuse checks passed\n");
    return 0;
}
