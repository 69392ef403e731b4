/* msh.h of the host port (finsh). */
#ifndef __M_SHELL__
#define __M_SHELL__
#include <rtthread.h>
#endif
