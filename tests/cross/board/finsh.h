/*
 * Stand-in <finsh.h> for the cross-build link check: MSH_CMD_EXPORT places a
 * command descriptor in the FSymTab section, which a BSP's linker script
 * keeps (tests/cross/link.ld does too). Written for these tests.
 */
#ifndef __FINSH_H__
#define __FINSH_H__

#include <rtthread.h>

typedef long (*syscall_func)(void);

struct finsh_syscall
{
    const char *name;
    const char *desc;
    syscall_func func;
};

#define MSH_FUNCTION_EXPORT_CMD(name, cmd, desc)                                            \
    const char __fsym_##cmd##_name[] rt_section(".rodata.name") = #cmd;                    \
    const char __fsym_##cmd##_desc[] rt_section(".rodata.name") = #desc;                   \
    rt_used const struct finsh_syscall __fsym_##cmd rt_section("FSymTab") = {              \
        __fsym_##cmd##_name, __fsym_##cmd##_desc, (syscall_func)(void (*)(void))&name};

#define MSH_CMD_EXPORT(command, desc) MSH_FUNCTION_EXPORT_CMD(command, command, desc)
#define MSH_CMD_EXPORT_ALIAS(command, alias, desc) MSH_FUNCTION_EXPORT_CMD(command, alias, desc)

#endif
