/*
 * What Rust cannot read from a kernel mailbox itself: struct rt_mailbox's
 * layout depends on the board's options (RT_NAME_MAX, the IPC object's
 * members), so only C reads its `entry` count, compiled with the board's
 * headers.
 */
#include <rtthread.h>
#include "agent_glue.h"

rt_uint16_t agent_glue_mailbox_entries(rt_mailbox_t mb)
{
    /* One aligned half-word read: a snapshot, no lock needed. */
    return mb ? mb->entry : 0;
}
