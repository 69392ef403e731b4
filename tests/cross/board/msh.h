/* Stand-in <msh.h> for the cross-build link check (finsh). */
#ifndef __M_SHELL__
#define __M_SHELL__
#include <rtthread.h>
int msh_exec(char *cmd, rt_size_t length);
#endif
