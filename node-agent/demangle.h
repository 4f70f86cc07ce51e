/* C++ symbol names made readable on the node agent — off the training process, where the C++
 * runtime is private and long names would crowd the collector's frames (measured on H200): CUDA
 * kernel names arrive mangled ("_ZN2at6native29vectorized_elementwise_kernel...") and leave the
 * agent demangled ("void at::native::vectorized_elementwise_kernel<4, ...>(...)"), through the C++
 * runtime's __cxa_demangle, once per distinct name. Not thread-safe: one owner. */
#ifndef RS_NODE_AGENT_DEMANGLE_H
#define RS_NODE_AGENT_DEMANGLE_H

typedef struct rs_demangler rs_demangler;

int rs_demangler_new(rs_demangler **out);
void rs_demangler_free(rs_demangler *d);

/* The readable form of `name`; `name` itself when it is not a mangled C++ name, does not
 * demangle, or the cache is full. A readable form longer than the wire's string limit (kernels
 * templated on lambdas demangle to 5 KB) is cut to the limit, ending in " ... [HASH]" with the
 * mangled name's FNV-1a 64, so distinct kernels keep distinct names. The result lives as long as
 * `d` (or as `name`). */
const char *rs_demangler_name(rs_demangler *d, const char *name);

#endif
