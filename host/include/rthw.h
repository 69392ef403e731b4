/* Host port of rthw.h: the kernel's interrupt lock (src/host/irq.rs). */
#ifndef RT_HOST_RTHW_H
#define RT_HOST_RTHW_H

#include <rtthread.h>

rt_base_t rt_hw_interrupt_disable(void);
void rt_hw_interrupt_enable(rt_base_t level);

#endif
