/*
 * The kernel's interrupt lock for the library's read-modify-write atomics
 * on CPUs without compare-and-swap (Cortex-M0/M0+, RISC-V without the A
 * extension; src/rtt/atomic.rs). With RT_USING_SMP rt_hw_interrupt_disable
 * and rt_hw_interrupt_enable are macros (rt_cpus_lock, rt_cpus_unlock),
 * which Rust cannot call; here they are whatever the board's rthw.h makes
 * them. On other CPUs nothing calls these, and --gc-sections drops them.
 */
#include <rtthread.h>
#include <rthw.h>
#include "agent_glue.h"

rt_base_t agent_atomic_lock(void)
{
    return rt_hw_interrupt_disable();
}

void agent_atomic_unlock(rt_base_t level)
{
    rt_hw_interrupt_enable(level);
}
