/* Stand-in <shell.h> for the cross-build link check (finsh's shell). */
#ifndef __SHELL_H__
#define __SHELL_H__
#include <rtthread.h>
#include <finsh.h>

void finsh_set_device(const char *device_name);
const char *finsh_get_device(void);

#endif
