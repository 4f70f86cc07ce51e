/* The CUDA driver's entry points (see cuda_driver.h). */
#include "node-agent/collector/cuda_driver.h"

#include <dlfcn.h>

void *
rs_cuda_driver_symbol(const char *name)
{
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    void *sym = dlsym(cuda ? cuda : RTLD_DEFAULT, name);

    if (cuda)
        dlclose(cuda); /* the reference RTLD_NOLOAD took; the process's own keeps it loaded */
    return sym;
}
