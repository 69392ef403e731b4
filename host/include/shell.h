/* shell.h of the host port (finsh). */
#ifndef __SHELL_H__
#define __SHELL_H__
#include <rtthread.h>
#include <finsh.h>
/* Make the shell read from this device again (e.g. after a channel used it). */
void finsh_set_device(const char *device_name);
#endif
