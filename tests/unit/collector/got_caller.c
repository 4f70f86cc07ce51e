/* A shared object for got_hook_test: it calls getppid through its own GOT slot, as a library that
 * calls CUPTI does. Built twice: with lazy binding (the slot in writable .got.plt) and with
 * `-z now -fno-plt` (the slot in RELRO, read-only once relocated). GOT_CALLER names the function.
 */
#include <unistd.h>

int GOT_CALLER(void);

int
GOT_CALLER(void)
{
    return (int)getppid();
}
