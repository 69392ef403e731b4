/* Stand-in for the board's rthw.h (RT-Thread 5.x, without RT_USING_SMP):
 * the kernel's interrupt lock, in libcpu's assembly on a board. */
#ifndef RT_HW_H__
#define RT_HW_H__

#include <rtthread.h>

rt_base_t rt_hw_interrupt_disable(void);
void rt_hw_interrupt_enable(rt_base_t level);

#endif
