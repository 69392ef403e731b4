/* finsh.h of the host port: MSH_CMD_EXPORT registers the command into the
 * host simulator's shell (on a board it places a descriptor in FSymTab). */
#ifndef __FINSH_H__
#define __FINSH_H__

#ifdef __cplusplus
extern "C" {
#endif

void rt_host_msh_register(const char *name, const char *desc, void (*func)(void));

#define MSH_CMD_EXPORT_ALIAS(command, alias, desc)                             \
    __attribute__((constructor)) static void rt_host_msh_reg_##alias(void)   \
    {                                                                          \
        rt_host_msh_register(#alias, #desc, (void (*)(void))(command));        \
    }
#define MSH_CMD_EXPORT(command, desc) MSH_CMD_EXPORT_ALIAS(command, command, desc)
#define FINSH_FUNCTION_EXPORT(name, desc)
#define FINSH_FUNCTION_EXPORT_ALIAS(name, alias, desc)

#ifdef __cplusplus
}
#endif

#endif
