/*
 * The console's receive indicator, read for the CLI channel: struct
 * rt_device's layout depends on the board's options (RT_USING_DEVICE_OPS,
 * the object header), so the member is read here, with the board's headers.
 */
#include <rtthread.h>
#include "agent_glue.h"

agent_rx_indicate_t agent_glue_rx_indicate(rt_device_t dev)
{
    return dev ? dev->rx_indicate : RT_NULL;
}
