/* shell.h of the host port (finsh). */
#ifndef __SHELL_H__
#define __SHELL_H__
#include <rtthread.h>
#include <finsh.h>
#endif
