/* simdojo GPU device runtime: configuration shared by the public headers.
 *
 * DOJO_EXPORT marks the few symbols the host loader must find in the code
 * object (kernels, the RPC client). The AMDGPU toolchain hides everything
 * else by default, which lets LTO drop what a program does not use. */
#ifndef __DOJO_CONFIG_H
#define __DOJO_CONFIG_H

#define DOJO_EXPORT __attribute__((visibility("protected")))

#ifdef __cplusplus
#define __DOJO_BEGIN_DECLS extern "C" {
#define __DOJO_END_DECLS }
#define __DOJO_RESTRICT
#else
#define __DOJO_BEGIN_DECLS
#define __DOJO_END_DECLS
#define __DOJO_RESTRICT restrict
#endif

#endif
