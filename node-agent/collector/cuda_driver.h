/* The CUDA driver's entry points, looked up without linking against it: the collector is loaded
 * into processes that may never load the driver, and must not load it itself. */
#ifndef RS_COLLECTOR_CUDA_DRIVER_H
#define RS_COLLECTOR_CUDA_DRIVER_H

/* The address of the driver function `name` in the libcuda the process has loaded, or NULL. The
 * CUDA runtime loads libcuda privately (RTLD_LOCAL), so it is asked for by its name
 * (libcuda.so.1, RTLD_NOLOAD: never loaded here); without it, the process's global symbols (a
 * program linked with libcuda; the unit tests' stand-ins, linked with -rdynamic). The address
 * stays valid: the process keeps the library loaded. */
void *rs_cuda_driver_symbol(const char *name);

#endif
