/* The one RPC client of a program. The host loader overwrites it with an
 * image of LLVM's rpc::Client (port count, mailbox/header/packet pointers,
 * zeroed lock bits) before launching any kernel. */
#include <__dojo_config.h>

#include "rpc_client.h"

DOJO_EXPORT struct rpc_client __llvm_rpc_client;
