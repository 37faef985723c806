// A main() GPU program for `dojo exec`: every work-item greets the host through the
// RPC printf, one of them uses the host's malloc, and main's status is the process's.
//
//   dojo cc --mcpu gfx942 -O2 -o hello.co examples/gpu/hello.c
//   dojo exec --threads 64 --blocks 2 hello.co world
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv, char **envp) {
  unsigned group = __builtin_amdgcn_workgroup_id_x();
  unsigned item = __builtin_amdgcn_workitem_id_x();
  const char *who = argc > 1 ? argv[1] : "nobody";
  if (item % 32 == 0)
    printf("hello %s from work-item %u of work-group %u\n", who, item, group);
  if (group == 0 && item == 0) {
    char *copy = malloc(strlen(who) + 1);
    if (!copy)
      return 1;
    strcpy(copy, who);
    printf("the host's malloc gave %p, holding \"%s\"\n", (void *)copy, copy);
    free(copy);
  }
  return 0;
}
