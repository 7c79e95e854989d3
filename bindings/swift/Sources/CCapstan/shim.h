/* The Swift package's view of the C API. <capstan.h> is found through the
 * include path pkg-config gives (`pkg-config --cflags capstan`). */
#include <capstan.h>
